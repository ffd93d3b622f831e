"""The sweep bench's plumbing (tools.bench_sweep), not its speed."""

from __future__ import annotations


def test_the_sweep_is_timed_both_ways_in_both_threads_and_rendered(tmp_path, monkeypatch):
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
    assert text.count("| cola-hsto | tau") == 8 and '"PASSIVE"' in text
