"""One connected handle per KafkaCluster: its link (a kazoo client and the watched cluster view, or an Admin client
on the brokers: ``access.links``), a Reconciler and a Batcher.

The handle is the only place where the operator's asyncio world meets the clients' threads: the batch function,
the link's ``state()`` and connecting all block, so they run in a thread, never in kopf's event loop. Each cluster has a
thread of its own (``ClusterHandle.run``): a cluster whose ZooKeeper hangs holds that thread only, never the
threads the other clusters need, and its work runs in order. A KafkaCluster whose connection settings change (connect string, credentials, certificates:
see ``ClusterConfig.fingerprint``) gets a new session; a change of policy alone (``allowDelete``, prefixes, Kafka
version, ``reassignment``) keeps the session and only swaps the Reconciler.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from topic_operator.access.address import spec_identity
from topic_operator.access.interface import ClusterUnavailableError
from topic_operator.access.links import ClusterLink, open_link
from topic_operator.k8s.kafkaclusters.batching import Batcher
from topic_operator.k8s.kafkaclusters.cluster_config import ClusterConfig
from topic_operator.k8s.process.metrics import Metrics
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.kafka.kraft_migration import WriterChoice
from topic_operator.model import ClusterSpec, ClusterState, TopicSpec, TopicState
from topic_operator.plan import TopicPlan
from topic_operator.reconcile import Judge, Reconciler, TopicOutcome, TopicResult
from topic_operator.tenants.rules import Tenant, plan_judge

__all__ = ["ClusterHandle", "ClusterKey", "ClusterRegistry", "TopicKey", "TopicReport", "TopicRequest"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

ClusterKey = tuple[str, str]
"""(namespace, KafkaCluster name)."""
TopicKey = tuple[str, str]
"""(namespace, KafkaTopic name): one batch entry per KafkaTopic object."""


@dataclass(frozen=True, slots=True)
class TopicRequest:
    spec: TopicSpec
    deleting: bool = False
    """The KafkaTopic is being deleted: ``spec`` is planned as a removal (its deletionPolicy decides)."""
    tenant: Tenant | None = None
    """The KafkaTopic's namespace as a tenant of the KafkaCluster (another namespace than the cluster's): its
    plan is judged against that grant's limits and quota (None: the cluster's own namespace, not limited)."""


@dataclass(frozen=True, slots=True)
class TopicReport:
    """One topic's share of a batch."""

    result: TopicResult | None
    """What the engine did (None only if it reported nothing for the topic)."""
    state: TopicState | None
    """The topic in Kafka after the batch (re-read when something was written)."""
    remaining: TopicPlan | None
    """The topic planned again against that state: what still differs (drift) and what is still pending."""


def _with_fresh(state: ClusterState, fresh: ClusterState, names: Iterable[str | TopicSpec]) -> ClusterState:
    """``state`` with the named topics as ``fresh`` (a targeted read) has them, absent ones removed."""
    topics = dict(state.topics)  # a copy in C, then a few removals: not a comprehension over every topic
    for name in names:
        topics.pop(name.name if isinstance(name, TopicSpec) else name, None)
    topics.update(fresh.topics)
    return dataclasses.replace(state, topics=topics, marked_for_deletion=fresh.marked_for_deletion)


def _judge(items: Sequence[tuple[TopicKey, TopicRequest]]) -> Judge | None:
    """The grants' verdict on a batch's plan, for its KafkaTopics of other namespaces, in the order they came:
    one batch runs at a time per cluster, so each judges usage with every earlier write in Kafka."""
    tenants = {request.spec.name: request.tenant for _, request in items if request.tenant is not None}
    return plan_judge(tenants, (request.spec for _, request in items))


class ClusterHandle:
    """A connected KafkaCluster. Build with ``ClusterRegistry.configure``; blocking methods say so."""

    def __init__(
        self,
        key: ClusterKey,
        spec: ClusterSpec,
        body: Mapping[str, Any],
        config: ClusterConfig,
        link: ClusterLink,
        settings: OperatorSettings,
        metrics: Metrics,
        executor: ThreadPoolExecutor,
    ) -> None:
        self.key = key
        self.executor = executor
        """This cluster's own thread, for everything of it that blocks (see the module docstring)."""
        self.label = f"{key[0]}/{key[1]}"
        self.spec = spec
        self.body = body
        self.fingerprint = config.fingerprint
        self.identity = spec_identity(spec.zookeeper_connect, spec.bootstrap_servers)
        self.link = link
        """Its ZooKeeper session and watched view, or its Admin client on the brokers."""
        self.deadline = settings.zk_deadline
        """How long the cluster may keep each step of a batch waiting (``KTO_ZK_DEADLINE``)."""
        self.reconciler = Reconciler(link.store, spec, deadline=self.deadline)
        self.announced = False
        """Whether its Connected Event was posted: once per session, whoever connected it first."""
        self.writer: WriterChoice | None = None
        """The migration's stage and writer as last reported in the KafkaCluster's status: a change is one Event."""
        self._metrics = metrics
        self.batcher: Batcher[TopicKey, TopicRequest, TopicReport] = Batcher(
            self.run_batch,
            linger=settings.batch_linger,
            max_batch=settings.batch_max_size,
            max_pending=settings.queue_size,
            offer_timeout=settings.queue_wait,
            on_depth=lambda depth: metrics.queue_depth.labels(self.label).set(depth),
            name=self.label,
            executor=executor,
        )

    @property
    def address(self) -> str:
        """What messages name the cluster by: its ZooKeeper connect string, or its bootstrap servers."""
        return self.link.address

    @property
    def alive(self) -> bool:
        """The link is up right now: a ZooKeeper session is held, or the brokers answered the last read."""
        return self.link.alive

    def needs_new_session(self, now: float | None = None) -> str | None:
        """Why this link must be replaced by a new one, or None while it can still recover by itself."""
        busy = self.batcher.running_for() != 0
        return self.link.needs_new_session(time.monotonic() if now is None else now, busy)

    def stage_may_have_moved(self) -> bool:
        """Without blocking: whether the migration's stage may have changed since the last state was read."""
        return self.link.stage_may_have_moved()

    def writer_now(self) -> WriterChoice | None:
        """Blocking. The path changes would take now (None: a cluster reached through its brokers alone)."""
        return self.link.writer_now()

    def update_policy(self, spec: ClusterSpec, body: Mapping[str, Any]) -> None:
        """New policy, same session: the next batch plans with it."""
        self.spec, self.body = spec, body
        self.reconciler = Reconciler(self.link.store, spec, deadline=self.deadline)

    def check(self) -> ClusterState:
        """Blocking. Refuse a path that is not a Kafka cluster, then read (and watch) the whole cluster."""
        return self.link.check()

    def state(self) -> ClusterState:
        """Blocking. The cluster as the watches last saw it (re-reading only what changed), or as the brokers
        describe it now."""
        return self.link.state()

    def state_for(self, topics: Collection[str]) -> ClusterState:
        """Blocking. ``state()``, with the overrides of ``topics`` at least: through the brokers, only theirs
        are described (the others' cost requests and are not planned)."""
        return self.link.state_for(topics)

    def run_batch(self, items: Sequence[tuple[TopicKey, TopicRequest]]) -> dict[TopicKey, TopicReport]:
        """Blocking (a worker thread). One plan and one pipelined apply for every topic of the batch."""
        started = time.monotonic()
        reconciler = self.reconciler
        desired = [request.spec for _, request in items if not request.deleting]
        deleting = [request.spec for _, request in items if request.deleting]
        state = self.link.state_for([request.spec.name for _, request in items])
        if deleting:  # never decide "already gone" from a view whose watches may lag: read those topics now
            fresh = self.link.read([s.name for s in deleting])
            state = _with_fresh(state, fresh, deleting)
        report = reconciler.apply(desired, deleting=deleting, state=state, judge=_judge(items))
        results = {result.topic: result for result in report.results}
        written = [topic for topic, result in results.items() if result.outcome is TopicOutcome.APPLIED]
        after = state
        if (
            written and report.interrupted is None
        ):  # the watches may lag: read what we wrote, for an exact status
            try:
                gone = {s.name for s in deleting}
                present = [topic for topic in written if topic not in gone]
                after = _with_fresh(state, self.link.read(written, present=present), written)
            except ClusterUnavailableError as error:  # written all the same: the next reconcile reads it
                logger.warning(
                    "KafkaCluster %s: the batch's writes landed, re-reading them failed: %s",
                    self.label,
                    error,
                )
        remaining = reconciler.plan(desired, state=after) if desired else None
        self._metrics.batch_duration.labels(self.label).observe(time.monotonic() - started)
        self._metrics.batch_size.labels(self.label).observe(len(items))
        return {
            key: TopicReport(
                result=results.get(request.spec.name),
                state=after.topics.get(request.spec.name),
                remaining=None
                if remaining is None or request.deleting
                else remaining.for_topic(request.spec.name),
            )
            for key, request in items
        }

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn`` (blocking) in this cluster's thread, after the work already queued there."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn)

    async def close(self) -> None:
        await self.batcher.close()
        self.link.stop_listening()
        # Not in the cluster's thread, which may be the stuck one; closing is bounded by the connection layer.
        await asyncio.to_thread(self.link.close)
        self.executor.shutdown(wait=False, cancel_futures=True)
        self._metrics.connected.labels(self.label).set(0)


class ClusterRegistry:
    """Every connected KafkaCluster of this operator, by (namespace, name)."""

    def __init__(
        self,
        settings: OperatorSettings,
        metrics: Metrics,
        *,
        may_write: Callable[[], bool] | None = None,
    ) -> None:
        self._settings = settings
        self._metrics = metrics
        self._may_write = may_write
        """Every cluster's writer asks it before each transaction (``leadership``: the leader lease held)."""
        self._handles: dict[ClusterKey, ClusterHandle] = {}
        self.closed = False
        """Set by ``close()`` (the operator is stopping): no session is opened any more."""
        self._changed: asyncio.Condition | None = None
        self._locks: dict[ClusterKey, asyncio.Lock] = {}

    def get(self, key: ClusterKey) -> ClusterHandle | None:
        return self._handles.get(key)

    def handles(self) -> list[ClusterHandle]:
        return list(self._handles.values())

    def identity(self, key: ClusterKey) -> str | None:
        handle = self._handles.get(key)
        return handle.identity if handle is not None else None

    async def wait_for(self, key: ClusterKey, timeout: float) -> ClusterHandle | None:
        """The handle, waiting up to ``timeout`` seconds for its first connection (start-up order)."""
        changed = self._condition()
        async with changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait_for(lambda: key in self._handles), timeout)
        return self._handles.get(key)

    async def configure(
        self, key: ClusterKey, spec: ClusterSpec, body: Mapping[str, Any], config: ClusterConfig
    ) -> ClusterHandle:
        """Connect (or keep the session when nothing about it changed); raises the ZooKeeper error when the
        cluster cannot be reached or does not look like a Kafka cluster, leaving no handle behind."""
        async with self._locks.setdefault(key, asyncio.Lock()):
            if self.closed:
                raise ClusterUnavailableError("the operator is stopping: no new session is opened")
            current = self._handles.get(key)
            if (
                current is not None
                and current.fingerprint == config.fingerprint
                and current.needs_new_session() is None
            ):
                current.update_policy(spec, body)
                return current
            if current is not None:
                await self._drop(key)
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"kto-{key[0]}-{key[1]}")
            loop = asyncio.get_running_loop()
            try:
                link = await loop.run_in_executor(executor, self._link, spec, config)
            except BaseException:
                executor.shutdown(wait=False)
                raise
            handle = ClusterHandle(key, spec, body, config, link, self._settings, self._metrics, executor)
            try:
                await handle.run(handle.check)
            except BaseException:
                link.stop_listening()
                await asyncio.to_thread(link.close)
                executor.shutdown(wait=False)
                raise
            self._handles[key] = handle
            self._metrics.connected.labels(handle.label).set(1)
            logger.info("connected to KafkaCluster %s at %s", handle.label, handle.address)
        changed = self._condition()
        async with changed:
            changed.notify_all()
        return handle

    def _link(self, spec: ClusterSpec, config: ClusterConfig) -> ClusterLink:
        """Blocking. A new link to the cluster (``access.links.open_link``): a kazoo session, an Admin client whose
        bootstrap succeeded, or both."""
        return open_link(
            config.settings,
            config.brokers,
            zookeeper_address=spec.zookeeper_connect,
            deadline=self._settings.zk_deadline,
            bootstrap_timeout=self._settings.zk_connection_timeout,
            may_write=self._may_write,
            stopping=lambda: self.closed,
        )

    async def remove(self, key: ClusterKey) -> None:
        async with self._locks.setdefault(key, asyncio.Lock()):
            await self._drop(key)

    async def close(self) -> None:
        """The operator is stopping: close every session, and open none from now on."""
        self.closed = True
        await self.remove_all()

    async def remove_all(self) -> None:
        """Close every session (the registry stays open: a test's next event loop connects again)."""
        for key in list(self._handles):
            await self.remove(key)

    async def _drop(self, key: ClusterKey) -> None:
        handle = self._handles.pop(key, None)
        if handle is not None:
            await handle.close()
            logger.info("disconnected from KafkaCluster %s", handle.label)

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed
