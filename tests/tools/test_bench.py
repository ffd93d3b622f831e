"""The app benchmark's plumbing (tools.bench), not its speed."""

from __future__ import annotations


def test_page_bench_times_first_views_and_knob_changes(tmp_path, monkeypatch):
    """tools.bench's page figures on a tiny checkpoint with stored samples: every dataset page's
    first view at the defaults, Error analysis after a tau2 change, and its matmul floor."""
    from tests.app_fixtures import make_checkpoints
    from tools import bench as app_bench
    from uqcore.registry import load
    from uqlab.evaluation import stored

    root = make_checkpoints(tmp_path, families=("hsto",))
    stored.write(load("cola-hsto", root))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    first = app_bench._first_views(["cola-hsto"])
    assert set(first["cola-hsto"]) == {t for t, _, _ in app_bench.DATASET_PAGES}
    assert all(sec > 0 for sec in first["cola-hsto"].values())
    (sec,) = app_bench._knob_changes("cola-hsto", (3.0,))
    floor = app_bench._recompute_floor("cola-hsto", 3.0)
    assert sec > 0 and floor["first change gflop"] > 0 and floor["matmul_gflops"] > 0
    # noise in every layer: a second change recomputes as much as the first
    assert floor["second change gflop"] == floor["first change gflop"]


def test_the_sweeps_compute_is_timed_at_the_pages_defaults_and_set_beside_its_floor(
    tmp_path, monkeypatch
):
    from tests.app_fixtures import make_checkpoints
    from tools import bench as app_bench

    root = make_checkpoints(tmp_path, families=("hsto",))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    got = app_bench._sweep_compute("cola-hsto")
    assert got["knob"] == "tau2" and got["seconds"] > 0  # the page's first knob
    floor = {"gflop": 1.0, "floor_s": 0.01, "matmul_gflops": 100.0, "compute_s": 0.03}
    report = {
        "explore": {},
        "pages": {},
        "floors": {"cola-hsto": {"Temperature sweep": {**floor, "knob": "tau2"}}},
    }
    text = app_bench.render_markdown(report)
    assert (
        "| cola-hsto | Temperature sweep | 1 GFLOP | 0.010 s at 100 GFLOP/s | "
        "0.030 s (tau2) | 3.0 |" in text
    )
