"""A least-recently-used store bounded by bytes, for values too big to count by entries
(a MiniLM checkpoint holds ~90 MB of tensors, an explored sentence up to 32 MB of maps, a
review's hidden states below the first stochastic layer 0.5 MB)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from contextlib import contextmanager
from typing import Generic, TypeVar

V = TypeVar("V")


class ByteLRU(Generic[V]):
    """Values kept in order of use while their bytes stay within ``budget``: adding one drops
    the least recently used until the total fits (the newest always stays, however big).

    Thread-safe. A value missing from the store is loaded once however many threads ask for it
    at once (the others wait for that load instead of each holding a copy); loads of different
    keys run side by side, and a hit never waits for a load. A load that raises stores nothing.
    Values are shared, not copied: callers must not mutate them.

    ``shared(value)`` (optional): the parts a value holds in common with others (key -> bytes:
    the tensors of a pretrained base that every model on it points at), counted once while any
    value kept holds them; ``size(value)`` then counts the value's own bytes only."""

    def __init__(
        self,
        budget: int,
        size: Callable[[V], int],
        on_evict: Callable[[], object] | None = None,
        shared: Callable[[V], Mapping[Hashable, int]] | None = None,
    ):
        self.budget = int(budget)
        self._size = size
        self._shared = shared
        self._on_evict = on_evict  # called (outside the lock) after values were dropped
        self._items: OrderedDict[Hashable, tuple[V, int, Mapping[Hashable, int]]] = OrderedDict()
        self._holders: dict[Hashable, int] = {}  # shared part -> how many kept values hold it
        self._total = 0  # bytes of the values in _items (kept, not summed at every put)
        self._lock = threading.Lock()  # guards _items and _loading
        self._loading: dict[Hashable, threading.Lock] = {}

    @property
    def bytes(self) -> int:
        """Bytes of the values kept now."""
        with self._lock:
            return self._total

    def keys(self) -> list[Hashable]:
        """Keys kept, least recently used first."""
        with self._lock:
            return list(self._items)

    def _hit(self, key: Hashable) -> tuple[bool, V | None]:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return True, self._items[key][0]
            return False, None

    def get(
        self, key: Hashable, load: Callable[[], V], on_wait: Callable[[], None] | None = None
    ) -> V:
        """The value of ``key``, from the store or from ``load()`` (then kept). While another
        thread loads the same key this one waits for it, calling ``on_wait()`` first."""
        found, value = self._hit(key)
        if found:
            return value
        with self._lock:
            gate = self._loading.setdefault(key, threading.Lock())
        if not gate.acquire(blocking=False):
            if on_wait is not None:
                on_wait()
            gate.acquire()
        with _held(gate):  # one load per key; others wait above, then find the value
            found, value = self._hit(key)
            if found:
                return value
            try:
                value = load()
                self.put(key, value)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
            return value

    def peek(self, key: Hashable) -> V | None:
        """The value of ``key`` if kept (now the most recently used), else None."""
        return self._hit(key)[1]

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value`` under ``key`` (replacing any), dropping the least recently used until
        the total fits."""
        size = int(self._size(value))
        parts = dict(self._shared(value)) if self._shared is not None else {}
        dropped = 0
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._forget(old)
            self._total += size
            for part, n in parts.items():
                if not self._holders.get(part):
                    self._total += int(n)
                self._holders[part] = self._holders.get(part, 0) + 1
            self._items[key] = (value, size, parts)
            while self._total > self.budget and len(self._items) > 1:
                _, gone = self._items.popitem(last=False)
                self._forget(gone)
                dropped += 1
        if dropped and self._on_evict is not None:
            self._on_evict()

    def _forget(self, item: tuple[V, int, Mapping[Hashable, int]]) -> None:
        """Take a dropped value's bytes off the total: its own, and each shared part it was
        the last kept value to hold (under the lock)."""
        _, size, parts = item
        self._total -= size
        for part, n in parts.items():
            self._holders[part] -= 1
            if not self._holders[part]:
                del self._holders[part]
                self._total -= int(n)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._holders.clear()
            self._total = 0


@contextmanager
def _held(lock: threading.Lock):
    """Release an already acquired ``lock`` when the block ends."""
    try:
        yield
    finally:
        lock.release()
