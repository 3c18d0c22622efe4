"""A replica change end to end on a real ZooKeeper, with the simulated controller moving the replicas: the
request, the throttles set and removed as ``kafka-reassign-partitions.sh --throttle``/``--verify`` do, every
other broker config kept, and each refusal leaving ZooKeeper untouched."""

import json

from kazoo.client import KazooClient

from harness.states import cluster_spec, spec
from topic_operator.kafka.errors import (
    AdminOperationError,
    BrokerNotAvailableError,
    ReassignmentInProgressError,
)
from topic_operator.model import ReassignmentPolicy
from topic_operator.reconcile import Reconciler, TopicOutcome
from topic_operator.testing.simulated_brokers import bring_partitions_online, carry_out_reassignments
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore
from topic_operator.zookeeper.znodes import PartitionStateZNode

THROTTLED = cluster_spec(reassignment=ReassignmentPolicy(enabled=True, throttle_bytes_per_second=1048576))
ENABLED = cluster_spec(reassignment=ReassignmentPolicy(enabled=True))
RATES = {"leader.replication.throttled.rate": "1048576", "follower.replication.throttled.rate": "1048576"}
LISTS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def _json(client: KazooClient, path: str) -> dict[str, object]:
    return json.loads(client.get(path)[0])  # type: ignore[no-any-return]


def _notifications(client: KazooClient) -> list[str]:
    return sorted(
        str(_json(client, f"/config/changes/{n}")["entity_path"])
        for n in client.get_children("/config/changes")
    )


def _everything(client: KazooClient) -> dict[str, tuple[bytes, int]]:
    """Every znode's data and version under the chroot: proof that nothing was written."""
    seen: dict[str, tuple[bytes, int]] = {}
    stack = ["/"]
    while stack:
        path = stack.pop()
        data, stat = client.get(path)
        seen[path] = (data, stat.version)
        stack.extend(f"{path.rstrip('/')}/{child}" for child in client.get_children(path))
    return seen


def _created_online(client: KazooClient, *topics: object) -> None:
    report = Reconciler(ZooKeeperStore(client), THROTTLED).apply(topics)  # type: ignore[arg-type]
    assert {r.outcome for r in report.results} == {TopicOutcome.APPLIED}
    bring_partitions_online(client, read_cluster(client))


def test_an_increase_is_throttled_carried_out_and_its_throttles_removed(kafka_zk: KazooClient) -> None:
    _created_online(kafka_zk, spec("orders", 3, 1, {"retention.ms": "1000"}))
    kafka_zk.create("/config/brokers/1", b'{"version":1,"config":{"log.cleaner.threads":"2"}}', makepath=True)
    before = read_cluster(kafka_zk).topics["orders"]
    notified = len(kafka_zk.get_children("/config/changes"))

    report = Reconciler(ZooKeeperStore(kafka_zk), THROTTLED).apply(
        [spec("orders", 3, 3, {"retention.ms": "1000"})]
    )

    [result] = report.results
    assert result.outcome is TopicOutcome.APPLIED, result.errors
    request = _json(kafka_zk, "/admin/reassign_partitions")
    targets = {e["partition"]: tuple(e["replicas"]) for e in request["partitions"]}  # type: ignore[attr-defined]
    assert request["version"] == 1
    assert sorted(targets) == [0, 1, 2]
    for partition, target in targets.items():
        assert target[0] == before.partitions[partition][0]  # the preferred leader stays
        assert len(set(target)) == 3
    config = _json(kafka_zk, "/config/topics/orders")["config"]
    assert config["retention.ms"] == "1000"  # type: ignore[index]
    assert config[LISTS[0]] == ",".join(f"{p}:{before.partitions[p][0]}" for p in range(3))  # type: ignore[index]
    involved = sorted({b for target in targets.values() for b in target})
    for broker in involved:
        rates = _json(kafka_zk, f"/config/brokers/{broker}")["config"]
        assert {k: rates[k] for k in RATES} == RATES  # type: ignore[index]
    assert _json(kafka_zk, "/config/brokers/1")["config"]["log.cleaner.threads"] == "2"  # type: ignore[index]
    assert len(kafka_zk.get_children("/config/changes")) == notified + 1 + len(involved)  # one per entity
    assert sorted(set(_notifications(kafka_zk))) == sorted(
        {"topics/orders", *(f"brokers/{b}" for b in involved)}
    )

    # mid-way: the topic is reassigned, nothing more is planned, and its lists are kept
    carry_out_reassignments(kafka_zk, finish=False)
    midway = Reconciler(ZooKeeperStore(kafka_zk), THROTTLED).plan(
        [spec("orders", 3, 3, {"retention.ms": "1000"})]
    )
    assert midway.topics[0].actions == ()
    assert midway.topics[0].reassigning

    carry_out_reassignments(kafka_zk)
    assert kafka_zk.exists("/admin/reassign_partitions") is None
    done = Reconciler(ZooKeeperStore(kafka_zk), THROTTLED).apply(
        [spec("orders", 3, 3, {"retention.ms": "1000"})]
    )
    assert done.results[0].outcome is TopicOutcome.APPLIED
    topic = read_cluster(kafka_zk).topics["orders"]
    assert topic.replication_factor == 3
    assert topic.topic_id == before.topic_id
    assert topic.config == {"retention.ms": "1000"}
    for broker in involved:
        left = _json(kafka_zk, f"/config/brokers/{broker}")["config"]
        assert not set(RATES) & set(left)  # type: ignore[arg-type]
    assert _json(kafka_zk, "/config/brokers/1")["config"] == {"log.cleaner.threads": "2"}
    again = Reconciler(ZooKeeperStore(kafka_zk), THROTTLED).apply(
        [spec("orders", 3, 3, {"retention.ms": "1000"})]
    )
    assert again.results[0].outcome is TopicOutcome.UNCHANGED


def test_a_decrease_and_an_explicit_move_without_a_throttle(kafka_zk: KazooClient) -> None:
    _created_online(kafka_zk, spec("orders", 2, 3, assignment={0: (0, 1, 2), 1: (1, 2, 3)}))
    report = Reconciler(ZooKeeperStore(kafka_zk), ENABLED).apply([spec("orders", 2, 2)])
    assert report.results[0].outcome is TopicOutcome.APPLIED
    assert kafka_zk.exists("/config/brokers/0") is None  # no throttle, no broker config
    carry_out_reassignments(kafka_zk)
    assert read_cluster(kafka_zk).topics["orders"].partitions == {0: (0, 1), 1: (1, 2)}

    moved = spec("orders", 2, 2, assignment={0: (0, 1), 1: (4, 2)})
    assert (
        Reconciler(ZooKeeperStore(kafka_zk), ENABLED).apply([moved]).results[0].outcome
        is TopicOutcome.APPLIED
    )
    assert _json(kafka_zk, "/admin/reassign_partitions")["partitions"] == [
        {"topic": "orders", "partition": 1, "replicas": [4, 2]}
    ]
    carry_out_reassignments(kafka_zk)
    assert read_cluster(kafka_zk).topics["orders"].partitions == {0: (0, 1), 1: (4, 2)}


def test_a_foreign_reassignment_blocks_ours_with_nothing_written(kafka_zk: KazooClient) -> None:
    _created_online(kafka_zk, spec("orders", 1, 1), spec("payments", 1, 1))
    state = read_cluster(kafka_zk)  # planned before the other tool starts its reassignment
    kafka_zk.create(
        "/admin/reassign_partitions",
        b'{"version":1,"partitions":[{"topic":"payments","partition":0,"replicas":[5]}]}',
    )
    before = _everything(kafka_zk)
    stale = Reconciler(ZooKeeperStore(kafka_zk), THROTTLED).apply([spec("orders", 1, 3)], state=state)
    fresh = Reconciler(ZooKeeperStore(kafka_zk), THROTTLED).apply([spec("orders", 1, 3)])
    for report in (stale, fresh):
        [result] = report.results
        assert result.outcome is TopicOutcome.REJECTED
        assert isinstance(result.errors[0], ReassignmentInProgressError)
        assert "existing assignment running" in str(result.errors[0])
    assert _everything(kafka_zk) == before


def test_an_under_replicated_or_offline_partition_is_not_moved(kafka_zk: KazooClient) -> None:
    _created_online(kafka_zk, spec("orders", 1, 2, assignment={0: (0, 1)}))
    path = PartitionStateZNode.path("orders", 0)
    kafka_zk.set(path, PartitionStateZNode.encode(0, [0], 1, 1))  # broker 1 fell out of the ISR
    before = _everything(kafka_zk)
    [result] = Reconciler(ZooKeeperStore(kafka_zk), THROTTLED).apply([spec("orders", 1, 3)]).results
    assert result.outcome is TopicOutcome.REJECTED
    assert isinstance(result.errors[0], AdminOperationError)
    assert "Partition orders-0 is under-replicated (replicas [0, 1], ISR [0])" in str(result.errors[0])
    kafka_zk.set(path, PartitionStateZNode.encode(-1, [0, 1], 2, 1))
    [result] = Reconciler(ZooKeeperStore(kafka_zk), THROTTLED).apply([spec("orders", 1, 3)]).results
    assert "Partition orders-0 is offline" in str(result.errors[0])
    assert {p: v for p, v in _everything(kafka_zk).items() if p != path} == {
        p: v for p, v in before.items() if p != path
    }


def test_a_target_broker_gone_since_the_plan_is_refused_at_write_time(kafka_zk: KazooClient) -> None:
    _created_online(kafka_zk, spec("orders", 1, 1, assignment={0: (0,)}))
    state = read_cluster(kafka_zk)
    moved = spec("orders", 1, 1, assignment={0: (5,)})
    kafka_zk.delete("/brokers/ids/5")
    before = _everything(kafka_zk)
    [result] = Reconciler(ZooKeeperStore(kafka_zk), ENABLED).apply([moved], state=state).results
    assert result.outcome is TopicOutcome.REJECTED
    assert isinstance(result.errors[0], BrokerNotAvailableError)
    assert _everything(kafka_zk) == before
