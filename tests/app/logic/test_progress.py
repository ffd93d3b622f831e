"""ui.logic.progress: the time left is measured from the work itself, on a fake clock."""

from __future__ import annotations

from ui.logic.progress import ESTIMATE_AFTER, Eta, Rows


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_no_number_before_enough_is_measured():
    clock = Clock()
    eta = Eta("Computing", clock)
    assert eta.text(0.0) == "Computing: 0% · estimating…"
    clock.now = 0.5
    assert eta.text(0.05) == "Computing: 5% · estimating…"  # too little, too soon
    clock.now = 0.9
    assert eta.text(0.5) == "Computing: 50% · estimating…"  # half done, but under a second


def test_a_quick_first_part_does_not_make_the_rest_look_quick():
    """Rows read from stored samples jump to 50 % at once; the rest runs at 2 % a second, so
    19 s are left at 62 %. The rate since the start (the old estimate) said about 4 s."""
    clock = Clock()
    eta = Eta("Computing", clock)
    clock.now = 0.01
    assert eta.text(0.5).endswith("estimating…")  # the first report: the baseline
    clock.now = 4.01
    assert eta.text(0.58).endswith("estimating…")  # under ESTIMATE_AFTER measured
    assert 0.58 - 0.5 < ESTIMATE_AFTER
    clock.now = 6.01
    assert eta.text(0.62) == "Computing: 62% · about 19 s left"
    clock.now = 25.01
    assert eta.text(1.0) == "Computing: 100%"  # finished: no time left to say


def test_steady_work_is_estimated_from_its_rate():
    clock = Clock()
    eta = Eta("Computing", clock)
    eta.text(0.0)
    clock.now = 4.0
    assert eta.text(0.2) == "Computing: 20% · about 16 s left"
    clock.now = 8.0
    assert eta.text(0.4) == "Computing: 40% · about 12 s left"
    clock.now = 19.8
    assert eta.text(0.99) == "Computing: 99% · under 1 s left"


def test_done_says_how_long_it_took():
    clock = Clock()
    eta = Eta("Computing", clock)
    clock.now = 0.4
    assert eta.done() == "Done in under 1 s"
    clock.now = 25.2
    assert eta.done() == "Done in 25 s"


def test_rows_never_go_back_and_stop_at_one():
    seen = []
    rows = Rows(10, seen.append)
    rows(4)
    rows.at_least(0.2)  # a coarser count behind: no step back
    rows(8)
    assert seen == [0.4, 0.4, 1.0]
