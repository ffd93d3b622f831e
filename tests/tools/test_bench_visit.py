"""The visit bench's plumbing (tools.bench_visit), not its speed."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from ui import cached


@pytest.fixture(autouse=True)
def _fresh_cache():
    cached.figures().clear()
    yield
    cached.figures().clear()


@pytest.mark.usefixtures("app_checkpoints")
def test_the_visit_bench_splits_a_visit_before_and_after(monkeypatch):
    """tools.bench_visit's plumbing on a tiny checkpoint (not its speed): before issue 32 every
    visit builds its figures, after it a repeat visit builds none; a fresh visit samples and a
    repeat reads the cache (counted, not timed: CPU seconds of a 5-sample draw are noise);
    its patches are undone."""
    import streamlit as st

    from tools import bench_visit as B
    from uqlab.workbench import compute, figures

    sampled = []
    explore = compute.explore
    monkeypatch.setattr(
        compute, "explore", lambda *a, **k: sampled.append(a[3]) or explore(*a, **k)
    )

    plotly_chart, attention = st.plotly_chart, figures.attention_panels
    inst = B.Instruments()
    try:
        got = B.measure(inst, "cola-hsto", 5, 1)
    finally:
        inst.close()
    assert st.plotly_chart is plotly_chart and figures.attention_panels is attention
    before, after = got["before"], got["after"]
    assert before["repeat"]["figure building"] > 0 and after["fresh"]["figure building"] > 0
    assert after["repeat"]["figure building"] == 0 and after["repeat"]["figure objects"] > 0
    # one draw per fresh visit (seed 0: each mode's warm-up; seed 1: its link), none on a repeat
    assert sorted(sampled) == [0, 0, 1, 1]
    assert "after / before" in B.table("cola-hsto", got)
