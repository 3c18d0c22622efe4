"""Every znode codec round-trips the exact JSON of kafka-zk-semantics.md §5, compared structurally."""

import json

import pytest

from topic_operator.model import PartitionState
from topic_operator.zookeeper.znodes import (
    BrokerIdZNode,
    BrokerRegistration,
    ClusterIdZNode,
    ConfigChangeZNode,
    ControllerInfo,
    ControllerZNode,
    DeleteTopicZNode,
    PartitionStateZNode,
    ReassignPartitionsZNode,
    TopicConfigZNode,
    TopicZNode,
    TopicZNodeData,
    ZnodeFormatError,
)

BROKER_V5 = (
    '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://h:9092"],'
    '"jmx_port":-1,"port":9092,"host":"h","version":5,"timestamp":"1700000000000","rack":"r1"}'
)
TOPIC_V3 = (
    '{"partitions":{"0":[1,2],"1":[2,3]},"topic_id":"q3xFy1sLTyajJv4JTtj6qQ","adding_replicas":{},'
    '"removing_replicas":{},"version":3}'
)


def same_json(data: bytes, text: str) -> bool:
    return bool(json.loads(data) == json.loads(text))


def test_paths() -> None:
    assert TopicZNode.path("t") == "/brokers/topics/t"
    assert TopicConfigZNode.path("t") == "/config/topics/t"
    assert PartitionStateZNode.path("t", 3) == "/brokers/topics/t/partitions/3/state"
    assert BrokerIdZNode.path(7) == "/brokers/ids/7"
    assert DeleteTopicZNode.path("t") == "/admin/delete_topics/t"
    assert ConfigChangeZNode.prefix == "/config/changes/config_change_"
    assert ReassignPartitionsZNode.path == "/admin/reassign_partitions"


def test_topic_v3_round_trip() -> None:
    decoded = TopicZNode.decode("t", TOPIC_V3.encode())
    assert decoded == TopicZNodeData({0: (1, 2), 1: (2, 3)}, "q3xFy1sLTyajJv4JTtj6qQ", {}, {})
    assert same_json(TopicZNode.encode(decoded), TOPIC_V3)


def test_topic_v1_and_v2_decode_and_encode_as_v3() -> None:
    v1 = TopicZNode.decode("t", b'{"version":1,"partitions":{"0":[1,2]}}')
    assert v1 == TopicZNodeData({0: (1, 2)}, None, {}, {})
    assert json.loads(TopicZNode.encode(v1)) == {
        "version": 3,
        "partitions": {"0": [1, 2]},
        "adding_replicas": {},
        "removing_replicas": {},
    }
    v2 = TopicZNode.decode(
        "t",
        b'{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}}',
    )
    assert v2.adding == {0: (3,)}
    assert v2.removing == {0: (1,)}
    assert json.loads(TopicZNode.encode(v2))["adding_replicas"] == {"0": [3]}


def test_topic_without_version_is_read() -> None:
    assert TopicZNode.decode("t", b'{"partitions":{"0":[5]}}').partitions == {0: (5,)}


def test_empty_replica_change_lists_are_not_written() -> None:
    encoded = json.loads(TopicZNode.encode(TopicZNodeData({0: (1,)}, None, {0: ()}, {})))
    assert encoded["adding_replicas"] == {}


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "no data"),
        (b"{not json", "not JSON"),
        (b"[1]", "expected a JSON object"),
        (b'{"partitions":{"x":[1]}}', "partition key that is not a partition id: 'x'"),
        (b'{"partitions":{"0":["1"]}}', "must be a list of integers"),
        (b'{"partitions":{"0":[1]},"topic_id":5}', "'topic_id' must be a string"),
        (b'{"version":3,"partitions":null}', "field 'partitions' must be an object, got None"),
        (b'{"version":3}', "field 'partitions' must be an object, got None"),
        (b'{"version":3,"partitions":[[1]]}', "field 'partitions' must be an object, got [[1]]"),
    ],
)
def test_topic_decoder_refuses_what_kafka_would_read_as_empty(data: bytes, fragment: str) -> None:
    with pytest.raises(ZnodeFormatError) as caught:
        TopicZNode.decode("orders", data)
    assert caught.value.path == "/brokers/topics/orders"
    assert fragment in str(caught.value)


def test_partition_state_round_trip_with_and_without_recovery() -> None:
    text = '{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'
    state = PartitionStateZNode.decode("t", 0, text.encode(), partition_epoch=4)
    assert state == PartitionState(1, (1, 2), 0, 3, 0, 4)
    assert same_json(PartitionStateZNode.encode(1, [1, 2], 0, 3), text)
    recovering = PartitionStateZNode.encode(-1, [], 5, 3, recovering=True)
    assert json.loads(recovering)["leader_recovery_state"] == 1
    assert PartitionStateZNode.decode("t", 0, recovering).leader_recovery_state == 1


def test_topic_config_round_trip_with_string_values_only() -> None:
    text = '{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}'
    assert TopicConfigZNode.decode("t", text.encode()) == {
        "retention.ms": "1000",
        "cleanup.policy": "compact",
    }
    assert same_json(TopicConfigZNode.encode({"cleanup.policy": "compact", "retention.ms": "1000"}), text)
    assert same_json(TopicConfigZNode.encode({}), '{"version":1,"config":{}}')


def test_topic_config_refuses_numbers_both_ways() -> None:
    with pytest.raises(TypeError, match=r"'retention\.ms' must map to a string"):
        TopicConfigZNode.encode({"retention.ms": 1234})  # type: ignore[dict-item]
    with pytest.raises(ZnodeFormatError, match="not a JSON string; brokers fail to start"):
        TopicConfigZNode.decode("t", b'{"version":1,"config":{"retention.ms":1234}}')


def test_change_notifications() -> None:
    encoded = ConfigChangeZNode.encode_topic_change("orders")
    assert same_json(encoded, '{"version":2,"entity_path":"topics/orders"}')
    assert ConfigChangeZNode.decode("/n", encoded) == "topics/orders"
    v1 = b'{"version":1,"entity_type":"topics","entity_name":"orders"}'
    assert ConfigChangeZNode.decode("/n", v1) == "topics/orders"
    assert ConfigChangeZNode.decode("/n", b"not json") is None
    with pytest.raises(ZnodeFormatError) as caught:
        ConfigChangeZNode.decode("/n", b'{"version":3,"entity_path":"topics/x"}')
    assert caught.value.problem == (
        "Config change notification has unsupported version '3', supported versions are 1 and 2."
    )


def test_broker_v5_example_round_trip() -> None:
    decoded = BrokerIdZNode.decode(1, BROKER_V5.encode())
    assert decoded == BrokerRegistration(
        id=1,
        version=5,
        endpoints=("PLAINTEXT://h:9092",),
        rack="r1",
        jmx_port=-1,
        timestamp="1700000000000",
        features={},
    )
    assert same_json(BrokerIdZNode.encode(1, "h", 9092, rack="r1", timestamp_ms=1700000000000), BROKER_V5)


def test_broker_without_rack_omits_the_field() -> None:
    assert "rack" not in json.loads(BrokerIdZNode.encode(1, "h", 9092, timestamp_ms=1))


@pytest.mark.parametrize(
    ("payload", "endpoints", "rack"),
    [
        (
            {"version": 1, "host": "h", "port": 9092, "jmx_port": -1, "timestamp": "1"},
            ("PLAINTEXT://h:9092",),
            None,
        ),
        (
            {
                "version": 2,
                "host": "h",
                "port": 9092,
                "endpoints": ["PLAINTEXT://h:9092"],
                "jmx_port": -1,
                "timestamp": "1",
            },
            ("PLAINTEXT://h:9092",),
            None,
        ),
        (
            {
                "version": 3,
                "host": None,
                "port": -1,
                "endpoints": ["SSL://h:9093"],
                "rack": None,
                "timestamp": "1",
            },
            ("SSL://h:9093",),
            None,
        ),
        (
            {
                "version": 4,
                "host": "h",
                "port": 9092,
                "endpoints": ["PLAINTEXT://h:9092", "SSL://[::1]:9093"],
                "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"},
                "rack": "eu-1a",
                "jmx_port": 9999,
                "timestamp": "1",
            },
            ("PLAINTEXT://h:9092", "SSL://[::1]:9093"),
            "eu-1a",
        ),
    ],
)
def test_broker_versions_one_to_four(
    payload: dict[str, object], endpoints: tuple[str, ...], rack: str | None
) -> None:
    decoded = BrokerIdZNode.decode(3, json.dumps(payload).encode())
    assert decoded.version == payload["version"]
    assert decoded.endpoints == endpoints
    assert decoded.rack == rack


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"version": 0, "host": "h", "port": 1}, "Unsupported version of broker registration"),
        ({"version": 5, "endpoints": "PLAINTEXT://h:1"}, "'endpoints' must be a list of strings"),
        ({"version": 5, "endpoints": [], "rack": 3}, "'rack' must be a string or null"),
    ],
)
def test_broker_decoder_refusals(payload: dict[str, object], fragment: str) -> None:
    with pytest.raises(ZnodeFormatError, match=fragment):
        BrokerIdZNode.decode(3, json.dumps(payload).encode())


def test_cluster_id_version_is_a_string() -> None:
    encoded = ClusterIdZNode.encode("AbC-123_xyz0123456789A")
    assert json.loads(encoded) == {"version": "1", "id": "AbC-123_xyz0123456789A"}
    assert ClusterIdZNode.decode(encoded) == "AbC-123_xyz0123456789A"
    with pytest.raises(ZnodeFormatError, match="'id' must be a non-empty string"):
        ClusterIdZNode.decode(b'{"version":"1"}')


def test_controller_v1_and_v2() -> None:
    v1 = b'{"version":1,"brokerid":2,"timestamp":"1700000000000"}'
    assert ControllerZNode.decode(v1) == ControllerInfo(2, "1700000000000", None)
    v2 = ControllerZNode.encode(3, 1700000000001)
    assert json.loads(v2) == {
        "version": 2,
        "brokerid": 3,
        "timestamp": "1700000000001",
        "kraftControllerEpoch": -1,
    }
    assert ControllerZNode.decode(v2) == ControllerInfo(3, "1700000000001", -1)


def test_reassign_partitions_round_trip() -> None:
    text = '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2]},{"topic":"a","partition":3,"replicas":[2,3]}]}'
    decoded = ReassignPartitionsZNode.decode(text.encode())
    assert decoded == {"a": {0: (1, 2), 3: (2, 3)}}
    assert same_json(ReassignPartitionsZNode.encode(decoded), text)


def test_decoded_replica_lists_are_shared_between_partitions_and_topics() -> None:
    """A watched cluster holds every topic's assignment: equal replica lists are one tuple, not one per partition."""
    data = b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1],"2":[1,2,3]}}'
    one, two = TopicZNode.decode("one", data), TopicZNode.decode("two", data)
    assert one.partitions == {0: (1, 2, 3), 1: (2, 3, 1), 2: (1, 2, 3)}
    assert one.partitions[0] is one.partitions[2] is two.partitions[0]
    assert one.partitions[1] is two.partitions[1]
