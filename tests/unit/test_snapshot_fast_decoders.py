"""The fast decoders of a whole-cluster read (``snapshot.decode_topic``, ``snapshot.decode_topic_config``) give
exactly what ``TopicZNode.decode`` and ``TopicConfigZNode.decode`` give: the same values of the same types, or
the same ``ZnodeFormatError`` with the same words, on any payload."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topic_operator.zookeeper.snapshot import decode_topic, decode_topic_config
from topic_operator.zookeeper.znodes import TopicConfigZNode, TopicZNode, ZnodeFormatError


def strict(value: Any) -> Any:
    if isinstance(value, dict):
        return ("dict", [(strict(k), strict(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [strict(v) for v in value])
    return (type(value).__name__, repr(value))


def topic_outcome(decode: Any, data: bytes) -> Any:
    try:
        got = decode("orders", data)
    except ZnodeFormatError as error:
        return ("error", str(error))
    except RecursionError:
        return ("recursion",)
    return (
        strict(got.partitions),
        strict(got.topic_id),
        strict(got.adding),
        strict(got.removing),
        strict(got.read_version),
    )


def config_outcome(decode: Any, data: bytes) -> Any:
    try:
        return strict(decode("orders", data))
    except ZnodeFormatError as error:
        return ("error", str(error))


EDGES = [
    b'{"version":3,"partitions":{"0":[1,2,3],"1":[2,3,1]},"topic_id":"abc","adding_replicas":{},"removing_replicas":{}}',
    b'{"version":1,"partitions":{"0":[1,2,3]}}',
    b'{"partitions":{"0":[1,2,3]}}',
    b'{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":{"0":[4]},"removing_replicas":{"0":[1]}}',
    b'{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":null,"removing_replicas":[]}',
    b'{"version":2,"partitions":{"0":[1,true,3]}}',
    b'{"version":2,"partitions":{"0":[1,18446744073709551616]}}',
    b'{"version":18446744073709551616,"partitions":{"0":[1]}}',
    b'{"version":2.0,"partitions":{"0":[1]}}',
    b'{"version":"2","partitions":{"0":[1]}}',
    b'{"version":2,"partitions":{"x":[1]}}',
    b'{"version":2,"partitions":{"\xd9\xa3":[1]}}',
    b'{"version":2,"partitions":{"0":1}}',
    b'{"version":2,"partitions":null}',
    b'{"version":2,"partitions":{"0":[1]},"topic_id":7}',
    b'{"version":2,"partitions":{"0":[1.5]}}',
    b'{"version":2,"partitions":{"0":[NaN]}}',
    b'{"version":2,"partitions":{"0":[1]},"partitions":{"1":[2]}}',
    b'\xef\xbb\xbf{"partitions":{"0":[1]}}',
    '{"partitions":{"0":[1]}}'.encode("utf-16"),
    b'{"partitions":{"0":[1]},"topic_id":"\\ud800"}',
    b"[]",
    b"",
    b"not json",
    b"[" * 5000 + b"]" * 5000,
]


@pytest.mark.parametrize("data", EDGES)
def test_topic_payloads_decode_as_the_reference_decodes_them(data: bytes) -> None:
    assert topic_outcome(decode_topic, data) == topic_outcome(TopicZNode.decode, data)


CONFIGS = [
    b'{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}',
    b'{"version":1,"config":{}}',
    b'{"version":1}',
    b'{"version":1,"config":{"retention.ms":1000}}',
    b'{"version":1,"config":[]}',
    b"",
]


@pytest.mark.parametrize("data", CONFIGS)
def test_config_payloads_decode_as_the_reference_decodes_them_every_time(data: bytes) -> None:
    for _ in range(3):  # remembered from the second time on
        assert config_outcome(decode_topic_config, data) == config_outcome(TopicConfigZNode.decode, data)


def test_a_remembered_config_is_a_new_dict_each_time() -> None:
    data = b'{"version":1,"config":{"retention.ms":"1000"}}'
    first = decode_topic_config("a", data)
    first["retention.ms"] = "changed"
    assert decode_topic_config("b", data) == {"retention.ms": "1000"}


JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        st.text(max_size=4),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)
REPLICAS = st.one_of(st.lists(st.integers(min_value=-(2**65), max_value=2**65), max_size=4), JSON)
KEYS = st.one_of(st.sampled_from(["0", "1", "12", "007", "-1", "x", "\u0663"]), st.text(max_size=3))
PAYLOADS = st.fixed_dictionaries(
    {},
    optional={
        "version": st.one_of(st.integers(min_value=-(2**65), max_value=2**65), JSON),
        "partitions": st.one_of(st.dictionaries(KEYS, REPLICAS, max_size=4), JSON),
        "topic_id": st.one_of(st.text(max_size=22), JSON),
        "adding_replicas": st.one_of(st.just({}), st.dictionaries(KEYS, REPLICAS, max_size=2), JSON),
        "removing_replicas": st.one_of(st.just({}), st.dictionaries(KEYS, REPLICAS, max_size=2), JSON),
    },
)


@settings(max_examples=1500, deadline=None)
@given(PAYLOADS)
def test_any_topic_payload_decodes_as_the_reference_decodes_it(payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    assert topic_outcome(decode_topic, data) == topic_outcome(TopicZNode.decode, data)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.one_of(st.text(max_size=5), JSON), max_size=4))
def test_any_config_payload_decodes_as_the_reference_decodes_it(config: dict[str, Any]) -> None:
    data = json.dumps({"version": 1, "config": config}).encode()
    assert config_outcome(decode_topic_config, data) == config_outcome(TopicConfigZNode.decode, data)
