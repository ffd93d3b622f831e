"""ui.logic.fair: page slots and work slots shared fairly between sessions (no Streamlit here)."""

from __future__ import annotations

import threading
import time

import pytest

from ui.logic import fair
from ui.logic.fair import Gate
from uqcore.lru import ByteLRU


def _run(gate: Gate, session: str, log: list, hold: threading.Event, label: str):
    def body():
        with gate.work(session, label):
            log.append(("start", label))
            hold.wait(5)
            log.append(("end", label))

    t = threading.Thread(target=body)
    t.start()
    return t


def _until(cond, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_one_session_never_holds_two_work_slots():
    gate, log, hold = Gate(page_slots=2, work_slots=2), [], threading.Event()
    a1 = _run(gate, "a", log, hold, "a1")
    _until(lambda: ("start", "a1") in log)
    a2 = _run(gate, "a", log, hold, "a2")  # same session: waits although a slot is free
    b1 = _run(gate, "b", log, hold, "b1")  # another session: takes the free slot
    _until(lambda: ("start", "b1") in log)
    time.sleep(0.2)
    assert ("start", "a2") not in log
    assert gate.snapshot()["running"] == ["a1", "b1"] and gate.snapshot()["waiting"] == ["a2"]
    hold.set()
    for t in (a1, a2, b1):
        t.join(5)
    assert log.index(("end", "a1")) < log.index(("start", "a2"))


def test_waiting_computations_start_first_come_first_served_across_sessions():
    gate, log, hold = Gate(page_slots=2, work_slots=1), [], threading.Event()
    first = _run(gate, "a", log, hold, "a1")
    _until(lambda: ("start", "a1") in log)
    b = _run(gate, "b", log, hold, "b1")
    _until(lambda: gate.snapshot()["waiting"] == ["b1"])
    a2 = _run(gate, "a", log, hold, "a2")  # queued after b1: a's second waits its turn
    c = _run(gate, "c", log, hold, "c1")
    _until(lambda: gate.snapshot()["waiting"] == ["b1", "a2", "c1"])
    hold.set()
    for t in (first, b, a2, c):
        t.join(5)
    starts = [label for kind, label in log if kind == "start"]
    assert starts == ["a1", "b1", "a2", "c1"]


def test_a_computation_gives_its_page_slot_back_while_it_works():
    gate = Gate(page_slots=1, work_slots=1)
    inside, other_page_ran = threading.Event(), threading.Event()
    release = threading.Event()

    def visitor_a():
        with gate.page():
            with gate.work("a", "long"):
                inside.set()
                release.wait(5)

    def visitor_b():
        inside.wait(5)
        with gate.page():  # the only page slot: free while a computes
            other_page_ran.set()

    ta, tb = threading.Thread(target=visitor_a), threading.Thread(target=visitor_b)
    ta.start(), tb.start()
    assert other_page_ran.wait(5)
    release.set()
    ta.join(5), tb.join(5)
    assert gate.snapshot()["pages_used"] == 0


def test_a_waiting_computation_stopped_by_its_caller_leaves_the_queue():
    gate, hold = Gate(page_slots=2, work_slots=1), threading.Event()
    log: list = []
    t = _run(gate, "a", log, hold, "a1")
    _until(lambda: ("start", "a1") in log)
    seen = []

    def waiting(ahead: int) -> None:
        seen.append(ahead)
        raise KeyboardInterrupt  # stands for Streamlit's stop of a closed tab

    with pytest.raises(KeyboardInterrupt):
        with gate.work("b", "b1", waiting):
            pytest.fail("a stopped computation must not run")
    assert seen == [1] and gate.snapshot()["waiting"] == []
    hold.set()
    t.join(5)
    assert gate.snapshot() == {
        "pages_used": 0,
        "page_slots": 2,
        "work_slots": 1,
        "running": [],
        "waiting": [],
    }


def test_heavy_enters_only_inside_its_block():
    calls = []
    fair.heavy()  # outside: nothing
    with fair.on_heavy(lambda: calls.append(1)):
        fair.heavy()
    fair.heavy()
    assert calls == [1]


def test_a_cache_miss_waiting_for_another_threads_load_calls_on_wait_first():
    lru: ByteLRU[int] = ByteLRU(1000, lambda v: 1)
    loading, finish, waited = threading.Event(), threading.Event(), []

    def slow():
        loading.set()
        finish.wait(5)
        return 7

    t = threading.Thread(target=lambda: lru.get("k", slow))
    t.start()
    loading.wait(5)
    got = []
    w = threading.Thread(
        target=lambda: got.append(lru.get("k", lambda: 8, lambda: waited.append(1)))
    )
    w.start()
    _until(lambda: waited == [1])
    finish.set()
    t.join(5), w.join(5)
    assert got == [7]  # the other thread's value: loaded once
    assert lru.get("k", lambda: 9, lambda: waited.append(2)) == 7 and waited == [1]
