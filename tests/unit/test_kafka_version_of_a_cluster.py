"""A cluster's release line, from a KafkaCluster's spec.kafkaVersion or ``kto --kafka-version``, and the brokers'
settings of spec.brokerConfig: read, checked, and used by the configs' checks and the plan's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import kto
from topic_operator.kafka.broker_settings import BrokerSettings, broker_setting_problem
from topic_operator.kafka.errors import InvalidTopicError, TopicExistsError
from topic_operator.kafka.releases import (
    KAFKA_VERSIONS,
    UnknownKafkaVersionError,
    format_version,
    parse_kafka_version,
)
from topic_operator.kafka.topic_names import validate_topic_name
from topic_operator.manifests.loader import load_manifests
from topic_operator.model import Broker, ClusterSpec, ClusterState, TopicSpec
from topic_operator.plan import TopicStatus, plan_topic


def cluster_yaml(version: str | None = None, broker_config: str | None = None) -> str:
    lines = ["apiVersion: kto.dev/v1alpha1", "kind: KafkaCluster", "metadata: {name: main}", "spec:",
             "  zookeeper: {connect: '127.0.0.1:2181/kafka'}"]  # fmt: skip
    if version is not None:
        lines.append(f'  kafkaVersion: "{version}"')
    if broker_config is not None:
        lines.append(f"  brokerConfig: {broker_config}")
    return "\n".join(lines) + "\n"


TOPIC = (
    "apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {name: orders}\n"
    "spec: {cluster: main, partitions: 3, replicas: 1, config: {compression.gzip.level: '9'}}\n"
)


def write(tmp_path: Path, *documents: str) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text("---\n".join(documents))
    return path


@pytest.mark.parametrize("version", KAFKA_VERSIONS, ids=[format_version(v) for v in KAFKA_VERSIONS])
def test_every_release_line_is_a_kafka_version(tmp_path: Path, version: tuple[int, int]) -> None:
    manifests = load_manifests([write(tmp_path, cluster_yaml(format_version(version)))])
    assert manifests.errors == ()
    assert manifests.clusters[0].kafka_version == version


@pytest.mark.parametrize("text", ["2.9", "4.2", "1.1", "3.10", "3"])
def test_other_versions_are_refused_naming_the_lines(tmp_path: Path, text: str) -> None:
    manifests = load_manifests([write(tmp_path, cluster_yaml(text))])
    assert [e.field_path for e in manifests.errors] == ["spec.kafkaVersion"]
    assert "2.0" in str(manifests.errors[0])
    assert "3.9" in str(manifests.errors[0])
    with pytest.raises(UnknownKafkaVersionError, match=r"one of 2\.0, 2\.1, .*, 3\.9$"):
        parse_kafka_version(text)


@pytest.mark.parametrize("text", ["4.0", "4.1"])
def test_kafka_4_is_a_kraft_cluster_s_release_only(tmp_path: Path, text: str) -> None:
    zookeeper = load_manifests([write(tmp_path, cluster_yaml(text))])
    assert [e.field_path for e in zookeeper.errors] == ["spec.kafkaVersion"]
    assert f"Kafka {text} runs only in KRaft mode and has no ZooKeeper" in str(zookeeper.errors[0])
    kraft = cluster_yaml(text).replace(
        "zookeeper: {connect: '127.0.0.1:2181/kafka'}", "bootstrapServers: 'b:9092'"
    )
    brokers = load_manifests([write(tmp_path, kraft)])
    assert brokers.errors == ()
    assert brokers.clusters[0].kafka_version == parse_kafka_version(text, kraft=True)
    assert brokers.clusters[0].bootstrap_servers == "b:9092"


def test_a_topics_config_is_checked_with_its_clusters_line(tmp_path: Path) -> None:
    assert load_manifests([write(tmp_path, cluster_yaml("3.9"), TOPIC)]).errors == ()
    errors = load_manifests([write(tmp_path, cluster_yaml("3.7"), TOPIC)]).errors
    assert [str(e).split(": ", 2)[-1] for e in errors] == [
        "Unknown topic config name: compression.gzip.level"
    ]


def test_broker_config_is_read_and_each_bad_setting_named(tmp_path: Path) -> None:
    good = load_manifests(
        [write(tmp_path, cluster_yaml("3.6", "{remote.log.storage.system.enable: 'true'}"))]
    )
    assert good.errors == ()
    assert good.clusters[0].broker_settings.remote_log_storage_system_enable
    bad = load_manifests(
        [write(tmp_path, cluster_yaml("3.6", "{log.retention.days: '3', log.retention.ms: 'soon'}"))]
    )
    assert sorted(e.field_path for e in bad.errors) == [
        "spec.brokerConfig.log.retention.days",
        "spec.brokerConfig.log.retention.ms",
    ]
    assert "not a broker setting kafka-topic-operator reads" in " ".join(str(e) for e in bad.errors)
    assert bad.clusters == ()


def test_broker_settings_give_topic_defaults_as_kafka_config_does() -> None:
    assert BrokerSettings.of({"log.retention.hours": "2"}).topic_defaults() == {"retention.ms": "7200000"}
    assert BrokerSettings.of({"log.retention.minutes": "-5"}).topic_defaults() == {"retention.ms": "-1"}
    both = BrokerSettings.of({"log.retention.ms": "10", "log.retention.hours": "2"})
    assert both.topic_defaults() == {"retention.ms": "10"}  # ms wins
    assert BrokerSettings.of({"log.local.retention.bytes": " 5 "}).topic_defaults() == {
        "local.retention.bytes": "5"
    }
    assert not BrokerSettings().remote_log_storage_system_enable
    assert (
        broker_setting_problem("log.cleanup.policy", "compact,nope") == "must be a list of compact and delete"
    )
    assert broker_setting_problem("log.retention.hours", 3) is not None
    with pytest.raises(ValueError, match=r"log\.segment\.bytes"):
        BrokerSettings.of({"log.segment.bytes": "1"})


def test_kto_validate_takes_the_line_for_topics_without_a_kafkacluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, TOPIC)
    code, out, _ = kto(capsys, "validate", str(path))
    assert code == 1
    assert "Unknown topic config name: compression.gzip.level" in out
    assert "checked against Kafka 3.4" in out
    code, out, _ = kto(capsys, "validate", "--kafka-version", "3.9", str(path))
    assert code == 0, out
    assert "checked against Kafka 3.9" in out


def test_kto_refuses_an_unknown_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        kto(capsys, "validate", "--kafka-version", "2.9", str(write(tmp_path, TOPIC)))
    assert exited.value.code == 2
    assert "'2.9' is not a Kafka release line kafka-topic-operator knows" in capsys.readouterr().err


def test_kto_refuses_kafka_4_through_zookeeper(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = kto(
        capsys,
        "plan",
        "-f",
        str(write(tmp_path, TOPIC)),
        "--kafka-version",
        "4.0",
        "--zookeeper",
        "127.0.0.1:1",
    )
    assert code == 1
    assert (
        "Kafka 4.0 runs only in KRaft mode and has no ZooKeeper: reach cluster main through --bootstrap-server"
        in err
    )


def test_kto_plan_refuses_a_line_contradicting_the_kafkacluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, cluster_yaml("3.9"), TOPIC)
    code, _, err = kto(
        capsys, "plan", "-f", str(path), "--kafka-version", "2.8", "--zookeeper", "127.0.0.1:1"
    )
    assert code == 1
    assert "--kafka-version 2.8 contradicts KafkaCluster main's spec.kafkaVersion 3.9" in err


# ---- the plan, in each line's words -------------------------------------------------------------------------


EMPTY = ClusterState(cluster_id="c", brokers={0: Broker(0)}, topics={})


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ((2, 8), 'Topic name "a b" is illegal, it contains a character other than ASCII alphanumerics'),
        (
            (3, 3),
            "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics",
        ),
    ],
)
def test_topic_names_are_refused_in_the_lines_words(version: tuple[int, int], message: str) -> None:
    with pytest.raises(InvalidTopicError) as raised:
        validate_topic_name("a b", kafka_version=version)
    assert str(raised.value).startswith(message)
    assert "topic name: " + "a" * 250 in str(_too_long((2, 8)))
    assert "Topic name: " + "a" * 250 in str(_too_long((3, 0)))


def _too_long(version: tuple[int, int]) -> InvalidTopicError:
    with pytest.raises(InvalidTopicError) as raised:
        validate_topic_name("a" * 250, kafka_version=version)
    return raised.value


@pytest.mark.parametrize("version", [(2, 8), (3, 0), (3, 1), (3, 9)], ids=["2.8", "3.0", "3.1", "3.9"])
def test_a_topic_pending_deletion_is_not_recreated(version: tuple[int, int]) -> None:
    state = ClusterState(
        cluster_id="c", brokers={0: Broker(0)}, topics={}, marked_for_deletion=frozenset({"t"})
    )
    cluster = ClusterSpec("main", "zk:2181", kafka_version=version)
    result = plan_topic(TopicSpec("main", "t", 1, 1), state, cluster)
    assert result.status is TopicStatus.REJECTED
    (error,) = result.rejections
    assert isinstance(error, TopicExistsError)
    assert str(error).startswith("Topic 't' is marked for deletion.")
    assert error.stricter_than_kafka is (version < (3, 1))  # AdminZkClient checks it from 3.1
