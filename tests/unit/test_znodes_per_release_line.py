"""Each release line's znodes (kafka-versions.md d.2): what its writers put in a topic znode and a broker
registration, read back by every line's decoder; a plan writes the topic znode its cluster's controller reads,
and a reassignment a line cannot change is refused in words."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topic_operator.kafka.errors import ReassignmentInProgressError
from topic_operator.kafka.releases import KAFKA_VERSIONS, format_version
from topic_operator.kafka.znode_payloads import (
    config_change_payload,
    config_change_payload_size,
    topic_payload,
    topic_znode_version_of,
)
from topic_operator.model import Broker, ClusterSpec, ClusterState, ReassignmentPolicy, TopicSpec, TopicState
from topic_operator.plan import AddPartitions, CreateTopic, TopicStatus, plan_topic
from topic_operator.plan_output import action_to_dict
from topic_operator.zookeeper.znodes import BrokerIdZNode, TopicZNode, TopicZNodeData, ZnodeFormatError

Version = tuple[int, int]
TOPIC_ID = "q3xFy1sLTyajJv4JTtj6qQ"
LINES = list(KAFKA_VERSIONS)
IDS = [format_version(v) for v in LINES]

# kafka-versions.md d.2, row by row: the keys of each topic znode version (topic_id only when known)
TOPIC_KEYS = {
    1: {"version", "partitions"},  # 2.0.1:core/src/main/scala/kafka/zk/ZkData.scala:239-246
    2: {"version", "partitions", "adding_replicas", "removing_replicas"},  # 2.4.1:...:241-261
    3: {"version", "partitions", "adding_replicas", "removing_replicas"},  # 2.8.2:...:286-309
}


def expected_topic_version(version: Version) -> int:
    return 1 if version < (2, 4) else 2 if version < (2, 8) else 3


@pytest.mark.parametrize("version", LINES, ids=IDS)
def test_each_line_writes_its_own_topic_znode_and_reads_it_back(version: Version) -> None:
    format_ = topic_znode_version_of(version)
    assert format_ == expected_topic_version(version)
    payload = TopicZNode.encode(TopicZNodeData({0: (1, 2), 1: (2, 3)}), version=format_)
    document = json.loads(payload)
    assert set(document) == TOPIC_KEYS[format_]
    assert document["version"] == format_
    decoded = TopicZNode.decode("t", payload)
    assert decoded == TopicZNodeData({0: (1, 2), 1: (2, 3)}, None, {}, {})
    assert decoded.read_version == format_


def test_version_3_carries_the_topic_id_and_the_moves_only_when_known() -> None:
    payload = json.loads(TopicZNode.encode(TopicZNodeData({0: (1, 2, 3)}, TOPIC_ID, {0: (3,)}, {0: (1,)})))
    assert payload == {
        "version": 3,
        "partitions": {"0": [1, 2, 3]},
        "adding_replicas": {"0": [3]},
        "removing_replicas": {"0": [1]},
        "topic_id": TOPIC_ID,
    }


@pytest.mark.parametrize(
    ("version", "fields", "problem"),
    [
        (2, {"topic_id": TOPIC_ID}, "a topic znode of version 2 has no topic_id"),
        (1, {"topic_id": TOPIC_ID}, "a topic znode of version 1 has no topic_id"),
        (1, {"adding": {0: (3,)}}, "a topic znode of version 1 has no adding_replicas/removing_replicas"),
        (4, {}, "topic znode version 4 is not one of (1, 2, 3)"),
    ],
)
def test_a_field_a_version_lacks_is_never_dropped_silently(
    version: int, fields: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        topic_payload({0: (1,)}, version=version, **fields)  # type: ignore[arg-type]


# ---- broker registrations --------------------------------------------------------------------------------------

# kafka-versions.md d.2 and 3.9.0-rc3:core/src/main/scala/kafka/zk/ZkData.scala:152-176, 200-245: the keys each
# registration version has (rack only when set)
REGISTRATION_KEYS = {
    1: {"version", "host", "port", "jmx_port", "timestamp"},
    2: {"version", "host", "port", "jmx_port", "timestamp", "endpoints"},
    3: {"version", "host", "port", "jmx_port", "timestamp", "endpoints", "rack"},
    4: {"version", "host", "port", "jmx_port", "timestamp", "endpoints", "rack", "listener_security_protocol_map"},
    5: {
        "version", "host", "port", "jmx_port", "timestamp", "endpoints", "rack", "listener_security_protocol_map",
        "features",
    },
}  # fmt: skip


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_broker_registrations_of_versions_1_to_5_round_trip(version: int) -> None:
    payload = BrokerIdZNode.encode(7, "h", 9092, rack="r1", timestamp_ms=1, version=version)
    assert set(json.loads(payload)) == REGISTRATION_KEYS[version]
    registration = BrokerIdZNode.decode(7, payload)
    assert registration.version == version
    assert registration.endpoints == ("PLAINTEXT://h:9092",)
    assert registration.rack == ("r1" if version >= 3 else None)
    assert registration.features == ({} if version >= 5 else None)


def test_a_registrations_features_are_read_and_checked() -> None:
    features = {"metadata.version": {"min_version": 1, "max_version": 21}}
    payload = BrokerIdZNode.encode(1, "h", 9092, timestamp_ms=1, features=features)
    assert BrokerIdZNode.decode(1, payload).features == features
    bad = json.loads(payload)
    bad["features"] = {"metadata.version": "21"}
    with pytest.raises(ZnodeFormatError, match="'features' must map feature names to version ranges"):
        BrokerIdZNode.decode(1, json.dumps(bad).encode())


# ---- the plan writes what the cluster's controller reads -------------------------------------------------------

BROKERS = {i: Broker(i) for i in range(3)}


def cluster(version: Version, **fields: object) -> ClusterSpec:
    return ClusterSpec("c", "zk:2181", kafka_version=version, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", LINES, ids=IDS)
def test_a_create_is_written_in_the_lines_format(version: Version) -> None:
    result = plan_topic(TopicSpec("c", "t", 2, 2), ClusterState("id", BROKERS, {}), cluster(version))
    (action,) = result.actions
    assert isinstance(action, CreateTopic)
    assert action.topic_znode_format == expected_topic_version(version)
    shown = action_to_dict(action)
    assert shown.get("topic_znode_format", 3) == expected_topic_version(version)


@pytest.mark.parametrize(
    ("version", "read", "expected"),
    [
        ((2, 3), TopicState("t", {0: (0, 1)}, format_version=1), 1),
        ((2, 4), TopicState("t", {0: (0, 1)}, format_version=1), 2),  # 2.4's AdminZkClient writes version 2
        ((2, 7), TopicState("t", {0: (0, 1)}, topic_id=TOPIC_ID, format_version=3), 3),  # the id is kept
        ((3, 9), TopicState("t", {0: (0, 1)}, format_version=1), 3),
    ],
)
def test_growth_rewrites_in_the_lines_format_keeping_what_is_there(
    version: Version, read: TopicState, expected: int
) -> None:
    result = plan_topic(TopicSpec("c", "t", 2, 2), ClusterState("id", BROKERS, {"t": read}), cluster(version))
    (action,) = result.actions
    assert isinstance(action, AddPartitions)
    assert action.topic_znode_format == expected
    assert action.topic_id == read.topic_id


# ---- a reassignment before 2.4 -----------------------------------------------------------------------------------


def reassigning_before_2_4() -> ClusterState:
    """2.3's controller, halfway: the topic znode lists old and new replicas together (OAR + RAR), and only the
    request znode says where partition 0 goes."""
    topic = TopicState("t", {0: (2, 0, 1)}, pending_reassignment=True, requested_replicas={0: (2, 0)})
    return ClusterState("id", BROKERS, {"t": topic})


@pytest.mark.parametrize("version", [(2, 0), (2, 3)], ids=["2.0", "2.3"])
def test_before_2_4_a_reassignment_cannot_be_changed_and_says_so(version: Version) -> None:
    policy = ReassignmentPolicy(enabled=True)
    waiting = plan_topic(
        TopicSpec("c", "t", 1, 2), reassigning_before_2_4(), cluster(version, reassignment=policy)
    )
    assert waiting.rejections == ()
    assert [(m.partition, m.target) for m in waiting.reassigning or ()] == [(0, (2, 0))]
    changed = plan_topic(
        TopicSpec("c", "t", 1, 3), reassigning_before_2_4(), cluster(version, reassignment=policy)
    )
    assert changed.status is TopicStatus.REJECTED
    (error,) = changed.rejections
    assert isinstance(error, ReassignmentInProgressError)
    assert (
        f"Kafka {format_version(version)} cannot cancel or change a partition reassignment in progress"
        in str(error)
    )


def test_from_2_4_a_changed_declaration_waits_for_the_running_reassignment() -> None:
    topic = TopicState("t", {0: (2, 0, 1)}, adding_replicas={0: (2,)}, removing_replicas={0: (1,)})
    state = ClusterState("id", BROKERS, {"t": topic})
    result = plan_topic(
        TopicSpec("c", "t", 1, 3), state, cluster((2, 4), reassignment=ReassignmentPolicy(True))
    )
    assert result.rejections == ()
    assert result.actions == ()


@given(topic=st.from_regex(r"[a-zA-Z0-9._-]{1,249}", fullmatch=True) | st.text(max_size=60))
def test_a_config_change_is_sized_as_it_is_written(topic: str) -> None:
    """The plan sizes each change without writing its notification: the size is the written payload's, for a
    legal name and for any other text (quotes, backslashes, control characters, non-ASCII)."""
    assert config_change_payload_size(topic) == len(config_change_payload(topic))
