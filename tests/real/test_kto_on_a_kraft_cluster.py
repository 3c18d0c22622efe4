"""``kto --bootstrap-server`` on a cluster that was always KRaft: a controller and three brokers in racks a/b/c,
reached only through Kafka's Admin protocol; of Kafka 3.9 (the bridge every ZooKeeper-era cluster crosses) and of
Kafka 4.1 (no ZooKeeper at all).

One declaration goes through a topic's whole life as a platform team would drive it, each step checked against
what the brokers then hold: created with the placement the ZooKeeper path gives the same brokers, grown, its
overrides set and removed, a decrease refused in Kafka's words, a re-apply that sends nothing, its replication
factor raised from 1 to 3 by a throttled reassignment whose throttles are removed afterwards, and deleted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
from kazoo.client import KazooClient

from harness.kafka_clients import admin_client, replica_lists, settled, topic_config
from harness.kraft_cluster import KRaftCluster
from harness.kto_objects import write_manifests
from harness.waiting import eventually
from harness.zookeeper import ZkChroot
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import connected
from topic_operator.admin.store import AdminStore
from topic_operator.manifests.loader import load_manifests
from topic_operator.reconcile import Reconciler, TopicOutcome
from topic_operator.testing.simulated_brokers import bootstrap_cluster, register_broker

pytestmark = pytest.mark.timeout(300)

KTO = str(Path(sys.executable).parent / "kto")

METADATA_VERSION = {"3.9": "3.9-IV0", "4.1": "4.1-IV1"}
"""What ``kafka-storage.sh format`` finalizes by default: each line's newest production metadata.version."""


@pytest.fixture(scope="module", params=["3.9", "4.1"])
def kraft_cluster(request: pytest.FixtureRequest) -> KRaftCluster:
    """The session's cluster of Kafka 3.9, or of Kafka 4.1."""
    cluster: KRaftCluster = request.getfixturevalue("kraft" if request.param == "3.9" else "kraft_41")
    return cluster


def _kto(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KTO, *arguments], capture_output=True, text=True, timeout=120, check=False)


def _manifests(path: Path, cluster: dict[str, Any], topics: dict[str, dict[str, Any]]) -> Path:
    return write_manifests(path, "kraft", cluster, topics)


def _broker_throttles(admin: KafkaAdminClient) -> dict[str, dict[str, str]]:
    resources = [ConfigResource(ConfigResourceType.BROKER, str(b)) for b in (1, 2, 3)]
    described = admin.describe_configs(resources)["broker"]
    return {b: {k: v["value"] for k, v in c.items() if "throttled.rate" in k} for b, c in described.items()}


def _zookeeper_plan_assignment(zk: KazooClient, chroot: ZkChroot, manifest: Path) -> dict[str, list[int]]:
    """What ``kto plan`` places on a ZooKeeper-mode cluster of the same brokers (ids 1-3 in racks a/b/c)."""
    bootstrap_cluster(zk, "zk-twin")
    for broker, rack in ((1, "a"), (2, "b"), (3, "c")):
        register_broker(zk, broker, rack=rack)
    planned = _kto("plan", "-f", str(manifest), "--zookeeper", chroot.connect_string, "-o", "json")
    assert planned.returncode == 2, planned.stderr
    (topic,) = json.loads(planned.stdout)["topics"]
    (create,) = topic["actions"]
    return dict(create["assignment"])


def test_a_topic_s_whole_life_on_a_kraft_cluster(
    kraft_cluster: KRaftCluster, zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path
) -> None:
    kraft = kraft_cluster
    line = kraft.distribution.line
    name = f"orders-{uuid.uuid4().hex[:6]}"
    cluster = {
        "bootstrapServers": kraft.bootstrap_servers,
        "kafkaVersion": line,
        "allowDelete": True,
        "reassignment": {"enabled": True, "throttleBytesPerSecond": 50_000_000},
    }

    def declare(**spec: Any) -> Path:
        return _manifests(tmp_path / "topics.yaml", cluster, {name: spec})

    settings = AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    with connected(settings, deadline=30) as admin:
        # created, placed as the ZooKeeper path places it on the same brokers
        first = declare(
            partitions=6, replicas=3, config={"retention.ms": "3600000", "cleanup.policy": "delete"}
        )
        # the twin is a ZooKeeper-mode cluster, so of the last line that has one: the placement is the same
        same_on_zookeeper = _manifests(
            tmp_path / "twin.yaml",
            {**cluster, "kafkaVersion": "3.9"},
            {
                name: {
                    "partitions": 6,
                    "replicas": 3,
                    "config": {"retention.ms": "3600000", "cleanup.policy": "delete"},
                }
            },
        )
        twin = _zookeeper_plan_assignment(zk, zk_chroot, same_on_zookeeper)
        applied = _kto("apply", "-f", str(first), "--yes")
        assert applied.returncode == 0, applied.stdout + applied.stderr
        placed = settled(lambda: replica_lists(kraft.bootstrap_servers, name), lambda r: len(r) == 6)
        assert {str(p): r for p, r in placed.items()} == twin
        created = {"retention.ms": "3600000", "cleanup.policy": "delete"}
        assert settled(lambda: topic_config(kraft.bootstrap_servers, name), created.__eq__) == created

        # grown, one override changed, one added, one removed: written as SET and DELETE
        grown = declare(
            partitions=8, replicas=3, config={"retention.ms": "7200000", "max.message.bytes": "2000000"}
        )
        applied = _kto("apply", "-f", str(grown), "--yes")
        assert applied.returncode == 0, applied.stdout + applied.stderr
        placed = settled(lambda: replica_lists(kraft.bootstrap_servers, name), lambda r: len(r) == 8)
        assert sorted(placed) == list(range(8))
        assert all(len(set(replicas)) == 3 for replicas in placed.values())
        changed = {"retention.ms": "7200000", "max.message.bytes": "2000000"}
        assert settled(lambda: topic_config(kraft.bootstrap_servers, name), changed.__eq__) == changed

        # the same declaration again: nothing planned, nothing sent
        again = _kto("apply", "-f", str(grown), "--yes")
        assert again.returncode == 0, again.stderr
        assert "apply: nothing to change" in again.stdout
        assert _kto("plan", "-f", str(grown)).returncode == 0
        described = _kto(
            "describe", name, "--bootstrap-server", kraft.bootstrap_servers, "--kafka-version", line
        )
        answer = (
            f"the brokers answer as Kafka {line}, metadata.version {METADATA_VERSION[line]} (ApiVersions)"
        )
        assert f"kafka release: {answer}" in described.stderr, described.stderr

        # a snapshot through the brokers says how it was read, and plans as the live cluster does
        snapshot = tmp_path / "snapshot.jsonl"
        taken = _kto(
            "snapshot",
            "--bootstrap-server",
            kraft.bootstrap_servers,
            "--cluster",
            "kraft",
            "-o",
            str(snapshot),
        )
        assert taken.returncode == 0, taken.stderr
        header = json.loads(snapshot.read_text().splitlines()[0])
        assert (header["backend"], header["broker_release"], header["metadata_version"]) == (
            "kraft",
            line,
            METADATA_VERSION[line],
        )
        assert _kto("plan", "-f", str(grown), "--snapshot", str(snapshot)).returncode == 0

        # an export through the brokers declares the cluster as it is: planned against it, nothing changes
        exported = tmp_path / "exported"
        done = _kto(
            "export", "--bootstrap-server", kraft.bootstrap_servers, "--include", name, "-o", str(exported)
        )
        assert done.returncode == 0, done.stderr
        document = yaml.safe_load((exported / "kafkacluster-kafka.yaml").read_text())
        assert document["spec"] == {"bootstrapServers": kraft.bootstrap_servers, "kafkaVersion": line}
        replanned = _kto("plan", "-f", str(exported))
        assert replanned.returncode == 0, replanned.stdout + replanned.stderr

        # another tool sets a key the KafkaCluster leaves to it: never drift, never removed; owned, it goes
        with admin_client(kraft.bootstrap_servers) as other_tool:
            other_tool.alter_configs(
                [ConfigResource(ConfigResourceType.TOPIC, name, configs={"min.insync.replicas": "2"})]
            )
        shared = {**changed, "min.insync.replicas": "2"}
        assert settled(lambda: topic_config(kraft.bootstrap_servers, name), shared.__eq__) == shared
        leaving = _manifests(
            tmp_path / "shared.yaml",
            {**cluster, "managedTopicConfig": {"allBut": ["min.insync.replicas"]}},
            {name: {"partitions": 8, "replicas": 3, "config": changed}},
        )
        left = _kto("apply", "-f", str(leaving), "--yes")
        assert left.returncode == 0, left.stdout + left.stderr
        assert "apply: nothing to change" in left.stdout
        shown = _kto("plan", "-f", str(leaving), "--verbose")
        assert "left alone (not owned by the declarations): config.min.insync.replicas" in shown.stdout
        assert topic_config(kraft.bootstrap_servers, name) == shared
        owned = _kto("apply", "-f", str(grown), "--yes")
        assert owned.returncode == 0, owned.stdout + owned.stderr
        assert "config.min.insync.replicas: '2' -> (none)" in owned.stdout
        assert settled(lambda: topic_config(kraft.bootstrap_servers, name), changed.__eq__) == changed

        # a decrease refused in Kafka's words, and nothing written
        shrunk = declare(partitions=4, replicas=3, config={"retention.ms": "7200000"})
        refused = _kto("apply", "-f", str(shrunk), "--yes")
        assert refused.returncode == 1
        assert (
            f"The number of partitions for a topic can only be increased. Topic {name} currently has 8 "
            "partitions, 4 would not be an increase." in refused.stdout
        )
        assert len(replica_lists(kraft.bootstrap_servers, name)) == 8
        assert topic_config(kraft.bootstrap_servers, name) == {
            "retention.ms": "7200000",
            "max.message.bytes": "2000000",
        }

    single = f"single-{uuid.uuid4().hex[:6]}"
    one = _manifests(tmp_path / "single.yaml", cluster, {single: {"partitions": 2, "replicas": 1}})
    assert _kto("apply", "-f", str(one), "--yes").returncode == 0
    three = _manifests(tmp_path / "single.yaml", cluster, {single: {"partitions": 2, "replicas": 3}})
    moved = _kto("apply", "-f", str(three), "--yes", "--wait", "--wait-timeout", "120")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert "throttles removed" in moved.stderr
    with connected(settings, deadline=30) as admin:
        moved_to = settled(
            lambda: replica_lists(kraft.bootstrap_servers, single),
            lambda r: len(r) == 2 and all(len(replicas) == 3 for replicas in r.values()),
        )
        assert len(moved_to) == 2
        assert all(len(r) == 3 for r in moved_to.values())
        assert admin.list_partition_reassignments() == {}
        assert settled(lambda: topic_config(kraft.bootstrap_servers, single), {}.__eq__) == {}
        assert _broker_throttles(admin) == {"1": {}, "2": {}, "3": {}}

    # deleted, as the operator deletes a KafkaTopic whose deletionPolicy is Delete
    gone = load_manifests([str(_manifests(tmp_path / "gone.yaml", cluster, {name: {"partitions": 8, "replicas": 3,
                                                                                     "deletionPolicy": "Delete"}}))])  # fmt: skip
    assert not gone.errors
    with connected(settings, deadline=30) as admin:
        store = AdminStore(admin, settings, deadline=30)
        report = Reconciler(store, gone.clusters[0]).apply([], deleting=gone.topics)
        assert [r.outcome for r in report.results] == [TopicOutcome.APPLIED]
        eventually(lambda: name not in admin.list_topics(), timeout=30, what=f"topic {name} deleted")
