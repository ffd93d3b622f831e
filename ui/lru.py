"""A least-recently-used store bounded by bytes, for values too big to count by entries
(a MiniLM checkpoint holds ~90 MB of tensors, a word-level one 1-5 MB). No Streamlit here."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ByteLRU(Generic[V]):
    """Values kept in order of use while their bytes stay within ``budget``: adding one drops
    the least recently used until the total fits (the newest always stays, however big).

    Thread-safe. :meth:`get` loads a missing value under the store's lock, so visitors who ask
    for the same checkpoint at once load it once (the others wait for it instead of each
    holding a copy)."""

    def __init__(self, budget: int, size: Callable[[V], int]):
        self.budget = int(budget)
        self._size = size
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """Bytes of the values kept now."""
        with self._lock:
            return sum(n for _, n in self._items.values())

    def keys(self) -> list[Hashable]:
        """Keys kept, least recently used first."""
        with self._lock:
            return list(self._items)

    def get(self, key: Hashable, load: Callable[[], V]) -> V:
        """The value of ``key``, from the store or from ``load()`` (then kept)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
            value = load()
            self._items[key] = (value, int(self._size(value)))
            total = sum(n for _, n in self._items.values())
            while total > self.budget and len(self._items) > 1:
                _, (_, n) = self._items.popitem(last=False)
                total -= n
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
