"""Which replica works: a ``coordination.k8s.io`` Lease, as every Kubernetes controller elects its leader.

kopf's peering only pauses a replica that sees a live peer of higher priority. A peer is taken for dead a whole
lifetime after its last keep-alive (60 s by default; the standby took 52 s to act), and a replica that loses the
API server but not ZooKeeper goes on writing, because nothing tells it to stop. A Lease does both jobs:

- the holder renews it every ``retry_period``; a standby takes it once it has seen no renewal for
  ``duration`` seconds (by its own clock: the renewal time written in the Lease is never compared with it, so
  clocks may differ), checking twice per ``retry_period``;
- the holder stops writing as soon as it has not renewed for ``renew_deadline`` (< ``duration``): the
  ZooKeeper writers ask ``holds()`` before each transaction (``FencedError`` after), kopf stops, and the replica
  waits as a standby again (in the same process: ``kto run`` runs the operator again). Two replicas never write
  at the same time: the standby cannot take the Lease before ``duration`` has passed since the last renewal it saw, and the old holder stopped by
  ``renew_deadline`` after its own last renewal, which was no later;
- a replica that exits cleanly (SIGTERM) releases the Lease, so a rolling update hands over at once;
- the holder renews from a thread of its own, with an event loop and an API client of its own
  (``LeaseKeeper``): a burst of 10,000 KafkaTopics keeps kopf's event loop busy for seconds at a time, and
  renewals waiting behind it made the holder give up the Lease it still had.

ZooKeeper writes stay conditional on the znode versions read, so even a replica wrong about holding the Lease
could not overwrite what the other wrote.

Pure of any Kubernetes client: the Lease is read and written through ``LeaseApi`` (lightkube in production).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ACCESS_GRACE", "LeaderElector", "LeaseApi", "LeaseConflictError", "LeaseTimings"]

logger = logging.getLogger(__name__)

ACCESS_GRACE = 30.0
"""Seconds a replica that could read the Lease before keeps retrying refusals (401, 403) before it gives up: a
kube-apiserver v1.32 just restarted answered 403 to the operator's ServiceAccount for its first moments."""


class LeaseConflictError(Exception):
    """The Lease changed (or appeared) between our read and our write: someone else's write won."""


class LeaseAccessError(Exception):
    """The API refused us the Lease (401, 403): credentials or RBAC are wrong, waiting will not help."""


class LeaseApi(Protocol):
    async def get_lease(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The Lease (``metadata`` and ``spec``), or None when there is none."""
        ...

    async def create_lease(self, namespace: str, name: str, spec: Mapping[str, Any]) -> None:
        """Create it; ``LeaseConflictError`` when it exists already."""
        ...

    async def replace_lease(
        self, namespace: str, name: str, resource_version: str, spec: Mapping[str, Any]
    ) -> None:
        """Replace its spec if it is still at ``resource_version``; ``LeaseConflictError`` otherwise."""
        ...


@dataclass(frozen=True)
class LeaseTimings:
    duration: float = 10.0
    """Seconds without a renewal after which a standby takes the Lease."""
    renew_deadline: float = 7.0
    """Seconds without a successful renewal after which the holder stops writing (and stands by again)."""
    retry_period: float = 2.0
    """Seconds between the holder's renewals; a standby looks twice as often."""

    def __post_init__(self) -> None:
        if not 0 < self.retry_period < self.renew_deadline < self.duration:
            raise ValueError(
                "the lease timings must satisfy 0 < retry period < renew deadline < duration, not "
                f"{self.retry_period:g} < {self.renew_deadline:g} < {self.duration:g}"
            )


def _micro_time(moment: datetime.datetime) -> str:
    """Kubernetes' MicroTime: RFC 3339 in UTC with microseconds."""
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class LeaderElector:
    """One replica's view of the Lease ``namespace/name``; ``identity`` names this replica in it."""

    def __init__(
        self,
        api: LeaseApi,
        namespace: str,
        name: str,
        identity: str,
        timings: LeaseTimings = LeaseTimings(),
        *,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime.datetime] = _utc_now,
        granted_before: bool = False,
    ) -> None:
        self.api = api
        """Bound to the event loop it is used in: ``LeaseKeeper`` gives the elector one of its thread's own."""
        self.namespace, self.name, self.identity = namespace, name, identity
        self.timings = timings
        self._monotonic, self._wall = monotonic, wall
        self._observed: tuple[object, ...] | None = None
        self._observed_at = 0.0
        self._renewed_at: float | None = None
        self.holder: str | None = None
        """The holder as last read ('' or None: nobody)."""
        self._problem = ""
        self.seen = False
        """The Lease could be read (or created) at least once: the API answers and RBAC lets us."""
        self.granted_before = granted_before
        """This process held the Lease before (it stood down): a refusal now is more likely an API server still
        starting (its authorizer answers 403 until its caches fill) than RBAC gone, so it is retried a while."""

    @property
    def label(self) -> str:
        return f"{self.namespace}/{self.name}"

    def holds(self) -> bool:
        """Whether this replica may write: its last successful renewal is less than ``renew_deadline`` old
        (counted from when that renewal was sent)."""
        renewed = self._renewed_at
        return renewed is not None and self._monotonic() - renewed < self.timings.renew_deadline

    async def try_acquire_or_renew(self) -> bool:
        """One attempt, as client-go's leader election makes it: take the Lease if it is free, ours, or unrenewed
        for ``duration`` by our clock; never when someone else's renewal was seen within it."""
        sent_at = self._monotonic()
        now = _micro_time(self._wall())
        spec: dict[str, Any]
        lease = await self.api.get_lease(self.namespace, self.name)
        self.seen = True
        duration = max(1, round(self.timings.duration))
        if lease is None:
            created: dict[str, Any] = {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": duration,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            }
            try:
                await self.api.create_lease(self.namespace, self.name, created)
            except LeaseConflictError:
                return False
            return self._renewed(sent_at, previous="nobody: it did not exist")
        spec = dict(lease.get("spec") or {})
        holder = str(spec.get("holderIdentity") or "")
        record = (holder, spec.get("renewTime"), spec.get("leaseDurationSeconds"), spec.get("acquireTime"))
        if record != self._observed:
            self._observed, self._observed_at = record, sent_at
        self.holder = holder
        theirs = float(spec.get("leaseDurationSeconds") or self.timings.duration)
        if holder and holder != self.identity and self._monotonic() < self._observed_at + theirs:
            return False
        taking = holder != self.identity
        spec.update(
            holderIdentity=self.identity,
            leaseDurationSeconds=duration,
            renewTime=now,
            acquireTime=now if taking else spec.get("acquireTime", now),
            leaseTransitions=int(spec.get("leaseTransitions") or 0) + (1 if taking and holder else 0),
        )
        try:
            await self.api.replace_lease(
                self.namespace, self.name, str(lease["metadata"]["resourceVersion"]), spec
            )
        except LeaseConflictError:
            return False
        return self._renewed(sent_at, previous=holder or "nobody")

    def _renewed(self, sent_at: float, *, previous: str) -> bool:
        if not self.holds():
            logger.info("took the leader lease %s (held by %s before)", self.label, previous)
        self._problem = ""
        self._renewed_at = sent_at
        self.holder = self.identity
        self._observed = None
        return True

    async def _attempt(self, *, fatal: tuple[type[Exception], ...] = ()) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except Exception as error:  # the API unreachable or failing: the next attempt decides
            if isinstance(error, fatal):
                raise
            problem = f"{type(error).__name__}: {error}".splitlines()[0]
            if problem != self._problem:  # once per kind of trouble, not once per attempt
                logger.warning("leader lease %s: cannot read or write it (retrying): %s", self.label, problem)
            self._problem = problem
            return False

    async def acquire(self) -> None:
        """Until this replica holds the Lease. ``LeaseAccessError`` (credentials, RBAC) ends the wait: a standby
        that may not read the Lease would never take over. Only after ``ACCESS_GRACE`` seconds of refusals, though,
        for a replica that could read it before (in this process): a kube-apiserver just restarted refuses
        everything with 403 until its authorizer has read the RBAC objects."""
        refused_since: float | None = None
        while True:
            try:
                if await self._attempt(fatal=(LeaseAccessError,)):
                    return
                refused_since = None
            except LeaseAccessError as error:
                now = self._monotonic()
                if not (self.seen or self.granted_before):
                    raise
                if refused_since is None:
                    refused_since = now
                    logger.warning(
                        "leader lease %s: refused (%s); retrying for up to %g s: this replica could read it before",
                        self.label,
                        str(error).splitlines()[0],
                        ACCESS_GRACE,
                    )
                elif now - refused_since >= ACCESS_GRACE:
                    raise
            await asyncio.sleep(self.timings.retry_period / 2)

    async def keep(self) -> None:
        """Renew every ``retry_period`` while the renewals succeed in time; return when they did not for
        ``renew_deadline`` (the holder must stop: ``holds()`` is False from then on)."""
        while True:
            await asyncio.sleep(self.timings.retry_period)
            while not await self._attempt():
                if not self.holds():
                    logger.error(
                        "lost the leader lease %s: not renewed for %g s; writing stops, this replica stands by again",
                        self.label,
                        self.timings.renew_deadline,
                    )
                    return
                await asyncio.sleep(min(self.timings.retry_period / 4, 0.5))

    async def release(self) -> None:
        """Give the Lease up (a clean exit): a standby may take it at once."""
        if not self.holds():
            return
        self._renewed_at = None
        try:
            lease = await self.api.get_lease(self.namespace, self.name)
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            spec = dict(lease["spec"])
            spec.update(holderIdentity="", leaseDurationSeconds=1, renewTime=_micro_time(self._wall()))
            await self.api.replace_lease(
                self.namespace, self.name, str(lease["metadata"]["resourceVersion"]), spec
            )
            logger.info("released the leader lease %s", self.label)
        except Exception as error:  # it expires by itself then
            logger.warning("leader lease %s not released (it expires by itself): %s", self.label, error)


class LeaseKeeper:
    """Keeps renewing the Lease the elector holds, from a thread of its own (see the module's docstring).

    ``start()`` after the elector took the Lease; ``on_lost`` is called (from the thread) when renewals failed for
    the renew deadline; ``stop(release=...)`` ends the renewals and, by default, gives the Lease up."""

    def __init__(
        self, elector: LeaderElector, api: Callable[[], LeaseApi], on_lost: Callable[[], object]
    ) -> None:
        self.elector, self._api, self._on_lost = elector, api, on_lost
        self.lost = False
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._release = True
        self._thread = threading.Thread(target=self._run, name="kto-leader-lease", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self.elector.api = self._api()  # a client of this thread's loop
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self.elector.keep())
        self._ready.set()
        try:
            await self._task
            self.lost = True
            self._on_lost()
        except asyncio.CancelledError:
            if self._release:
                await self.elector.release()
        finally:
            close = getattr(self.elector.api, "close", None)
            if close is not None:
                await close()

    def stop(self, *, release: bool = True, timeout: float = 10.0) -> None:
        self._release = release
        if self._loop is not None and self._task is not None and not self._task.done():
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(timeout)
