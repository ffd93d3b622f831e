"""The shared-prefix benchmark's plumbing (uqlab.benches.prefix), not its speed."""

from __future__ import annotations

import pytest


def test_shared_prefix_benchmark_runs_and_agrees():
    """uqlab.benches.prefix on a tiny T: the three ways give the same probabilities."""
    from uqcore.exceptions import ConfigError
    from uqlab.benches import prefix

    try:
        r = prefix.run(T=3, length=8, repeats=1)
    except ConfigError as exc:  # the MiniLM package is missing
        pytest.skip(str(exc))
    assert r["tokens"] == 8 and r["max_abs_diff"] < 1e-5
    assert r["batched_s"] > 0 and r["all_rows_s"] > 0 and r["loop_s"] > 0
