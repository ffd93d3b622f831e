"""Time estimates learned from this server's own recent runs (no Streamlit here).

A computation records its measured seconds and its size (any measure that grows with its work,
e.g. samples x path points x tokens for a salience method) under a kind of work; a new run of
the same kind is estimated as its size times the median rate (seconds per unit of size) of the
recent runs. No history: no number (:func:`wording` says so cautiously). :data:`RECENT` is the
process-wide record every session of the server shares (thread-safe, bounded)."""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass

KEEP = 12  # runs kept per kind (the most recent)
KINDS = 256  # kinds kept (the least recently recorded forgotten first)
MAX_AGE = 3600.0  # seconds after which a run no longer counts (the server's load changes)


@dataclass(frozen=True)
class Run:
    """One measured run: ``seconds`` it took, its ``size``, and when it was recorded (``at``,
    on the :class:`Timings`' clock)."""

    seconds: float
    size: float
    at: float

    @property
    def rate(self) -> float:
        return self.seconds / self.size


class Timings:
    """Recent runs per kind: at most ``keep`` per kind and ``kinds`` kinds, each counted for
    ``max_age`` seconds of ``clock``. Every method may be called from any thread."""

    def __init__(
        self,
        keep: int = KEEP,
        kinds: int = KINDS,
        max_age: float = MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.keep, self.kinds, self.max_age, self.clock = keep, kinds, max_age, clock
        self._runs: OrderedDict[Hashable, deque[Run]] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, kind: Hashable, seconds: float, size: float) -> None:
        """Add a run of ``kind`` that took ``seconds`` for ``size`` units of work; a run with a
        size or time that is not a positive finite number is ignored."""
        if not (_positive(seconds) and _positive(size)):
            return
        run = Run(float(seconds), float(size), self.clock())
        with self._lock:
            runs = self._runs.pop(kind, None) or deque(maxlen=self.keep)
            runs.append(run)
            self._runs[kind] = runs  # now the most recent kind
            while len(self._runs) > self.kinds:
                self._runs.popitem(last=False)

    def runs(self, kind: Hashable) -> list[Run]:
        """The runs of ``kind`` that still count, oldest first."""
        now = self.clock()
        with self._lock:
            runs = list(self._runs.get(kind, ()))
        return [r for r in runs if now - r.at <= self.max_age]

    def rate(self, kind: Hashable) -> float | None:
        """The median seconds per unit of size of ``kind``'s recent runs (None: none)."""
        runs = self.runs(kind)
        return statistics.median(r.rate for r in runs) if runs else None

    def estimate(self, kind: Hashable, size: float) -> float | None:
        """Seconds a run of ``kind`` and ``size`` should take (None: no recent run to go by)."""
        return self.guess(kind, size)[0]

    def guess(self, kind: Hashable, size: float) -> tuple[float | None, int]:
        """:meth:`estimate` and the number of recent runs it rests on (0: None)."""
        runs = self.runs(kind)
        if not runs:
            return None, 0
        return statistics.median(r.rate for r in runs) * float(size), len(runs)

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()


def _positive(x: float) -> bool:
    return isinstance(x, int | float) and math.isfinite(x) and x > 0


def duration(seconds: float) -> str:
    """``seconds`` in rounded words: "under a second", "about 13 s", "about 4 min"."""
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    return f"about {seconds / 60:.0f} min"


def wording(seconds: float | None, runs: int, what: str = "this kind of work") -> str:
    """What the page says before a run of ``what``: the estimate and how many recent runs it
    rests on, or, with no history (``seconds`` None), that this server has not timed one yet
    (no number: a guess from another kind of work can be off by far more than 2x)."""
    if seconds is None:
        return f"This server has not timed {what} yet, so it may take a while."
    said = "this server's last run" if runs == 1 else f"this server's last {runs} runs"
    return f"{duration(seconds).capitalize()} here, judging by {said} of {what}."


RECENT = Timings()  # the server's record, shared by every session of this process
