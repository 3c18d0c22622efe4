"""Each KafkaCluster keeps a ZooKeeper session for as long as it exists: a lost one is replaced, visibly.

kazoo reconnects by itself through short outages (same session, or a new one after an expiry). It stops for
good when its retry policy is spent or authentication is refused, and it never gets back to a server restarted
on a fresh data directory (that server refuses a client that has seen a later zxid than its own). Before this
module, such a cluster was reconnected only by the KafkaCluster's next drift timer (every ``drift_interval``,
300 s by default), and until then its changes were refused as "not connected" with ``/healthz`` at 200.

Here one keeper per KafkaCluster (a kopf daemon: it lives exactly as long as the object, and stops while a
peer holds the operator) looks at the session every second:

- connected: nothing to do;
- disconnected while kazoo is still reconnecting: the state is reported (Ready=False, ``ClusterUnavailable``),
  nothing else;
- no session, or one ``ClusterHandle.needs_new_session`` gives up on: a new client is opened (the Secrets read
  again, so rotated credentials are picked up), with a back-off of 1, 2, 4, then 5 s between tries;
- back: Ready=True again, and the cluster's unsettled KafkaTopics (changed during the outage) are reconciled at
  once, not at kopf's next retry.

A cluster migrating to KRaft is looked at too: when a watch shows ``/controller``, ``/migration`` or the
registered brokers changed, and the stage now calls for another writer (or none), the round runs at once. It
reports the new stage (one log line, one Event), and reconciles the KafkaTopics whose changes waited for it.

A change of the KafkaCluster's grants (``spec.tenants``) runs the round at once too: it judges again the
KafkaTopics the old grants refused, and reports each namespace's usage under the new ones.

The same loop runs the cluster's periodic round every ``drift_interval``: describe it in its status, and check
its KafkaTopics for drift. A cluster written through its brokers (KRaft) has no watch to tell of a change made
behind the operator's back, so its round runs every ``kraft_poll_interval`` instead, when that is shorter. (It
was a kopf timer; a timer sleeping its interval at shutdown kept kopf waiting 5 s for it, and a second
per-cluster task did not earn its keep.)

Every change of state is one log line, one Event and one status write, never one per retry; the
``kto_cluster_connected`` gauge follows. Each round leaves a heartbeat, which liveness reads: a keeper that
stopped going round (its cluster's thread hung) means the process can no longer recover by itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from topic_operator.k8s.conditions import READY, Condition, Reason
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.kafkaclusters.cluster_config import reaches_brokers
from topic_operator.k8s.kafkaclusters.clusters import CLUSTER_FAILURES, writer_moved
from topic_operator.k8s.kafkaclusters.registry import ClusterHandle
from topic_operator.k8s.records import Verdict
from topic_operator.k8s.status import cluster_status, same_status

__all__ = ["CHECK_INTERVAL", "Backoff", "Stopped", "keep_session"]

logger = logging.getLogger(__name__)

CHECK_INTERVAL = 1.0
"""Seconds between two looks at a session: how soon a lost one is noticed."""


class Stopped(Protocol):
    """kopf's ``stopped`` flag of a daemon: true once it must exit."""

    def __bool__(self) -> bool: ...


STOP_POLL = 0.2
"""Seconds between two looks at ``stopped`` while pausing."""


async def _pause(stopped: Stopped, seconds: float) -> None:
    """Sleep ``seconds``, or less once ``stopped``. Not kopf's ``stopped.wait(timeout)``: each of those calls
    leaves a task that ends in ``TimeoutError``, and kopf re-raises it when it stops during one (kopf 1.45)."""
    deadline = time.monotonic() + seconds
    while not stopped and (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(min(left, STOP_POLL))


@dataclass
class Backoff:
    """1, 2, 4, then ``most`` seconds between reconnection tries; back to ``first`` once connected."""

    first: float = 1.0
    most: float = 5.0
    _next: float = field(default=0.0, init=False)

    def next(self) -> float:
        delay = self._next or self.first
        self._next = min(delay * 2, self.most)
        return delay

    def reset(self) -> None:
        self._next = 0.0


async def keep_session(
    ctx: OperatorContext,
    body: Callable[[], Mapping[str, Any]],
    stopped: Stopped,
    *,
    round_: Callable[[], Awaitable[Verdict]],
    every: float,
    poll_every: float | None = None,
) -> None:
    """Keep the session of the KafkaCluster ``body()`` (its latest body) until ``stopped``, and run ``round_``
    (connect if needed, describe the cluster, check its KafkaTopics for drift) at start, every ``every``
    seconds, and as soon as a lost session is back. ``round_`` returns the cluster's verdict; this reports it.

    ``poll_every``: the seconds between rounds of a cluster whose link is ``polled`` (written through the
    brokers, where only a read tells of a change), when shorter than ``every``; each such round waits at least
    three times as long as the last one took."""
    first = body()
    metadata = first.get("metadata") or {}
    key = (str(metadata.get("namespace", "")), str(metadata.get("name", "")))
    label = f"{key[0]}/{key[1]}"
    backoff = Backoff()
    down: _Down | None = None
    next_round = 0.0
    granted: object = None  # spec.tenants as of the last round: a change of the grants runs the round at once
    while not stopped and not ctx.clusters.closed:
        ctx.session_heartbeats[key] = time.monotonic()
        if (body().get("metadata") or {}).get("deletionTimestamp"):
            return  # being deleted: its delete handler closes the session; never open another
        handle = ctx.clusters.get(key)
        lost = handle is not None and not handle.alive
        why = handle.needs_new_session() if handle is not None and lost else None
        if handle is not None and not lost and down is None and time.monotonic() < next_round:
            if handle.stage_may_have_moved() and await _writer_moved(handle):
                next_round = 0.0  # the round reports the new stage and retries the changes that waited
                continue
            if (body().get("spec") or {}).get("tenants") != granted:
                next_round = 0.0  # the round judges the KafkaTopics the grants refused, and reports usage
                continue
            await _pause(stopped, CHECK_INTERVAL)
            continue
        if lost and why is None:  # kazoo is reconnecting by itself: say so once, and let it
            lost_what = handle.link.connection if handle is not None else "connection"
            down = await _went_down(ctx, body(), label, down, f"{lost_what} lost; reconnecting")
            await _pause(stopped, CHECK_INTERVAL)
            continue
        granted = (body().get("spec") or {}).get("tenants")
        started = time.monotonic()
        verdict = await round_()  # connects first when there is no session, or a dead one
        next_round = time.monotonic() + _interval(ctx.clusters.get(key), every, poll_every, started)
        if verdict.retry is None:
            if down is not None:
                back = "connection to the brokers" if reaches_brokers(body()) else "ZooKeeper session"
                logger.info("KafkaCluster %s: %s back; serving it again", label, back)
            down = None
            backoff.reset()
            ctx.metrics.connected.labels(label).set(1)
            await _report(ctx, body(), verdict)
            await _pause(stopped, CHECK_INTERVAL)
            continue
        message = verdict.retry if why is None else f"{why}; a new session: {verdict.retry}"
        down = await _went_down(ctx, body(), label, down, message, verdict=verdict)
        await _pause(stopped, backoff.next())


POLL_COST_FACTOR = 3.0
"""A polled round waits at least this many times as long as the last round took."""


def _interval(handle: ClusterHandle | None, every: float, poll_every: float | None, started: float) -> float:
    """Seconds until the next round: ``every``, or for a polled link ``poll_every`` stretched by the last round's
    cost, whichever is shorter."""
    if poll_every is None or handle is None or not handle.link.polled:
        return every
    took = time.monotonic() - started
    return min(every, max(poll_every, POLL_COST_FACTOR * took))


async def _writer_moved(handle: ClusterHandle) -> bool:
    """Whether the migration to KRaft moved to another stage or writer than the status reports. A failure to
    tell is left to the next round, which reports it."""
    try:
        return writer_moved(handle.writer, await handle.run(handle.writer_now)) is not None
    except CLUSTER_FAILURES:
        return False


@dataclass
class _Down:
    since: float
    kind: str


async def _went_down(
    ctx: OperatorContext,
    body: Mapping[str, Any],
    label: str,
    down: _Down | None,
    message: str,
    *,
    verdict: Verdict | None = None,
) -> _Down:
    """Report the cluster as not served: once per kind of trouble (one log line, Event and status write)."""
    kind = verdict.result if verdict is not None else "disconnected"
    ctx.metrics.connected.labels(label).set(0)
    if down is not None and down.kind == kind:
        return down
    if down is None:
        logger.warning("KafkaCluster %s: not served: %s", label, message)
    else:
        logger.warning("KafkaCluster %s: still not served, now: %s", label, message)
    if verdict is None:
        ready = Condition(READY, False, Reason.CLUSTER_UNAVAILABLE, message)
        status = cluster_status(
            generation=(body.get("metadata") or {}).get("generation"),
            state=None,
            declared=(),
            ready=ready,
            previous=body.get("status"),
            now=ctx.clock(),
        )
        verdict = Verdict(status, kind, ())
    await _report(ctx, body, verdict, event=(Reason.CLUSTER_UNAVAILABLE.value, message))
    return _Down(since=down.since if down is not None else time.monotonic(), kind=kind)


async def _report(
    ctx: OperatorContext, body: Mapping[str, Any], verdict: Verdict, *, event: tuple[str, str] | None = None
) -> None:
    """The verdict's status, when it differs from the one the object has (and from the one last written, whose
    watch event may not have arrived yet), and its Events (or ``event``)."""
    metadata = body.get("metadata") or {}
    namespace, name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
    written = ctx.cluster_statuses.get((namespace, name))
    if same_status(body.get("status"), verdict.status) or (
        written is not None and same_status(written, verdict.status)
    ):
        return
    ctx.cluster_statuses[(namespace, name)] = verdict.status
    try:
        await ctx.api.patch_status("kafkaclusters", namespace, name, verdict.status)
    except Exception as error:  # the API may be down too; the next change of state writes again
        logger.warning("status of KafkaCluster %s/%s not written: %s", namespace, name, error)
    events = [(e.type, e.reason, e.message) for e in verdict.events]
    if event is not None and not events:
        events = [("Warning", *event)]
    for kind, reason, message in events:
        ctx.events.post(body, type=kind, reason=reason, message=message)
