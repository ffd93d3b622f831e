"""The sweep bench's plumbing (tools.bench_sweep), not its speed."""

from __future__ import annotations


def test_the_sweep_is_timed_every_way_in_both_threads_and_rendered(tmp_path, monkeypatch):
    from tests.app_fixtures import make_checkpoints
    from tools import bench_sweep

    root = make_checkpoints(tmp_path, families=("hsto",))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    main = bench_sweep.time_sweep("cola-hsto", repeats=1)
    fresh = bench_sweep.time_sweep("cola-hsto", repeats=1, fresh_threads=True)
    for got in (main, fresh):
        assert set(got) == {"tau2", "tau1"}
        for ways in got.values():
            assert set(ways) == set(bench_sweep.WAYS) and all(s > 0 for s in ways.values())
    per = {"main thread": {"cola-hsto": main}, "new thread": {"cola-hsto": fresh}}
    text = bench_sweep.render({"PASSIVE": per, "default": per})
    assert text.count("| cola-hsto | tau") == 16 and '"PASSIVE"' in text


def test_each_grid_way_switches_its_runtime_flags_for_its_run_only(tmp_path, monkeypatch):
    from tests.app_fixtures import make_checkpoints
    from tools import bench_sweep
    from ui.logic import sweep
    from uqcore import runtime
    from uqlab.workbench import dataset
    from uqlab.workbench.notebook import checkpoint

    root = make_checkpoints(tmp_path, families=("hsto",))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    ck, info = checkpoint("cola-hsto")
    seen = []
    real = sweep.records
    monkeypatch.setattr(
        sweep,
        "records",
        lambda *a: seen.append((runtime.ONE_THREAD_BLOCKS, runtime.SPLIT_ACROSS_CORES)) or real(*a),
    )
    rows = dataset.pick(info.task, 3, 0)
    for way in bench_sweep.WAYS:
        bench_sweep.sweep_seconds(ck, rows, "tau2", way)
    assert seen == [(True, True), (True, True), (True, False), (False, False)]
    assert runtime.ONE_THREAD_BLOCKS and runtime.SPLIT_ACROSS_CORES
