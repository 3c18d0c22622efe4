"""Metadata of topics, read straight from the answer's bytes into what a plan needs.

kafka-python decodes a Metadata answer into objects and then into dicts, every field of every partition; here the
answer is walked once (Kafka's ``MetadataResponse.json``, versions 10-13, all flexible: topic ids from 10), and
each topic comes out as a ``MetadataTopic``. The brokers the answer lists are skipped: DescribeCluster says which
are fenced, which this answer does not.

An answer that cannot be read ends the walk with ``UndecodableAnswerError``: a Metadata answer holds every topic
of the read, so there is nothing partial to keep, and the read fails as a request that got no answer does.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kafka.protocol.metadata import MetadataRequest

from topic_operator.admin.answer_bytes import (
    UndecodableAnswerError,
    compact_string,
    skip_tagged_fields,
    uvarint,
)
from topic_operator.admin.raw_answers import RawAnswerRequest

__all__ = ["FIRST_VERSION", "MetadataPartition", "MetadataTopic", "metadata_request", "topics_in"]

FIRST_VERSION = 10
"""The first version that carries topic ids (Kafka 2.8)."""
LAST_VERSION = 13

_RawMetadata = RawAnswerRequest(MetadataRequest)
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_PARTITION_HEAD = struct.Struct(">hiii")
"""A partition's error code, index, leader and leader epoch."""


@dataclass(frozen=True, slots=True)
class MetadataPartition:
    index: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MetadataTopic:
    name: str
    error_code: int
    topic_id: bytes
    """The 16 bytes of the id; all zero when the broker has none for it."""
    partitions: tuple[MetadataPartition, ...]


def metadata_request(topics: Sequence[str] | None) -> Any:
    """Metadata of ``topics`` (None: every topic), creating none, whose answer comes back as bytes."""
    return _RawMetadata(
        topics=None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False,
        min_version=FIRST_VERSION,
        max_version=LAST_VERSION,
    )


_INT32_ARRAYS: Final = tuple(struct.Struct(f">{n}i") for n in range(17))
"""Replica lists of up to 16 brokers, their layouts built once rather than at every partition."""


def _int32_array(data: bytes, position: int) -> tuple[tuple[int, ...], int]:
    count, position = uvarint(data, position)
    if count <= 1:
        return (), position
    end = position + 4 * (count - 1)
    if end > len(data):
        raise UndecodableAnswerError("an array runs past the end of the answer")
    layout = _INT32_ARRAYS[count - 1] if count <= len(_INT32_ARRAYS) else struct.Struct(f">{count - 1}i")
    return layout.unpack_from(data, position), end


def topics_in(payload: bytes, version: int) -> Iterator[MetadataTopic]:
    """Every topic of one answer, in its order; ``UndecodableAnswerError`` where the bytes do not follow the
    layout."""
    if not FIRST_VERSION <= version <= LAST_VERSION:
        raise UndecodableAnswerError(f"Metadata version {version} is not one this reader knows")
    try:
        yield from _topics(payload)
    except (IndexError, struct.error, UnicodeDecodeError) as error:
        raise UndecodableAnswerError(f"{type(error).__name__}: {error}") from None


def _topics(data: bytes) -> Iterator[MetadataTopic]:
    position = skip_tagged_fields(data, 0)  # the response header's tagged fields
    position += 4  # throttle_time_ms
    brokers, position = uvarint(data, position)
    for _ in range(brokers - 1):
        position += 4  # node id
        _, position = compact_string(data, position)
        position += 4  # port
        _, position = compact_string(data, position)
        position = skip_tagged_fields(data, position)
    _, position = compact_string(data, position)  # cluster id
    position += 4  # controller id
    topics, position = uvarint(data, position)
    for _ in range(topics - 1):
        error_code = _INT16.unpack_from(data, position)[0]
        name, position = compact_string(data, position + 2)
        topic_id = data[position : position + 16]
        position += 17  # the id, is_internal
        count, position = uvarint(data, position)
        partitions: list[MetadataPartition] = []
        for _ in range(count - 1):
            _, index, leader, epoch = _PARTITION_HEAD.unpack_from(data, position)
            replicas, position = _int32_array(data, position + 14)
            isr, position = _int32_array(data, position)
            _, position = _int32_array(data, position)  # offline replicas
            position = skip_tagged_fields(data, position)
            partitions.append(MetadataPartition(index, leader, epoch, replicas, isr))
        position += 4  # topic authorized operations
        position = skip_tagged_fields(data, position)
        if position > len(data):
            raise UndecodableAnswerError("a topic runs past the end of the answer")
        if name is not None:
            yield MetadataTopic(name, error_code, topic_id, tuple(partitions))
