"""On a real ZooKeeper, the release the znodes tell is reported by kto plan, describe and snapshot and in the
KafkaCluster status, with a warning naming both when it contradicts the declared kafkaVersion; and nothing the
release ZooKeeper shows cannot read is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from harness.cli import kafka_topic, kto
from harness.kafka_cluster import CLUSTER_ID, SIX_BROKERS_THREE_RACKS
from harness.zookeeper import ZkChroot
from topic_operator.model import ClusterSpec, TopicSpec
from topic_operator.reconcile import Reconciler
from topic_operator.testing.simulated_brokers import (
    bootstrap_cluster,
    bring_partitions_online,
    register_brokers,
)
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore


def cluster_document(version: str) -> str:
    return (
        "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {name: test}\n"
        f"spec: {{zookeeper: {{connect: '127.0.0.1:1/unused'}}, kafkaVersion: '{version}'}}\n"
    )


def gzip_topic_of_a_3_9_cluster(tmp_path: Path) -> Path:
    """A KafkaCluster declaring 3.9 and a topic setting 3.8's compression.gzip.level."""
    manifests = tmp_path / "m.yaml"
    topic = kafka_topic("orders", 3, config="{compression.gzip.level: 9}")
    manifests.write_text("---\n".join([cluster_document("3.9"), topic]))
    return manifests


def kafka_of(zk: KazooClient, version: tuple[int, int]) -> None:
    bootstrap_cluster(zk, CLUSTER_ID)
    register_brokers(zk, SIX_BROKERS_THREE_RACKS, kafka_version=version)


def test_a_3_3_controller_under_a_3_9_declaration_is_warned_about_and_capped(
    zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kafka_of(zk, (3, 3))
    manifests = gzip_topic_of_a_3_9_cluster(tmp_path)
    code, out, err = kto(
        capsys, "plan", "-f", str(manifests), "--zookeeper", zk_chroot.connect_string, "-o", "json"
    )
    assert code == 1  # the 3.8 key is refused: the controller's release does not know it
    assert (
        "warning: cluster test: kafkaVersion 3.9 is declared, but ZooKeeper shows Kafka 3.3 or earlier "
        "(/controller is version 1, written by a controller of Kafka 3.3 or earlier)"
    ) in err
    document = json.loads(out)
    release = document["kafka_release"]
    assert (release["declared"], release["seen"], release["written_as"]) == ("3.9", "2.7 to 3.3", "3.3")
    assert release["warning"].startswith("kafkaVersion 3.9 is declared")
    (rejection,) = document["topics"][0]["rejections"]
    assert rejection["message"] == "Unknown topic config name: compression.gzip.level"
    assert zk.exists("/brokers/topics/orders") is None


def test_describe_and_snapshot_say_what_zookeeper_shows(
    zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kafka_of(zk, (2, 8))
    Reconciler(ZooKeeperStore(zk), ClusterSpec("test", "", kafka_version=(2, 8))).apply(
        [TopicSpec("test", "orders", 2, 2)]
    )
    bring_partitions_online(zk, read_cluster(zk), kafka_version=(2, 8))

    code, out, err = kto(
        capsys, "describe", "--zookeeper", zk_chroot.connect_string, "--kafka-version", "2.7"
    )
    assert code == 0
    assert "Topic: orders" in out
    assert "kafka release: ZooKeeper shows Kafka 2.8 to 3.3 (1 topic znode of version 3" in err
    assert "warning: " in err
    assert "kafkaVersion 2.7 is declared, but ZooKeeper shows Kafka 2.8 or later" in err

    snapshot = tmp_path / "s.jsonl"
    code, _, err = kto(
        capsys, "snapshot", "--zookeeper", zk_chroot.connect_string, "--cluster", "test", "-o", str(snapshot)
    )
    assert code == 0
    assert "warning" not in err  # nothing declared, nothing to contradict
    header: dict[str, Any] = json.loads(snapshot.read_text().splitlines()[0])
    assert header["kafka_release"]["topics_with_id"] == 1
    assert header["kafka_release"]["topic_znode_versions"] == {"3": 1}
    assert header["kafka_release"]["broker_registration_versions"] == {"5": 6}
    assert header["kafka_release"]["controller_znode_version"] == 1


def test_a_cluster_matching_its_declaration_says_nothing_more(
    zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kafka_of(zk, (3, 9))
    manifests = gzip_topic_of_a_3_9_cluster(tmp_path)
    code, _, err = kto(
        capsys, "apply", "-f", str(manifests), "--zookeeper", zk_chroot.connect_string, "--yes"
    )
    assert code == 0, err
    assert "warning" not in err
    config = json.loads(zk.get("/config/topics/orders")[0])["config"]
    assert config == {"compression.gzip.level": "9"}  # the example, on a kafkaVersion 3.9 cluster
