"""Which rules judge a topic's config: the release the brokers run where none is declared, and the path the
write takes (a KRaft controller, or ZooKeeper-mode brokers and ZooKeeper), as the real brokers judge it.

3.9.0's KRaft controller accepts ``remote.log.copy.disable=true`` and ``remote.log.delete.on.disable=true``
(CreateTopics with ``validate_only``); ZooKeeper-mode 3.9.0 refuses them "under Zookeeper's mode". A cluster whose
KafkaCluster declares no ``kafkaVersion`` was judged by 3.4, refusing keys its 4.1 brokers accept."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from harness.states import cluster_spec, cluster_state, spec
from topic_operator.kafka.errors import InvalidConfigurationError
from topic_operator.kafka.kraft_migration import choose_writer
from topic_operator.kafka.releases import ALL_KAFKA_VERSIONS, DEFAULT_KAFKA_VERSION, brokers_line
from topic_operator.kafka.topic_configs import (
    checked_by_some_line,
    remote_storage_turned_off,
    validate_topic_config,
)
from topic_operator.manifests.loader import load_objects
from topic_operator.model import Backend, ClusterState
from topic_operator.plan import TopicStatus, plan_topic

REMOTE_LOG_KEYS = ["remote.log.copy.disable", "remote.log.delete.on.disable"]


def through_brokers(
    state: ClusterState, metadata_version: str | None, release: tuple[int, int] | None
) -> ClusterState:
    """``state`` as read through the Admin protocol from brokers that answered so."""
    return dataclasses.replace(
        state,
        backend=Backend.KRAFT,
        writer=choose_writer(None, zookeeper=False, brokers=True),
        metadata_version=metadata_version,
        broker_release=release,
    )


# ---- the path the write takes -------------------------------------------------------------------------------


@pytest.mark.parametrize("key", REMOTE_LOG_KEYS)
def test_3_9_on_a_kraft_controller_takes_the_remote_log_keys_that_zookeeper_mode_refuses(key: str) -> None:
    assert validate_topic_config({key: "true"}, kafka_version=(3, 9), kraft=True) == {key: "true"}
    with pytest.raises(InvalidConfigurationError, match="under Zookeeper's mode"):
        validate_topic_config({key: "true"}, kafka_version=(3, 9))


def test_3_9_on_a_kraft_controller_runs_the_kraft_path_of_the_retention_rule() -> None:
    from topic_operator.kafka.broker_settings import BrokerSettings

    running = BrokerSettings.of({"remote.log.storage.system.enable": "true"})
    config = {
        "remote.storage.enable": "true",
        "remote.log.copy.disable": "true",
        "retention.ms": "1000",
        "local.retention.ms": "500",
    }
    with pytest.raises(InvalidConfigurationError, match="must be set to the identical value"):
        validate_topic_config(config, kafka_version=(3, 9), broker=running, kraft=True)


def test_turning_remote_storage_off_on_a_3_9_kraft_controller_is_kafkas_own_rule() -> None:
    before, after = {"remote.storage.enable": "true"}, {"remote.storage.enable": "false"}
    on_kraft = remote_storage_turned_off(before, after, kafka_version=(3, 9), kraft=True)
    assert on_kraft is not None
    assert not on_kraft.stricter_than_kafka
    deleting = {**after, "remote.log.delete.on.disable": "true"}
    assert remote_storage_turned_off(before, deleting, kafka_version=(3, 9), kraft=True) is None
    on_zookeeper = remote_storage_turned_off(before, after, kafka_version=(3, 9))
    assert on_zookeeper is not None
    assert on_zookeeper.stricter_than_kafka


def test_the_plan_judges_by_the_path_its_writes_take() -> None:
    declared = cluster_spec(kafka_version=(3, 9))
    topic = spec("tiered", 1, 1, {"remote.log.copy.disable": "true"})
    kraft = through_brokers(cluster_state(), "3.9-IV0", (3, 9))
    assert plan_topic(topic, kraft, declared).status is TopicStatus.CREATE
    # ZooKeeper-mode brokers answer the Admin protocol with no metadata.version: ZooKeeper mode's rules
    zookeeper_mode_brokers = through_brokers(cluster_state(), None, (3, 9))
    refused = plan_topic(topic, zookeeper_mode_brokers, declared)
    assert refused.status is TopicStatus.REJECTED
    assert "under Zookeeper's mode" in str(refused.rejections[0])
    # and a cluster written through ZooKeeper
    assert plan_topic(topic, cluster_state(), declared).status is TopicStatus.REJECTED


# ---- the release the brokers run ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metadata_version", "release", "line"),
    [
        ("4.1-IV1", None, (4, 1)),
        ("4.1-IV1", (4, 1), (4, 1)),
        ("3.8-IV0", (3, 9), (3, 9)),  # software newer than the finalized metadata.version
        ("3.9-IV0", (3, 8), (3, 9)),  # ApiVersions cannot tell every line apart
        (None, (3, 6), (3, 6)),
        ("feature level 40", (4, 1), (4, 1)),
        ("5.2-IV0", None, ALL_KAFKA_VERSIONS[-1]),  # newer than every known line: the newest
        (None, (1, 1), ALL_KAFKA_VERSIONS[0]),
        (None, None, None),
        ("feature level 40", None, None),
    ],
)
def test_the_brokers_line(
    metadata_version: str | None, release: tuple[int, int] | None, line: tuple[int, int] | None
) -> None:
    assert brokers_line(metadata_version, release) == line


def test_an_undeclared_release_is_the_brokers_own() -> None:
    undeclared = cluster_spec(kafka_version_declared=False)
    topic = spec("gzip", 1, 1, {"compression.gzip.level": "5"})  # a 3.8 key
    on_4_1 = through_brokers(cluster_state(), "4.1-IV1", (4, 1))
    assert plan_topic(topic, on_4_1, undeclared).status is TopicStatus.CREATE
    on_3_6 = through_brokers(cluster_state(), "3.6-IV2", (3, 6))
    refused = plan_topic(topic, on_3_6, undeclared)
    assert refused.status is TopicStatus.REJECTED
    assert "Unknown topic config name: compression.gzip.level" in str(refused.rejections[0])
    # a declared release still wins over the brokers'
    assert plan_topic(topic, on_4_1, cluster_spec(kafka_version=DEFAULT_KAFKA_VERSION)).status is (
        TopicStatus.REJECTED
    )


def test_before_the_brokers_answer_a_config_passes_when_some_line_takes_it() -> None:
    assert checked_by_some_line({"compression.gzip.level": "5"}, kraft=True) == (
        {"compression.gzip.level": "5"},
        (),
    )
    # removed in 4.0, still a 3.x broker's
    assert checked_by_some_line({"message.format.version": "3.0"}, kraft=True)[0] == {
        "message.format.version": "3.0"
    }
    config, problems = checked_by_some_line({"retention.ms": "soon"}, kraft=True)
    assert config is None
    assert [p.field for p in problems] == ["config.retention.ms"]


def kafka_cluster(spec_fields: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": "main"},
        "spec": spec_fields,
    }


def kafka_topic(config: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": "orders"},
        "spec": {"cluster": "main", "partitions": 1, "replicas": 1, "config": config},
    }


@pytest.mark.parametrize(
    ("cluster", "accepted"),
    [
        ({"bootstrapServers": "127.0.0.1:9092"}, True),  # the brokers will say their release
        (
            {"bootstrapServers": "127.0.0.1:9092", "kafkaVersion": "3.4"},
            False,
        ),  # declared: 3.4 has no such key
        (
            {"zookeeper": {"connect": "127.0.0.1:2181"}},
            False,
        ),  # ZooKeeper alone cannot say it: 3.4, the default
    ],
)
def test_a_kafkacluster_without_kafka_version_is_judged_by_what_its_brokers_could_run(
    cluster: dict[str, object], accepted: bool
) -> None:
    loaded = load_objects([kafka_cluster(cluster), kafka_topic({"compression.gzip.level": "5"})])
    assert (not loaded.errors) is accepted, loaded.errors
    assert loaded.clusters[0].kafka_version_declared is ("kafkaVersion" in cluster)


# ---- a config judged as it was read is judged again only under other rules ------------------------------------


def test_a_config_found_valid_as_it_was_read_is_judged_again_only_under_other_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loader judged ``remote.log.copy.disable=true`` as a 3.9 KRaft controller does (valid); a plan whose
    writes a KRaft controller judges by the same rules takes that judgement, and one whose brokers run in
    ZooKeeper mode judges again, and refuses."""
    cluster: dict[str, object] = {"bootstrapServers": "127.0.0.1:9092", "kafkaVersion": "3.9"}
    loaded = load_objects([kafka_cluster(cluster), kafka_topic({"remote.log.copy.disable": "true"})])
    assert not loaded.errors, loaded.errors
    (topic,) = loaded.topics
    assert topic.config_judged_as is not None
    judged: list[object] = []

    def counted(config: Mapping[str, str], **rules: Any) -> dict[str, str]:
        judged.append(dict(config))
        return validate_topic_config(config, **rules)

    monkeypatch.setattr("topic_operator.plan.validate_topic_config", counted)
    kraft = through_brokers(cluster_state(), "3.9-IV0", (3, 9))
    assert plan_topic(topic, kraft, loaded.clusters[0]).status is TopicStatus.CREATE
    assert judged == []
    zookeeper_mode_brokers = through_brokers(cluster_state(), None, (3, 9))
    refused = plan_topic(topic, zookeeper_mode_brokers, loaded.clusters[0])
    assert refused.status is TopicStatus.REJECTED
    assert "under Zookeeper's mode" in str(refused.rejections[0])
    assert judged == [{"remote.log.copy.disable": "true"}]
