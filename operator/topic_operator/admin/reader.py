"""A cluster read through the Admin protocol into the engine's ``ClusterState``, so the planner sees a KRaft
cluster as it sees a ZooKeeper one.

Four requests make a whole read, whatever the number of topics (and, once per connection, each broker's
ApiVersions and the finalized features, for its release): DescribeCluster (the brokers and their racks;
fenced brokers are left out, as a ZooKeeper-mode controller leaves out brokers not registered), Metadata (every
topic's id and replicas, with each partition's leader and ISR), one DescribeConfigs for every topic, and
ListPartitionReassignments. A topic's config is its topic-level overrides only (``DYNAMIC_TOPIC_CONFIG``): a broker
default or a static broker setting is not the topic's, and never drift.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Collection, Mapping
from typing import Any

import kafka.errors as kafka_errors
from kafka import TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

from topic_operator.admin.release import broker_release, metadata_version
from topic_operator.kafka.kraft_migration import choose_writer
from topic_operator.model import Backend, Broker, ClusterState, PartitionState, TopicState

__all__ = ["TOPIC_OVERRIDE_SOURCE", "read_cluster"]

TOPIC_OVERRIDE_SOURCE = "DYNAMIC_TOPIC_CONFIG"
"""DescribeConfigs' source of a topic's own override (``ConfigSource`` 1)."""

_NO_ERROR = 0
_LEADER_NOT_AVAILABLE = 5
"""A topic just created may answer this while its partitions get leaders: it exists."""
_UNKNOWN_TOPIC = 3


def read_cluster(
    admin: KafkaAdminClient,
    *,
    partition_states: bool = False,
    topics: Collection[str] | None = None,
    configs_of: Collection[str] | None = None,
) -> ClusterState:
    """The cluster now: brokers, cluster id, and every topic (or only ``topics``) with its id, replicas,
    overrides and reassignment; with ``partition_states``, each partition's leader and ISR too.

    ``configs_of``: only these topics' overrides are described, the others' left empty. DescribeConfigs is most
    of a whole read (36 entries a topic for kafka-python to turn into dicts: about 7 s for 10,000 topics here,
    against 0.5 s for their Metadata), and a batch plans only its own topics."""
    cluster: Mapping[str, Any] = admin.describe_cluster()
    brokers = {
        int(b["broker_id"]): Broker(
            id=int(b["broker_id"]),
            rack=b.get("rack") or None,
            endpoints=(f"{b['host']}:{b['port']}",),
        )
        for b in cluster.get("brokers", ())
        if not b.get("is_fenced", False)
    }
    names = None if topics is None else sorted(set(topics))
    described: list[Mapping[str, Any]] = [] if names == [] else admin.describe_topics(names)
    found: dict[str, Mapping[str, Any]] = {}
    unreadable: dict[str, str] = {}
    for topic in described:
        code = int(topic.get("error_code", 0))
        if code in (_NO_ERROR, _LEADER_NOT_AVAILABLE) and topic.get("partitions"):
            found[topic["name"]] = topic
        elif code not in (_NO_ERROR, _UNKNOWN_TOPIC, _LEADER_NOT_AVAILABLE):
            unreadable[topic["name"]] = _error_text(code)
    described_configs = sorted(found) if configs_of is None else sorted(set(configs_of) & set(found))
    overrides = _topic_overrides(admin, described_configs)
    moving = _reassignments(admin, sorted(found))
    states = {
        name: _topic_state(topic, overrides.get(name, {}), moving.get(name, {}), partition_states)
        for name, topic in found.items()
    }
    return ClusterState(
        cluster_id=cluster.get("cluster_id"),
        brokers=brokers,
        topics=states,
        # Not DescribeCluster's controller_id: with a KRaft controller it names a random live broker (KafkaApis
        # answers so; clients never see KRaft controllers), a different one at each read.
        controller=None,
        unreadable_topics=unreadable,
        backend=Backend.KRAFT,
        broker_release=broker_release(admin, sorted(brokers)),
        metadata_version=metadata_version(admin),
        writer=choose_writer(None, zookeeper=False, brokers=True),
    )


def _topic_overrides(admin: KafkaAdminClient, names: list[str]) -> dict[str, dict[str, str]]:
    """Each topic's own overrides, in one DescribeConfigs request."""
    if not names:
        return {}
    resources = [ConfigResource(ConfigResourceType.TOPIC, name) for name in names]
    described: Mapping[str, Mapping[str, Mapping[str, Any]]] = admin.describe_configs(resources).get(
        "topic", {}
    )
    return {
        name: {
            key: str(entry["value"])
            for key, entry in configs.items()
            if entry.get("config_source") == TOPIC_OVERRIDE_SOURCE and entry.get("value") is not None
        }
        for name, configs in described.items()
    }


def _reassignments(admin: KafkaAdminClient, names: list[str]) -> dict[str, dict[int, Mapping[str, Any]]]:
    """The reassignments in flight (topic -> partition -> replicas, adding and removing)."""
    if not names:
        return {}
    listed: Mapping[TopicPartition, Mapping[str, Any]] = admin.list_partition_reassignments()
    wanted = set(names)
    found: dict[str, dict[int, Mapping[str, Any]]] = {}
    for partition, moving in listed.items():
        if partition.topic in wanted:
            found.setdefault(partition.topic, {})[partition.partition] = moving
    return found


def _topic_state(
    topic: Mapping[str, Any],
    config: dict[str, str],
    moving: Mapping[int, Mapping[str, Any]],
    partition_states: bool,
) -> TopicState:
    partitions = {
        int(p["partition_index"]): tuple(int(b) for b in p["replica_nodes"]) for p in topic["partitions"]
    }
    states = None
    if partition_states:
        states = {
            int(p["partition_index"]): PartitionState(
                leader=int(p["leader_id"]),
                isr=tuple(int(b) for b in p["isr_nodes"]),
                leader_epoch=int(p.get("leader_epoch", -1)),
                controller_epoch=-1,
            )
            for p in topic["partitions"]
        }
    adding = {
        p: tuple(int(b) for b in m["adding_replicas"]) for p, m in moving.items() if m["adding_replicas"]
    }
    removing = {
        p: tuple(int(b) for b in m["removing_replicas"]) for p, m in moving.items() if m["removing_replicas"]
    }
    return TopicState(
        name=topic["name"],
        partitions=dict(sorted(partitions.items())),
        topic_id=_topic_id(topic.get("topic_id")),
        adding_replicas=adding,
        removing_replicas=removing,
        config=dict(sorted(config.items())),
        partition_states=states,
    )


def _topic_id(value: object) -> str | None:
    """The topic id as ZooKeeper's topic znode holds it (Kafka's ``Uuid.toString``: URL-safe base64 without
    padding), so one topic reads the same through either store; None for the zero id."""
    if value is None:
        return None
    as_uuid = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    if as_uuid.int == 0:
        return None
    return _base64_id(as_uuid.bytes)


def _base64_id(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _error_text(code: int) -> str:
    error = kafka_errors.for_code(code)
    return f"the brokers answered {error.__name__} (error code {code}) describing it"
