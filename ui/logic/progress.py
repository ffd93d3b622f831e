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


class Rows:
    """Rows sampled so far toward ``total``, reported to ``report(fraction)``: pass it as a
    sampler's ``on_rows`` (called with each finished batch's size). :meth:`at_least` moves the
    fraction on from a coarser count (a chunk read from stored samples reports no batches);
    the fraction never goes back."""

    def __init__(self, total: int, report):
        self.total = max(1, int(total))
        self.report = report
        self.done = 0
        self.fraction = 0.0

    def __call__(self, n: int) -> None:
        self.done += int(n)
        self.at_least(self.done / self.total)

    def at_least(self, fraction: float) -> None:
        self.fraction = max(self.fraction, min(1.0, float(fraction)))
        self.report(self.fraction)
