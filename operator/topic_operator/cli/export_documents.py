"""A live cluster -> KafkaTopic documents that declare it as it is (``kto export``), to bring existing clusters
under management without writing every declaration by hand.

Each exported topic says what ZooKeeper holds: its partition count, the replication factor of partition 0 (what
Kafka's own tools take as the topic's), the config overrides exactly as stored (those of the keys the KafkaTopics
own, when the KafkaCluster leaves some to other tools), and with ``with_assignment`` every
partition's replicas. So ``kto plan -f`` of the export plans nothing for every topic exported (the round-trip
property, tested against a real ZooKeeper).

Left out, each with a note: Kafka's internal topics (kafka-topic-operator never manages them), topics marked for
deletion (Kafka is deleting them), and, with ``declared``, the topics a team's manifests already declare. Kept with
a comment: topics whose partitions have different replication factors (exported with partition 0's, which ``kto
plan`` takes as the topic's, as Kafka's addPartitions does; with ``with_assignment`` plan refuses them, since a
replicaAssignment declares one factor), and topics whose znode cannot be read (a comment alone, saying that plan
refuses them: nothing of them can be said).

Pure: a ``ClusterState`` in, documents and notes out.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

from topic_operator.kafka.topic_names import is_internal
from topic_operator.manifests.schema import API_VERSION
from topic_operator.manifests.topic_documents import object_name, object_names, topic_documents
from topic_operator.model import ALL_CONFIG_MANAGED, ClusterState, ManagedConfig, TopicSpec, TopicState

__all__ = ["Export", "ExportedTopic", "TopicFilter", "cluster_document", "export_cluster"]

KAFKA_VERSION: Final = "3.4"
"""The kafkaVersion of an exported KafkaCluster unless ``kto export --kafka-version`` says otherwise: the
default release line."""


@dataclass(frozen=True, slots=True)
class TopicFilter:
    """Which topic names are exported: those ``include`` matches whole (all when None) and ``exclude`` does not."""

    include: re.Pattern[str] | None = None
    exclude: re.Pattern[str] | None = None

    def __call__(self, name: str) -> bool:
        if self.include is not None and self.include.fullmatch(name) is None:
            return False
        return self.exclude is None or self.exclude.fullmatch(name) is None


@dataclass(frozen=True, slots=True)
class ExportedTopic:
    topic: str
    file_name: str
    """A valid object name, safe as a file name."""
    document: dict[str, Any] | None
    """None for a topic whose znode cannot be read."""
    comment: str | None = None
    """Why ``kto plan`` will refuse it, when it will."""


@dataclass(frozen=True, slots=True)
class Export:
    topics: tuple[ExportedTopic, ...]
    notes: tuple[str, ...]
    """One line per topic left out, and why."""


def cluster_document(
    name: str,
    connect: str | None,
    kafka_version: str = KAFKA_VERSION,
    *,
    bootstrap_servers: str | None = None,
) -> dict[str, Any]:
    """The KafkaCluster an export's topics name, reached as the export reached it: its ZooKeeper, or its brokers
    (credentials and TLS are for the user to add)."""
    reach: dict[str, Any] = (
        {"bootstrapServers": bootstrap_servers} if bootstrap_servers else {"zookeeper": {"connect": connect}}
    )
    return {
        "apiVersion": API_VERSION,
        "kind": "KafkaCluster",
        "metadata": {"name": name},
        "spec": {**reach, "kafkaVersion": kafka_version},
    }


def export_cluster(
    state: ClusterState,
    *,
    cluster: str,
    target: str = "kto",
    with_assignment: bool = False,
    wanted: TopicFilter | None = None,
    declared: Collection[str] = (),
    managed: ManagedConfig = ALL_CONFIG_MANAGED,
) -> Export:
    """Every topic of ``state`` that ``wanted`` selects, as a document naming KafkaCluster ``cluster``, with the
    overrides of the keys the KafkaTopics own (``managed``, the KafkaCluster's ``managedTopicConfig``): a key left
    to other tools is not declared, since declaring it would be refused, and applying it would take it from them."""
    chosen = wanted or TopicFilter()
    notes: list[str] = []
    specs: list[TopicSpec] = []
    comments: dict[str, str] = {}
    for name in sorted(state.topics):
        topic = state.topics[name]
        skipped = _skipped(name, topic, state, chosen, declared)
        if skipped is not None:
            if skipped:
                notes.append(f"topic {name}: not exported: {skipped}")
            continue
        specs.append(_spec(cluster, topic, with_assignment, managed))
        factors = sorted({len(replicas) for replicas in topic.partitions.values()})
        if len(factors) > 1:
            listed = ", ".join(map(str, factors))
            comments[name] = (
                f"kto plan will refuse topic {name}: its partitions have replication factors {listed}, and a "
                "replicaAssignment declares one; Kafka makes them equal only by a partition reassignment"
                if with_assignment
                else f"topic {name}: its partitions have replication factors {listed}; exported with partition "
                f"0's ({topic.replication_factor}), which kto plan takes as the topic's, as Kafka's "
                "addPartitions does; Kafka makes them equal only by a partition reassignment"
            )
    converted = topic_documents(specs, target)
    if converted.problems:  # only a replica assignment in Strimzi's format, which the caller refuses first
        raise ValueError("; ".join(converted.problems))
    names = object_names((cluster, s.name) for s in specs)
    exported = [
        ExportedTopic(spec.name, names[cluster, spec.name], document, comments.get(spec.name))
        for spec, document in zip(sorted(specs, key=lambda s: s.name), converted.documents, strict=True)
    ]
    for name in sorted(state.unreadable_topics):
        if chosen(name) and name not in declared:
            comment = f"kto plan will refuse topic {name}: its znode cannot be read ({state.unreadable_topics[name]})"
            exported.append(ExportedTopic(name, object_name(name), None, comment))
    exported.sort(key=lambda e: e.topic)
    return Export(tuple(exported), tuple(notes))


def _skipped(
    name: str, topic: TopicState, state: ClusterState, wanted: TopicFilter, declared: Collection[str]
) -> str | None:
    """Why a topic is left out (an empty reason: left out silently, as the filters ask), or None."""
    if not wanted(name) or name in declared:
        return ""
    if is_internal(name):
        return "a Kafka internal topic: kafka-topic-operator never creates, changes or deletes it"
    if topic.marked_for_deletion or name in state.marked_for_deletion:
        return "marked for deletion (/admin/delete_topics): Kafka is deleting it"
    return None


def _spec(cluster: str, topic: TopicState, with_assignment: bool, managed: ManagedConfig) -> TopicSpec:
    return TopicSpec(
        cluster=cluster,
        name=topic.name,
        partitions=topic.partition_count,
        replicas=topic.replication_factor,
        config={key: value for key, value in topic.config.items() if managed.manages(key)},
        replica_assignment=dict(topic.partitions) if with_assignment else None,
    )
