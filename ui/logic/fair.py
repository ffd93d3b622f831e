"""Fair sharing of one server between its visitors: page renders and long computations take
different slots, so a render never waits behind a computation, and no visitor's computations
can hold every slot. No Streamlit here (:mod:`ui.work` draws the waiting, the progress and the
Cancel button).

- **Page slots** (:meth:`Gate.page`): at most ``page_slots`` page scripts run at once (twenty script
  threads contending for the GIL on two cores left the server's own event loop, its health
  check and every websocket message, waiting seconds).
- **Work slots** (:meth:`Gate.work`): a long computation first gives its page slot back, then
  waits, first come first served, for one of ``work_slots`` work slots, **at most one per session**;
  when it is done it takes a page slot again to draw its result. A visitor who starts a second
  computation (another click: Streamlit stops the first at its next progress update) waits for
  the first to let go, never beside it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

WAIT_POLL_S = 0.5  # how often a waiting computation reports its place (and may be stopped)


@dataclass
class _Ticket:
    session: str
    label: str
    number: int
    started: bool = False


@dataclass
class Gate:
    """The page and work slots of one server process (see the module's docstring)."""

    page_slots: int = 2
    work_slots: int = 1
    _cond: threading.Condition = field(default_factory=threading.Condition, repr=False)
    _pages_used: int = 0
    _queue: list[_Ticket] = field(default_factory=list, repr=False)  # waiting, in order
    _running: list[_Ticket] = field(default_factory=list, repr=False)
    _numbers: itertools.count = field(default_factory=itertools.count, repr=False)
    _held: threading.local = field(default_factory=threading.local, repr=False)

    def __post_init__(self) -> None:
        if self.page_slots < 1 or self.work_slots < 1:
            raise ValueError("a gate needs at least one page slot and one work slot")

    # -- page slots ---------------------------------------------------------------------------
    def _take_page(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._pages_used < self.page_slots)
            self._pages_used += 1
        self._held.page = True

    def _give_page(self) -> None:
        if not getattr(self._held, "page", False):
            return
        self._held.page = False
        with self._cond:
            self._pages_used -= 1
            self._cond.notify_all()

    @contextmanager
    def page(self):
        """Hold a page slot while the block runs (a page script's run)."""
        self._take_page()
        try:
            yield
        finally:
            self._give_page()

    # -- work slots ---------------------------------------------------------------------------
    def _may_start(self, ticket: _Ticket) -> bool:
        if len(self._running) >= self.work_slots:
            return False
        busy = {t.session for t in self._running}
        for t in self._queue:  # the first waiting ticket whose session is not busy goes next
            if t.session not in busy:
                return t is ticket
        return False

    def ahead(self, ticket: _Ticket) -> int:
        """Computations that will start before ``ticket`` (running ones included)."""
        with self._cond:
            if ticket.started:
                return 0
            return len(self._running) + self._queue.index(ticket)

    @contextmanager
    def work(self, session: str, label: str, waiting: Callable[[int], None] | None = None):
        """Run the block in a work slot of ``session``. While it waits, ``waiting(ahead)`` is
        called every :data:`WAIT_POLL_S` seconds (an exception it raises, such as Streamlit's
        stop on a closed tab, leaves the queue). The page slot this thread holds is given back
        for the wait and the work, and taken again before the block's caller goes on."""
        had_page = getattr(self._held, "page", False)
        self._give_page()
        ticket = _Ticket(session, label, next(self._numbers))
        try:
            with self._cond:
                self._queue.append(ticket)
            while True:
                with self._cond:
                    if self._cond.wait_for(lambda: self._may_start(ticket), WAIT_POLL_S):
                        self._queue.remove(ticket)
                        self._running.append(ticket)
                        ticket.started = True
                        break
                if waiting is not None:
                    waiting(self.ahead(ticket))
            yield ticket
        finally:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                if ticket in self._running:
                    self._running.remove(ticket)
                self._cond.notify_all()
            if had_page:
                self._take_page()

    def snapshot(self) -> dict:
        """How busy the gate is now: page slots in use, running and waiting computations."""
        with self._cond:
            return {
                "pages_used": self._pages_used,
                "page_slots": self.page_slots,
                "work_slots": self.work_slots,
                "running": [t.label for t in self._running],
                "waiting": [t.label for t in self._queue],
            }


_hook = threading.local()


def heavy() -> None:
    """Say that real computation starts now (a model load, sampling, features): inside
    :func:`ui.work.run` this takes the session's work slot (once); elsewhere it does nothing.
    Reads of stored or cached results never call it, so they never wait for a slot."""
    enter = getattr(_hook, "enter", None)
    if enter is not None:
        enter()


@contextmanager
def on_heavy(enter: Callable[[], None]):
    """Make :func:`heavy` call ``enter`` in this thread while the block runs."""
    before = getattr(_hook, "enter", None)
    _hook.enter = enter
    try:
        yield
    finally:
        _hook.enter = before
