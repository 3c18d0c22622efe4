"""Every znode the project reads or writes: its path and its codec side by side, as Kafka's ``ZkData`` keeps them.

Formats follow kafka-zk-semantics.md §5. Encoders write what Kafka writes (compact JSON; topic znodes always as
version 3; config values always as JSON strings, because a number in a config znode stops brokers from starting:
§13.2). Decoders are strict where Kafka's are silently lenient: Kafka reads unparseable topic JSON as "no
partitions" (ZkData.scala's TopicZNode.decode), which would make a planner think a live topic is empty. Here any
payload that is not what Kafka writes raises ``ZnodeFormatError`` naming the path.

Key order in Kafka's JSON is not stable (Scala hash maps), so payloads are compared structurally, never as text.
The topic and config payloads are built by ``kafka.znode_payloads``, which the planner also uses to refuse a write
ZooKeeper would refuse for its size.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from topic_operator.kafka.znode_payloads import config_change_payload, config_payload, topic_payload
from topic_operator.model import BROKER_IDS_PATH, REASSIGN_PARTITIONS_PATH, PartitionState

__all__ = [
    "BROKER_REGISTRATION_VERSIONS",
    "AdminZNode",
    "BrokerConfigZNode",
    "BrokerConfigsZNode",
    "BrokerIdZNode",
    "BrokerRegistration",
    "BrokersZNode",
    "ClusterIdZNode",
    "ConfigChangeZNode",
    "ConfigZNode",
    "ControllerInfo",
    "ControllerZNode",
    "DeleteTopicZNode",
    "FeatureZNode",
    "MigrationState",
    "MigrationZNode",
    "PartitionStateZNode",
    "ReassignPartitionsZNode",
    "TopicConfigZNode",
    "TopicZNode",
    "TopicZNodeData",
    "ZnodeFormatError",
]


class ZnodeFormatError(ValueError):
    """A znode's payload is not in a format Kafka writes. Names the path and what is wrong, so an operator can
    find the znode; never guesses a value."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def _dumps(payload: Mapping[str, object]) -> bytes:
    """Compact JSON as Jackson writes it."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def _loads(path: str, data: bytes | None) -> dict[str, Any]:
    if not data:
        raise ZnodeFormatError(path, "no data, expected a JSON object")
    try:
        payload = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ZnodeFormatError(path, f"not JSON ({error})") from None
    if not isinstance(payload, dict):
        raise ZnodeFormatError(path, f"expected a JSON object, got {type(payload).__name__}")
    return payload


def _int(path: str, payload: Mapping[str, Any], key: str) -> int:
    value = payload.get(key)
    if type(value) is not int:
        raise ZnodeFormatError(path, f"field {key!r} must be an integer, got {value!r}")
    return value


def _int_list(path: str, what: str, value: object) -> tuple[int, ...]:
    if not isinstance(value, list) or any(type(v) is not int for v in value):
        raise ZnodeFormatError(path, f"{what} must be a list of integers, got {value!r}")
    return _shared(tuple(value))


_SHARED_LISTS: dict[tuple[int, ...], tuple[int, ...]] = {}
_SHARED_LISTS_MAX: Final = 65_536


def _shared(replicas: tuple[int, ...]) -> tuple[int, ...]:
    """One tuple per distinct replica list. A cluster repeats few of them (six brokers at replication factor 3
    make 120), and a watched cluster of 10,000 topics of 12 partitions otherwise holds 120,000 tuples. Bounded:
    past ``_SHARED_LISTS_MAX`` distinct lists, new ones are not kept."""
    known = _SHARED_LISTS.get(replicas)
    if known is not None:
        return known
    if len(_SHARED_LISTS) < _SHARED_LISTS_MAX:
        _SHARED_LISTS[replicas] = replicas
    return replicas


def _partition_map(path: str, what: str, value: object) -> dict[int, tuple[int, ...]]:
    """``{"<p>": [replicas]}``: partition keys are decimal strings in Kafka's JSON."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ZnodeFormatError(path, f"{what} must be an object, got {value!r}")
    result: dict[int, tuple[int, ...]] = {}
    for key, replicas in value.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit()):
            raise ZnodeFormatError(path, f"{what} has a partition key that is not a partition id: {key!r}")
        result[int(key)] = _int_list(path, f"{what}[{key}]", replicas)
    return result


# ---------------------------------------------------------------------------------------------------------------
# Paths, each built from its parent's.


class BrokersZNode:
    path = "/brokers"


class BrokerIdsZNode:
    path = BROKER_IDS_PATH
    """``/brokers/ids``; the string lives in the model, which tells unreadable registrations apart by it."""


class TopicsZNode:
    path = f"{BrokersZNode.path}/topics"


class ConfigZNode:
    path = "/config"


class TopicConfigsZNode:
    path = f"{ConfigZNode.path}/topics"


class BrokerConfigsZNode:
    path = f"{ConfigZNode.path}/brokers"


class AdminZNode:
    path = "/admin"


class DeleteTopicsZNode:
    path = f"{AdminZNode.path}/delete_topics"


class DeleteTopicZNode:
    """``/admin/delete_topics/<t>``: no data; its existence asks the controller to delete the topic (§5.6)."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{DeleteTopicsZNode.path}/{topic}"


# ---------------------------------------------------------------------------------------------------------------
# /brokers/topics/<t> (§5.2)


@dataclass(frozen=True, slots=True)
class TopicZNodeData:
    """The topic znode's content. ``adding``/``removing`` hold only partitions with a non-empty list.
    ``read_version``: the JSON's ``version`` field when decoded (None: absent, or not decoded); it says which
    release wrote the znode and is not part of the content compared."""

    partitions: Mapping[int, tuple[int, ...]]
    topic_id: str | None = None
    adding: Mapping[int, tuple[int, ...]] | None = None
    removing: Mapping[int, tuple[int, ...]] | None = None
    read_version: int | None = field(default=None, compare=False)


class TopicZNode:
    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicsZNode.path}/{topic}"

    @staticmethod
    def encode(data: TopicZNodeData, *, version: int = 3) -> bytes:
        """As the release writing ``version`` encodes it (3, Kafka 2.8+'s, by default): ``adding_replicas``/
        ``removing_replicas`` from version 2, always present (usually ``{}``), ``topic_id`` only in version 3
        and only when known. Callers rewriting a topic pass back what they read (§13.1)."""
        return topic_payload(data.partitions, data.topic_id, data.adding, data.removing, version=version)

    @staticmethod
    def decode(topic: str, data: bytes | None) -> TopicZNodeData:
        """Versions 1-3 alike: Kafka's decoder ignores ``version``; missing maps mean empty, ``topic_id`` optional.
        A topic znode without ``version`` is accepted, as the controller accepts it (§13.6)."""
        path = TopicZNode.path(topic)
        payload = _loads(path, data)
        topic_id = payload.get("topic_id")
        if topic_id is not None and not isinstance(topic_id, str):
            raise ZnodeFormatError(path, f"field 'topic_id' must be a string, got {topic_id!r}")
        partitions = payload.get("partitions")
        if not isinstance(partitions, dict):  # absent or null: Kafka would read no partitions at all
            raise ZnodeFormatError(path, f"field 'partitions' must be an object, got {partitions!r}")
        version = payload.get("version")
        return TopicZNodeData(
            partitions=_partition_map(path, "partitions", partitions),
            topic_id=topic_id,
            adding=_partition_map(path, "adding_replicas", payload.get("adding_replicas")),
            removing=_partition_map(path, "removing_replicas", payload.get("removing_replicas")),
            read_version=version if type(version) is int else None,
        )


class PartitionStateZNode:
    """``/brokers/topics/<t>/partitions/<p>/state``, written by the controller (§5.3)."""

    @staticmethod
    def path(topic: str, partition: int) -> str:
        return f"{TopicZNode.path(topic)}/partitions/{partition}/state"

    @staticmethod
    def encode(
        leader: int, isr: Sequence[int], leader_epoch: int, controller_epoch: int, recovering: bool = False
    ) -> bytes:
        payload: dict[str, object] = {
            "controller_epoch": controller_epoch,
            "leader": leader,
            "version": 1,
            "leader_epoch": leader_epoch,
            "isr": list(isr),
        }
        if recovering:
            payload["leader_recovery_state"] = 1
        return _dumps(payload)

    @staticmethod
    def decode(topic: str, partition: int, data: bytes | None, partition_epoch: int = 0) -> PartitionState:
        """``leader_recovery_state`` is written only while RECOVERING (1); absent means RECOVERED (0).
        ``partition_epoch`` is the znode's data version, which the caller has from the read."""
        path = PartitionStateZNode.path(topic, partition)
        payload = _loads(path, data)
        recovery = payload.get("leader_recovery_state", 0)
        if recovery not in (0, 1):
            raise ZnodeFormatError(path, f"field 'leader_recovery_state' must be 0 or 1, got {recovery!r}")
        return PartitionState(
            leader=_int(path, payload, "leader"),
            isr=_int_list(path, "isr", payload.get("isr")),
            leader_epoch=_int(path, payload, "leader_epoch"),
            controller_epoch=_int(path, payload, "controller_epoch"),
            leader_recovery_state=recovery,
            partition_epoch=partition_epoch,
        )


# ---------------------------------------------------------------------------------------------------------------
# /config/topics/<t> (§5.4) and /config/changes/config_change_<seq> (§5.5)


class TopicConfigZNode:
    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicConfigsZNode.path}/{topic}"

    @staticmethod
    def encode(config: Mapping[str, str]) -> bytes:
        """``{"version":1,"config":{...}}`` with string values only: a JSON number here breaks every broker at its
        next start (§13.2), so anything else is a programming error and refused."""
        return config_payload(config)

    @staticmethod
    def decode(topic: str, data: bytes | None) -> dict[str, str]:
        return _decode_config(TopicConfigZNode.path(topic), data)


def _decode_config(path: str, data: bytes | None) -> dict[str, str]:
    """``{"version":1,"config":{...}}`` of a topic's or a broker's dynamic configs, string values only."""
    payload = _loads(path, data)
    config = payload.get("config", {})
    if not isinstance(config, dict):
        raise ZnodeFormatError(path, f"field 'config' must be an object, got {config!r}")
    for key, value in config.items():
        if not isinstance(value, str):
            raise ZnodeFormatError(
                path,
                f"config {key!r} is {value!r}, not a JSON string; brokers fail to start on such a znode",
            )
    return dict(config)


class BrokerConfigZNode:
    """``/config/brokers/<id>``: a broker's dynamic configs, in the topic config format (§14: the reassignment
    throttle rates live here)."""

    @staticmethod
    def path(broker_id: int) -> str:
        return f"{BrokerConfigsZNode.path}/{broker_id}"

    @staticmethod
    def encode(config: Mapping[str, str]) -> bytes:
        return config_payload(config)

    @staticmethod
    def decode(broker_id: int, data: bytes | None) -> dict[str, str]:
        return _decode_config(BrokerConfigZNode.path(broker_id), data)


class ConfigChangeZNode:
    """Sequential change notifications: brokers re-read ``/config/<entity_path>`` when one appears."""

    path = f"{ConfigZNode.path}/changes"
    prefix = f"{path}/config_change_"

    @staticmethod
    def encode_topic_change(topic: str) -> bytes:
        """Version 2, the format Kafka writes today."""
        return config_change_payload(topic)

    @staticmethod
    def encode_broker_change(broker_id: int) -> bytes:
        """``brokers/<id>``: the broker re-reads its dynamic configs."""
        return config_change_payload(str(broker_id), entity_type="brokers")

    @staticmethod
    def decode(path: str, data: bytes | None) -> str | None:
        """The entity path (``topics/<t>``) a notification announces, or None for a non-JSON payload, which
        brokers ignore. Versions 1 and 2 are read; others are refused with Kafka's message."""
        try:
            payload = json.loads(data or b"")
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None
        if not isinstance(payload, dict):
            return None
        version = payload.get("version")
        if version == 2 and isinstance(payload.get("entity_path"), str):
            return str(payload["entity_path"])
        if (
            version == 1
            and isinstance(payload.get("entity_type"), str)
            and isinstance(payload.get("entity_name"), str)
        ):
            return f"{payload['entity_type']}/{payload['entity_name']}"
        if version in (1, 2):
            raise ZnodeFormatError(
                path, f"version {version} notification without its entity fields: {payload!r}"
            )
        raise ZnodeFormatError(
            path,
            f"Config change notification has unsupported version '{version}', supported versions are 1 and 2.",
        )


# ---------------------------------------------------------------------------------------------------------------
# /brokers/ids/<id> (§5.1)


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    id: int
    version: int
    endpoints: tuple[str, ...]
    rack: str | None
    jmx_port: int = -1
    timestamp: str = ""
    features: Mapping[str, Mapping[str, int]] | None = None


BROKER_REGISTRATION_VERSIONS: Final = (1, 2, 3, 4, 5)
"""What ``/brokers/ids/<id>`` may hold: 2.0-3.9 brokers write version 2, 4 or 5 by their inter-broker protocol
(5 from 2.7-IV0, 4 from 0.10.0-IV1); the decoder of every line still reads 1 to 5 (kafka-versions.md d.2)."""


class BrokerIdZNode:
    @staticmethod
    def path(broker_id: int) -> str:
        return f"{BrokerIdsZNode.path}/{broker_id}"

    @staticmethod
    def encode(
        broker_id: int,
        host: str,
        port: int,
        *,
        rack: str | None = None,
        timestamp_ms: int,
        listener: str = "PLAINTEXT",
        jmx_port: int = -1,
        version: int = 5,
        features: Mapping[str, Mapping[str, int]] | None = None,
    ) -> bytes:
        """A registration of ``version`` as ``BrokerIdZNode.encode`` writes it for one listener
        (3.9.0-rc3:core/src/main/scala/kafka/zk/ZkData.scala:152-176): ``endpoints`` from version 2, ``rack`` from
        3 (only when ``broker.rack`` is set), ``listener_security_protocol_map`` from 4, ``features`` from 5
        (``{}`` for every ZooKeeper-mode broker: they register none, 3.9.0-rc3:core/src/main/scala/kafka/server/
        KafkaServer.scala:186). ``broker_id`` is not in the payload (it is the znode's name) and only shapes the
        path."""
        del broker_id
        if version not in BROKER_REGISTRATION_VERSIONS:
            raise ValueError(
                f"broker registration version {version} is not one of {BROKER_REGISTRATION_VERSIONS}"
            )
        host_part = f"[{host}]" if ":" in host else host
        payload: dict[str, object] = {}
        if version >= 5:
            payload["features"] = {name: dict(levels) for name, levels in (features or {}).items()}
        if version >= 4:
            payload["listener_security_protocol_map"] = {listener: listener}
        if version >= 2:
            payload["endpoints"] = [f"{listener}://{host_part}:{port}"]
        payload.update(
            {
                "jmx_port": jmx_port,
                "port": port if listener == "PLAINTEXT" else -1,
                "host": host if listener == "PLAINTEXT" else None,
                "version": version,
                "timestamp": str(timestamp_ms),
            }
        )
        if rack is not None and version >= 3:
            payload["rack"] = rack
        return _dumps(payload)

    @staticmethod
    def decode(broker_id: int, data: bytes | None) -> BrokerRegistration:
        """Versions 1 to 5, as every line's decoder reads them: version 1 has only ``host`` and ``port``; later
        ones list ``endpoints``; ``features`` (5) maps feature names to their version range."""
        path = BrokerIdZNode.path(broker_id)
        payload = _loads(path, data)
        version = payload.get("version")
        if type(version) is not int or version < 1:
            raise ZnodeFormatError(path, f"Unsupported version of broker registration: {data!r}")
        if version == 1:
            host, port = payload.get("host"), payload.get("port")
            if not isinstance(host, str) or type(port) is not int:
                raise ZnodeFormatError(path, "version 1 registration needs 'host' and 'port'")
            endpoints: tuple[str, ...] = (f"PLAINTEXT://{host}:{port}",)
        else:
            raw_endpoints = payload.get("endpoints")
            if not isinstance(raw_endpoints, list) or not all(isinstance(e, str) for e in raw_endpoints):
                raise ZnodeFormatError(
                    path, f"field 'endpoints' must be a list of strings, got {raw_endpoints!r}"
                )
            endpoints = tuple(raw_endpoints)
        rack = payload.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise ZnodeFormatError(path, f"field 'rack' must be a string or null, got {rack!r}")
        jmx_port = payload.get("jmx_port", -1)
        timestamp = payload.get("timestamp", "")
        return BrokerRegistration(
            id=broker_id,
            version=version,
            endpoints=endpoints,
            rack=rack,
            jmx_port=jmx_port if type(jmx_port) is int else -1,
            timestamp=str(timestamp),
            features=_features(path, payload.get("features")),
        )


def _features(path: str, value: object) -> Mapping[str, Mapping[str, int]] | None:
    """``features``: feature name -> {"min_version": n, "max_version": m, ...}, as Kafka's decoder reads it
    (``Map[String, Map[String, Int]]``); absent is None."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(levels, dict) and all(type(level) is int for level in levels.values())
        for levels in value.values()
    ):
        raise ZnodeFormatError(
            path, f"field 'features' must map feature names to version ranges, got {value!r}"
        )
    return {name: dict(levels) for name, levels in value.items()}


# ---------------------------------------------------------------------------------------------------------------
# /cluster/id (§5.8), /controller (§5.7), /admin/reassign_partitions (§5.9)


class ClusterIdZNode:
    path = "/cluster/id"

    @staticmethod
    def encode(cluster_id: str) -> bytes:
        """Note ``version`` is a string here, unlike everywhere else."""
        return _dumps({"version": "1", "id": cluster_id})

    @staticmethod
    def decode(data: bytes | None) -> str:
        payload = _loads(ClusterIdZNode.path, data)
        cluster_id = payload.get("id")
        if not isinstance(cluster_id, str) or not cluster_id:
            raise ZnodeFormatError(
                ClusterIdZNode.path, f"field 'id' must be a non-empty string, got {cluster_id!r}"
            )
        return cluster_id


@dataclass(frozen=True, slots=True)
class ControllerInfo:
    broker_id: int
    timestamp: str
    kraft_controller_epoch: int | None = None
    version: int | None = field(default=None, compare=False)
    """1 from a controller older than Kafka 3.4, 2 (with ``kraftControllerEpoch``) from 3.4: which release wrote
    it, not part of what it says."""


class ControllerZNode:
    path = "/controller"

    @staticmethod
    def encode(
        broker_id: int, timestamp_ms: int, *, version: int = 2, kraft_controller_epoch: int = -1
    ) -> bytes:
        """Version 1 as controllers before 3.4 write it; version 2 with ``kraftControllerEpoch``: -1 from a
        ZooKeeper controller, the KRaft controller's epoch during a migration (3.4.1:core/src/main/scala/kafka/zk/
        ZkData.scala:58-79)."""
        payload: dict[str, object] = {
            "version": version,
            "brokerid": broker_id,
            "timestamp": str(timestamp_ms),
        }
        if version >= 2:
            payload["kraftControllerEpoch"] = kraft_controller_epoch
        return _dumps(payload)

    @staticmethod
    def decode(data: bytes | None) -> ControllerInfo:
        payload = _loads(ControllerZNode.path, data)
        epoch = payload.get("kraftControllerEpoch")
        version = payload.get("version")
        return ControllerInfo(
            broker_id=_int(ControllerZNode.path, payload, "brokerid"),
            timestamp=str(payload.get("timestamp", "")),
            kraft_controller_epoch=epoch if type(epoch) is int else None,
            version=version if type(version) is int else None,
        )


class FeatureZNode:
    """``/feature``: the finalized features a 2.7+ controller writes (version 1; 2 from metadata version 3.3-IV0,
    3.3.2:core/src/main/scala/kafka/zk/ZkData.scala:890-1017). Only its version is read: a clue to the release."""

    path = "/feature"

    @staticmethod
    def decode_version(data: bytes | None) -> int:
        return _int(FeatureZNode.path, _loads(FeatureZNode.path, data), "version")


class ReassignPartitionsZNode:
    path = REASSIGN_PARTITIONS_PATH
    """``/admin/reassign_partitions``; the string lives in the model, as ``BrokerIdsZNode.path`` does."""

    @staticmethod
    def encode(reassignments: Mapping[str, Mapping[int, Sequence[int]]]) -> bytes:
        partitions = [
            {"topic": topic, "partition": p, "replicas": list(replicas)}
            for topic in sorted(reassignments)
            for p, replicas in sorted(reassignments[topic].items())
        ]
        return _dumps({"version": 1, "partitions": partitions})

    @staticmethod
    def decode(data: bytes | None) -> dict[str, dict[int, tuple[int, ...]]]:
        """Topic -> partition -> target replicas of the reassignment the controller is carrying out."""
        path = ReassignPartitionsZNode.path
        payload = _loads(path, data)
        entries = payload.get("partitions")
        if not isinstance(entries, list):
            raise ZnodeFormatError(path, f"field 'partitions' must be a list, got {entries!r}")
        result: dict[str, dict[int, tuple[int, ...]]] = {}
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str):
                raise ZnodeFormatError(path, f"malformed entry {entry!r}")
            partition = _int(path, entry, "partition")
            result.setdefault(entry["topic"], {})[partition] = _int_list(
                path, "replicas", entry.get("replicas")
            )
        return result


# ---------------------------------------------------------------------------------------------------------------
# /migration (§15): written by the KRaft controller of a cluster migrating from ZooKeeper to KRaft (Kafka 3.4+)


@dataclass(frozen=True, slots=True)
class MigrationState:
    kraft_controller_id: int
    kraft_controller_epoch: int
    kraft_metadata_offset: int = -1
    kraft_metadata_epoch: int = -1


class MigrationZNode:
    """``/migration``, version 0 in every release that has it (3.4.1-3.9.0-rc3:core/src/main/scala/kafka/zk/
    ZkData.scala ``MigrationZNode``): the KRaft controller's id and epoch and its metadata log's offset and epoch,
    -1 until known."""

    path = "/migration"

    @staticmethod
    def encode(
        kraft_controller_id: int,
        kraft_controller_epoch: int,
        kraft_metadata_offset: int = -1,
        kraft_metadata_epoch: int = -1,
    ) -> bytes:
        """As the KRaft controller writes it: all -1 when its quorum starts, its id and epoch once it leads, its
        metadata log's offset and epoch once the metadata is copied."""
        return _dumps(
            {
                "version": 0,
                "kraft_controller_id": kraft_controller_id,
                "kraft_controller_epoch": kraft_controller_epoch,
                "kraft_metadata_offset": kraft_metadata_offset,
                "kraft_metadata_epoch": kraft_metadata_epoch,
            }
        )

    @staticmethod
    def decode(data: bytes | None) -> MigrationState:
        """Kafka's decoder refuses any version but 0 and needs all four fields."""
        path = MigrationZNode.path
        payload = _loads(path, data)
        version = payload.get("version")
        if version != 0 or type(version) is not int:
            raise ZnodeFormatError(
                path, f"Encountered unknown version {version} when parsing migration json {data!r}"
            )
        return MigrationState(
            kraft_controller_id=_int(path, payload, "kraft_controller_id"),
            kraft_controller_epoch=_int(path, payload, "kraft_controller_epoch"),
            kraft_metadata_offset=_int(path, payload, "kraft_metadata_offset"),
            kraft_metadata_epoch=_int(path, payload, "kraft_metadata_epoch"),
        )
