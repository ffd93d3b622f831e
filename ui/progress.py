"""Progress text with a time estimate for long recomputations. No Streamlit here: a page passes
:meth:`Eta.text` to its ``st.progress`` bar."""

from __future__ import annotations

import time


class Eta:
    """Started when made; ``text(fraction)`` -> "Sampling: 40 % · about 12 s left" (the rate so
    far, once a first part is done)."""

    def __init__(self, what: str = "Sampling", clock=time.perf_counter):
        self.what = what
        self.clock = clock
        self.started = clock()

    def left(self, fraction: float) -> float | None:
        """Seconds left at ``fraction`` done, from the rate so far (None before any progress)."""
        if fraction <= 0:
            return None
        spent = self.clock() - self.started
        return max(0.0, spent * (1 - fraction) / fraction)

    def text(self, fraction: float) -> str:
        left = self.left(fraction)
        head = f"{self.what}: {fraction:.0%}"
        if left is None or fraction >= 1:
            return head
        return f"{head} · about {left:.0f} s left" if left >= 1 else f"{head} · under 1 s left"
