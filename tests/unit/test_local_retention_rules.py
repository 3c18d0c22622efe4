"""Local retention as the broker's ``LogConfig`` constructor judges it (Kafka 3.4): AdminZkClient writes these
configs, and every broker then fails to apply them, so they are refused, in the broker's words, marked
``stricter_than_kafka``; -2 ("inherit") always passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from topic_operator.kafka.errors import ConfigError, KafkaError
from topic_operator.kafka.topic_configs import topic_config_problems, validate_topic_config
from topic_operator.manifests.loader import load_manifests


def _refusal(props: dict[str, object]) -> KafkaError:
    with pytest.raises(KafkaError) as raised:
        validate_topic_config(props)
    return raised.value


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"retention.ms": "1000", "local.retention.ms": "2000"},
            "Invalid value 2000 for configuration local.retention.ms: Value must not be more than property: "
            "retention.ms value.",
        ),
        (
            {"retention.ms": 1000, "local.retention.ms": -1},
            "Invalid value -1 for configuration local.retention.ms: Value must not be -1 as retention.ms value is "
            "set as 1000.",
        ),
        (
            {"retention.bytes": "100", "local.retention.bytes": "200"},
            "Invalid value 200 for configuration local.retention.bytes: Value must not be more than property: "
            "retention.bytes value.",
        ),
        (
            {"retention.bytes": "100", "local.retention.bytes": "-1"},
            "Invalid value -1 for configuration local.retention.bytes: Value must not be -1 as retention.bytes "
            "value is set as 100.",
        ),
        (  # Kafka 3.4 compares with an unlimited retention too: anything but -2 and -1 is "more than" -1
            {"retention.ms": "-1", "local.retention.ms": "1000"},
            "Invalid value 1000 for configuration local.retention.ms: Value must not be more than property: "
            "retention.ms value.",
        ),
    ],
)
def test_a_local_retention_the_broker_refuses_is_refused_in_its_words(
    props: dict[str, object], message: str
) -> None:
    error = _refusal(props)
    assert isinstance(error, ConfigError)
    assert str(error) == message
    assert error.stricter_than_kafka
    assert error.field == f"config.{next(k for k in props if k.startswith('local.'))}"


@pytest.mark.parametrize(
    "props",
    [
        {"retention.ms": "1000", "local.retention.ms": "-2"},
        {"retention.ms": "1000", "local.retention.ms": "1000"},
        {"retention.ms": "1000", "local.retention.ms": "0"},
        {"retention.ms": "-1", "local.retention.ms": "-1"},
        {"retention.bytes": "-1", "local.retention.bytes": "-1"},
        {"retention.bytes": "500", "local.retention.bytes": "500"},
        {"local.retention.ms": "-2", "local.retention.bytes": "-2"},
        {"local.retention.ms": "86400000"},  # below Kafka's default retention.ms of 7 days
        {"retention.ms": "100"},  # no local retention: nothing to compare
    ],
)
def test_inherit_equal_lower_and_unlimited_pairs_pass(props: dict[str, object]) -> None:
    assert validate_topic_config(props).keys() == props.keys()


def test_without_retention_on_the_topic_kafkas_default_is_assumed_and_said() -> None:
    """The broker compares with its own default, which kto cannot see: Kafka's default (7 days; -1 bytes) is
    used, and the message says how to decide it."""
    error = _refusal({"local.retention.ms": "-1"})
    assert str(error) == (
        "Invalid value -1 for configuration local.retention.ms: Value must not be -1 as retention.ms value is set "
        "as 604800000. (retention.ms is not set on the topic: compared with Kafka's default, 604800000, as the "
        "brokers' default may differ; declare retention.ms on the topic to decide)"
    )
    assert "declare retention.bytes" in str(_refusal({"local.retention.bytes": "1073741824"}))


def test_every_problem_is_listed_and_a_bad_total_does_not_blame_the_local_value() -> None:
    both = topic_config_problems(
        {
            "retention.ms": "1000",
            "local.retention.ms": "2000",
            "retention.bytes": "5",
            "local.retention.bytes": "9",
        }
    )
    assert [e.field for e in both] == ["config.local.retention.ms", "config.local.retention.bytes"]
    bad_total = topic_config_problems({"retention.ms": "7d", "local.retention.ms": "2000"})
    assert [e.field for e in bad_total] == ["config.retention.ms"]


def test_manifests_report_it_on_the_key(tmp_path: Path) -> None:
    manifest = tmp_path / "t.yaml"
    manifest.write_text(
        "apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {name: orders}\n"
        "spec: {cluster: c, partitions: 1, replicas: 1, config: {retention.ms: 1000, local.retention.ms: 5000}}\n"
    )
    (error,) = load_manifests([manifest]).errors
    assert error.field_path == "spec.config.local.retention.ms"
    assert error.value == 5000
    assert error.rule.endswith("Value must not be more than property: retention.ms value.")
