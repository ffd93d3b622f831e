"""ui.logic.estimate: time estimates from the server's recent runs, on a fake clock (no test here
times anything: the figures of real runs are printed by tests/app/logic/test_why.py)."""

from __future__ import annotations

import threading

import pytest

from ui.logic import estimate
from ui.logic.estimate import Timings


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_no_history_gives_no_number():
    t = Timings(clock=Clock())
    assert t.estimate("ig", 100) is None
    assert t.guess("ig", 100) == (None, 0)
    assert t.rate("ig") is None


def test_the_estimate_is_the_median_rate_of_the_kind_times_the_size():
    t = Timings(clock=Clock())
    for seconds, size in ((1.0, 100), (3.0, 100), (100.0, 100)):  # rates 0.01, 0.03, 1 (outlier)
        t.record("ig", seconds, size)
    t.record("gxi", 50.0, 10)  # another kind: not counted
    assert t.rate("ig") == pytest.approx(0.03)
    assert t.guess("ig", 1000) == (pytest.approx(30.0), 3)
    assert t.estimate("gxi", 2) == pytest.approx(10.0)


def test_only_the_last_runs_of_a_kind_count():
    t = Timings(keep=3, clock=Clock())
    for seconds in (100.0, 100.0, 1.0, 1.0, 1.0):  # a slow start, then three fast runs
        t.record("ig", seconds, 1)
    assert [r.seconds for r in t.runs("ig")] == [1.0, 1.0, 1.0]
    assert t.estimate("ig", 5) == pytest.approx(5.0)


def test_old_runs_stop_counting():
    clock = Clock()
    t = Timings(max_age=60, clock=clock)
    t.record("ig", 10.0, 1)
    clock.now = 50
    t.record("ig", 2.0, 1)
    assert t.guess("ig", 1) == (pytest.approx(6.0), 2)
    clock.now = 100  # the first run is 100 s old
    assert t.guess("ig", 1) == (pytest.approx(2.0), 1)
    clock.now = 1000
    assert t.estimate("ig", 1) is None


def test_the_kinds_are_bounded_least_recently_recorded_first_out():
    t = Timings(kinds=2, clock=Clock())
    t.record("a", 1.0, 1)
    t.record("b", 1.0, 1)
    t.record("a", 1.0, 1)  # a is now more recent than b
    t.record("c", 1.0, 1)
    assert t.runs("b") == [] and len(t.runs("a")) == 2 and len(t.runs("c")) == 1


@pytest.mark.parametrize("seconds, size", [(0.0, 1), (-1.0, 1), (1.0, 0), (float("nan"), 1)])
def test_a_run_without_a_positive_time_and_size_is_ignored(seconds, size):
    t = Timings(clock=Clock())
    t.record("ig", seconds, size)
    assert t.runs("ig") == []


def test_many_threads_record_at_once():
    """The server's sessions record from their own threads: nothing is lost beyond the bound and
    nothing breaks."""
    t = Timings(keep=1000, clock=Clock())

    def work(i: int) -> None:
        for _ in range(200):
            t.record(("ig", i % 4), 2.0, 1)
            t.estimate(("ig", i % 4), 1)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sum(len(t.runs(("ig", k))) for k in range(4)) == 8 * 200
    assert t.estimate(("ig", 0), 3) == pytest.approx(6.0)
    t.clear()
    assert t.runs(("ig", 0)) == []


def test_the_wording_gives_a_rounded_time_or_says_there_is_none():
    assert estimate.duration(0.4) == "under a second"
    assert estimate.duration(13.4) == "about 13 s"
    assert estimate.duration(250) == "about 4 min"
    said = estimate.wording(13.4, 3, "integrated gradients on cola-hsto")
    assert said == (
        "About 13 s here, judging by this server's last 3 runs of integrated gradients on "
        "cola-hsto."
    )
    assert "last run of" in estimate.wording(2, 1, "x")
    none = estimate.wording(None, 0, "integrated gradients on cola-hsto")
    assert "not timed integrated gradients on cola-hsto yet" in none
    assert not any(ch.isdigit() for ch in none)


def test_the_server_shares_one_record():
    assert isinstance(estimate.RECENT, Timings)
