"""Long computations, run fairly (:class:`ui.logic.fair.Gate`): nothing is shown while results are
read from stored samples or the caches; once real computation starts (:func:`ui.logic.fair.heavy`)
the run takes a work slot of its session, and a visitor who waits more than a moment sees the
place in the queue, then a progress bar with an estimate, and a Cancel button throughout;
when the work ends, the bar and the button go and one line says how long it took.

A computation stops (its slot freed within one progress step) when the visitor presses
Cancel, starts another computation (Streamlit stops a run at its next update when a new run is
asked for) or closes the tab (Streamlit stops a disconnected session's run the same way): each
progress update is such a point, so ``fn`` must report progress at least every second or two.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from contextlib import ExitStack
from typing import TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui import cached
from ui.logic import fair
from ui.logic import keys as K
from ui.logic.progress import Eta

R = TypeVar("R")
UPDATE_S = 0.25  # the least time between two progress messages (each is also a stop point)
CANCEL_HELP = "Stops this computation; the page keeps everything else."
QUIET_S = 0.5  # work shorter than this draws no bar and no button (a cached-fast explorer run)


def _session() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "local"


def _cancel(job: Hashable) -> None:
    st.session_state[K.WORK_CANCELLED] = job


def _again() -> None:
    st.session_state.pop(K.WORK_CANCELLED, None)


def cancelled(job: Hashable) -> bool:
    """Whether the visitor cancelled ``job`` and has not asked for it again."""
    return st.session_state.get(K.WORK_CANCELLED) == job


class _Panel:
    """The status line, bar and Cancel button of one computation, drawn on first need in one
    slot (``st.empty``), so that :meth:`clear` removes all three at once (an ``st.container``'s
    ``empty()`` adds an empty element and leaves the bar and the button on the page)."""

    def __init__(self, label: str, job: Hashable, what: str):
        self.label, self.job, self.what = label, job, what
        self.slot = st.empty()
        self.box = None
        self.status = self.bar = None
        self.started = time.perf_counter()
        self.last = 0.0
        self.eta = Eta(what)

    def show(self) -> None:
        if self.bar is None:
            self.box = self.slot.container()
            self.status = self.box.empty()
            self.bar = self.box.progress(0.0)
            self.box.button(
                "Cancel",
                key=K.WORK_CANCEL + self.label,
                on_click=_cancel,
                args=(self.job,),
                help=CANCEL_HELP,
            )
            self.status.caption(f"{self.label}…")

    def waiting(self, ahead: int) -> None:  # a Streamlit call: a closed tab or a click stops here
        self.show()
        self.status.caption(
            f"{self.label}: waiting for a free slot, {ahead} computation(s) "
            "ahead of yours (the server runs a few at a time, in turn)."
        )

    def working(self) -> None:
        self.eta = Eta(self.what)  # the estimate counts from the start of the work itself
        if self.status is not None:
            self.status.caption(f"{self.label}…")

    def progress(self, fraction: float) -> None:
        now = time.perf_counter()
        if now - self.started < QUIET_S or (fraction < 1 and now - self.last < UPDATE_S):
            return
        self.show()
        self.last = now
        self.bar.progress(min(1.0, max(0.0, fraction)), self.eta.text(fraction))

    def clear(self, finished: bool = False) -> None:
        """Remove the status, bar and button; ``finished`` (the work returned): one line in
        their place says how long it took, so finished work never looks unfinished."""
        if self.bar is None:
            return
        if finished:
            self.slot.caption(f"{self.label}: {self.eta.done().lower()}.")
        else:
            self.slot.empty()


def run(
    label: str, fn: Callable[[Callable[[float], None]], R], job: Hashable, what: str = "Computing"
) -> R:
    """``fn(progress)``, ``progress(fraction)`` drawn as a bar with an estimate; returns what
    ``fn`` returns. Reads cost no slot; the first :func:`ui.logic.fair.heavy` inside ``fn`` waits
    for a work slot of this session. ``job`` identifies the computation (its cache key): once
    cancelled, the page says so and stops until "Start again" is pressed, instead of starting
    the same work again on the next click elsewhere."""
    if cancelled(job):
        st.info(
            f"Stopped: {label}. Nothing else changed; press Start again to run it.",
            icon=":material/stop_circle:",
        )
        st.button("Start again", key=K.WORK_AGAIN + label, on_click=_again)
        st.stop()
    panel = _Panel(label, job, what)
    slot = ExitStack()
    entered = []

    def enter() -> None:
        if not entered:
            entered.append(True)
            slot.enter_context(cached.gate().work(_session(), label, panel.waiting))
            panel.working()

    finished = False
    try:
        with slot, fair.on_heavy(enter):
            got = fn(panel.progress)
        finished = True
        return got
    finally:
        panel.clear(finished)
