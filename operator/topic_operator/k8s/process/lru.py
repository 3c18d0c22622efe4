"""A small bounded least-recently-used map, for results worth keeping per object version (validations)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["Lru"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    """At most ``size`` entries; the least recently used goes first. Not thread-safe: one event loop uses it."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an Lru holds at least one entry, not {size}")
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def drop(self, key: K) -> None:
        """Forget ``key`` (its object is gone)."""
        self._entries.pop(key, None)

    def make_room_for(self, size: int) -> None:
        """Hold at least ``size`` entries from now on: a cache read in turn over every object (a drift check
        walks them all in the same order) misses on every read once the objects outnumber it by even one."""
        self._size = max(self._size, size)

    def __len__(self) -> int:
        return len(self._entries)
