"""Fixtures for tests against a real ZooKeeper that need more than a bare chroot."""

import pytest
from kazoo.client import KazooClient

from harness.kafka_cluster import make_kafka_cluster

# -- a Kafka-looking cluster ------------------------------------------------------------------------------------


@pytest.fixture
def kafka_zk(zk: KazooClient) -> KazooClient:
    """The test's chroot made to look like a running Kafka cluster (6 brokers in racks a/b/c, see
    ``harness.kafka_cluster``); the chroot and the brokers' session go away with ``zk``."""
    make_kafka_cluster(zk)
    return zk
