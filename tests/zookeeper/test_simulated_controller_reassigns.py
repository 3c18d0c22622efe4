"""The simulated controller carries out ``/admin/reassign_partitions`` as Kafka's (2.4+, KIP-455) does (semantics
§14): the move shows in the topic znode first (full replica set, adding/removing maps), then the partition ends on
its target with a leader and ISR from it, and the request goes away. Against a real ZooKeeper, so the versions and
the request's deletion are ZooKeeper's own."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from kazoo.client import KazooClient

from topic_operator.model import PartitionState
from topic_operator.testing.simulated_brokers import bring_partitions_online, carry_out_reassignments
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.znodes import (
    PartitionStateZNode,
    ReassignPartitionsZNode,
    TopicZNode,
    TopicZNodeData,
)

Replicas = tuple[int, ...]


def create_topic(zk: KazooClient, name: str, partitions: Mapping[int, Replicas]) -> str:
    """As a create writes it, then brought online by the controller; returns the topic id it was given."""
    zk.create(TopicZNode.path(name), TopicZNode.encode(TopicZNodeData(partitions)))
    bring_partitions_online(zk, read_cluster(zk))
    topic_id = topic(zk, name).topic_id
    assert topic_id is not None
    return topic_id


def request(zk: KazooClient, reassignments: Mapping[str, Mapping[int, Replicas]]) -> None:
    """What ``kafka-reassign-partitions.sh --execute`` writes."""
    zk.create(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode(reassignments))


def requested(zk: KazooClient) -> dict[str, dict[int, Replicas]] | None:
    if zk.exists(ReassignPartitionsZNode.path) is None:
        return None
    return ReassignPartitionsZNode.decode(zk.get(ReassignPartitionsZNode.path)[0])


def topic(zk: KazooClient, name: str) -> TopicZNodeData:
    return TopicZNode.decode(name, zk.get(TopicZNode.path(name))[0])


def state(zk: KazooClient, name: str, partition: int) -> PartitionState:
    data, stat = zk.get(PartitionStateZNode.path(name, partition))
    return PartitionStateZNode.decode(name, partition, data, stat.version)


def everything(zk: KazooClient, path: str = "/") -> dict[str, tuple[bytes, int, int]]:
    """Every znode's data, data version and last-modifying zxid: equal before and after means nothing written."""
    data, stat = zk.get(path)
    found = {path: (data, stat.version, stat.mzxid)}
    for child in zk.get_children(path):
        found |= everything(zk, f"{path.rstrip('/')}/{child}")
    return found


@pytest.mark.timeout(60)
def test_replication_factor_one_to_three_shows_in_progress_then_finishes(kafka_zk: KazooClient) -> None:
    topic_id = create_topic(kafka_zk, "orders", {0: (0,), 1: (1,)})
    request(kafka_zk, {"orders": {0: (0, 1, 2)}})

    assert carry_out_reassignments(kafka_zk, finish=False) == 1
    moving = topic(kafka_zk, "orders")
    assert moving.partitions == {0: (0, 1, 2), 1: (1,)}
    assert moving.adding == {0: (1, 2)}
    assert moving.removing == {}
    assert moving.topic_id == topic_id
    assert requested(kafka_zk) == {"orders": {0: (0, 1, 2)}}
    assert state(kafka_zk, "orders", 0) == PartitionState(
        leader=0, isr=(0,), leader_epoch=0, controller_epoch=1
    )
    version = kafka_zk.exists(TopicZNode.path("orders")).version
    assert carry_out_reassignments(kafka_zk, finish=False) == 0  # already started: nothing more to write
    assert kafka_zk.exists(TopicZNode.path("orders")).version == version

    assert carry_out_reassignments(kafka_zk, controller_epoch=7) == 1
    done = topic(kafka_zk, "orders")
    assert done == TopicZNodeData({0: (0, 1, 2), 1: (1,)}, topic_id, {}, {})
    assert state(kafka_zk, "orders", 0) == PartitionState(
        leader=0, isr=(0, 1, 2), leader_epoch=1, controller_epoch=7, partition_epoch=1
    )
    assert state(kafka_zk, "orders", 1) == PartitionState(
        leader=1, isr=(1,), leader_epoch=0, controller_epoch=1
    )
    assert requested(kafka_zk) is None
    assert carry_out_reassignments(kafka_zk) == 0


@pytest.mark.timeout(60)
def test_replication_factor_decrease_drops_the_removed_replica(kafka_zk: KazooClient) -> None:
    topic_id = create_topic(kafka_zk, "orders", {0: (0, 1, 2)})
    request(kafka_zk, {"orders": {0: (0, 1)}})

    assert carry_out_reassignments(kafka_zk, finish=False) == 1
    moving = topic(kafka_zk, "orders")
    assert (moving.partitions, moving.adding, moving.removing) == ({0: (0, 1, 2)}, {}, {0: (2,)})

    assert carry_out_reassignments(kafka_zk) == 1
    assert topic(kafka_zk, "orders") == TopicZNodeData({0: (0, 1)}, topic_id, {}, {})
    finished = state(kafka_zk, "orders", 0)
    assert (finished.leader, finished.isr, finished.leader_epoch) == (0, (0, 1), 1)
    assert requested(kafka_zk) is None


@pytest.mark.timeout(60)
def test_moving_the_leader_off_its_broker_elects_a_live_target_replica(kafka_zk: KazooClient) -> None:
    topic_id = create_topic(kafka_zk, "orders", {0: (0, 1, 2), 1: (1, 2, 3)})
    request(kafka_zk, {"orders": {0: (9, 4, 1)}})  # broker 9 is not registered: it cannot lead nor be in sync

    assert carry_out_reassignments(kafka_zk, finish=False) == 1
    moving = topic(kafka_zk, "orders")
    assert moving.partitions[0] == (9, 4, 1, 0, 2)
    assert (moving.adding, moving.removing) == ({0: (9, 4)}, {0: (0, 2)})
    assert state(kafka_zk, "orders", 0).leader == 0  # still leads until the move finishes

    assert carry_out_reassignments(kafka_zk) == 1
    assert topic(kafka_zk, "orders") == TopicZNodeData({0: (9, 4, 1), 1: (1, 2, 3)}, topic_id, {}, {})
    moved = state(kafka_zk, "orders", 0)
    assert (moved.leader, moved.isr, moved.leader_epoch) == (4, (4, 1), 1)
    assert state(kafka_zk, "orders", 1).leader_epoch == 0
    assert requested(kafka_zk) is None


@pytest.mark.timeout(60)
def test_missing_topic_bad_targets_and_no_op_entries_leave_the_request(kafka_zk: KazooClient) -> None:
    topic_id = create_topic(kafka_zk, "orders", {0: (0, 1), 1: (1, 2), 2: (2, 3), 3: (3, 4)})
    request(
        kafka_zk,
        {
            "ghost": {0: (1, 2)},
            "orders": {0: (1, 1, 2), 1: (), 2: (2, 3), 3: (4, 5), 7: (0, 1)},
        },
    )

    assert carry_out_reassignments(kafka_zk, finish=False) == 1
    assert requested(kafka_zk) == {"orders": {3: (4, 5)}}
    assert topic(kafka_zk, "orders") == TopicZNodeData(
        {0: (0, 1), 1: (1, 2), 2: (2, 3), 3: (4, 5, 3)}, topic_id, {3: (5,)}, {3: (3,)}
    )

    assert carry_out_reassignments(kafka_zk) == 1
    assert topic(kafka_zk, "orders").partitions == {0: (0, 1), 1: (1, 2), 2: (2, 3), 3: (4, 5)}
    assert kafka_zk.exists("/brokers/topics/ghost") is None
    assert requested(kafka_zk) is None


@pytest.mark.timeout(60)
def test_a_request_of_only_refused_entries_is_deleted_and_nothing_moves(kafka_zk: KazooClient) -> None:
    create_topic(kafka_zk, "orders", {0: (0, 1)})
    create_topic(kafka_zk, "doomed", {0: (0, 1)})
    kafka_zk.create("/admin/delete_topics/doomed")
    request(kafka_zk, {"ghost": {0: (1, 2)}, "orders": {0: (2, 2)}, "doomed": {0: (1, 2)}})
    versions = {name: kafka_zk.exists(TopicZNode.path(name)).version for name in ("orders", "doomed")}

    assert carry_out_reassignments(kafka_zk) == 0
    assert requested(kafka_zk) is None
    assert {name: kafka_zk.exists(TopicZNode.path(name)).version for name in versions} == versions


@pytest.mark.timeout(60)
def test_a_new_request_replaces_a_move_in_progress_from_the_original_replicas(kafka_zk: KazooClient) -> None:
    """As Kafka's ``reassignTo``: the replicas being added by the first move are not original, so they go."""
    topic_id = create_topic(kafka_zk, "orders", {0: (0,)})
    request(kafka_zk, {"orders": {0: (0, 1, 2)}})
    assert carry_out_reassignments(kafka_zk, finish=False) == 1
    kafka_zk.delete(ReassignPartitionsZNode.path)
    request(kafka_zk, {"orders": {0: (0, 3)}})

    assert carry_out_reassignments(kafka_zk, finish=False) == 1
    assert topic(kafka_zk, "orders") == TopicZNodeData({0: (0, 3)}, topic_id, {0: (3,)}, {})
    assert carry_out_reassignments(kafka_zk) == 1
    assert topic(kafka_zk, "orders") == TopicZNodeData({0: (0, 3)}, topic_id, {}, {})
    assert state(kafka_zk, "orders", 0).isr == (0, 3)
    assert requested(kafka_zk) is None


@pytest.mark.timeout(60)
def test_no_request_moves_nothing_and_writes_nothing(kafka_zk: KazooClient) -> None:
    create_topic(kafka_zk, "orders", {0: (0, 1), 1: (1, 2)})
    before = everything(kafka_zk)

    assert carry_out_reassignments(kafka_zk) == 0
    assert everything(kafka_zk) == before


@pytest.mark.timeout(60)
def test_a_move_in_progress_without_a_request_is_finished(kafka_zk: KazooClient) -> None:
    """As the Admin API leaves it: the maps in the topic znode are the only record of the move."""
    topic_id = create_topic(kafka_zk, "orders", {0: (0, 1)})
    kafka_zk.set(
        TopicZNode.path("orders"),
        TopicZNode.encode(TopicZNodeData({0: (2, 1, 0)}, topic_id, {0: (2,)}, {0: (0,)})),
    )

    assert carry_out_reassignments(kafka_zk, finish=False) == 0
    assert carry_out_reassignments(kafka_zk) == 1
    assert topic(kafka_zk, "orders") == TopicZNodeData({0: (2, 1)}, topic_id, {}, {})
    assert (state(kafka_zk, "orders", 0).leader, state(kafka_zk, "orders", 0).isr) == (2, (2, 1))


@pytest.mark.timeout(60)
def test_a_refused_entry_for_a_partition_already_moving_leaves_the_request(kafka_zk: KazooClient) -> None:
    """The refusal drops the entry; the move already under way goes on and finishes on its own terms."""
    topic_id = create_topic(kafka_zk, "orders", {0: (0, 1)})
    kafka_zk.set(
        TopicZNode.path("orders"),
        TopicZNode.encode(TopicZNodeData({0: (2, 1, 0)}, topic_id, {0: (2,)}, {0: (0,)})),
    )
    request(kafka_zk, {"orders": {0: (1, 1)}})

    assert carry_out_reassignments(kafka_zk) == 1
    assert requested(kafka_zk) is None
    assert topic(kafka_zk, "orders") == TopicZNodeData({0: (2, 1)}, topic_id, {}, {})
