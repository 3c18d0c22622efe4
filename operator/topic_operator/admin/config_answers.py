"""DescribeConfigs of topics, read for their overrides alone.

A broker answers every config of a topic, about 36 of them, with its source; a plan needs only the topic's own
overrides (``DYNAMIC_TOPIC_CONFIG``, source 1): a broker default or a static broker setting is not the topic's,
and never drift. So the answer is walked entry by entry over its bytes, skipping what is not an override without
building anything for it, as the protocol lays it out (Kafka's ``DescribeConfigsResponse.json``, versions 1-4;
4 is flexible: compact strings and arrays, tagged fields). Version 0 has no source and is not asked for (every
broker from Kafka 1.1 answers version 1).

An answer that cannot be read (cut short, a length past its end, a string that is not UTF-8) ends the walk: the
topics already read keep what they got, and every other topic of the request gets the reason as its error,
never a crash of the batch.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import DescribeConfigsRequest

from topic_operator.admin.answer_bytes import (
    UndecodableAnswerError,
    compact_string,
    skip_tagged_fields,
    uvarint,
)
from topic_operator.admin.raw_answers import RawAnswerRequest

__all__ = [
    "FIRST_VERSION",
    "LAST_VERSION",
    "TopicConfigs",
    "describe_configs_request",
    "topic_configs_in",
]

FIRST_VERSION = 1
"""The first version whose entries carry their source."""
LAST_VERSION = 4
"""The last version this reader knows; kafka-python negotiates the highest both sides have, up to it."""
FLEXIBLE_FROM = 4

TOPIC = 2
"""``ConfigResource.Type.TOPIC``."""
DYNAMIC_TOPIC_CONFIG = 1
"""The source of a topic's own override."""

_RawDescribeConfigs = RawAnswerRequest(DescribeConfigsRequest)
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class TopicConfigs:
    """One topic of an answer: its overrides, or the error the broker answered for it (``error_code`` not 0),
    or why its part of the answer could not be read (``undecodable``)."""

    topic: str
    overrides: dict[str, str]
    error_code: int = 0
    error_message: str | None = None
    undecodable: str | None = None


def describe_configs_request(topics: Sequence[str]) -> Any:
    """A DescribeConfigs of every config of ``topics``, without synonyms or documentation, whose answer comes
    back as bytes (``raw_answers``)."""
    return _RawDescribeConfigs(
        resources=[(TOPIC, name, None) for name in topics],
        include_synonyms=False,
        min_version=FIRST_VERSION,
        max_version=LAST_VERSION,
    )


def topic_configs_in(payload: bytes, version: int, asked: Sequence[str]) -> Iterator[TopicConfigs]:
    """Every topic of one answer, in its order, then each topic of ``asked`` (those the request named) that the
    answer did not give, with why: none is left without a verdict, so none is planned on an empty override set
    it never had."""
    seen: set[str] = set()
    missing = "the brokers' DescribeConfigs answer does not mention it"
    try:
        reader = _flexible_results if version >= FLEXIBLE_FROM else _classic_results
        for topic in reader(payload, version):
            seen.add(topic.topic)
            yield topic
    except (IndexError, struct.error, UnicodeDecodeError, UndecodableAnswerError) as error:
        missing = (
            f"the brokers' DescribeConfigs answer (version {version}) could not be read: "
            f"{type(error).__name__}: {error}"
        )
    for name in asked:
        if name not in seen:
            yield TopicConfigs(name, {}, undecodable=missing)


# -- version 4: flexible -------------------------------------------------------------------------------------------


_BLOCKS_KEPT = 8
"""Entry blocks remembered per answer (``_flexible_results``)."""


def _flexible_results(data: bytes, version: int) -> Iterator[TopicConfigs]:
    position = skip_tagged_fields(data, 0)  # the response header's own tagged fields
    position += 4  # throttle_time_ms
    results, position = uvarint(data, position)
    # A topic's entries are the same bytes as another topic's whenever the two have the same overrides: every
    # other entry is the broker's default or static setting, the same for every topic it answers for. So each
    # block read (from the entry count to the last entry) is kept with what it held, the latest few, and a topic
    # whose block is byte for byte one of them takes its overrides without walking its ~36 entries again.
    # Exact, whatever the bytes: the walk is a function of them alone.
    known: list[tuple[bytes, dict[str, str]]] = []
    for _ in range(results - 1):
        error_code = _INT16.unpack_from(data, position)[0]
        message, position = compact_string(data, position + 2)
        position += 1  # resource_type
        name, position = compact_string(data, position)
        if name is None:
            raise UndecodableAnswerError("a resource without a name")
        block_at = position
        for block, held in known:
            if data.startswith(block, position):
                position += len(block)
                position = skip_tagged_fields(data, position)
                yield TopicConfigs(name, dict(held), error_code, message)
                break
        else:
            overrides, position = _entries(data, position)
            known.insert(0, (data[block_at:position], overrides))
            del known[_BLOCKS_KEPT:]
            position = skip_tagged_fields(data, position)
            yield TopicConfigs(name, dict(overrides), error_code, message)


def _entries(data: bytes, position: int) -> tuple[dict[str, str], int]:
    """The overrides among one topic's entries (their count first), and the position after the last."""
    entries, position = uvarint(data, position)
    overrides: dict[str, str] = {}
    for _ in range(entries - 1):
        # The common entry, read in a few steps: a name and a value shorter than 127 bytes (one-byte
        # lengths), no synonyms, no documentation, no tagged fields. Any other goes the long way.
        length = data[position]
        if 0 < length < 0x80:
            value_at = position + length
            value_length = data[value_at]
            if value_length < 0x80:
                tail = value_at + (
                    value_length or 1
                )  # read_only, source, sensitive, synonyms, type, doc, tags
                if data[tail + 3] == 1 and data[tail + 5] == 0 and data[tail + 6] == 0:
                    if data[tail + 1] == DYNAMIC_TOPIC_CONFIG and value_length:
                        overrides[data[position + 1 : value_at].decode()] = data[value_at + 1 : tail].decode()
                    position = tail + 7
                    continue
        position = _entry(data, position, overrides)
    if position > len(data):
        raise UndecodableAnswerError("a config entry runs past the end of the answer")
    return overrides, position


def _entry(data: bytes, position: int, overrides: dict[str, str]) -> int:
    """One config entry of any shape, its override added to ``overrides``; the position after it."""
    key, position = compact_string(data, position)
    if key is None:
        raise UndecodableAnswerError("a config entry without a name")
    value, position = compact_string(data, position)
    source = data[position + 1]  # read_only, config_source, is_sensitive
    position = _skip_synonyms(data, position + 3)
    _, position = compact_string(data, position + 1)  # config_type, documentation
    position = skip_tagged_fields(data, position)
    if source == DYNAMIC_TOPIC_CONFIG and value is not None:
        overrides[key] = value
    return position


def _skip_synonyms(data: bytes, position: int) -> int:
    count, position = uvarint(data, position)
    for _ in range(count - 1):
        _, position = compact_string(data, position)
        _, position = compact_string(data, position)
        position = skip_tagged_fields(data, position + 1)
    return position


# -- versions 1-3 --------------------------------------------------------------------------------------------------


def _string(data: bytes, position: int) -> tuple[str | None, int]:
    length = _INT16.unpack_from(data, position)[0]
    position += 2
    if length < 0:
        return None, position
    end = position + length
    if end > len(data):
        raise UndecodableAnswerError("a string runs past the end of the answer")
    return data[position:end].decode(), end


def _classic_results(data: bytes, version: int) -> Iterator[TopicConfigs]:
    position = 4  # throttle_time_ms
    results = _INT32.unpack_from(data, position)[0]
    position += 4
    for _ in range(results):
        error_code = _INT16.unpack_from(data, position)[0]
        message, position = _string(data, position + 2)
        position += 1  # resource_type
        name, position = _string(data, position)
        if name is None:
            raise UndecodableAnswerError("a resource without a name")
        entries = _INT32.unpack_from(data, position)[0]
        position += 4
        overrides: dict[str, str] = {}
        for _ in range(max(entries, 0)):
            key, position = _string(data, position)
            value, position = _string(data, position)
            source = data[position + 1]
            position += 3
            synonyms = _INT32.unpack_from(data, position)[0]
            position += 4
            for _ in range(max(synonyms, 0)):
                _, position = _string(data, position)
                _, position = _string(data, position)
                position += 1
            if version >= 3:
                _, position = _string(data, position + 1)
            if source == DYNAMIC_TOPIC_CONFIG and key is not None and value is not None:
                overrides[key] = value
        yield TopicConfigs(name, overrides, error_code, message)
