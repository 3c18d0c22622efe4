"""What each KafkaTopic costs the operator in memory, measured on the real API server at two sizes.

``kto run`` is started over 1,000 settled KafkaTopics, then over 4,000, as a restart finds them (kopf lists them
all, the operator keeps each one's claim, its validation and the watched ZooKeeper view of its topic). At each
size its resident memory is read once it is ready, has run its first drift check over every topic, and has gone
idle. The growth between the two sizes, per KafkaTopic, is held to ``PER_KAFKATOPIC``: the figure the memory
target at 50,000 KafkaTopics rests on (``bench/operator_events.py --topics 50000`` measures that one). A fixed
cost (imports, kopf, the HTTP clients) is the same at both sizes, so it cancels out.
"""

from __future__ import annotations

import asyncio
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

SIZES = (1_000, 4_000)
PER_KAFKATOPIC = 10 * 1024
"""Bytes of resident memory each KafkaTopic may add (with its topic: 4 partitions, RF 3, 2 configs). Measured:
6.8 KB (7.9-8.5 KB while a missing znode kept a restart's whole read alive until a full collection, 2.5 KB more
before a claim kept its body as JSON text, and 1 KB more when kopf kept a memory of every KafkaTopic); the bound
leaves room for a shared machine's noise, and catches the larger of these coming back."""


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealApiServer]:
    with installed_apiserver(tmp_path_factory.mktemp("apiserver-memory")) as server:
        yield server


@pytest.fixture(scope="module")
def kube(apiserver: RealApiServer) -> KubeClient:
    return apiserver.client()


@pytest.fixture(scope="module")
def operator_kubeconfig(apiserver: RealApiServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return operator_kubeconfig_of(apiserver, tmp_path_factory.mktemp("operator-memory") / "kubeconfig")


def _resident_bytes(operator: Operator) -> tuple[int, int]:
    """(VmRSS, VmHWM) of the operator's process, in bytes."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{operator.process.pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def _settled_over(operators: Callable[..., Operator], cluster: str) -> tuple[int, int]:
    """Start ``kto run`` over what exists, wait until it has checked every topic once and is idle, read its
    memory, and stop it."""
    operator = operators(KTO_DRIFT_INTERVAL="3600", KTO_BATCH_LINGER="0.5", KTO_CLUSTER_WAIT="10")
    operator.wait_ready(timeout=180)
    eventually(lambda: (operator.metric("kto_drift_check_duration_seconds_count", cluster=cluster) or 0) >= 1,
               timeout=180, what="the first drift check")  # fmt: skip
    eventually(lambda: operator_idle(operator), timeout=180, what="the operator idle", interval=0.5)
    sizes = _resident_bytes(operator)
    assert operator.stop() == 0
    return sizes


def test_each_kafkatopic_adds_at_most_its_stated_share_of_memory(
    apiserver: RealApiServer,
    kube: KubeClient,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
) -> None:
    namespace = "memory"
    kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    cluster = kafka_cluster(namespace, "main", zk_chroot.connect_string)
    kube.create("kafkaclusters", cluster)
    measured: dict[int, tuple[int, int]] = {}
    made = 0
    for size in SIZES:
        bodies = [
            kafka_topic(namespace, f"topic-{i:05d}", partitions=4,
                        config={"retention.ms": 3600000, "min.insync.replicas": 1})
            for i in range(made, size)
        ]  # fmt: skip
        manifests = load_objects([cluster, *bodies], origin="test")
        assert not manifests.errors
        assert (
            Reconciler(ZooKeeperStore(kafka_zk), manifests.clusters[0]).apply(manifests.topics).interrupted
            is None
        )
        states = read_cluster(kafka_zk).topics
        asyncio.run(create_settled(apiserver, namespace, bodies, states))
        made = size
        measured[size] = _settled_over(operators, f"{namespace}/main")
        wait_cluster_ready(kube, namespace, timeout=60)
    (small, (rss_small, peak_small)), (large, (rss_large, peak_large)) = sorted(measured.items())
    per_topic = (rss_large - rss_small) / (large - small)
    figures = (
        f"resident {rss_small / 2**20:.0f} MB at {small} KafkaTopics and {rss_large / 2**20:.0f} MB at {large}"
        f" (peaks {peak_small / 2**20:.0f} and {peak_large / 2**20:.0f} MB): {per_topic / 1024:.1f} KB each"
    )
    print(figures)
    assert per_topic <= PER_KAFKATOPIC, figures
