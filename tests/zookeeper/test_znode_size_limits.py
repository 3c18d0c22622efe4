"""A write too large for ZooKeeper's ``jute.maxbuffer`` is refused in the plan, naming its size and the limit,
instead of being reported as "ZooKeeper kept dropping the connection".

Against the real server: the limit is real (a raw oversized write drops the connection), a topic just inside it
is written, one beyond it is refused by ``kto plan`` and ``kto apply`` with nothing written and no dropped
connection, and the writer refuses one on its own without disturbing the rest of its batch. 10^8 partitions are
refused at once, in little memory. The size bounds the planner uses without building a payload hold for any
assignment (hypothesis).
"""

from __future__ import annotations

import random
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss

from harness.cli import kafka_topic, write_manifests
from harness.states import cluster_spec, cluster_state, existing, spec
from harness.zookeeper import ZkChroot
from topic_operator.cli.main import main
from topic_operator.kafka.znode_payloads import JUTE_MAXBUFFER, topic_payload, topic_payload_size_bounds
from topic_operator.plan import AlterConfig, CreateTopic, TopicStatus, plan
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import Outcome, ZooKeeperWriter

LIMIT_TEXT = (
    "more than ZooKeeper accepts in one request (jute.maxbuffer, 1,048,575 bytes by default, less 4,096"
)


def manifests(tmp_path: Path, partitions: int) -> Path:
    return write_manifests(tmp_path / "topics.yaml", kafka_topic("huge", partitions))


@settings(max_examples=300, deadline=None)
@given(
    partitions=st.integers(min_value=0, max_value=20_000),
    replicas=st.integers(min_value=1, max_value=5),
    max_id=st.integers(min_value=0, max_value=2**31 - 1),
    topic_id=st.booleans(),
    ids=st.sampled_from(["smallest", "largest", "random"]),
    seed=st.integers(min_value=0),
)
def test_the_size_bounds_hold_for_any_assignment(
    partitions: int, replicas: int, max_id: int, topic_id: bool, ids: str, seed: int
) -> None:
    rng = random.Random(seed)
    pick = {"smallest": lambda: 0, "largest": lambda: max_id, "random": lambda: rng.randint(0, max_id)}[ids]
    assignment = {p: tuple(pick() for _ in range(replicas)) for p in range(partitions)}
    low, high = topic_payload_size_bounds(partitions, replicas, topic_id=topic_id, max_broker_id=max_id)
    size = len(topic_payload(assignment, "q3xFy1sLTyajJv4JTtj6qQ" if topic_id else None))
    assert low <= size <= high
    if ids == "smallest" and max_id < 10:
        assert size == low, "with one-digit ids the lower bound is exact"
    if ids == "largest":
        assert size == high, "with the largest id everywhere the upper bound is exact"


def test_the_limit_is_real(kafka_zk: KazooClient) -> None:
    """What the planner guards against: ZooKeeper drops the connection rather than take a larger request."""
    with pytest.raises(ConnectionLoss):
        kafka_zk.create("/too-large", b"x" * (JUTE_MAXBUFFER + 1))
    assert kafka_zk.exists("/too-large") is None


@pytest.mark.timeout(120)
def test_100000_partitions_of_rf_3_are_refused_and_60000_are_written(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connect = zk_chroot.connect_string
    code = main(["apply", "-f", str(manifests(tmp_path, 100_000)), "--zookeeper", connect, "--yes"])
    out, err = capsys.readouterr()
    assert code == 1
    assert err == ""
    assert (
        "InvalidPartitionsException: Topic huge: the request creating /brokers/topics/huge (100000 partitions x 3 "
        "replicas) and /config/topics/huge would be at least 1,588,987 bytes" in out
    )
    assert LIMIT_TEXT in out
    assert kafka_zk.exists("/brokers/topics/huge") is None
    assert kafka_zk.exists("/config/topics/huge") is None

    code = main(["apply", "-f", str(manifests(tmp_path, 60_000)), "--zookeeper", connect, "--yes"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), out
    assert read_cluster(kafka_zk, topics=["huge"]).topics["huge"].partition_count == 60_000


def test_growth_beyond_the_limit_is_refused_in_the_plan() -> None:
    current = existing("events", {p: (p % 6, (p + 1) % 6, (p + 2) % 6) for p in range(60_000)})
    result = plan([spec("events", partitions=70_000)], cluster_state(current), cluster_spec())
    [topic] = result.topics
    assert topic.status is TopicStatus.REJECTED
    [error] = topic.rejections
    assert error.field == "partitions"
    assert error.stricter_than_kafka
    assert str(error).startswith(
        "Topic events: its assignment znode /brokers/topics/events (70000 partitions x 3 replicas) would be at least "
        "1,108,998 bytes"
    )


def test_a_config_too_large_is_refused_and_other_changes_are_not_held_up() -> None:
    throttled = ",".join(f"{p}:{p % 6}" for p in range(150_000))  # a valid list, 1.3 MB
    current = existing("events", {0: (0, 1, 2)}, {"retention.ms": "1000"})
    result = plan(
        [spec("events", partitions=1, config={"leader.replication.throttled.replicas": throttled})],
        cluster_state(current),
        cluster_spec(),
    )
    [error] = result.topics[0].rejections
    assert error.field == "config"
    assert str(error).startswith(
        "Topic events: its config znode /config/topics/events would be 1,238,999 bytes"
    )
    assert result.topics[0].actions == ()


@pytest.mark.timeout(30)
def test_10_to_the_8_partitions_are_refused_at_once_in_little_memory() -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = plan([spec("absurd", partitions=10**8)], cluster_state(), cluster_spec())
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    [error] = result.topics[0].rejections
    assert "would be at least 1,888,888,987 bytes" in str(error)
    assert LIMIT_TEXT in str(error)
    assert elapsed < 1.0
    assert peak < 5_000_000, f"peak {peak:,} bytes"


def test_the_writer_refuses_an_oversized_action_without_dropping_the_rest(kafka_zk: KazooClient) -> None:
    huge = CreateTopic("huge", dict.fromkeys(range(80000), (0, 1, 2)))
    fine = CreateTopic("fine", {0: (0, 1, 2)})
    changed = AlterConfig("fine2", {"retention.ms": "1"}, expected_version=None)
    states: list[str] = []
    kafka_zk.add_listener(states.append)
    results = ZooKeeperWriter(kafka_zk).apply_all([huge, fine, changed])
    assert [r.outcome for r in results] == [Outcome.REJECTED, Outcome.APPLIED, Outcome.APPLIED]
    assert "Topic huge: the request creating topic huge would be 1,2" in str(results[0].error)
    assert states == [], "the connection never dropped"
    assert kafka_zk.exists("/brokers/topics/huge") is None
