"""``read_cluster`` sees a cluster as Kafka wrote it: brokers, racks, controller, topics, configs, versions,
deletion marks, reassignments and (on request) partition states."""

import json

from kazoo.client import KazooClient
from kazoo.security import ACL, OPEN_ACL_UNSAFE, Id, Permissions

from harness.kafka_cluster import CLUSTER_ID, SIX_BROKERS_THREE_RACKS
from harness.zookeeper import ZkChroot, connected
from topic_operator.model import PartitionState
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.znodes import PartitionStateZNode, ReassignPartitionsZNode

KAFKA_TOPIC = (
    b'{"partitions":{"0":[1,2],"1":[2,3]},"topic_id":"q3xFy1sLTyajJv4JTtj6qQ","adding_replicas":{},'
    b'"removing_replicas":{},"version":3}'
)


def test_brokers_racks_controller_and_cluster_id(kafka_zk: KazooClient) -> None:
    state = read_cluster(kafka_zk)
    assert state.cluster_id == CLUSTER_ID
    assert state.controller == 0
    assert {b.id: b.rack for b in state.brokers.values()} == dict(enumerate(SIX_BROKERS_THREE_RACKS))
    assert state.brokers[2].endpoints == ("PLAINTEXT://127.0.0.1:9094",)
    assert all(b.epoch > 0 for b in state.brokers.values())  # the registration's czxid
    assert state.topics == {}


def test_topic_as_kafka_wrote_it(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/config/topics/orders", b'{"version":1,"config":{"retention.ms":" 1000 "}}')
    kafka_zk.create("/brokers/topics/orders", KAFKA_TOPIC)
    kafka_zk.set("/brokers/topics/orders", KAFKA_TOPIC)  # the controller rewrote it once
    topic = read_cluster(kafka_zk).topics["orders"]
    assert topic.partitions == {0: (1, 2), 1: (2, 3)}
    assert topic.topic_id == "q3xFy1sLTyajJv4JTtj6qQ"
    assert topic.config == {"retention.ms": " 1000 "}  # as stored; canonical comparison is the planner's job
    assert (topic.topic_znode_version, topic.config_znode_version) == (1, 0)
    assert topic.replication_factor == 2
    assert not topic.marked_for_deletion
    assert not topic.reassignment_in_progress
    assert topic.partition_states is None


def test_old_topic_formats_and_missing_config(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/brokers/topics/legacy", b'{"version":1,"partitions":{"0":[0]}}')
    topic = read_cluster(kafka_zk).topics["legacy"]
    assert topic.partitions == {0: (0,)}
    assert topic.topic_id is None
    assert topic.config == {}
    assert topic.config_znode_version is None


def test_deletion_marks_and_reassignments(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/brokers/topics/doomed", b'{"version":3,"partitions":{"0":[0]}}')
    kafka_zk.create("/admin/delete_topics/doomed")
    kafka_zk.create(
        "/brokers/topics/moving",
        b'{"version":3,"partitions":{"0":[0,1,2]},"adding_replicas":{"0":[2]},"removing_replicas":{}}',
    )
    kafka_zk.create("/brokers/topics/queued", b'{"version":3,"partitions":{"0":[0,1]}}')
    kafka_zk.create("/brokers/topics/calm", b'{"version":3,"partitions":{"0":[0,1]}}')
    kafka_zk.create(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode({"queued": {0: [1, 2]}}))
    topics = read_cluster(kafka_zk).topics
    assert topics["doomed"].marked_for_deletion
    assert topics["moving"].reassignment_in_progress
    assert topics["queued"].reassignment_in_progress
    assert not topics["calm"].reassignment_in_progress
    assert not topics["calm"].marked_for_deletion


def test_partition_states_only_on_request(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/brokers/topics/t", b'{"version":3,"partitions":{"0":[1,2],"1":[2,3]}}')
    kafka_zk.create(
        PartitionStateZNode.path("t", 0), PartitionStateZNode.encode(1, [1, 2], 0, 7), makepath=True
    )
    kafka_zk.set(PartitionStateZNode.path("t", 0), PartitionStateZNode.encode(2, [2], 1, 7))
    assert read_cluster(kafka_zk).topics["t"].partition_states is None
    states = read_cluster(kafka_zk, partition_states=True).topics["t"].partition_states
    assert states == {
        0: PartitionState(leader=2, isr=(2,), leader_epoch=1, controller_epoch=7, partition_epoch=1)
    }


def test_orphan_configs_and_unreadable_topics_are_reported_not_guessed(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/config/topics/half-created", b'{"version":1,"config":{}}')
    kafka_zk.set("/config/topics/half-created", b'{"version":1,"config":{"a":"b"}}')
    kafka_zk.create("/brokers/topics/garbled", b"{not json")
    kafka_zk.create("/brokers/topics/numbers", b'{"version":3,"partitions":{"0":[0]}}')
    kafka_zk.create("/config/topics/numbers", b'{"version":1,"config":{"retention.ms":1234}}')
    state = read_cluster(kafka_zk)
    assert state.orphan_configs == {"half-created": 1}
    assert set(state.unreadable_topics) == {"garbled", "numbers"}
    assert "/brokers/topics/garbled: not JSON" in state.unreadable_topics["garbled"]
    assert "brokers fail to start" in state.unreadable_topics["numbers"]
    assert "garbled" not in state.topics
    assert "numbers" not in state.topics


def test_only_the_requested_topics(kafka_zk: KazooClient) -> None:
    for name in ("a", "b", "c"):
        kafka_zk.create(
            f"/brokers/topics/{name}", json.dumps({"version": 3, "partitions": {"0": [0]}}).encode()
        )
    assert set(read_cluster(kafka_zk, topics=["a", "c", "missing"]).topics) == {"a", "c"}


def test_requested_topics_are_read_by_name_as_the_whole_read_sees_them(kafka_zk: KazooClient) -> None:
    """A read of a few topics costs as much in a cluster of 10,000 topics as in one of 10: it lists neither
    ``/brokers/topics`` nor ``/config/topics``. Here neither may be listed (no READ in their ACLs; each topic's
    own znodes stay world-readable), so only a read by name succeeds, and it must see what a whole read sees."""
    kafka_zk.create("/config/topics/orders", b'{"version":1,"config":{"retention.ms":"1000"}}')
    kafka_zk.create("/brokers/topics/orders", KAFKA_TOPIC)
    kafka_zk.create("/brokers/topics/bare", json.dumps({"version": 3, "partitions": {"0": [0]}}).encode())
    kafka_zk.create("/config/topics/half-created", b'{"version":1,"config":{}}')
    whole = read_cluster(kafka_zk)
    asked = ["orders", "bare", "half-created", "missing"]
    no_listing = [ACL(Permissions.ALL & ~Permissions.READ, Id("world", "anyone"))]
    for parent in ("/brokers/topics", "/config/topics"):
        kafka_zk.set_acls(parent, no_listing)
    try:
        named = read_cluster(kafka_zk, topics=asked)
    finally:
        for parent in ("/brokers/topics", "/config/topics"):
            kafka_zk.set_acls(parent, OPEN_ACL_UNSAFE)
    assert named.topics == {t: whole.topics[t] for t in ("orders", "bare")}
    assert named.orphan_configs == whole.orphan_configs == {"half-created": 0}


def test_a_requested_name_that_could_name_another_znode_is_not_read(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/brokers/topics/orders", KAFKA_TOPIC)
    kafka_zk.create(
        "/brokers/topics/orders/partitions/0/state",
        b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}',
        makepath=True,
    )
    state = read_cluster(kafka_zk, topics=["orders/partitions/0/state", "orders/partitions", "..", ".", ""])
    assert (state.topics, state.unreadable_topics, state.orphan_configs) == ({}, {}, {})


def test_a_broker_whose_session_ends_disappears(kafka_zk: KazooClient, zk_chroot: ZkChroot) -> None:
    with connected(zk_chroot.connect_string) as other:
        other.create("/brokers/ids/17", kafka_zk.get("/brokers/ids/1")[0], ephemeral=True)
        assert 17 in read_cluster(kafka_zk).brokers
    assert 17 not in read_cluster(kafka_zk).brokers


def test_markers_of_topics_already_gone_are_listed(kafka_zk: KazooClient) -> None:
    kafka_zk.create("/admin/delete_topics/ghost")
    kafka_zk.create("/brokers/topics/doomed", b'{"version":3,"partitions":{"0":[0]}}')
    kafka_zk.create("/admin/delete_topics/doomed")
    assert read_cluster(kafka_zk).marked_for_deletion == {"ghost", "doomed"}
