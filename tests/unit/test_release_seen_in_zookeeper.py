"""What ZooKeeper's znodes tell of a cluster's Kafka release (kafka-versions.md d.2), against the declared one: the
bounds and their clues, the warning with both, and the release writes follow."""

from __future__ import annotations

import pytest

from topic_operator.kafka.cluster_release import (
    ReleaseEvidence,
    release_bounds,
    release_conflict,
    release_for_writing,
    release_report,
)
from topic_operator.kafka.errors import InvalidConfigurationError
from topic_operator.model import Broker, ClusterSpec, ClusterState, TopicSpec, TopicState
from topic_operator.plan import CreateTopic, TopicStatus, plan_topic
from topic_operator.snapshot_rows import rows_from_cluster, rows_to_clusters

OLD_CONTROLLER = ReleaseEvidence(controller_znode_version=1, broker_registration_versions=((5, 3),))
"""A cluster whose controller wrote /controller version 1 (older than 3.4) and whose brokers register v5."""


@pytest.mark.parametrize(
    ("evidence", "seen"),
    [
        (ReleaseEvidence(), "unknown"),
        (ReleaseEvidence(topic_znode_versions=((1, 4),)), "unknown"),  # old znodes survive upgrades
        (ReleaseEvidence(topic_znode_versions=((1, 4), (2, 1))), "2.4 or later"),
        (ReleaseEvidence(topic_znode_versions=((3, 2),)), "2.8 or later"),
        (ReleaseEvidence(topics_with_id=2), "2.8 or later"),
        (ReleaseEvidence(broker_registration_versions=((5, 3),)), "2.7 or later"),
        (ReleaseEvidence(broker_registration_versions=((4, 3),)), "unknown"),  # a protocol, not a release
        (ReleaseEvidence(feature_znode_version=1), "2.7 or later"),
        (ReleaseEvidence(feature_znode_version=2), "3.3 or later"),
        (ReleaseEvidence(controller_znode_version=2, kraft_controller_epoch=-1), "3.4 or later"),
        (ReleaseEvidence(migration_znode=True), "3.4 or later"),
        (OLD_CONTROLLER, "2.7 to 3.3"),
        (ReleaseEvidence(controller_znode_version=1, feature_znode_version=2), "3.3"),
    ],
)
def test_each_znode_bounds_the_release(evidence: ReleaseEvidence, seen: str) -> None:
    assert release_bounds(evidence).seen == seen


def test_every_clue_is_said_in_words() -> None:
    evidence = ReleaseEvidence(
        topic_znode_versions=((1, 1), (3, 2)),
        topics_with_id=2,
        broker_registration_versions=((4, 1), (5, 2)),
        controller_znode_version=2,
        kraft_controller_epoch=-1,
    )
    texts = [clue.text for clue in release_bounds(evidence).clues]
    assert texts == [
        "2 topic znodes of version 3, written by Kafka 2.8 or later",
        "1 topic znode of version 1, written by Kafka 2.3 or earlier",
        "2 topics have a topic_id, given by a Kafka 2.8+ controller",
        "2 brokers register version 5, written at inter-broker protocol 2.7 or later",
        "1 broker registers version 4, written at inter-broker protocol below 2.7",
        "/controller is version 2 with kraftControllerEpoch, written by Kafka 3.4 or later",
    ]


def test_a_declared_release_older_than_zookeeper_shows_is_warned_about_with_both() -> None:
    bounds = release_bounds(ReleaseEvidence(topics_with_id=3))
    warning = release_conflict((2, 7), bounds)
    assert warning == (
        "kafkaVersion 2.7 is declared, but ZooKeeper shows Kafka 2.8 or later (3 topics have a topic_id, given by a "
        "Kafka 2.8+ controller): configs and znodes follow 2.7, keeping what newer releases wrote"
    )
    assert release_for_writing((2, 7), bounds) == (2, 7)
    assert release_conflict((2, 8), bounds) is None


def test_a_declared_release_newer_than_zookeeper_shows_is_capped() -> None:
    bounds = release_bounds(OLD_CONTROLLER)
    warning = release_conflict((3, 9), bounds)
    assert warning is not None
    assert warning.startswith(
        "kafkaVersion 3.9 is declared, but ZooKeeper shows Kafka 3.3 or earlier (/controller"
    )
    assert release_for_writing((3, 9), bounds) == (3, 3)
    assert release_for_writing((3, 2), bounds) == (3, 2)
    report = release_report((3, 9), OLD_CONTROLLER)
    assert (report["declared"], report["seen"], report["written_as"]) == ("3.9", "2.7 to 3.3", "3.3")
    assert report["warning"] == warning


def test_the_plan_follows_the_release_zookeeper_shows_when_it_is_older() -> None:
    """Declared 3.9, but the controller is a 3.3 broker: a 3.8 config key would be written where no broker of
    the controller's release reads it, so it is refused as 3.3 refuses it."""
    state = ClusterState("c", {i: Broker(i) for i in range(3)}, {}, release_evidence=OLD_CONTROLLER)
    cluster = ClusterSpec("main", "zk:2181", kafka_version=(3, 9))
    refused = plan_topic(TopicSpec("main", "t", 1, 1, {"compression.gzip.level": "9"}), state, cluster)
    assert refused.status is TopicStatus.REJECTED
    assert isinstance(refused.rejections[0], InvalidConfigurationError)
    assert str(refused.rejections[0]) == "Unknown topic config name: compression.gzip.level"
    unknown = ClusterState("c", {i: Broker(i) for i in range(3)}, {}, release_evidence=ReleaseEvidence())
    accepted = plan_topic(TopicSpec("main", "t", 1, 1, {"compression.gzip.level": "9"}), unknown, cluster)
    assert isinstance(accepted.actions[0], CreateTopic)


def test_the_evidence_travels_in_snapshot_files() -> None:
    evidence = ReleaseEvidence(
        topic_znode_versions=((0, 1), (3, 2)),
        topics_with_id=2,
        broker_registration_versions=((5, 3),),
        controller_znode_version=2,
        kraft_controller_epoch=-1,
        feature_znode_version=2,
    )
    state = ClusterState("c", {0: Broker(0)}, {"t": TopicState("t", {0: (0,)})}, release_evidence=evidence)
    rows = rows_from_cluster("main", state, "2025-01-01T00:00:00+00:00")
    assert rows[0]["kafka_release"] == evidence.to_dict()
    assert rows_to_clusters(rows)["main"].release_evidence == evidence
    del rows[0]["kafka_release"]  # a file written before the release was read
    assert rows_to_clusters(rows)["main"].release_evidence is None
