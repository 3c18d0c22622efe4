"""Make a ZooKeeper path look to the engine exactly as a running Kafka cluster would, without running Kafka.

For tests and ``kto demo``: the paths a broker creates at startup, ``/cluster/id``, broker registrations
written the way a 2.7+ broker writes them (ephemeral, version-5 JSON, so they vanish with the session that made
them), and, only when asked (``bring_partitions_online``), the partition states a controller writes for new
partitions.
"""

from __future__ import annotations

import base64
import contextlib
import secrets
import time
from collections.abc import Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from topic_operator.model import ClusterState
from topic_operator.zookeeper.znodes import (
    BrokerIdZNode,
    ClusterIdZNode,
    ControllerZNode,
    PartitionStateZNode,
    TopicZNode,
    TopicZNodeData,
)

__all__ = [
    "BROKER_STARTUP_PATHS",
    "bootstrap_cluster",
    "bring_partitions_online",
    "new_topic_id",
    "register_broker",
    "register_brokers",
]

BROKER_STARTUP_PATHS: tuple[str, ...] = (
    "/consumers",
    "/brokers/ids",
    "/brokers/topics",
    "/brokers/seqid",
    "/config/changes",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/config/ips",
    "/admin/delete_topics",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
)
"""What every Kafka broker ensures at startup (semantics §5.9)."""


def bootstrap_cluster(client: KazooClient, cluster_id: str) -> None:
    """Create the startup paths and ``/cluster/id`` (create-if-absent, as the first broker does)."""
    for path in BROKER_STARTUP_PATHS:
        client.ensure_path(path)
    with contextlib.suppress(NodeExistsError):
        client.create(ClusterIdZNode.path, ClusterIdZNode.encode(cluster_id), makepath=True)


def register_broker(
    client: KazooClient,
    broker_id: int,
    *,
    rack: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    ephemeral: bool = True,
) -> None:
    """Register as a broker does: an ephemeral ``/brokers/ids/<id>`` owned by ``client``'s session. Fault tests
    that kill ZooKeeper for longer than a session lasts register persistent ones (``ephemeral=False``) instead,
    standing for brokers that register again after the outage."""
    payload = BrokerIdZNode.encode(
        broker_id,
        host,
        port if port is not None else 9092 + broker_id,
        rack=rack,
        timestamp_ms=int(time.time() * 1000),
    )
    client.create(BrokerIdZNode.path(broker_id), payload, ephemeral=ephemeral)


def register_brokers(
    client: KazooClient, racks: Sequence[str | None], *, controller: int | None = 0, ephemeral: bool = True
) -> None:
    """Brokers ``0..len(racks)-1`` with the given racks, and (optionally) one of them as the controller."""
    for broker_id, rack in enumerate(racks):
        register_broker(client, broker_id, rack=rack, ephemeral=ephemeral)
    if controller is not None:
        client.create(
            ControllerZNode.path,
            ControllerZNode.encode(controller, int(time.time() * 1000)),
            ephemeral=ephemeral,
        )


def new_topic_id() -> str:
    """Kafka's ``Uuid.randomUuid``: 16 random bytes as URL-safe base64 without padding, never the zero uuid, the
    metadata topic's uuid, or a string starting with '-' (semantics §5.2)."""
    while True:
        raw = secrets.token_bytes(16)
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if int.from_bytes(raw, "big") > 1 and not text.startswith("-"):
            return text


def bring_partitions_online(client: KazooClient, state: ClusterState, controller_epoch: int = 1) -> int:
    """What the controller does for new topics: give a topic without ``topic_id`` one, rewriting its znode at the
    version read (§9), and write state for partitions without it (§5.3): leader = first live replica, ISR = the
    live replicas in assignment order, leader epoch 0. Returns how many partitions it brought online."""
    live = set(state.brokers)
    written = 0
    for topic in state.topics.values():
        if topic.topic_id is None:
            data = TopicZNodeData(
                topic.partitions, new_topic_id(), topic.adding_replicas, topic.removing_replicas
            )
            client.set(
                TopicZNode.path(topic.name), TopicZNode.encode(data), version=topic.topic_znode_version
            )
        for partition, replicas in topic.partitions.items():
            path = PartitionStateZNode.path(topic.name, partition)
            if client.exists(path) is not None:
                continue
            isr = [b for b in replicas if b in live]
            leader = isr[0] if isr else -1
            client.create(path, PartitionStateZNode.encode(leader, isr, 0, controller_epoch), makepath=True)
            written += 1
    return written
