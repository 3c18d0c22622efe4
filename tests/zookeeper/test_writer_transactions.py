"""The writer turns each action into one transaction, writes what Kafka writes, and never overwrites a change it
did not read: a moved version is a conflict with nothing written."""

import json

import pytest
from kazoo.client import KazooClient

from topic_operator.kafka.errors import (
    AdminOperationError,
    ReassignmentInProgressError,
    TopicAlreadyMarkedForDeletionError,
    UnknownTopicOrPartitionError,
)
from topic_operator.kafka.reassignment import PartitionMove
from topic_operator.plan import AddPartitions, AlterConfig, CreateTopic, DeleteTopic, Reassign
from topic_operator.testing.simulated_brokers import bring_partitions_online
from topic_operator.zookeeper.errors import NotAKafkaClusterError, WriteConflictError
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import Outcome, ZooKeeperWriter
from topic_operator.zookeeper.znodes import ReassignPartitionsZNode

ORDERS = CreateTopic(
    "orders", {0: (0, 1, 2), 1: (1, 2, 3)}, {"retention.ms": "1000", "cleanup.policy": "compact"}
)


def znode_json(client: KazooClient, path: str) -> object:
    return json.loads(client.get(path)[0])


def notifications(client: KazooClient) -> list[object]:
    return [
        znode_json(client, f"/config/changes/{n}") for n in sorted(client.get_children("/config/changes"))
    ]


def test_create_writes_config_and_topic_as_kafka_does(kafka_zk: KazooClient) -> None:
    result = ZooKeeperWriter(kafka_zk).apply(ORDERS)
    assert result.outcome is Outcome.APPLIED
    assert znode_json(kafka_zk, "/brokers/topics/orders") == {
        "version": 3,
        "partitions": {"0": [0, 1, 2], "1": [1, 2, 3]},
        "adding_replicas": {},
        "removing_replicas": {},
    }
    assert znode_json(kafka_zk, "/config/topics/orders") == {
        "version": 1,
        "config": {"retention.ms": "1000", "cleanup.policy": "compact"},
    }
    # Creating the config together with the topic needs no notification (as Kafka's createTopic).
    assert notifications(kafka_zk) == []


def test_create_over_an_existing_topic_is_a_conflict_and_changes_nothing(kafka_zk: KazooClient) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    before = kafka_zk.get("/config/topics/orders")[0]
    again = CreateTopic("orders", {0: (5,)}, {"retention.ms": "1"}, orphan_config_version=0)
    with pytest.raises(WriteConflictError, match="/brokers/topics/orders changed since it was read"):
        writer.apply(again)
    assert kafka_zk.get("/config/topics/orders")[0] == before  # the config write was rolled back with it


def test_create_overwrites_an_orphan_config_at_its_version(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/config/topics/orders", b'{"version":1,"config":{"retention.ms":"5"}}')
    writer = ZooKeeperWriter(kafka_zk)
    with pytest.raises(WriteConflictError, match="it was created meanwhile"):
        writer.apply(ORDERS)  # planned as if there were no orphan: refused, not clobbered
    assert not kafka_zk.exists("/brokers/topics/orders")
    writer.apply(CreateTopic(ORDERS.topic, ORDERS.assignment, ORDERS.config, orphan_config_version=0))
    assert read_cluster(kafka_zk).topics["orders"].config == dict(ORDERS.config)


def grow(client: KazooClient, topic: str, new: dict[int, tuple[int, ...]]) -> AddPartitions:
    state = read_cluster(client).topics[topic]
    return AddPartitions(
        topic,
        state.partitions,
        new,
        state.topic_znode_version,
        state.topic_id,
        state.adding_replicas,
        state.removing_replicas,
    )


def test_add_partitions_keeps_topic_id_and_writes_at_the_version_read(kafka_zk: KazooClient) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    # The controller assigns the topic id after creation (semantics §9).
    kafka_zk.set(
        "/brokers/topics/orders",
        b'{"version":3,"partitions":{"0":[0,1,2],"1":[1,2,3]},"topic_id":"q3xFy1sLTyajJv4JTtj6qQ",'
        b'"adding_replicas":{},"removing_replicas":{}}',
    )
    writer.apply(grow(kafka_zk, "orders", {2: (2, 3, 4)}))
    assert znode_json(kafka_zk, "/brokers/topics/orders") == {
        "version": 3,
        "partitions": {"0": [0, 1, 2], "1": [1, 2, 3], "2": [2, 3, 4]},
        "topic_id": "q3xFy1sLTyajJv4JTtj6qQ",
        "adding_replicas": {},
        "removing_replicas": {},
    }


def test_a_concurrent_writer_between_read_and_write_is_a_conflict(kafka_zk: KazooClient) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    kafka_zk.set(
        "/brokers/topics/orders",
        b'{"version":3,"partitions":{"0":[0,1,2],"1":[1,2,3]},"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ"}',
    )
    action = grow(kafka_zk, "orders", {2: (2, 3, 4)})
    # Someone (the controller) rewrites the znode after our read.
    theirs = b'{"version":3,"partitions":{"0":[0,1,2],"1":[1,2,3]},"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ","adding_replicas":{},"removing_replicas":{}}'
    kafka_zk.set("/brokers/topics/orders", theirs)
    [result] = writer.apply_all([action])
    assert result.outcome is Outcome.CONFLICT
    assert isinstance(result.error, WriteConflictError)
    assert "its version moved" in str(result.error)
    assert kafka_zk.get("/brokers/topics/orders")[0] == theirs  # not clobbered, topic_id intact


@pytest.mark.parametrize("via", ["znode", "admin"])
def test_no_partitions_are_added_during_a_reassignment(kafka_zk: KazooClient, via: str) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    if via == "znode":
        kafka_zk.set(
            "/brokers/topics/orders",
            b'{"version":3,"partitions":{"0":[0,1,2,4],"1":[1,2,3]},"adding_replicas":{"0":[4]},"removing_replicas":{"0":[0]}}',
        )
    else:
        kafka_zk.create(
            ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode({"orders": {0: [3, 4, 5]}})
        )
    before = kafka_zk.get("/brokers/topics/orders")
    [result] = writer.apply_all([grow(kafka_zk, "orders", {2: (2, 3, 4)})])
    assert result.outcome is Outcome.REJECTED
    assert isinstance(result.error, ReassignmentInProgressError)
    assert str(result.error) == "A partition reassignment is in progress for the topic 'orders'."
    assert kafka_zk.get("/brokers/topics/orders") == before


def test_alter_config_sets_at_the_version_read_with_one_v2_notification(kafka_zk: KazooClient) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    writer.apply(AlterConfig("orders", {"retention.ms": "2000"}, expected_version=0))
    assert znode_json(kafka_zk, "/config/topics/orders") == {"version": 1, "config": {"retention.ms": "2000"}}
    assert notifications(kafka_zk) == [{"version": 2, "entity_path": "topics/orders"}]
    [name] = kafka_zk.get_children("/config/changes")
    assert name.startswith("config_change_")
    assert len(name) == len("config_change_") + 10


def test_stale_config_write_is_a_conflict_without_notification(kafka_zk: KazooClient) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    writer.apply(AlterConfig("orders", {"retention.ms": "2000"}, expected_version=0))
    [result] = writer.apply_all([AlterConfig("orders", {"retention.ms": "3000"}, expected_version=0)])
    assert result.outcome is Outcome.CONFLICT
    assert znode_json(kafka_zk, "/config/topics/orders") == {"version": 1, "config": {"retention.ms": "2000"}}
    assert len(notifications(kafka_zk)) == 1


def test_alter_config_creates_a_missing_config_znode(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/brokers/topics/legacy", b'{"version":1,"partitions":{"0":[0]}}')
    ZooKeeperWriter(kafka_zk).apply(AlterConfig("legacy", {"retention.ms": "1"}, expected_version=None))
    assert read_cluster(kafka_zk).topics["legacy"].config == {"retention.ms": "1"}
    assert notifications(kafka_zk) == [{"version": 2, "entity_path": "topics/legacy"}]


def test_delete_marks_the_topic_once(kafka_zk: KazooClient) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    assert writer.apply(DeleteTopic("orders")).outcome is Outcome.APPLIED
    assert kafka_zk.exists("/admin/delete_topics/orders")
    [again] = writer.apply_all([DeleteTopic("orders")])
    assert again.outcome is Outcome.APPLIED  # as Kafka's request layer treats it
    assert isinstance(again.error, TopicAlreadyMarkedForDeletionError)
    assert str(again.error) == "topic orders is already marked for deletion"


def test_delete_refuses_internal_and_unknown_topics(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/brokers/topics/__consumer_offsets", b'{"version":3,"partitions":{"0":[0]}}')
    internal, unknown = ZooKeeperWriter(kafka_zk).apply_all(
        [DeleteTopic("__consumer_offsets"), DeleteTopic("nope")]
    )
    assert isinstance(internal.error, AdminOperationError)
    assert str(internal.error) == (
        "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion."
    )
    assert isinstance(unknown.error, UnknownTopicOrPartitionError)
    assert str(unknown.error) == "Topic `nope` to delete does not exist"
    assert kafka_zk.get_children("/admin/delete_topics") == []


def test_one_failure_does_not_stop_the_batch(kafka_zk: KazooClient) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    batch = [CreateTopic("a", {0: (0,)}), ORDERS, CreateTopic("b", {0: (1,)})]
    outcomes = [r.outcome for r in writer.apply_all(batch)]
    assert outcomes == [Outcome.APPLIED, Outcome.CONFLICT, Outcome.APPLIED]
    assert {"a", "b", "orders"} <= set(kafka_zk.get_children("/brokers/topics"))


def test_a_path_that_is_not_a_kafka_cluster_is_never_written(zk: KazooClient) -> None:
    zk.ensure_path("/brokers/topics")  # some paths, but no /cluster/id and no /brokers/ids
    with pytest.raises(NotAKafkaClusterError, match="does not look like a Kafka cluster"):
        ZooKeeperWriter(zk).apply_all([ORDERS])
    assert zk.get_children("/") == ["brokers"]
    assert zk.get_children("/brokers") == ["topics"]
    assert zk.get_children("/brokers/topics") == []


def _online(client: KazooClient) -> None:
    bring_partitions_online(client, read_cluster(client))


def test_a_reassignment_planned_on_replicas_that_moved_since_is_a_conflict_with_nothing_written(
    kafka_zk: KazooClient,
) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    _online(kafka_zk)
    read = read_cluster(kafka_zk).topics["orders"]
    move = PartitionMove(1, (1, 2, 3), (4, 2, 3))
    action = Reassign("orders", (move,), read.topic_znode_version, 1000, {"retention.ms": "1"}, 0)
    kafka_zk.set("/brokers/topics/orders", kafka_zk.get("/brokers/topics/orders")[0])  # the version moves
    before = notifications(kafka_zk)
    [result] = writer.apply_all([action])
    assert result.outcome is Outcome.CONFLICT
    assert kafka_zk.exists("/admin/reassign_partitions") is None
    assert kafka_zk.exists("/config/brokers/4") is None
    assert znode_json(kafka_zk, "/config/topics/orders") == {
        "version": 1,
        "config": {"retention.ms": "1000", "cleanup.policy": "compact"},
    }
    assert notifications(kafka_zk) == before


def test_a_reassignment_writes_kafkas_request_and_throttles_with_one_notification_each(
    kafka_zk: KazooClient,
) -> None:
    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    _online(kafka_zk)
    kafka_zk.create("/config/brokers/2", b'{"version":1,"config":{"leader.replication.throttled.rate":"7"}}')
    read = read_cluster(kafka_zk).topics["orders"]
    move = PartitionMove(1, (1, 2, 3), (4, 2, 3))
    config = {
        "leader.replication.throttled.replicas": "1:1,1:2,1:3",
        "follower.replication.throttled.replicas": "1:4",
    }
    action = Reassign("orders", (move,), read.topic_znode_version, 1000, config, read.config_znode_version)
    assert writer.apply(action).outcome is Outcome.APPLIED
    assert znode_json(kafka_zk, "/admin/reassign_partitions") == {
        "version": 1,
        "partitions": [{"topic": "orders", "partition": 1, "replicas": [4, 2, 3]}],
    }
    rates = {"leader.replication.throttled.rate": "1000", "follower.replication.throttled.rate": "1000"}
    for broker in (1, 2, 3, 4):
        assert znode_json(kafka_zk, f"/config/brokers/{broker}") == {"version": 1, "config": rates}
    assert notifications(kafka_zk) == [
        {"version": 2, "entity_path": entity}
        for entity in ("topics/orders", "brokers/1", "brokers/2", "brokers/3", "brokers/4")
    ]
    # a second one while the first runs is refused, in Kafka's words, with nothing written
    again = Reassign("orders", (PartitionMove(0, (0, 1, 2), (5, 1, 2)),), read.topic_znode_version)
    [result] = writer.apply_all([again])
    assert result.outcome is Outcome.REJECTED
    assert isinstance(result.error, ReassignmentInProgressError)
    assert "there is an existing assignment running" in str(result.error)


def test_a_lost_answer_of_a_reassignment_is_settled_by_reading_the_request(kafka_zk: KazooClient) -> None:
    """After a connection loss the writer re-reads the znode an action changes (here the request) and decides
    whether the commit landed: ours, absent (send again), or another tool's (a conflict, never resent)."""
    from topic_operator.zookeeper.writer import _Verdict, _verdict

    writer = ZooKeeperWriter(kafka_zk)
    writer.apply(ORDERS)
    _online(kafka_zk)
    read = read_cluster(kafka_zk).topics["orders"]
    ours = Reassign("orders", (PartitionMove(1, (1, 2, 3), (4, 2, 3)),), read.topic_znode_version)
    assert _verdict(ours, None) is _Verdict.NOT_COMMITTED
    writer.apply(ours)
    assert _verdict(ours, kafka_zk.get("/admin/reassign_partitions")) is _Verdict.COMMITTED
    theirs = Reassign("orders", (PartitionMove(1, (1, 2, 3), (5, 2, 3)),), read.topic_znode_version)
    with pytest.raises(WriteConflictError, match="another reassignment was requested meanwhile"):
        _verdict(theirs, kafka_zk.get("/admin/reassign_partitions"))
