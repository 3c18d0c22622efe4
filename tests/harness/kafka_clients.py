"""What a Kafka user sees of a topic, through the Kafka protocol (kafka-python), not through ZooKeeper: partitions
with their leaders and replicas, records produced to and consumed from each partition, the broker's config.

A topic written to ZooKeeper is only proven usable when the brokers serve it: the controller must have elected a
leader for every partition, and a record sent to each partition must come back.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType

from harness.waiting import eventually

__all__ = [
    "PartitionInfo",
    "admin_client",
    "partitions",
    "replica_lists",
    "round_trip",
    "settled",
    "topic_config",
    "wait_for_leaders",
]


T = TypeVar("T")


def settled(read: Callable[[], T], done: Callable[[T], bool], timeout: float = 30.0) -> T:
    """``read()`` until ``done`` holds for its answer or ``timeout`` passes: the last answer either way, for the
    caller's assertion to compare (and name the difference). A read right after a write may come from a broker that
    has not applied the controller's records yet (each applies them at its own pace)."""
    deadline = time.monotonic() + timeout
    while not done(answer := read()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return answer


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@contextlib.contextmanager
def admin_client(bootstrap: str) -> Iterator[KafkaAdminClient]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    try:
        yield admin
    finally:
        admin.close()


def partitions(bootstrap: str, topic: str) -> dict[int, PartitionInfo]:
    """The topic's partitions as the brokers' metadata has them (empty while they do not know the topic)."""
    with admin_client(bootstrap) as admin:
        (described,) = admin.describe_topics([topic])
    if described.get("error_code", 0) != 0:
        return {}
    return {
        p["partition_index"]: PartitionInfo(
            p["partition_index"], p["leader_id"], tuple(p["replica_nodes"]), tuple(p["isr_nodes"])
        )
        for p in described["partitions"]
    }


def replica_lists(bootstrap: str, topic: str) -> dict[int, list[int]]:
    """Each partition's replicas, in the order the brokers hold them (the first is the preferred leader)."""
    return {p: list(info.replicas) for p, info in sorted(partitions(bootstrap, topic).items())}


def wait_for_leaders(bootstrap: str, topic: str, count: int, timeout: float = 60) -> dict[int, PartitionInfo]:
    """Until the brokers serve ``count`` partitions of ``topic``, each with a leader and a full ISR."""

    def served() -> dict[int, PartitionInfo] | None:
        found = partitions(bootstrap, topic)
        complete = len(found) == count and all(
            p.leader >= 0 and set(p.isr) == set(p.replicas) for p in found.values()
        )
        return found if complete else None

    result: dict[int, PartitionInfo] = eventually(
        served,
        timeout=timeout,
        what=f"{count} partitions of {topic} with leaders and full ISRs",
        interval=0.3,
    )
    return result


def round_trip(bootstrap: str, topic: str, count: int) -> dict[int, list[bytes]]:
    """Produce one record to each of ``count`` partitions (acks=all), then consume every partition from the
    start until that record comes back. Returns every record read, by partition (earlier ones included)."""
    sent = {p: f"{topic}-{p}-{uuid.uuid4().hex[:8]}".encode() for p in range(count)}
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=5, request_timeout_ms=20000)
    try:
        for partition, value in sent.items():
            producer.send(topic, key=b"k%d" % partition, value=value, partition=partition).get(timeout=30)
    finally:
        producer.close(timeout=10)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=15000)
    received: dict[int, list[bytes]] = {p: [] for p in range(count)}
    try:
        assigned = [TopicPartition(topic, p) for p in range(count)]
        consumer.assign(assigned)
        consumer.seek_to_beginning(*assigned)
        for message in consumer:
            received[message.partition].append(message.value)
            if all(sent[p] in received[p] for p in sent):
                break
    finally:
        consumer.close()
    missing = {p: value for p, value in sent.items() if value not in received[p]}
    assert not missing, f"records produced and never consumed: {missing}; read: {received}"
    return received


def topic_config(bootstrap: str, topic: str) -> dict[str, str]:
    """The topic's config overrides as DescribeConfigs answers (``DYNAMIC_TOPIC_CONFIG`` entries only)."""
    with admin_client(bootstrap) as admin:
        answer = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    entries = answer["topic"][topic]
    return {
        name: entry["value"]
        for name, entry in entries.items()
        if entry.get("config_source") == "DYNAMIC_TOPIC_CONFIG"
    }
