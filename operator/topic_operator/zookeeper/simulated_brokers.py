"""Make a ZooKeeper path look to the engine exactly as a running Kafka cluster would, without running Kafka.

For tests and ``kto demo``: the paths a broker creates at startup, ``/cluster/id``, and broker registrations
written the way a 2.7+ broker writes them (ephemeral, version-5 JSON, so they vanish with the session that made
them). Nothing here plays the controller: partition state znodes are written only where a test asks for them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from topic_operator.zookeeper.znodes import BrokerIdZNode, ClusterIdZNode, ControllerZNode

__all__ = ["BROKER_STARTUP_PATHS", "bootstrap_cluster", "register_broker", "register_brokers"]

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
) -> None:
    """Register as a broker does: an ephemeral ``/brokers/ids/<id>`` owned by ``client``'s session."""
    payload = BrokerIdZNode.encode(
        broker_id,
        host,
        port if port is not None else 9092 + broker_id,
        rack=rack,
        timestamp_ms=int(time.time() * 1000),
    )
    client.create(BrokerIdZNode.path(broker_id), payload, ephemeral=True)


def register_brokers(client: KazooClient, racks: Sequence[str | None], *, controller: int | None = 0) -> None:
    """Brokers ``0..len(racks)-1`` with the given racks, and (optionally) one of them as the controller."""
    for broker_id, rack in enumerate(racks):
        register_broker(client, broker_id, rack=rack)
    if controller is not None:
        client.create(
            ControllerZNode.path, ControllerZNode.encode(controller, int(time.time() * 1000)), ephemeral=True
        )
