"""ui.lru.ByteLRU: bounded by bytes, least recently used out first, one load per key."""

from __future__ import annotations

import threading
import time

from uqcore.lru import ByteLRU


def test_the_least_recently_used_go_first_once_the_bytes_pass_the_budget():
    store = ByteLRU(budget=10, size=len)
    loads = []

    def get(key, value):
        return store.get(key, lambda: loads.append(key) or value)

    get("a", "xxxx"), get("b", "xxxx")  # 8 bytes
    assert get("a", "never loaded") == "xxxx"  # a hit: "a" is now the most recent
    get("c", "xxxx")  # 12 > 10: "b", the least recently used, goes
    assert store.keys() == ["a", "c"] and store.bytes == 8 and loads == ["a", "b", "c"]
    get("big", "x" * 50)  # the newest stays even alone over the budget
    assert store.keys() == ["big"]
    store.clear()
    assert store.keys() == [] and store.bytes == 0


def test_visitors_asking_at_once_load_a_value_once():
    store = ByteLRU(budget=100, size=lambda v: 1)
    loads = []

    def load():
        loads.append(1)
        time.sleep(0.05)
        return "model"

    got = []
    threads = [threading.Thread(target=lambda: got.append(store.get("k", load))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == ["model"] * 8 and len(loads) == 1


def test_dropping_values_calls_on_evict_once_per_load():
    """The app's checkpoint store gives the freed heap back to the OS after a drop."""
    calls = []
    store = ByteLRU(budget=5, size=len, on_evict=lambda: calls.append(1))
    store.get("a", lambda: "xxx")
    assert calls == []
    store.get("b", lambda: "xxxx")  # 7 > 5: "a" goes
    assert calls == [1] and store.keys() == ["b"]


def test_a_load_that_raises_stores_nothing_and_the_next_call_loads_again():
    store = ByteLRU(budget=10, size=len)

    def bad():
        raise ValueError("no")

    try:
        store.get("k", bad)
    except ValueError:
        pass
    assert store.keys() == [] and store.get("k", lambda: "ok") == "ok"


def test_the_byte_count_follows_replacements_and_evictions():
    """The total is kept as values come and go (not summed at each put: a dataset page puts
    thousands of token rows), and always equals the sum of what is kept."""
    import random

    store = ByteLRU(budget=500, size=len)
    rng = random.Random(0)
    for i in range(3000):
        store.put(rng.randrange(80), "x" * rng.randrange(1, 40))
        if i % 97 == 0:
            kept = sum(len(store.peek(k)) for k in store.keys())
            assert store.bytes == kept <= 500
    store.put("big", "x" * 900)
    assert store.keys() == ["big"] and store.bytes == 900


def test_a_part_values_share_is_counted_once_while_any_kept_value_holds_it():
    """Models on one pretrained base point at one copy of it: the store counts its bytes once
    while any of them is kept (not once per model, and not zero), then drops them with the
    last."""
    import random

    def value(own: int, *parts: str) -> tuple[int, dict[str, int]]:
        return own, {p: 100 for p in parts}

    store = ByteLRU(budget=10_000, size=lambda v: v[0], shared=lambda v: v[1])
    store.put("a", value(5, "base"))
    store.put("b", value(7, "base"))
    store.put("c", value(3, "base", "other"))
    assert store.bytes == 5 + 7 + 3 + 100 + 100
    store.put("a", value(4))  # replaced: it holds no part now
    assert store.bytes == 4 + 7 + 3 + 200
    store.put("c", value(3))
    assert store.bytes == 4 + 7 + 3 + 100  # "other" went with its last holder
    store.budget = 113  # "b" (the oldest: "a" and "c" were put again) goes; "d" holds the base
    store.put("d", value(2, "base"))
    assert store.keys() == ["a", "c", "d"] and store.bytes == 4 + 3 + 2 + 100
    store.budget = 105
    store.put("e", value(1))
    assert store.keys() == ["d", "e"] and store.bytes == 2 + 1 + 100

    store = ByteLRU(budget=900, size=lambda v: v[0], shared=lambda v: v[1])
    rng = random.Random(1)
    for _ in range(2000):  # the total is always what the kept values hold, each part once
        parts = rng.sample(["p", "q", "r"], rng.randrange(3))
        store.put(rng.randrange(30), value(rng.randrange(1, 50), *parts))
        kept = [store.peek(k) for k in store.keys()]
        held = {p for v in kept for p in v[1]}
        assert store.bytes == sum(v[0] for v in kept) + 100 * len(held)
