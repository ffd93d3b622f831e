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
def test_the_visit_bench_splits_a_visit_before_and_after():
    """tools.bench_visit's plumbing on a tiny checkpoint (not its speed): before issue 32 every
    visit builds its figures, after it a repeat visit builds none; its patches are undone."""
    import streamlit as st

    from tools import bench_visit as B
    from uqlab.workbench import figures

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
    assert before["fresh"]["sampling"] > before["repeat"]["sampling"]
    assert "after / before" in B.table("cola-hsto", got)
