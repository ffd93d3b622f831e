"""ui.work.run in a page (AppTest): finished work leaves no bar and no Cancel button behind,
only one line that says it is done; work that ends quickly draws nothing at all."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page(seconds: float) -> None:
    import time

    import streamlit as st

    from ui import work

    def slow(progress):
        progress(0.0)
        time.sleep(seconds)  # longer than work.QUIET_S: the panel is drawn
        progress(0.5)
        time.sleep(0.05)
        progress(1.0)
        return 42

    got = work.run("Sampling 4 examples", slow, ("job", seconds))
    st.write(f"got {got}")


def _run(seconds: float) -> AppTest:
    at = AppTest.from_function(_page, args=(seconds,), default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    assert [m.value for m in at.markdown] == ["got 42"]
    return at


def test_finished_work_removes_its_bar_and_cancel_and_says_it_is_done():
    at = _run(0.7)
    assert not [b for b in at.button if b.label == "Cancel"], "Cancel stayed after the work"
    assert not at.get("progress"), "the progress bar stayed after the work"
    assert [c.value for c in at.caption] == ["Sampling 4 examples: done in under 1 s."]


def test_quick_work_draws_nothing():
    at = _run(0.0)
    assert not at.button and not at.get("progress") and not at.caption
