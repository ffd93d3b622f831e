"""Progress text with a time estimate for long recomputations. No Streamlit here: a page passes
:meth:`Eta.text` to its ``st.progress`` bar."""

from __future__ import annotations

import time

ESTIMATE_AFTER = 0.1  # the share of the work measured before a time left is given
ESTIMATE_AFTER_S = 1.0  # and the seconds measured: the first steps (a model load, stored rows
# read at once) say little about the rest ("about 2 s left" was shown for 25 s)


class Eta:
    """Started when made; ``text(fraction)`` -> "Sampling: 40 % · about 12 s left".

    The rate is measured from the first progress reported (what came before it, a model load or
    rows read from stored samples, is not the work that remains) and a time left is given only
    once :data:`ESTIMATE_AFTER` of the work and :data:`ESTIMATE_AFTER_S` seconds have been
    measured; before that the text says "estimating…"."""

    def __init__(self, what: str = "Sampling", clock=time.perf_counter):
        self.what = what
        self.clock = clock
        self.started = clock()
        self.first: tuple[float, float] | None = None  # (time, fraction) of the first report

    def left(self, fraction: float) -> float | None:
        """Seconds left at ``fraction`` done, from the rate measured since the first report;
        None until enough has been measured to go by."""
        now = self.clock()
        if self.first is None:
            self.first = (now, fraction)
            return None
        t0, f0 = self.first
        done, spent = fraction - f0, now - t0
        if done < ESTIMATE_AFTER or spent < ESTIMATE_AFTER_S:
            return None
        return max(0.0, spent * (1 - fraction) / done)

    def text(self, fraction: float) -> str:
        head = f"{self.what}: {fraction:.0%}"
        if fraction >= 1:
            return head
        left = self.left(fraction)
        if left is None:
            return f"{head} · estimating…"
        return f"{head} · about {left:.0f} s left" if left >= 1 else f"{head} · under 1 s left"

    def done(self) -> str:
        """What a finished run says: "Done in 12 s" (from when this was made)."""
        spent = self.clock() - self.started
        return f"Done in {spent:.0f} s" if spent >= 1 else "Done in under 1 s"


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
