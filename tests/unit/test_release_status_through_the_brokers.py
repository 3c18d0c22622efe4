"""``status.kafkaRelease`` for a KafkaCluster read through its brokers alone: what they answer (the line of their
ApiVersions and of the finalized metadata.version, the newer), against spec.kafkaVersion when it is given."""

from __future__ import annotations

from topic_operator.k8s.status import kafka_release_status
from topic_operator.model import Backend, ClusterState


def _answered(broker_release: tuple[int, int] | None, metadata_version: str | None) -> ClusterState:
    return ClusterState(
        cluster_id="c",
        brokers={},
        topics={},
        backend=Backend.KRAFT,
        broker_release=broker_release,
        metadata_version=metadata_version,
    )


def test_without_a_declared_release_the_brokers_answer_is_the_release() -> None:
    shown = kafka_release_status((3, 4), _answered((4, 1), "4.1-IV1"), declared=False)
    assert shown == {
        "seen": "4.1",
        "writtenAs": "4.1",
        "clues": [
            "ApiVersions: the brokers speak the requests of Kafka 4.1",
            "DescribeFeatures: metadata.version 4.1-IV1 is finalized",
        ],
    }


def test_a_declared_release_is_followed_and_a_contradiction_warned_of() -> None:
    shown = kafka_release_status((3, 9), _answered((4, 1), "4.1-IV1"))
    assert shown is not None
    assert (shown["declared"], shown["seen"], shown["writtenAs"]) == ("3.9", "4.1", "3.9")
    assert shown["warning"] == "the brokers answer as Kafka 4.1, not the 3.9 spec.kafkaVersion declares"
    agreeing = kafka_release_status((4, 1), _answered((4, 1), "4.1-IV1"))
    assert agreeing is not None
    assert "warning" not in agreeing


def test_the_newer_of_the_two_answers_names_the_line() -> None:
    """A 3.4 KRaft broker's ApiVersions read as 3.3 (it lists no LeaderAndIsr): its metadata.version tells."""
    shown = kafka_release_status((3, 4), _answered((3, 3), "3.4-IV0"))
    assert shown is not None
    assert "warning" not in shown
    assert shown["seen"] == "3.4"


def test_nothing_answered_nothing_shown() -> None:
    assert kafka_release_status((3, 9), _answered(None, None)) is None
