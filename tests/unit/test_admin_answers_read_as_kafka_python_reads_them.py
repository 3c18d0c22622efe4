"""The readers of DescribeConfigs and Metadata answers (``config_answers``, ``metadata_answers``) take from the
bytes what kafka-python's own decoding takes, for every version they read: answers built and encoded by
kafka-python's message classes, with long and non-ASCII strings, nulls, synonyms and documentation. And bytes
that are not such an answer (cut short, or changed) give a verdict, never another exception."""

from __future__ import annotations

import contextlib
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.admin import DescribeConfigsResponse
from kafka.protocol.metadata import MetadataResponse

from topic_operator.admin.answer_bytes import UndecodableAnswerError
from topic_operator.admin.config_answers import FIRST_VERSION, LAST_VERSION, topic_configs_in
from topic_operator.admin.metadata_answers import FIRST_VERSION as METADATA_FIRST
from topic_operator.admin.metadata_answers import LAST_VERSION as METADATA_LAST
from topic_operator.admin.metadata_answers import topics_in

Result = DescribeConfigsResponse.DescribeConfigsResult
Entry = Result.DescribeConfigsResourceResult
Synonym = Entry.DescribeConfigsSynonym
MetadataTopic = MetadataResponse.MetadataResponseTopic
MetadataPartition = MetadataTopic.MetadataResponsePartition
MetadataBroker = MetadataResponse.MetadataResponseBroker

texts = st.text(min_size=1, max_size=300)
"""Names and values, some over 127 bytes (a two-byte length in the flexible versions), some not ASCII."""


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    return Entry(
        name=draw(texts),
        value=draw(st.none() | st.text(max_size=300)),
        read_only=draw(st.booleans()),
        config_source=draw(st.integers(0, 8)),
        is_sensitive=draw(st.booleans()),
        synonyms=draw(
            st.lists(
                st.builds(Synonym, name=texts, value=st.none() | texts, source=st.integers(0, 8)), max_size=2
            )
        ),
        config_type=draw(st.integers(0, 9)),
        documentation=draw(st.none() | st.text(max_size=200)),
    )


@st.composite
def config_answers(draw: st.DrawFn) -> DescribeConfigsResponse:
    """Topics whose entries are often the same as another's, or the same with one more entry, as a broker's
    answer holds them (every topic without overrides has the same entries), and sometimes their own."""
    names = draw(st.lists(texts, max_size=8, unique=True))
    pool = draw(st.lists(st.lists(entries(), max_size=8), min_size=1, max_size=3))

    def configs() -> list[Entry]:
        shared: list[Entry] = draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(["shared", "shared", "one more", "one fewer", "own"]))
        if kind == "shared":
            return shared
        if kind == "one more":
            return [*shared, draw(entries())]
        if kind == "one fewer":
            return shared[:-1]
        return draw(st.lists(entries(), max_size=8))

    results = [
        Result(
            error_code=draw(st.sampled_from([0, 0, 0, 3, 29])),
            error_message=draw(st.none() | st.text(max_size=40)),
            resource_type=2,
            resource_name=name,
            configs=configs(),
        )
        for name in names
    ]
    return DescribeConfigsResponse(throttle_time_ms=draw(st.integers(0, 1000)), results=results)


def payload_of(answer: object, version: int, flexible: bool) -> bytes:
    """What the reader is given: the bytes after the correlation id (a flexible header's tagged fields first)."""
    body: bytes = answer.encode(version=version)  # type: ignore[attr-defined]
    return (b"\x00" if flexible else b"") + body


def overrides_by_kafka_python(answer: DescribeConfigsResponse, version: int) -> dict[str, dict[str, str]]:
    decoded = DescribeConfigsResponse[version].decode(payload_of(answer, version, False))
    return {
        result.resource_name: {
            entry.name: entry.value
            for entry in result.configs
            if entry.config_source == 1 and entry.value is not None
        }
        for result in decoded.results
    }


@pytest.mark.parametrize("version", range(FIRST_VERSION, LAST_VERSION + 1))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=config_answers())
def test_describe_configs_overrides_are_what_kafka_python_decodes(
    answer: DescribeConfigsResponse, version: int
) -> None:
    payload = payload_of(answer, version, version >= 4)
    names = [r.resource_name for r in answer.results]
    read = list(topic_configs_in(payload, version, names))
    assert [t.topic for t in read] == names
    assert all(t.undecodable is None for t in read)
    assert {t.topic: t.overrides for t in read} == overrides_by_kafka_python(answer, version)
    assert [(t.error_code, t.error_message) for t in read] == [
        (r.error_code, r.error_message)
        for r in DescribeConfigsResponse[version].decode(payload_of(answer, version, False)).results
    ]


@pytest.mark.parametrize("version", range(FIRST_VERSION, LAST_VERSION + 1))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=config_answers(), data=st.data())
def test_a_damaged_configs_answer_gives_each_topic_a_verdict(
    answer: DescribeConfigsResponse, version: int, data: st.DataObject
) -> None:
    payload = bytearray(payload_of(answer, version, version >= 4))
    if payload and data.draw(st.booleans()):
        del payload[data.draw(st.integers(0, len(payload) - 1)) :]
    elif payload:
        payload[data.draw(st.integers(0, len(payload) - 1))] = data.draw(st.integers(0, 255))
    names = [r.resource_name for r in answer.results]
    read = list(topic_configs_in(bytes(payload), version, names))
    assert {t.topic for t in read} >= set(names)  # every topic asked for has a verdict
    for topic in read:
        assert topic.undecodable is None or "DescribeConfigs answer" in topic.undecodable


@st.composite
def metadata_answers(draw: st.DrawFn) -> MetadataResponse:
    ids = st.lists(st.integers(-1, 2**31 - 1), max_size=4)
    topics = [
        MetadataTopic(
            error_code=draw(st.sampled_from([0, 0, 5, 3, 29])),
            name=name,
            topic_id=uuid.UUID(int=draw(st.integers(0, 2**128 - 1))),
            is_internal=draw(st.booleans()),
            partitions=[
                MetadataPartition(
                    error_code=0,
                    partition_index=index,
                    leader_id=draw(st.integers(-1, 9)),
                    leader_epoch=draw(st.integers(-1, 2**31 - 1)),
                    replica_nodes=draw(ids),
                    isr_nodes=draw(ids),
                    offline_replicas=draw(ids),
                )
                for index in range(draw(st.integers(0, 4)))
            ],
        )
        for name in draw(st.lists(texts, max_size=5, unique=True))
    ]
    brokers = [
        MetadataBroker(
            node_id=i, host=draw(texts), port=draw(st.integers(0, 65535)), rack=draw(st.none() | texts)
        )
        for i in range(draw(st.integers(0, 3)))
    ]
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id=draw(st.none() | texts),
        controller_id=draw(st.integers(-1, 9)),
        topics=topics,
        error_code=0,
    )


@pytest.mark.parametrize("version", range(METADATA_FIRST, METADATA_LAST + 1))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=metadata_answers())
def test_metadata_topics_are_what_kafka_python_decodes(answer: MetadataResponse, version: int) -> None:
    read = list(topics_in(payload_of(answer, version, True), version))
    decoded = MetadataResponse[version].decode(payload_of(answer, version, False))
    assert [(t.name, t.error_code, t.topic_id) for t in read] == [
        (t.name, t.error_code, t.topic_id.bytes if t.topic_id else bytes(16)) for t in decoded.topics
    ]
    assert [[(p.index, p.leader, p.leader_epoch, p.replicas, p.isr) for p in t.partitions] for t in read] == [
        [
            (p.partition_index, p.leader_id, p.leader_epoch, tuple(p.replica_nodes), tuple(p.isr_nodes))
            for p in t.partitions
        ]
        for t in decoded.topics
    ]


@pytest.mark.parametrize("version", [METADATA_FIRST, METADATA_LAST])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=metadata_answers(), data=st.data())
def test_a_damaged_metadata_answer_is_refused_or_read(
    answer: MetadataResponse, version: int, data: st.DataObject
) -> None:
    payload = bytearray(payload_of(answer, version, True))
    del payload[data.draw(st.integers(0, len(payload) - 1)) :]
    with contextlib.suppress(UndecodableAnswerError):  # the read fails with it (``admin.reader``)
        list(topics_in(bytes(payload), version))


def test_an_unknown_metadata_version_is_refused() -> None:
    with pytest.raises(UndecodableAnswerError, match="version 9"):
        list(topics_in(b"\x00" * 64, 9))
