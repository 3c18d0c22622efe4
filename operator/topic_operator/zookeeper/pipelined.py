"""Pipelined reads: issue every request of a round before awaiting any answer.

kazoo's async API keeps all of them in flight on the one connection, so reading 10,000 znodes costs about one
round trip plus the server's work, not 10,000 round trips. Used by the one-shot snapshot and the watched view.
Every request goes through a ``BoundedClient``: no read waits past its deadline, and a lost connection surfaces
as ``AnswerLostError`` (the caller reads the round again once ZooKeeper is back).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import EXCEPTIONS, NoNodeError, ZookeeperError
from kazoo.protocol.serialization import (
    GetData,
    int_struct,
    multiheader_struct,
    read_buffer,
    stat_struct,
    write_string,
)
from kazoo.protocol.states import WatchedEvent, ZnodeStat

from topic_operator.zookeeper.bounded import AnswerLostError, BoundedClient

__all__ = ["Pending", "Watch", "read_children", "read_data", "read_exists", "read_many"]

T = TypeVar("T")

Watch = Callable[[WatchedEvent], None]
"""A one-shot ZooKeeper watch callback, run on kazoo's callback thread."""


@dataclass(frozen=True, slots=True)
class Pending(Generic[T]):
    """A request in flight; ``value()`` waits (boundedly) for its answer, and a missing znode gives None."""

    zk: BoundedClient
    request: Any
    convert: Callable[[Any], T]
    path: str

    def value(self) -> T | None:
        try:
            answer = self.zk.answer(self.request, f"reading {self.path}")
        except NoNodeError:
            return None
        return self.convert(answer)


def read_children(zk: BoundedClient, path: str, watch: Watch | None = None) -> Pending[list[str]]:
    request = zk.submit(lambda: zk.client.get_children_async(path, watch=watch), f"reading {path}")
    return Pending(zk, request, list, path)


def read_data(zk: BoundedClient, path: str, watch: Watch | None = None) -> Pending[tuple[bytes, ZnodeStat]]:
    return Pending(
        zk, zk.submit(lambda: zk.client.get_async(path, watch=watch), f"reading {path}"), tuple, path
    )


def read_exists(zk: BoundedClient, path: str, watch: Watch | None = None) -> Pending[ZnodeStat]:
    """An exists-watch also fires when a missing znode is created, which a get-watch on it cannot."""
    request = zk.submit(lambda: zk.client.exists_async(path, watch=watch), f"reading {path}")
    return Pending(zk, request, lambda stat: stat, path)


# ---------------------------------------------------------------------------------------------------------------
# Batched reads with ZooKeeper's multiRead.
#
# kazoo wakes its connection thread once per request and sends one request per wake-up, which caps pipelined
# reads near 7,000 znodes/s here: reading 10,000 topics (topic + config znode each) costs ~3 s of Python
# overhead, almost none of it ZooKeeper's. ZooKeeper 3.6+ has multiRead (opcode 22): many getData operations in
# one request, each answered with its data or its own error. kazoo does not expose it, but it sends any request
# object that serialises itself, so ``_MultiRead`` below is such an object. Servers older than 3.6 do not know
# the opcode; the first batch on a client probes for it and, on any failure, that client falls back to
# pipelined single reads.

_MULTI_READ_OPCODE = 22
_ERROR_RESULT = -1
_BATCH = 200
"""Operations per multiRead request: small enough that a batch of large topic znodes stays far below
ZooKeeper's 1 MB packet limit, large enough that the per-request overhead vanishes."""

_multi_read_support: weakref.WeakKeyDictionary[KazooClient, bool] = weakref.WeakKeyDictionary()


class _MultiRead(NamedTuple):
    """A multiRead of getData operations (no watches), serialised as ZooKeeper's MultiOperationRecord."""

    paths: tuple[str, ...]
    type: int = _MULTI_READ_OPCODE

    def serialize(self) -> bytearray:
        buffer = bytearray()
        for path in self.paths:
            buffer.extend(multiheader_struct.pack(GetData.type, False, -1))
            buffer.extend(write_string(path))
            buffer.append(0)  # no watch
        buffer.extend(multiheader_struct.pack(-1, True, -1))
        return buffer

    @classmethod
    def deserialize(cls, data: bytes, offset: int) -> list[tuple[bytes, ZnodeStat] | Exception]:
        results: list[tuple[bytes, ZnodeStat] | Exception] = []
        while True:
            op_type, done, _ = multiheader_struct.unpack_from(data, offset)
            offset += multiheader_struct.size
            if done:
                return results
            if op_type == GetData.type:
                value, offset = read_buffer(data, offset)
                stat = ZnodeStat._make(stat_struct.unpack_from(data, offset))
                offset += stat_struct.size
                results.append((value or b"", stat))
            elif op_type == _ERROR_RESULT:
                code = int_struct.unpack_from(data, offset)[0]
                offset += int_struct.size
                results.append(EXCEPTIONS[code]())
            else:
                raise ValueError(f"unexpected operation type {op_type} in a multiRead response")


def _chrooted(client: KazooClient, path: str) -> str:
    chroot: str = client.chroot or ""
    return chroot + path if path != "/" else (chroot or "/")


def _send_multi_read(zk: BoundedClient, paths: Sequence[str]) -> Any:
    request = _MultiRead(tuple(_chrooted(zk.client, p) for p in paths))

    def start() -> Any:
        pending = zk.client.handler.async_result()
        zk.client._call(
            request, pending
        )  # kazoo's own request path; there is no public one for custom requests
        return pending

    return zk.submit(start, f"reading {len(paths)} znodes")


def _supports_multi_read(zk: BoundedClient) -> bool:
    """Probed once per client. A lost connection is no answer: it is raised, and the next read probes again."""
    known = _multi_read_support.get(zk.client)
    if known is None:
        try:
            answer = zk.answer(_send_multi_read(zk, ["/"]), "probing for multiRead")
            known = len(answer) == 1 and not isinstance(answer[0], Exception)
        except AnswerLostError:
            raise
        except (ZookeeperError, ValueError, IndexError):  # an old server answers with an error or garbage
            known = False
        _multi_read_support[zk.client] = known
    return known


def read_many(zk: BoundedClient, paths: Sequence[str]) -> dict[str, tuple[bytes, ZnodeStat] | None]:
    """The data and stat of every path (None for a missing znode), in batches of multiRead where the server
    has it, otherwise as pipelined single reads. Any error other than a missing znode is raised."""
    if not paths:
        return {}
    if not _supports_multi_read(zk):
        pending = [(path, read_data(zk, path)) for path in paths]
        return {path: read.value() for path, read in pending}
    batches = [paths[i : i + _BATCH] for i in range(0, len(paths), _BATCH)]
    in_flight = [(batch, _send_multi_read(zk, batch)) for batch in batches]
    results: dict[str, tuple[bytes, ZnodeStat] | None] = {}
    for batch, request in in_flight:
        for path, answer in zip(batch, zk.answer(request, f"reading {len(batch)} znodes"), strict=True):
            if isinstance(answer, NoNodeError):
                results[path] = None
            elif isinstance(answer, Exception):
                raise answer
            else:
                results[path] = answer
    return results
