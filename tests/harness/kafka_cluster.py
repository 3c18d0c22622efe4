"""A Kafka-looking cluster in a ZooKeeper chroot: what the engine sees of a real cluster, without Kafka."""

from kazoo.client import KazooClient

from topic_operator.testing.simulated_brokers import bootstrap_cluster, register_brokers

SIX_BROKERS_THREE_RACKS: tuple[str, ...] = ("rack-a", "rack-b", "rack-c", "rack-a", "rack-b", "rack-c")
CLUSTER_ID = "kto-test-cluster-0000A"


def make_kafka_cluster(
    client: KazooClient, racks: tuple[str | None, ...] = SIX_BROKERS_THREE_RACKS, *, ephemeral: bool = True
) -> None:
    """Startup paths, ``/cluster/id``, broker 0 as controller and brokers ``0..len(racks)-1`` registered
    (ephemeral, v5 JSON) through ``client``'s own session, so they go away with it; with ``ephemeral=False``
    they stay, as brokers that register again after an outage longer than their session would."""
    bootstrap_cluster(client, CLUSTER_ID)
    register_brokers(client, racks, controller=0, ephemeral=ephemeral)
