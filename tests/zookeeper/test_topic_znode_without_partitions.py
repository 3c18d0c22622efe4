"""A topic znode whose ``partitions`` is null or absent is unreadable, not a topic with 0 partitions: Kafka's
encoder always writes the map, and a topic of no partitions would be planned as one to grow from nothing."""

import pytest
from kazoo.client import KazooClient

from topic_operator.zookeeper.snapshot import read_cluster


@pytest.mark.parametrize("payload", [b'{"version":3,"partitions":null}', b'{"version":3,"topic_id":"x"}'])
def test_a_topic_znode_without_partitions_is_unreadable(kafka_zk: KazooClient, payload: bytes) -> None:
    kafka_zk.create("/brokers/topics/empty", payload)
    kafka_zk.create("/brokers/topics/fine", b'{"version":3,"partitions":{"0":[0]}}')
    state = read_cluster(kafka_zk)
    assert "empty" not in state.topics
    assert "field 'partitions' must be an object, got None" in state.unreadable_topics["empty"]
    assert state.topics["fine"].partitions == {0: (0,)}
