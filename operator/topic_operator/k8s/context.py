"""Everything a handler needs, in one object kopf hands to every handler as ``memo.kto``.

Tests build one with a recording ``KubernetesApi`` and ``EventSink`` (the seam) and a real ``ClusterRegistry``
that connects to a real ZooKeeper; production builds it in ``kto run``.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from topic_operator.k8s.kafkaclusters.registry import ClusterKey, ClusterRegistry
from topic_operator.k8s.kafkatopics.claim_index import ClaimIndex
from topic_operator.k8s.process.kube_api import EventSink, KubernetesApi, patch_status_over
from topic_operator.k8s.process.lru import Lru
from topic_operator.k8s.process.metrics import Metrics
from topic_operator.k8s.process.readiness import Readiness
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.manifests.limits import ManifestLimits
from topic_operator.model import TopicSpec
from topic_operator.tenants.grants import Tenancy, read_tenancy

__all__ = ["OperatorContext", "QueuedTopicWork", "utc_now"]


class QueuedTopicWork(Protocol):
    """What the rest of the operator asks of its KafkaTopic work (``topic_work.TopicWork``, made by the handlers):
    whether a KafkaTopic is its already, and to stop. A protocol, so that the context, which every module of the
    operator reads, imports none of them."""

    def busy_with(self, namespace: str, name: str) -> bool: ...

    def retry_now(self, namespace: str, name: str) -> bool: ...

    async def close(self) -> None: ...


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class OperatorContext:
    def __init__(
        self,
        settings: OperatorSettings,
        api: KubernetesApi,
        events: EventSink,
        *,
        metrics: Metrics | None = None,
        clock: Callable[[], datetime.datetime] = utc_now,
        manifest_limits: ManifestLimits | None = None,
        may_write: Callable[[], bool] | None = None,
    ) -> None:
        self.settings = settings
        self.api = api
        self.events = events
        self.metrics = metrics if metrics is not None else Metrics()
        self.clusters = ClusterRegistry(settings, self.metrics, may_write=may_write)
        self.clock = clock
        self.manifest_limits = manifest_limits if manifest_limits is not None else ManifestLimits()
        """What an API object may hold (depth, strings, size) before it is read: read once at start-up."""
        self.readiness = Readiness(("kafkatopics", "kafkaclusters"))
        self.claims = ClaimIndex()
        """Every KafkaTopic's claim, by topic name, kept by the KafkaTopic watch handler; complete once
        ``readiness.listed("kafkatopics")`` returns."""
        self.validations: Lru[object, tuple[tuple[object, ...], TopicSpec | None, tuple[str, ...]]] = Lru(
            50_000
        )
        """Each KafkaTopic's (by uid) latest validation and the spec versions it holds for (see
        ``topics.validate_topic``)."""
        self.stop_flag: asyncio.Event | None = None
        """kopf's stop flag, when the operator has one (leader election: set when the Lease is lost)."""
        self.cluster_statuses: dict[ClusterKey, Mapping[str, Any]] = {}
        """The status last written to each KafkaCluster, by its handlers or its session keeper: each skips a
        write the other made, whose watch event has not arrived yet."""
        self.session_heartbeats: dict[ClusterKey, float] = {}
        """When each KafkaCluster's session keeper last went round (monotonic; ``sessions.keep_session``):
        liveness fails when one stops going round."""
        self.api_session: Any = None
        """kopf's bounded session of the last login (``login``), when the operator made it: status patches go
        over it rather than ``api``'s own client."""
        self.topic_work: QueuedTopicWork | None = None
        """The KafkaTopic reconciles (``topic_work``), made by the watch-event handler on first use."""
        self.cluster_identities: Mapping[ClusterKey, Any] = {}
        """kopf's index of KafkaCluster identities, as the last KafkaTopic watch event handed it over."""
        self.cluster_bodies: dict[ClusterKey, Mapping[str, Any]] = {}
        """The last seen body of every KafkaCluster, connected or not: KafkaTopics are validated against it
        (Kafka version, topic prefixes) and judged against its grants even while their cluster is unreachable."""
        self.namespace_labels: Mapping[str, Any] = {}
        """kopf's index of every namespace's labels (name -> its labels), as the last KafkaTopic watch event
        handed it over: what grants that select namespaces by label match."""
        self._tenancies: dict[ClusterKey, tuple[tuple[object, object], Tenancy]] = {}

    def labels_of(self, namespace: str) -> Mapping[str, str] | None:
        """The namespace's labels, or None when no Namespace of that name is known."""
        found = next(iter(self.namespace_labels.get(namespace, ())), None)
        return found if isinstance(found, Mapping) else None

    def tenancy_of(self, key: ClusterKey) -> Tenancy | None:
        """The grants of KafkaCluster ``key`` (None: no such KafkaCluster known), read once per version of it."""
        body = self.cluster_bodies.get(key)
        if body is None:
            return None
        metadata = body.get("metadata") or {}
        version = (metadata.get("uid"), metadata.get("generation"))
        known = self._tenancies.get(key)
        if known is not None and known[0] == version and version != (None, None):
            return known[1]
        tenancy = read_tenancy(key[0], (body.get("spec") or {}).get("tenants"))
        self._tenancies[key] = (version, tenancy)
        return tenancy

    async def patch_status(self, plural: str, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        """Merge-patch an object's status: over kopf's session once logged in, else through ``api``."""
        if self.api_session is not None:
            await patch_status_over(self.api_session, plural, namespace, name, status)
        else:
            await self.api.patch_status(plural, namespace, name, status)
