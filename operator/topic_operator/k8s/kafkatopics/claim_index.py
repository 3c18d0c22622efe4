"""Every KafkaTopic's claim on a Kafka topic name, kept current from the watch: the operator's own index.

kopf has indices (``kopf.index``), and this was one. But for an indexed kind, kopf holds every handler of every
object until its first list is indexed, and does so with one toggle per object in a shared condition: each
object's toggle, made and dropped, wakes every object already waiting. That is O(N²) wake-ups per start. With
10,000 KafkaTopics, kopf indexed its first list at about 13 objects a second, with a full core busy, and the
operator took over ten minutes to start. Here the watch's own event handler keeps the index, and ``readiness``
holds the handlers that decide ownership behind one event, set once when kopf's first list has been seen.

Pure: plain claims in, plain claims out; nothing here talks to an API.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping

from topic_operator.k8s.kafkatopics.ownership import ClusterKey, TopicClaim

__all__ = ["ClaimIndex"]

ObjectKey = tuple[str, str]
"""(namespace, KafkaTopic name): one claim per object, as kopf's index kept one entry per object."""
TenantKey = tuple[ClusterKey, str]
"""(the KafkaCluster, a namespace other than its own whose KafkaTopics name it)."""


class ClaimIndex(Mapping[str, Collection[TopicClaim]]):
    """The claims by Kafka topic name (``ownership.ClaimsByTopic``): one topic's claims in O(1)."""

    def __init__(self) -> None:
        self._by_topic: dict[str, TopicClaim | dict[ObjectKey, TopicClaim]] = {}
        """A topic's one claim, or its claims by object when there are several: nearly every topic has one,
        and a dict of one claim would cost every KafkaTopic a dict's 232 bytes."""
        self._by_object: dict[ObjectKey, TopicClaim] = {}
        self._by_tenant: dict[TenantKey, dict[ObjectKey, str]] = {}
        self._by_cluster: dict[ClusterKey, dict[ObjectKey, TopicClaim]] = {}

    def put(self, claim: TopicClaim) -> None:
        """The object's claim as last seen; its previous claim, on another topic name, is gone."""
        key = (claim.namespace, claim.name)
        self.drop(*key)
        self._by_object[key] = claim
        store = self._by_topic.get(claim.topic)
        if store is None:
            self._by_topic[claim.topic] = claim
        elif isinstance(store, dict):
            store[key] = claim
        else:
            self._by_topic[claim.topic] = {(store.namespace, store.name): store, key: claim}
        self._by_cluster.setdefault(claim.cluster_key, {})[key] = claim
        if claim.cluster_key[0] != claim.namespace:  # a tenant of another namespace's KafkaCluster
            self._by_tenant.setdefault((claim.cluster_key, claim.namespace), {})[key] = claim.topic

    def drop(self, namespace: str, name: str) -> None:
        """The object is gone, or claims nothing any more."""
        previous = self._by_object.pop((namespace, name), None)
        if previous is None:
            return
        store = self._by_topic[previous.topic]
        if not isinstance(store, dict):
            del self._by_topic[previous.topic]
        else:
            del store[(namespace, name)]
            if len(store) == 1:
                [self._by_topic[previous.topic]] = store.values()
        cluster = self._by_cluster[previous.cluster_key]
        del cluster[(namespace, name)]
        if not cluster:
            del self._by_cluster[previous.cluster_key]
        tenant = (previous.cluster_key, namespace)
        topics = self._by_tenant.get(tenant)
        if topics is not None:
            topics.pop((namespace, name), None)
            if not topics:
                del self._by_tenant[tenant]

    def tenant_topics(self, cluster: ClusterKey, namespace: str) -> frozenset[str]:
        """The topic names the KafkaTopics of ``namespace`` declare on the KafkaCluster ``cluster`` of another
        namespace: what that namespace's usage is counted over. In O(its own KafkaTopics)."""
        return frozenset(self._by_tenant.get((cluster, namespace), {}).values())

    def tenant_claims(self, cluster: ClusterKey, namespace: str) -> list[TopicClaim]:
        """The claims of ``namespace``'s KafkaTopics on the KafkaCluster ``cluster`` of another namespace."""
        return [self._by_object[key] for key in self._by_tenant.get((cluster, namespace), {})]

    def tenants_of(self, cluster: ClusterKey) -> dict[str, frozenset[str]]:
        """Every other namespace with KafkaTopics on ``cluster``, with their topic names."""
        return {
            namespace: frozenset(topics.values())
            for (key, namespace), topics in self._by_tenant.items()
            if key == cluster
        }

    def of_cluster(self, cluster: ClusterKey) -> list[TopicClaim]:
        """The claims of the KafkaTopics naming the KafkaCluster ``cluster``: a drift check's work list, without
        looking at every other cluster's KafkaTopics."""
        return list(self._by_cluster.get(cluster, {}).values())

    def topics_of(self, clusters: Iterable[ClusterKey]) -> set[str]:
        """The topic names the KafkaTopics naming any of ``clusters`` declare."""
        names: set[str] = set()
        for cluster in clusters:
            names.update(claim.topic for claim in self._by_cluster.get(cluster, {}).values())
        return names

    def clusters(self) -> list[ClusterKey]:
        """Every KafkaCluster some KafkaTopic names."""
        return list(self._by_cluster)

    @property
    def objects(self) -> int:
        """How many KafkaTopics claim a topic."""
        return len(self._by_object)

    def claims(self) -> Iterator[TopicClaim]:
        """Every claim, of every cluster (the drift check and the managed count read one cluster's through
        ``of_cluster`` and ``topics_of``): never per event."""
        return iter(self._by_object.values())

    def __getitem__(self, topic: str) -> Collection[TopicClaim]:
        store = self._by_topic[topic]
        return store.values() if isinstance(store, dict) else (store,)

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_topic)

    def __len__(self) -> int:
        return len(self._by_topic)
