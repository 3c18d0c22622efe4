"""Pipelined reads: issue every request of a round before awaiting any answer.

kazoo's async API keeps all of them in flight on the one connection, so reading 10,000 znodes costs about one
round trip plus the server's work, not 10,000 round trips. Used by the one-shot snapshot and the watched view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import WatchedEvent, ZnodeStat

__all__ = ["Pending", "Watch", "read_children", "read_data", "read_exists"]

T = TypeVar("T")

Watch = Callable[[WatchedEvent], None]
"""A one-shot ZooKeeper watch callback, run on kazoo's callback thread."""


@dataclass(frozen=True, slots=True)
class Pending(Generic[T]):
    """A request in flight; ``value()`` waits for its answer, and a missing znode gives None."""

    request: Any
    convert: Callable[[Any], T]

    def value(self) -> T | None:
        try:
            answer = self.request.get()
        except NoNodeError:
            return None
        return self.convert(answer)


def read_children(client: KazooClient, path: str, watch: Watch | None = None) -> Pending[list[str]]:
    return Pending(client.get_children_async(path, watch=watch), list)


def read_data(client: KazooClient, path: str, watch: Watch | None = None) -> Pending[tuple[bytes, ZnodeStat]]:
    return Pending(client.get_async(path, watch=watch), tuple)


def read_exists(client: KazooClient, path: str, watch: Watch | None = None) -> Pending[ZnodeStat]:
    """An exists-watch also fires when a missing znode is created, which a get-watch on it cannot."""
    return Pending(client.exists_async(path, watch=watch), lambda stat: stat)
