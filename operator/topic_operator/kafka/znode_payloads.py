"""The JSON Kafka's ``ZkData`` writes for a topic's znodes, as bytes, and whether ZooKeeper will take it.

The writer sends these payloads; the planner must refuse what ZooKeeper would refuse, so both use this module
(pure: no I/O). ZooKeeper refuses any request larger than its ``jute.maxbuffer`` (1 MiB - 1 byte by default):
the server reads the length, finds it too large and drops the connection, which a client sees only as a
connection that keeps dropping. A topic of 100,000 partitions x RF 3 makes a 1.6 MB assignment znode. So each
planned write is sized (exactly, or for absurd counts from a lower bound computed without building anything, so
that 10^8 partitions is a clear rejection rather than a ``MemoryError``) and refused above the limit.

Formats: semantics §5.2 and kafka-versions.md d.2 (topic znode: version 1, 2 or 3, as the cluster's release writes
it), §5.4 (config znode, values as JSON strings), §5.5 (change notification, version 2). Compact JSON, as Jackson
writes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

from topic_operator.kafka.errors import InvalidConfigurationError, InvalidPartitionsError, KafkaError
from topic_operator.kafka.releases import TOPIC_ID, TOPIC_ZNODE_V2, KafkaVersion

__all__ = [
    "JUTE_MAXBUFFER",
    "REQUEST_ALLOWANCE",
    "TOPIC_ZNODE_VERSIONS",
    "config_change_payload",
    "config_change_payload_size",
    "config_payload",
    "too_large",
    "topic_payload",
    "topic_payload_size_bounds",
    "topic_znode_version_of",
]

JUTE_MAXBUFFER = 0xFFFFF
"""ZooKeeper's default ``jute.maxbuffer``: the largest request (and znode) a server accepts, 1,048,575 bytes."""

REQUEST_ALLOWANCE = 4096
"""Bytes of a request that are not payload: headers, paths (chroot and topic name), ACLs, the notification of a
config change. Kept free below ``JUTE_MAXBUFFER`` so that the payloads' sum decides."""

_MAX_BROKER_ID_DIGITS = 10
"""Broker ids are Java ints: at most 10 digits."""


def _dumps(payload: Mapping[str, object]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def _partition_map(partitions: Mapping[int, Sequence[int]], *, skip_empty: bool) -> dict[str, list[int]]:
    return {str(p): list(partitions[p]) for p in sorted(partitions) if not (skip_empty and not partitions[p])}


TOPIC_ZNODE_VERSIONS: Final = (1, 2, 3)
"""The topic znode's formats: 1 up to Kafka 2.3, 2 from 2.4 (``adding_replicas``/``removing_replicas``), 3 from
2.8 (``topic_id``) (kafka-versions.md d.2)."""


def topic_znode_version_of(kafka_version: KafkaVersion) -> int:
    """The topic znode version a release line's ``TopicZNode.encode`` writes (2.0.1:core/src/main/scala/kafka/zk/
    ZkData.scala:239-246, 2.4.1:...:241-261, 2.8.2:...:286-309)."""
    if kafka_version >= TOPIC_ID:
        return 3
    return 2 if kafka_version >= TOPIC_ZNODE_V2 else 1


def topic_payload(
    partitions: Mapping[int, Sequence[int]],
    topic_id: str | None = None,
    adding: Mapping[int, Sequence[int]] | None = None,
    removing: Mapping[int, Sequence[int]] | None = None,
    *,
    version: int = 3,
) -> bytes:
    """``/brokers/topics/<t>`` as the release writing ``version`` encodes it: version 1 holds the partitions only;
    version 2 adds ``adding_replicas``/``removing_replicas``, always present (usually ``{}``, holding only
    partitions with a non-empty list); version 3 adds ``topic_id`` when known.

    A field the version does not have is a programming error (``ValueError``), never silently dropped: a topic
    id or a reassignment in flight lost from a rewrite would change what the controller does."""
    if version not in TOPIC_ZNODE_VERSIONS:
        raise ValueError(f"topic znode version {version} is not one of {TOPIC_ZNODE_VERSIONS}")
    if topic_id is not None and version < 3:
        raise ValueError(f"a topic znode of version {version} has no topic_id")
    if version < 2 and (any((adding or {}).values()) or any((removing or {}).values())):
        raise ValueError("a topic znode of version 1 has no adding_replicas/removing_replicas")
    payload: dict[str, object] = {
        "version": version,
        "partitions": _partition_map(partitions, skip_empty=False),
    }
    if version >= 2:
        payload["adding_replicas"] = _partition_map(adding or {}, skip_empty=True)
        payload["removing_replicas"] = _partition_map(removing or {}, skip_empty=True)
    if topic_id is not None:
        payload["topic_id"] = topic_id
    return _dumps(payload)


def config_payload(config: Mapping[str, str]) -> bytes:
    """``/config/topics/<t>``: string values only (a number there stops brokers from starting, §13.2)."""
    for key, value in config.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"topic config {key!r} must map to a string, got {value!r}")
    return _dumps({"version": 1, "config": dict(sorted(config.items()))})


def config_change_payload(topic: str, *, entity_type: str = "topics") -> bytes:
    """``/config/changes/config_change_<seq>``, version 2: ``topics/<t>``, or ``brokers/<id>`` for a broker's
    dynamic config."""
    return _dumps({"version": 2, "entity_path": f"{entity_type}/{topic}"})


def config_change_payload_size(topic: str) -> int:
    """``len(config_change_payload(topic))`` without writing it, for a plan that sizes every topic it changes: a
    legal topic name (ASCII letters, digits, ``.``, ``_``, ``-``) is written as it is, so only its length varies;
    any other name is written out and measured."""
    if topic.isascii() and topic.replace(".", "").replace("_", "").replace("-", "").isalnum():
        return _CHANGE_PAYLOAD_AROUND_NAME + len(topic)
    return len(config_change_payload(topic))


def _digits_below(n: int) -> int:
    """The number of decimal digits written for all of 0, 1, ..., n-1 together."""
    total, width, start = 0, 1, 0
    while start < n:
        end = min(n, 10**width)
        total += (end - start) * width
        start, width = end, width + 1
    return total


def topic_payload_size_bounds(
    partitions: int,
    replicas: int,
    *,
    topic_id: bool = False,
    max_broker_id: int | None = None,
    version: int = 3,
) -> tuple[int, int]:
    """Lower and upper bounds of ``len(topic_payload(...))`` for partitions ``0..partitions-1`` of ``replicas``
    brokers each (no reassignment in progress), in constant time: each broker id takes 1 to
    ``len(str(max_broker_id))`` digits (10 when unknown)."""
    fixed = _EMPTY_WITH_ID if topic_id else _EMPTY[version]
    if partitions <= 0:
        return fixed, fixed
    widest = (
        len(str(max_broker_id)) if max_broker_id is not None and max_broker_id >= 0 else _MAX_BROKER_ID_DIGITS
    )
    per_partition = (
        len('"":[]') + max(replicas - 1, 0) + 1
    )  # quotes, colon, brackets, commas between replicas
    keys = _digits_below(partitions) + per_partition * partitions - 1  # a comma between partitions
    return fixed + keys + replicas * partitions, fixed + keys + widest * replicas * partitions


_EMPTY = {version: len(topic_payload({}, version=version)) for version in TOPIC_ZNODE_VERSIONS}
_EMPTY_WITH_ID = len(topic_payload({}, "x" * 22))  # a topic id is 22 characters (semantics §5.2)


def too_large(
    topic: str, what: str, size: int, *, exact: bool, field: str, limit: int = JUTE_MAXBUFFER
) -> KafkaError | None:
    """The rejection of a write of ``size`` payload bytes (``exact``, or a lower bound), None if it fits."""
    room = limit - REQUEST_ALLOWANCE
    if size <= room:
        return None
    error = InvalidConfigurationError if field.startswith("config") else InvalidPartitionsError
    return error(
        f"Topic {topic}: {what} would be {'' if exact else 'at least '}{size:,} bytes, more than ZooKeeper accepts "
        f"in one request (jute.maxbuffer, {limit:,} bytes by default, less {REQUEST_ALLOWANCE:,} for the request's "
        "paths and headers); ZooKeeper would drop the connection instead of writing it.",
        field=field,
        stricter_than_kafka=True,
    )


_CHANGE_PAYLOAD_AROUND_NAME: Final = len(config_change_payload(""))
