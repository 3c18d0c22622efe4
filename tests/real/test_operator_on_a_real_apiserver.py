"""The operator's scenarios against a real kube-apiserver: ``kto run`` as a process, logged in with a token of the
ServiceAccount of ``manifests/install/`` (so its RBAC is exercised), watching every namespace with peering on,
as the install's Deployment runs it. Each test works in a namespace and a ZooKeeper chroot of its own.

Asserted as a client reads them: status, conditions, observedGeneration and Events, through the API server;
and what was written, through ZooKeeper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.kto_objects import (
    KTO_API,
    events_of,
    events_once_posted,
    kafka_cluster,
    kafka_topic,
    ready,
    remove_kto_objects,
    wait_cluster_ready,
    wait_topic,
)
from harness.kube_client import KubeClient
from harness.operator_process import Operator, ready_operator
from harness.real_apiserver import AS_DEPLOYED
from harness.zookeeper import ZkChroot
from topic_operator.zookeeper.znodes import TopicConfigZNode, TopicZNode

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def operator(
    kube: KubeClient, operator_kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Operator]:
    """One operator for the module (each test's objects are in a namespace of their own), drift every 2 s."""
    with ready_operator(
        tmp_path_factory.mktemp("scenarios"), operator_kubeconfig, **AS_DEPLOYED, KTO_DRIFT_INTERVAL="2"
    ) as started:
        yield started


@pytest.fixture
def cluster(
    kube: KubeClient, namespace: str, zk_chroot: ZkChroot, kafka_zk: KazooClient, operator: Operator
) -> Callable[..., dict[str, object]]:
    """Declare KafkaCluster ``main`` of this test's namespace on its chroot; wait until it is Ready."""

    def declare(**spec: object) -> dict[str, object]:
        kube.create("kafkaclusters", kafka_cluster(namespace, "main", zk_chroot.connect_string, **spec))
        return wait_cluster_ready(kube, namespace)

    return declare


def _partitions(zk: KazooClient, topic: str) -> int:
    return len(TopicZNode.decode(topic, zk.get(TopicZNode.path(topic))[0]).partitions)


def _config(zk: KazooClient, topic: str) -> dict[str, str]:
    return TopicConfigZNode.decode(topic, zk.get(TopicConfigZNode.path(topic))[0])


def test_a_topic_is_created_grown_reconfigured_and_retained(
    kube: KubeClient, namespace: str, cluster: Callable[..., object], kafka_zk: KazooClient
) -> None:
    cluster()
    kube.create("kafkatopics", kafka_topic(namespace, "orders", config={"retention.ms": 3600000}))
    body = wait_topic(kube, namespace, "orders", 1, "Created")
    assert (body["status"]["partitions"], body["status"]["replicas"]) == (3, 3)
    assert _config(kafka_zk, "orders") == {"retention.ms": "3600000"}
    assert "finalizers" not in body["metadata"], "Retain: no finalizer"

    kube.patch(KTO_API, "kafkatopics", namespace, "orders", {"spec": {"partitions": 6}})
    body = wait_topic(kube, namespace, "orders", 2, "Updated")
    assert (_partitions(kafka_zk, "orders"), body["status"]["partitions"]) == (6, 6)

    notifications = set(kafka_zk.get_children("/config/changes"))
    kube.patch(KTO_API, "kafkatopics", namespace, "orders", {"spec": {"config": {"retention.ms": 7200000}}})
    wait_topic(kube, namespace, "orders", 3, "Updated")
    assert _config(kafka_zk, "orders") == {"retention.ms": "7200000"}
    assert len(set(kafka_zk.get_children("/config/changes")) - notifications) == 1

    assert events_once_posted(kube, namespace, "orders", 3) == [
        ("Normal", "Created"),
        ("Normal", "Updated"),
        ("Normal", "Updated"),
    ]

    kube.delete(KTO_API, "kafkatopics", namespace, "orders")
    kube.wait_for(
        lambda: not kube.list(KTO_API, "kafkatopics", namespace), timeout=10, what="KafkaTopic gone"
    )
    assert kafka_zk.exists("/brokers/topics/orders"), "Retain keeps the Kafka topic"


def test_delete_holds_a_finalizer_until_the_topic_is_marked_for_deletion(
    kube: KubeClient, namespace: str, cluster: Callable[..., object], kafka_zk: KazooClient
) -> None:
    cluster(allowDelete=True)
    kube.create("kafkatopics", kafka_topic(namespace, "scratch", deletionPolicy="Delete"))
    wait_topic(kube, namespace, "scratch", 1, "Created")
    kube.wait_for(lambda: kube.get(KTO_API, "kafkatopics", namespace, "scratch")["metadata"].get("finalizers"),
                  timeout=10, what="the finalizer of a Delete topic")  # fmt: skip
    kube.delete(KTO_API, "kafkatopics", namespace, "scratch")
    kube.wait_for(
        lambda: not kube.list(KTO_API, "kafkatopics", namespace), timeout=30, what="KafkaTopic gone"
    )
    assert kafka_zk.exists("/admin/delete_topics/scratch")


def test_plan_mode_reports_the_plan_and_writes_nothing(
    kube: KubeClient, namespace: str, cluster: Callable[..., object], kafka_zk: KazooClient
) -> None:
    cluster()
    kube.create("kafkatopics", kafka_topic(namespace, "planned", mode="Plan", partitions=4))
    body = wait_topic(kube, namespace, "planned", 1, "Planned")
    assert ready(body)["status"] == "False"
    assert [action["type"] for action in body["status"]["plan"]] == ["create"]
    assert len(body["status"]["plan"][0]["assignment"]) == 4
    assert not kafka_zk.exists("/brokers/topics/planned")


def test_a_paused_topic_is_left_alone_until_resumed(
    kube: KubeClient, namespace: str, cluster: Callable[..., object], kafka_zk: KazooClient
) -> None:
    cluster()
    kube.create("kafkatopics", kafka_topic(namespace, "held"))
    wait_topic(kube, namespace, "held", 1, "Created")
    kube.patch(
        KTO_API, "kafkatopics", namespace, "held", {"metadata": {"annotations": {"kto.dev/paused": "true"}}}
    )
    kube.wait_for(lambda: ready(kube.get(KTO_API, "kafkatopics", namespace, "held")).get("reason") == "Paused",
                  timeout=15, what="Paused")  # fmt: skip
    kube.patch(KTO_API, "kafkatopics", namespace, "held", {"spec": {"partitions": 5}})
    wait_topic(kube, namespace, "held", 2, "Paused")
    assert _partitions(kafka_zk, "held") == 3, "a paused topic is not grown"

    kube.patch(
        KTO_API, "kafkatopics", namespace, "held", {"metadata": {"annotations": {"kto.dev/paused": None}}}
    )
    wait_topic(kube, namespace, "held", 2, "Updated")
    assert _partitions(kafka_zk, "held") == 5


def test_the_older_of_two_declarations_in_two_namespaces_owns_the_topic(
    kube: KubeClient,
    namespace: str,
    cluster: Callable[..., object],
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
) -> None:
    cluster()
    other = f"{namespace}-b"
    kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
    host, chroot = zk_chroot.connect_string.split("/", 1)
    kube.create("kafkaclusters", kafka_cluster(other, "shared", f"{host},{host}/{chroot}"))  # same cluster
    wait_cluster_ready(kube, other, "shared")
    try:
        kube.create("kafkatopics", kafka_topic(namespace, "orders", partitions=3))
        wait_topic(kube, namespace, "orders", 1, "Created")
        kube.create("kafkatopics", kafka_topic(other, "orders", cluster="shared", partitions=9))
        loser = wait_topic(kube, other, "orders", 1, "Conflict")
        assert ready(loser)["status"] == "False"
        assert f"{namespace}/orders" in ready(loser)["message"]
        assert _partitions(kafka_zk, "orders") == 3
        assert events_once_posted(kube, other, "orders", 1) == [("Warning", "Conflict")]
    finally:
        remove_kto_objects(kube, other)


def test_bad_input_the_api_admits_is_invalid_in_kafkas_words_and_nothing_is_written(
    kube: KubeClient, namespace: str, cluster: Callable[..., object], kafka_zk: KazooClient
) -> None:
    cluster()
    kube.create("kafkatopics", kafka_topic(namespace, "bad", config={"retention.ms": "three days"}))
    body = wait_topic(kube, namespace, "bad", 1, "Invalid")
    message = ready(body)["message"]
    assert "retention.ms" in message
    assert "three days" in message
    assert not kafka_zk.exists("/brokers/topics/bad")
    assert ("Warning", "Invalid") in events_once_posted(kube, namespace, "bad", 1)


def test_an_out_of_band_change_is_reported_and_reverted(
    kube: KubeClient, namespace: str, cluster: Callable[..., object], kafka_zk: KazooClient
) -> None:
    cluster()
    kube.create("kafkatopics", kafka_topic(namespace, "steady", config={"retention.ms": 3600000}))
    wait_topic(kube, namespace, "steady", 1, "Created")
    data, stat = kafka_zk.get(TopicConfigZNode.path("steady"))
    kafka_zk.set(TopicConfigZNode.path("steady"), data.replace(b"3600000", b"60000"), version=stat.version)

    kube.wait_for(lambda: ("Warning", "DriftDetected") in events_of(kube, namespace, "steady"), timeout=30,
                  what="a DriftDetected Event")  # fmt: skip
    kube.wait_for(lambda: _config(kafka_zk, "steady") == {"retention.ms": "3600000"}, timeout=30,
                  what="the drifted config reverted")  # fmt: skip
    body = wait_topic(kube, namespace, "steady", 1, "Updated")
    assert not body["status"].get("drift")
