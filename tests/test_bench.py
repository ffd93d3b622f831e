"""The benchmark's plumbing (not its speed: timings belong in the benchmark's own output)."""

from __future__ import annotations

import json

import pytest

from uqlab import bench
from uqlab.bench_report import render_markdown


def test_benchmark_report_comes_from_a_real_run():
    row = bench.loop_vs_batched("sto", repeats=1)
    assert row["max_abs_diff"] < 1e-5  # batched samples equal the same samples drawn alone
    assert row["loop_s"] > 0 and row["batched_s"] > 0 and row["flops"] > 1e9
    rss = bench.peak_rss("hsto", 40)
    assert 0 < rss["before_mb"] <= rss["peak_mb"]
    crossover = bench.linear_crossover(rows_list=(20, 200), repeats=2)
    summary = {"batched_vs_loop_min_ratio": round(row["ratio"], 2)}
    text = render_markdown({
        "tuned": {"threads": 2, "allocator_tuned": True}, "peak": 1e11, "rows": {"sto": row},
        "rss": {"hsto": rss}, "length": 40, "crossover": crossover, "summary": summary,
    })  # fmt: skip
    assert f"| sto | {row['loop_s']:.3f} |" in text
    assert "| 200 |" in text
    assert json.loads(text.split("```json\n")[1].split("\n```")[0]) == summary


def test_shared_prefix_benchmark_runs_and_agrees():
    """uqlab.bench_prefix on a tiny T: the three ways give the same probabilities."""
    from uqcore.errors import ConfigError
    from uqlab import bench_prefix

    try:
        r = bench_prefix.run(T=3, length=8, repeats=1)
    except ConfigError as exc:  # the MiniLM package is missing
        pytest.skip(str(exc))
    assert r["tokens"] == 8 and r["max_abs_diff"] < 1e-5
    assert r["batched_s"] > 0 and r["all_rows_s"] > 0 and r["loop_s"] > 0


def test_page_bench_times_first_views_and_knob_changes(tmp_path, monkeypatch):
    """tools.bench's page figures on a tiny checkpoint with stored samples: every dataset page's
    first view at the defaults, Error analysis after a tau2 change, and its matmul floor."""
    from tests.app_fixtures import make_checkpoints
    from tools import bench as app_bench
    from uqcore.registry import load
    from uqlab import stored

    root = make_checkpoints(tmp_path, families=("hsto",))
    stored.write(load("cola-hsto", root))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    first = app_bench._first_views(["cola-hsto"])  # noqa: SLF001
    assert set(first["cola-hsto"]) == {t for t, _, _ in app_bench.DATASET_PAGES}
    assert all(sec > 0 for sec in first["cola-hsto"].values())
    (sec,) = app_bench._knob_changes("cola-hsto", (3.0,))  # noqa: SLF001
    floor = app_bench._recompute_floor("cola-hsto", 3.0)  # noqa: SLF001
    assert sec > 0 and floor["first change gflop"] > 0 and floor["matmul_gflops"] > 0
    # noise in every layer: a second change recomputes as much as the first
    assert floor["second change gflop"] == floor["first change gflop"]
