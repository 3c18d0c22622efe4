"""Many requests, one batch: per-cluster coalescing with a short linger and a bounded queue.

A ``kubectl apply -f topics/`` of 500 KafkaTopics fires 500 handlers at once; planning each alone would read the
cluster (or at least plan against it) 500 times and send 500 separate transactions. Instead every handler submits
its topic to its cluster's ``Batcher`` and awaits the result; the batcher waits ``linger`` seconds for more, then
runs one function (plan + apply through the engine, in a worker thread) over everything pending.

- Requests are keyed (one KafkaTopic = one key): a second request for a key already waiting replaces its payload
  (the newest body wins) and shares its result, so at most one reconcile per topic is in flight or waiting.
- The queue holds at most ``max_pending`` keys. A submitter finding it full waits ``offer_timeout`` seconds for
  room (back-pressure), then gets ``QueueFullError``, which the handler turns into a kopf retry: an overflow
  delays work, never crashes the operator.
- One batch runs at a time per batcher, so batches of one cluster never race each other.

Generic and free of kopf and ZooKeeper, so its timing and overflow behaviour are tested on their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["Batcher", "BatcherClosedError", "MissingResultError", "QueueFullError"]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")
R = TypeVar("R")

logger = logging.getLogger(__name__)


class QueueFullError(Exception):
    """The batcher already holds ``max_pending`` requests and none left within ``offer_timeout``."""


class BatcherClosedError(Exception):
    """The batcher was closed (its cluster was deleted or reconfigured) before the request ran."""


class MissingResultError(Exception):
    """The batch function returned no result for a request: a bug in it, reported to that request alone."""


@dataclass(slots=True)
class _Entry(Generic[P, R]):
    payload: P
    waiters: list[asyncio.Future[R]] = field(default_factory=list)


class Batcher(Generic[K, P, R]):
    """Runs ``run(batch)`` (blocking: it is called in ``executor``, the loop's default one when None) over the
    requests pending after a linger.

    ``run`` returns a result per key; an exception it raises is given to every request of that batch.
    ``on_depth`` is told the number of waiting keys whenever it changes (a metrics gauge).
    """

    def __init__(
        self,
        run: Callable[[Sequence[tuple[K, P]]], Mapping[K, R]],
        *,
        linger: float,
        max_batch: int,
        max_pending: int,
        offer_timeout: float,
        on_depth: Callable[[int], None] | None = None,
        name: str = "",
        executor: Executor | None = None,
    ) -> None:
        self._run = run
        self._linger = linger
        self._max_batch = max_batch
        self._max_pending = max_pending
        self._offer_timeout = offer_timeout
        self._on_depth = on_depth
        self._name = name
        self._executor = executor
        self._running_since: float | None = None
        self._pending: dict[K, _Entry[P, R]] = {}
        self._room: asyncio.Condition | None = None
        self._work: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        self._in_flight: dict[K, _Entry[P, R]] = {}
        self.batches_run = 0
        """How many times ``run`` was called (for tests and logs)."""

    @property
    def depth(self) -> int:
        return len(self._pending)

    def running_for(self, now: float | None = None) -> float:
        """Seconds the current batch has been running (0 when none runs): what the stuck-batch check reads."""
        since = self._running_since
        return 0.0 if since is None else (time.monotonic() if now is None else now) - since

    async def submit(self, key: K, payload: P) -> R:
        """Queue ``payload`` under ``key`` and wait for its result (or the batch's exception)."""
        if self._closed:
            raise BatcherClosedError(f"batcher {self._name} is closed")
        room, work = self._primitives()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        entry = self._pending.get(key)
        if entry is not None:
            entry.payload = payload
            entry.waiters.append(future)
        else:
            async with room:
                if len(self._pending) >= self._max_pending:
                    try:
                        await asyncio.wait_for(
                            room.wait_for(lambda: len(self._pending) < self._max_pending or self._closed),
                            self._offer_timeout,
                        )
                    except TimeoutError:
                        raise QueueFullError(
                            f"batcher {self._name}: {len(self._pending)} topics already waiting (the limit); "
                            f"none left within {self._offer_timeout:g} s"
                        ) from None
                if self._closed:
                    raise BatcherClosedError(f"batcher {self._name} is closed")
                entry = self._pending.get(key)
                if entry is None:
                    self._pending[key] = _Entry(payload, [future])
                else:  # queued by another submitter while we waited for room
                    entry.payload = payload
                    entry.waiters.append(future)
            self._report_depth()
        work.set()
        self._ensure_worker()
        return await future

    async def close(self) -> None:
        """Stop the worker (a batch already running in its thread finishes there) and fail what is waiting."""
        self._closed = True
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        for entry in [*self._pending.values(), *self._in_flight.values()]:
            for waiter in entry.waiters:
                if not waiter.done():
                    waiter.set_exception(BatcherClosedError(f"batcher {self._name} closed before running"))
        self._pending.clear()
        if self._room is not None:
            async with self._room:
                self._room.notify_all()

    # -- internals ----------------------------------------------------------------------------------------------

    def _primitives(self) -> tuple[asyncio.Condition, asyncio.Event]:
        """Created on first use, inside the running loop (a batcher may be built outside of it)."""
        if self._room is None or self._work is None:
            self._room, self._work = asyncio.Condition(), asyncio.Event()
        return self._room, self._work

    def _ensure_worker(self) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._loop(), name=f"batcher {self._name}")

    def _report_depth(self) -> None:
        if self._on_depth is not None:
            self._on_depth(len(self._pending))

    async def _loop(self) -> None:
        room, work = self._primitives()
        while True:
            await work.wait()
            await asyncio.sleep(self._linger)
            keys = list(self._pending)[: self._max_batch]
            taken = {key: self._pending.pop(key) for key in keys}
            if not self._pending:
                work.clear()
            self._report_depth()
            async with room:
                room.notify_all()
            if taken:
                await self._run_batch(taken)

    async def _run_batch(self, taken: dict[K, _Entry[P, R]]) -> None:
        items = [(key, entry.payload) for key, entry in taken.items()]
        self.batches_run += 1
        self._in_flight = taken
        self._running_since = time.monotonic()
        try:
            results = await asyncio.get_running_loop().run_in_executor(self._executor, self._run, items)
        except Exception as error:
            logger.warning("batch of %d in %s failed: %s", len(items), self._name, error)
            for entry in taken.values():
                for waiter in entry.waiters:
                    if not waiter.done():
                        waiter.set_exception(error)
            self._in_flight = {}
            return
        finally:
            self._running_since = None
        for key, entry in taken.items():
            for waiter in entry.waiters:
                if waiter.done():
                    continue
                if key in results:
                    waiter.set_result(results[key])
                else:
                    waiter.set_exception(
                        MissingResultError(f"batch of {self._name} returned nothing for {key}")
                    )
        self._in_flight = {}
