"""The operator on a real kube-apiserver managing a cluster that was always KRaft: ``kto run`` as a process, logged
in as the install's ServiceAccount, and a KafkaCluster with only ``bootstrapServers`` (Kafka 3.9: a controller and
three brokers in racks a/b/c).

The same scenario as the ZooKeeper path's, asserted as a user sees it (status, conditions, Events through the API
server) and as the brokers hold it (Admin protocol): created with the placement the ZooKeeper path gives the same
brokers, grown, overrides set and removed, a decrease refused at apply time, RF 1 -> 3 by a reassignment, and
deleted; and a KafkaCluster whose brokers cannot be reached is Ready=False with the reason, not a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka.admin import ConfigResource, ConfigResourceType
from kazoo.client import KazooClient

from harness.broker_policies import ALTER_REFUSAL, CREATE_REFUSAL, runs_policies
from harness.kafka_clients import admin_client, replica_lists, settled, topic_config
from harness.kraft_cluster import KRaftCluster
from harness.kto_objects import KTO_API, events_of, kafka_topic, ready, wait_cluster_ready, wait_topic
from harness.kube_client import KubeApiError, KubeClient
from harness.operator_process import Operator, ready_operator
from harness.real_apiserver import AS_DEPLOYED
from harness.waiting import eventually
from harness.zookeeper import ZkChroot
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import connected
from topic_operator.testing.simulated_brokers import bootstrap_cluster, register_broker

pytestmark = pytest.mark.timeout(240)

KTO = str(Path(sys.executable).parent / "kto")


@pytest.fixture(scope="module")
def operator(
    kube: KubeClient, operator_kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Operator]:
    # brokers killed make each request wait out the deadline (as a lost ZooKeeper does): a short one here
    with ready_operator(
        tmp_path_factory.mktemp("kraft-operator"),
        operator_kubeconfig,
        **AS_DEPLOYED,
        KTO_DRIFT_INTERVAL="2",
        KTO_ZK_DEADLINE="10",
        KTO_ZK_CONNECTION_TIMEOUT="5",
    ) as started:
        yield started


def _kraft_cluster(namespace: str, servers: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": KTO_API,
        "kind": "KafkaCluster",
        "metadata": {"namespace": namespace, "name": "main"},
        "spec": {"bootstrapServers": servers, "kafkaVersion": "3.9", **spec},
    }


def _zookeeper_placement(
    zk: KazooClient, chroot: ZkChroot, tmp_path: Path, topic: dict[str, Any]
) -> dict[int, list[int]]:
    """What the ZooKeeper path places for the same declaration on the same brokers (ids 1-3 in racks a/b/c)."""
    bootstrap_cluster(zk, "zk-twin")
    for broker, rack in ((1, "a"), (2, "b"), (3, "c")):
        register_broker(zk, broker, rack=rack)
    manifest = tmp_path / "twin.yaml"
    document = {**topic, "metadata": {"name": topic["metadata"]["name"]}}
    manifest.write_text(yaml.safe_dump(document))
    planned = subprocess.run(
        [KTO, "plan", "-f", str(manifest), "--zookeeper", chroot.connect_string, "--kafka-version", "3.9", "-o", "json"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert planned.returncode == 2, planned.stderr
    (create,) = json.loads(planned.stdout)["topics"][0]["actions"]
    return {int(p): r for p, r in create["assignment"].items()}


def test_the_operator_manages_a_kraft_cluster(
    kube: KubeClient,
    namespace: str,
    kraft: KRaftCluster,
    operator: Operator,
    zk: KazooClient,
    zk_chroot: ZkChroot,
    tmp_path: Path,
) -> None:
    kube.create(
        "kafkaclusters",
        _kraft_cluster(
            namespace,
            kraft.bootstrap_servers,
            allowDelete=True,
            reassignment={"enabled": True, "throttleBytesPerSecond": 50_000_000},
        ),
    )
    cluster = wait_cluster_ready(kube, namespace)
    assert ready(cluster)["reason"] == "Connected"
    assert (
        f"Connected to {kraft.bootstrap_servers}: cluster {kraft.cluster_id}, 3 brokers"
        in ready(cluster)["message"]
    )

    name = f"orders-{uuid.uuid4().hex[:6]}"
    declared = kafka_topic(
        namespace,
        name,
        partitions=6,
        replicas=3,
        config={"retention.ms": 3600000, "cleanup.policy": "delete"},
    )
    twin = _zookeeper_placement(zk, zk_chroot, tmp_path, declared)
    kube.create("kafkatopics", declared)
    body = wait_topic(kube, namespace, name, 1, "Created")
    settings = AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    with connected(settings, deadline=30) as admin:
        assert settled(lambda: replica_lists(kraft.bootstrap_servers, name), twin.__eq__) == twin
        created = {"retention.ms": "3600000", "cleanup.policy": "delete"}
        assert settled(lambda: topic_config(kraft.bootstrap_servers, name), created.__eq__) == created
        (metadata,) = admin.describe_topics([name])
        assert body["status"]["topicId"]  # the same id the ZooKeeper path keeps: Kafka's base64 form
        assert body["status"]["topicId"] != str(metadata["topic_id"])
        assert (body["status"]["partitions"], body["status"]["replicas"]) == (6, 3)

        kube.patch(KTO_API, "kafkatopics", namespace, name, {"spec": {"partitions": 8}})
        wait_topic(kube, namespace, name, 2, "Updated")
        assert len(settled(lambda: replica_lists(kraft.bootstrap_servers, name), lambda r: len(r) == 8)) == 8

        kube.patch(
            KTO_API,
            "kafkatopics",
            namespace,
            name,
            {
                "spec": {
                    "config": {"retention.ms": 7200000, "cleanup.policy": None, "max.message.bytes": 2000000}
                }
            },
        )
        wait_topic(kube, namespace, name, 3, "Updated")
        changed = {"retention.ms": "7200000", "max.message.bytes": "2000000"}
        assert settled(lambda: topic_config(kraft.bootstrap_servers, name), changed.__eq__) == changed

        with pytest.raises(KubeApiError, match="can only be increased"):
            kube.patch(KTO_API, "kafkatopics", namespace, name, {"spec": {"partitions": 4}})
        assert len(replica_lists(kraft.bootstrap_servers, name)) == 8
        expected = [("Normal", "Created"), ("Normal", "Updated"), ("Normal", "Updated")]
        kube.wait_for(
            lambda: events_of(kube, namespace, name) == expected, timeout=10, what="one Event a change"
        )

        single = f"single-{uuid.uuid4().hex[:6]}"
        kube.create("kafkatopics", kafka_topic(namespace, single, partitions=2, replicas=1))
        wait_topic(kube, namespace, single, 1, "Created")
        kube.patch(KTO_API, "kafkatopics", namespace, single, {"spec": {"replicas": 3}})
        eventually(
            lambda: all(len(r) == 3 for r in replica_lists(kraft.bootstrap_servers, single).values()),
            timeout=60,
            what="the reassignment to 3 replicas",
        )
        moved = wait_topic(kube, namespace, single, 2, "Updated", timeout=60)
        assert moved["status"]["replicas"] == 3

        scratch = f"scratch-{uuid.uuid4().hex[:6]}"
        kube.create("kafkatopics", kafka_topic(namespace, scratch, deletionPolicy="Delete"))
        wait_topic(kube, namespace, scratch, 1, "Created")
        kube.delete(KTO_API, "kafkatopics", namespace, scratch)
        eventually(lambda: scratch not in admin.list_topics(), timeout=30, what=f"topic {scratch} deleted")


def test_unreachable_brokers_are_ready_false_with_the_reason(
    kube: KubeClient, namespace: str, operator: Operator
) -> None:
    kube.create("kafkaclusters", _kraft_cluster(namespace, "127.0.0.1:1"))
    cluster = wait_cluster_ready(kube, namespace, status="False", timeout=60)
    assert ready(cluster)["reason"] == "ClusterUnavailable"
    assert "no broker of 127.0.0.1:1 answered within" in ready(cluster)["message"]

    kube.create("kafkatopics", kafka_topic(namespace, "waiting"))
    body = kube.wait_for(
        lambda: (
            (b := kube.get(KTO_API, "kafkatopics", namespace, "waiting")) and ready(b).get("reason") and b
        ),
        timeout=30,
        what="the KafkaTopic's Ready condition",
    )
    assert ready(body)["status"] == "False"
    assert ready(body)["reason"] == "ClusterUnavailable"


def test_a_topic_deleted_behind_the_operator_s_back_is_created_again_with_its_new_id(
    kube: KubeClient, namespace: str, kraft: KRaftCluster, operator: Operator
) -> None:
    kube.create("kafkaclusters", _kraft_cluster(namespace, kraft.bootstrap_servers))
    wait_cluster_ready(kube, namespace)
    name = f"gone-{uuid.uuid4().hex[:6]}"
    kube.create("kafkatopics", kafka_topic(namespace, name, partitions=2, replicas=2))
    first = wait_topic(kube, namespace, name, 1, "Created")["status"]["topicId"]
    settings = AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    with connected(settings, deadline=30) as admin:
        admin.delete_topics([name])
        eventually(lambda: name not in admin.list_topics(), timeout=30, what=f"topic {name} deleted")

    def recreated() -> str | None:  # the drift round (every 2 s here) creates it again
        status = kube.get(KTO_API, "kafkatopics", namespace, name).get("status") or {}
        return status.get("topicId") if status.get("topicId") not in (None, first) else None

    second = eventually(
        recreated, timeout=60, what=f"topic {name} created again, with a new id in its status"
    )
    assert len(settled(lambda: replica_lists(kraft.bootstrap_servers, name), lambda r: len(r) == 2)) == 2
    assert second != first


def test_an_unmanaged_topic_is_listed_then_adopted(
    kube: KubeClient, namespace: str, kraft: KRaftCluster, operator: Operator
) -> None:
    legacy = f"legacy-{uuid.uuid4().hex[:6]}"
    settings = AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    with connected(settings, deadline=30) as admin:  # made by another tool, before any KafkaTopic
        others = {"min.insync.replicas": "1", "segment.ms": "3600000", "max.message.bytes": "100000"}
        admin.create_topics(
            {
                legacy: {
                    "num_partitions": 2,
                    "replication_factor": 2,
                    "configs": {"retention.ms": "60000", **others},
                }
            }
        )
        eventually(lambda: legacy in admin.list_topics(), timeout=30, what=f"topic {legacy} created")
    # the cluster leaves min.insync.replicas to another tool, the KafkaTopic segment.ms; max.message.bytes is owned
    managed = {"managedTopicConfig": {"allBut": ["min.insync.replicas"]}}
    kube.create("kafkaclusters", _kraft_cluster(namespace, kraft.bootstrap_servers, **managed))
    cluster = wait_cluster_ready(kube, namespace)
    assert legacy in cluster["status"]["unmanagedTopics"]

    declared = {"config": {"retention.ms": 120000}, "unmanagedConfig": ["segment.ms"]}
    kube.create("kafkatopics", kafka_topic(namespace, legacy, partitions=2, replicas=2, **declared))
    adopted = wait_topic(kube, namespace, legacy, 1, "Adopted")
    assert (ready(adopted)["status"], adopted["status"]["partitions"]) == ("True", 2)
    assert "config.retention.ms: 60000 -> 120000" in ready(adopted)["message"]
    kube.wait_for(  # posted once the status has landed
        lambda: events_of(kube, namespace, legacy) == [("Normal", "Adopted")],
        timeout=10,
        what="the Adopted Event",
    )
    adopted_config = {"retention.ms": "120000", "min.insync.replicas": "1", "segment.ms": "3600000"}
    assert (
        settled(lambda: topic_config(kraft.bootstrap_servers, legacy), adopted_config.__eq__)
        == adopted_config
    )

    # another writer changes both keys left alone: through three drift checks, nothing reverted or reported
    with admin_client(kraft.bootstrap_servers) as other_tool:
        other_tool.alter_configs(
            [
                ConfigResource(
                    ConfigResourceType.TOPIC,
                    legacy,
                    configs={"min.insync.replicas": "2", "segment.ms": "7200000"},
                )
            ]
        )
    changed = {**adopted_config, "min.insync.replicas": "2", "segment.ms": "7200000"}
    assert settled(lambda: topic_config(kraft.bootstrap_servers, legacy), changed.__eq__) == changed
    label = f"{namespace}/main"
    checks = operator.metric("kto_drift_check_duration_seconds_count", cluster=label) or 0.0
    eventually(
        lambda: (operator.metric("kto_drift_check_duration_seconds_count", cluster=label) or 0) >= checks + 3,
        timeout=60,
        what="three drift checks after the other writer's change",
    )
    assert topic_config(kraft.bootstrap_servers, legacy) == changed
    assert ("Warning", "DriftDetected") not in events_of(kube, namespace, legacy)
    assert not kube.get(KTO_API, "kafkatopics", namespace, legacy)["status"].get("drift")


def test_brokers_that_go_away_are_reconnected_and_what_waited_then_lands(
    kube: KubeClient, namespace: str, kraft: KRaftCluster, operator: Operator
) -> None:
    """Last in the module: it stops the session's KRaft brokers (and starts them again)."""
    kube.create("kafkaclusters", _kraft_cluster(namespace, kraft.bootstrap_servers))
    wait_cluster_ready(kube, namespace)
    for broker in kraft.brokers:
        kraft.kill_broker(broker.id)
    try:
        down = wait_cluster_ready(kube, namespace, status="False", timeout=60)
        assert ready(down)["reason"] == "ClusterUnavailable"
        name = f"late-{uuid.uuid4().hex[:6]}"
        kube.create("kafkatopics", kafka_topic(namespace, name, partitions=3, replicas=3))
        waiting = kube.wait_for(
            lambda: ready(b := kube.get(KTO_API, "kafkatopics", namespace, name)).get("reason") and b,
            timeout=60,
            what="the KafkaTopic's Ready condition while the brokers are away",
        )
        assert (ready(waiting)["status"], ready(waiting)["reason"]) == ("False", "ClusterUnavailable")
    finally:
        for broker in kraft.brokers:
            kraft.start_broker(broker.id)
    back = wait_cluster_ready(kube, namespace, timeout=90)
    assert ready(back)["reason"] == "Connected"
    wait_topic(kube, namespace, name, 1, "Created", timeout=90)
    assert len(settled(lambda: replica_lists(kraft.bootstrap_servers, name), lambda r: len(r) == 3)) == 3


def test_on_kafka_4_1_the_release_is_the_brokers_own(
    kube: KubeClient, namespace: str, kraft_41: KRaftCluster, operator: Operator
) -> None:
    """A KafkaCluster of Kafka 4.1 declaring only ``bootstrapServers``, as a new user writes it: the status says
    the brokers' release, and KafkaTopics are judged by it, not by the default line: a key that came in 3.8 is
    written, and one that 4.0 removed is refused as the broker refuses it, with nothing written. A topic another
    tool made is listed as unmanaged, then adopted."""
    legacy = f"legacy-{uuid.uuid4().hex[:6]}"
    settings = AdminSettings(bootstrap_servers=tuple(kraft_41.bootstrap_servers.split(",")))
    with connected(settings, deadline=30) as admin:
        admin.create_topics(
            {legacy: {"num_partitions": 2, "replication_factor": 2, "configs": {"retention.ms": "60000"}}}
        )
        eventually(lambda: legacy in admin.list_topics(), timeout=30, what=f"topic {legacy} created")
    kube.create(
        "kafkaclusters",
        {
            "apiVersion": KTO_API,
            "kind": "KafkaCluster",
            "metadata": {"namespace": namespace, "name": "main"},
            "spec": {"bootstrapServers": kraft_41.bootstrap_servers},
        },
    )
    cluster = wait_cluster_ready(kube, namespace)
    release = cluster["status"]["kafkaRelease"]
    assert (release["seen"], release["writtenAs"], "declared" in release) == ("4.1", "4.1", False), release
    assert "DescribeFeatures: metadata.version 4.1-IV1 is finalized" in release["clues"]
    assert legacy in cluster["status"]["unmanagedTopics"]
    kube.create(
        "kafkatopics",
        kafka_topic(namespace, legacy, partitions=2, replicas=2, config={"retention.ms": 120000}),
    )
    adopted = wait_topic(kube, namespace, legacy, 1, "Adopted")
    assert "config.retention.ms: 60000 -> 120000" in ready(adopted)["message"]
    adopted_config = {"retention.ms": "120000"}
    assert (
        settled(lambda: topic_config(kraft_41.bootstrap_servers, legacy), adopted_config.__eq__)
        == adopted_config
    )

    gzip = f"gzip-{uuid.uuid4().hex[:6]}"
    config = {"compression.type": "gzip", "compression.gzip.level": 5}
    kube.create("kafkatopics", kafka_topic(namespace, gzip, partitions=3, replicas=3, config=config))
    wait_topic(kube, namespace, gzip, 1, "Created")
    written = {"compression.type": "gzip", "compression.gzip.level": "5"}
    assert settled(lambda: topic_config(kraft_41.bootstrap_servers, gzip), written.__eq__) == written

    removed = f"old-format-{uuid.uuid4().hex[:6]}"
    kube.create("kafkatopics", kafka_topic(namespace, removed, config={"message.format.version": "3.0"}))
    refused = wait_topic(kube, namespace, removed, 1, "Invalid")
    assert "Unknown topic config name: message.format.version" in ready(refused)["message"]
    with connected(settings, deadline=30) as admin:
        assert removed not in admin.list_topics()


def test_the_brokers_own_policy_refusal_reaches_the_kafkatopic_in_their_words(
    kube: KubeClient, namespace: str, kraft_41: KRaftCluster, operator: Operator
) -> None:
    """The 4.1 cluster runs a create-topic and an alter-config policy the session compiled
    (``harness.broker_policies``): each refusal reaches the KafkaTopic's status, in the policy's words."""
    if not runs_policies(kraft_41):
        pytest.skip("broker-side policies: javac (a JDK) is not installed to compile them")
    servers = kraft_41.bootstrap_servers
    kube.create("kafkaclusters", {"apiVersion": KTO_API, "kind": "KafkaCluster",
                                  "metadata": {"namespace": namespace, "name": "main"},
                                  "spec": {"bootstrapServers": servers}})  # fmt: skip
    wait_cluster_ready(kube, namespace)

    debug = f"debug-{uuid.uuid4().hex[:6]}"
    kube.create("kafkatopics", kafka_topic(namespace, debug))
    refused = wait_topic(kube, namespace, debug, 1, "PolicyViolation")
    assert f"{CREATE_REFUSAL}{debug}" in ready(refused)["message"]

    kept = f"kept-{uuid.uuid4().hex[:6]}"
    kube.create("kafkatopics", kafka_topic(namespace, kept, config={"retention.ms": 3600000}))
    wait_topic(kube, namespace, kept, 1, "Created")
    kube.patch(KTO_API, "kafkatopics", namespace, kept, {"spec": {"config": {"retention.ms": -1}}})
    refused = wait_topic(kube, namespace, kept, 2, "PolicyViolation")
    assert f"{ALTER_REFUSAL}{kept}" in ready(refused)["message"]

    settings = AdminSettings(bootstrap_servers=tuple(servers.split(",")))
    with connected(settings, deadline=30) as admin:
        assert debug not in admin.list_topics()
    assert topic_config(servers, kept) == {"retention.ms": "3600000"}
