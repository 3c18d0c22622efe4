"""A restart of ``kto run`` over 10,000 settled KafkaTopics on the real API server: ready (``/readyz``) within 60 s,
and not one write about a KafkaTopic (kopf resumes every object, and the first drift check plans them all).

The topics are written to ZooKeeper by the engine, and the KafkaTopics get the status the operator would
have written for them (its own status builder, and kopf's record of the handled spec, built by the operator's
persistence settings), as after a first run. Creating them through the API takes most of the test's time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.kto_objects import kafka_cluster, kafka_topic, wait_cluster_ready
from harness.kube_client import KubeClient
from harness.operator_process import Operator
from harness.real_apiserver import RealApiServer, installed_apiserver, operator_kubeconfig_of
from harness.settled_topics import create_settled, operator_idle
from harness.waiting import eventually
from harness.zookeeper import ZkChroot
from topic_operator.manifests.loader import load_objects
from topic_operator.reconcile import Reconciler
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore

pytestmark = pytest.mark.timeout(420)


# An API server of this module's own: 10,000 objects are thrown away with it (a deletecollection of them took
# 76 s of CI's time), and no other test's operator, watching every namespace, meets them.


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealApiServer]:
    with installed_apiserver(tmp_path_factory.mktemp("apiserver-10000")) as server:
        yield server


@pytest.fixture(scope="module")
def kube(apiserver: RealApiServer) -> KubeClient:
    return apiserver.client()


@pytest.fixture(scope="module")
def operator_kubeconfig(apiserver: RealApiServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return operator_kubeconfig_of(apiserver, tmp_path_factory.mktemp("operator-10000") / "kubeconfig")


@pytest.fixture
def namespace(kube: KubeClient) -> str:
    kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "restart"}})
    return "restart"


TOPICS = 10_000
READY_WITHIN = 60.0
ACCOUNT = "system:serviceaccount:kafka-topic-operator:kafka-topic-operator"


def _writes(apiserver: RealApiServer, since: int) -> dict[str, int]:
    """The operator's writes after audit event ``since``, by resource (leader Lease renewals apart)."""
    found: dict[str, int] = {}
    for event in apiserver.audit_events(ACCOUNT)[since:]:
        ref = event.get("objectRef") or {}
        resource = ref.get("resource", "?") + (f"/{ref['subresource']}" if ref.get("subresource") else "")
        if event["verb"] in ("create", "update", "patch", "delete") and resource != "leases":
            found[resource] = found.get(resource, 0) + 1
    return found


def test_a_restart_over_10000_settled_kafkatopics_is_ready_within_60_s_and_writes_nothing_about_them(
    apiserver: RealApiServer,
    kube: KubeClient,
    namespace: str,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
) -> None:
    cluster = kafka_cluster(namespace, "main", zk_chroot.connect_string)
    bodies = [kafka_topic(namespace, f"topic-{i:05d}", partitions=3, config={"retention.ms": 3600000})
              for i in range(TOPICS)]  # fmt: skip
    manifests = load_objects([cluster, *bodies], origin="test")
    assert not manifests.errors
    report = Reconciler(ZooKeeperStore(kafka_zk), manifests.clusters[0]).apply(manifests.topics)
    assert report.interrupted is None
    states = read_cluster(kafka_zk).topics
    assert len(states) == TOPICS
    kube.create("kafkaclusters", cluster)
    asyncio.run(create_settled(apiserver, namespace, bodies, states))
    audited = len(apiserver.audit_events(ACCOUNT))

    started = time.monotonic()
    operator = operators(KTO_DRIFT_INTERVAL="3600", KTO_BATCH_LINGER="0.5", KTO_CLUSTER_WAIT="10")
    operator.wait_ready(timeout=READY_WITHIN * 3)
    ready_after = time.monotonic() - started
    assert ready_after < READY_WITHIN, f"ready {ready_after:.1f} s after the start"
    wait_cluster_ready(kube, namespace, timeout=60)
    # The first drift check, at start, plans all 10,000 against ZooKeeper; kopf resumes every object meanwhile.
    eventually(lambda: (operator.metric("kto_drift_check_duration_seconds_count", cluster=f"{namespace}/main")
                        or 0) >= 1, timeout=120, what="the first drift check")  # fmt: skip
    eventually(lambda: operator_idle(operator), timeout=180, what="the operator idle", interval=0.5)
    writes = _writes(apiserver, audited)
    # Not one about a KafkaTopic. The KafkaCluster's new session is announced: at most its status (its
    # connection's message) and one Connected Event (the audit log cannot tell whose Event it is: at most one).
    assert {k: v for k, v in writes.items() if k.startswith("kafkatopics")} == {}, writes
    assert writes.get("events", 0) <= 1, writes
    assert writes.get("kafkaclusters/status", 0) <= 1, writes
    assert operator.stop() == 0
