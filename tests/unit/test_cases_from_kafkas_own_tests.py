"""Every release line from 2.0 to 3.9 judges as its own tests say: the cases of ``tests/kafka_cases`` are Kafka's
tests at each line's tag turned into data (``generate.py``), each naming its test and ``TAG:path:line``.

A case carries Kafka's expectation, never kto's output: a value Kafka refuses must be refused for the key Kafka
refuses it for (``field``), with Kafka's exception class where the test asserts one and Kafka's words where it
checks them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_cases.cases import Case, all_cases, case_files, load
from topic_operator.kafka.assignment import validate_replica_assignment
from topic_operator.kafka.broker_settings import BrokerSettings
from topic_operator.kafka.errors import ConfigError, KafkaError
from topic_operator.kafka.releases import RELEASE_LINES, parse_kafka_version, release_line
from topic_operator.kafka.topic_configs import topic_config_names, validate_topic_config
from topic_operator.kafka.topic_names import (
    has_collision,
    has_collision_chars,
    unify_collision_chars,
    validate_topic_name,
)
from topic_operator.zookeeper.znodes import ReassignPartitionsZNode, ZnodeFormatError

MINIMUM_CASES_PER_LINE = 100

ALL = all_cases()


def _refusal(case: Case, error: KafkaError) -> None:
    """The refusal Kafka's test asserts: its class, the key it is about, its words."""
    expected_class = case.get("error", "Exception")
    if expected_class == "ConfigException":
        assert isinstance(error, ConfigError), repr(error)
    elif expected_class != "Exception":
        assert error.kafka_class.rsplit(".", 1)[-1] == expected_class, repr(error)
        assert not isinstance(error, ConfigError), repr(error)
    if "field" in case:
        assert error.field == case["field"], repr(error)
    if case.get("message"):
        assert case["message"] in str(error)


def _config(version: tuple[int, int], case: Case) -> None:
    # Kafka's tests use the keys the tag's LogConfig defines: a refusal must be of the value, not the name
    assert set(case["config"]) <= set(topic_config_names(version)), sorted(case["config"])
    broker = BrokerSettings.of(case.get("broker", {}))
    if case["expect"] == "accepted":
        written = validate_topic_config(case["config"], kafka_version=version, broker=broker)
        assert set(written) == set(case["config"])
        return
    with pytest.raises(KafkaError) as raised:
        validate_topic_config(case["config"], kafka_version=version, broker=broker)
    _refusal(case, raised.value)


def _topic_name(version: tuple[int, int], case: Case) -> None:
    if case["expect"] == "accepted":
        validate_topic_name(case["name"], kafka_version=version)
        return
    with pytest.raises(KafkaError) as raised:
        validate_topic_name(case["name"], kafka_version=version)
    _refusal(case, raised.value)


def _replica_assignment(version: tuple[int, int], case: Case) -> None:
    del version  # the rules AdminZkClientTest pins did not change between lines
    assignment = {int(p): tuple(replicas) for p, replicas in case["assignment"].items()}
    if case["expect"] == "accepted":
        validate_replica_assignment(assignment)
        return
    with pytest.raises(KafkaError) as raised:
        validate_replica_assignment(assignment)
    _refusal(case, raised.value)


def _reassign_request(version: tuple[int, int], case: Case) -> None:
    del version  # /admin/reassign_partitions kept its format (kafka-versions.md d.2)
    payload = case["json"].encode()
    if case["expect"] == "encoded":
        assert (
            ReassignPartitionsZNode.encode({case["topic"]: {case["partition"]: case["replicas"]}}) == payload
        )
    elif case["expect"] == "decoded":
        assert ReassignPartitionsZNode.decode(payload) == {
            case["topic"]: {case["partition"]: tuple(case["replicas"])}
        }
    else:
        with pytest.raises(ZnodeFormatError):
            ReassignPartitionsZNode.decode(payload)


def _names(version: tuple[int, int], case: Case) -> None:
    del version  # Topic's collision rules never changed
    if case["kind"] == "collision_chars":
        assert has_collision_chars(case["name"]) is case["expect"]
    elif case["kind"] == "collision":
        assert has_collision(case["a"], case["b"]) is case["expect"]
    else:
        assert unify_collision_chars(case["name"]) == case["expect"]


RUNNERS: dict[str, Any] = {
    "config": _config,
    "topic_name": _topic_name,
    "replica_assignment": _replica_assignment,
    "reassign_request": _reassign_request,
    "collision_chars": _names,
    "collision": _names,
    "unify": _names,
}


@pytest.mark.parametrize(("line", "case"), ALL, ids=[case["id"] for _, case in ALL])
def test_kto_judges_as_the_release_lines_own_test(line: str, case: Case) -> None:
    RUNNERS[case["kind"]](parse_kafka_version(line), case)


def test_every_release_line_has_its_cases() -> None:
    counts = {load(path)[0]: len(load(path)[2]) for path in case_files()}
    assert sorted(counts, key=parse_kafka_version) == [line.name for line in RELEASE_LINES]
    assert all(count >= MINIMUM_CASES_PER_LINE for count in counts.values()), counts


@pytest.mark.parametrize("path", case_files(), ids=lambda p: p.stem)
def test_each_case_cites_a_test_of_its_own_lines_tag(path: Path) -> None:
    line, tag, cases = load(path)
    assert tag == release_line(parse_kafka_version(line)).tag
    for case in cases:
        cited_tag, cited_path, cited_line = case["source"].split(":")
        assert cited_tag == tag
        assert cited_path.endswith((".scala", ".java"))
        assert "/src/test/" in cited_path
        assert int(cited_line) > 0
        assert case["kind"] in RUNNERS
        assert case["test"].split(".")[0] in cited_path


def test_the_cases_are_kafkas_expectations_not_kto_output() -> None:
    """The files hold only what the tests assert: every refusal expects an exception class Kafka's test names."""
    classes = {case.get("error") for _, case in ALL if case.get("expect") == "refused"}
    assert classes <= {
        None,
        "Exception",
        "ConfigException",
        "InvalidConfigurationException",
        "InvalidTopicException",
        "InvalidReplicaAssignmentException",
    }, classes
    assert json.dumps(ALL)  # plain data
