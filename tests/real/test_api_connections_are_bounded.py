"""A burst of KafkaTopics on the real API server: the operator's connections to it stay within
``KTO_API_CONNECTIONS`` (plus its own small clients: the status and Secret client, the leader Lease's), they are
reused rather than opened per request, and priority and fairness never answers it 429."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.kto_objects import KTO_API, kafka_cluster, kafka_topic, ready, wait_cluster_ready
from harness.kube_client import KubeClient
from harness.operator_process import Operator
from harness.real_apiserver import RealApiServer
from harness.zookeeper import ZkChroot

pytestmark = pytest.mark.timeout(180)

LIMIT = 6
OWN_CLIENTS = 4
"""lightkube's client for statuses and Secrets, and the leader Lease's thread: a connection or two each."""


def _connections(pid: int, port: int) -> int:
    """The process's established TCP connections to 127.0.0.1:``port`` (its socket inodes in /proc/net/tcp)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink()
        except OSError:
            continue
        if str(target).startswith("socket:["):
            inodes.add(str(target)[8:-1])
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote, state, inode = fields[2], fields[3], fields[9]
        if state == "01" and inode in inodes and int(remote.split(":")[1], 16) == port:
            count += 1
    return count


def test_a_burst_stays_within_the_connection_bound_and_meets_no_429(
    apiserver: RealApiServer,
    kube: KubeClient,
    namespace: str,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
) -> None:
    operator = operators(KTO_API_CONNECTIONS=str(LIMIT), KTO_BATCH_LINGER="0.5")
    operator.wait_ready()
    kube.create("kafkaclusters", kafka_cluster(namespace, "main", zk_chroot.connect_string))
    wait_cluster_ready(kube, namespace)
    audited_before = len(
        apiserver.audit_events("system:serviceaccount:kafka-topic-operator:kafka-topic-operator")
    )

    most = 0
    done = threading.Event()

    def watch_connections() -> None:
        nonlocal most
        while not done.wait(0.02):
            most = max(most, _connections(operator.process.pid, apiserver.port))

    watcher = threading.Thread(target=watch_connections)
    watcher.start()
    try:
        names = [f"burst-{i:03d}" for i in range(300)]
        with ThreadPoolExecutor(16) as pool:
            list(
                pool.map(lambda n: kube.create("kafkatopics", kafka_topic(namespace, n, partitions=1)), names)
            )

        def all_ready() -> bool:
            bodies = kube.list(KTO_API, "kafkatopics", namespace)
            return len(bodies) == 300 and all(ready(b).get("reason") == "Created" for b in bodies)

        kube.wait_for(all_ready, timeout=120, what="300 KafkaTopics Created")
    finally:
        done.set()
        watcher.join(5)
    assert 0 < most <= LIMIT + OWN_CLIENTS, f"{most} connections to the API server at once"
    events = apiserver.audit_events("system:serviceaccount:kafka-topic-operator:kafka-topic-operator")
    throttled = [e for e in events[audited_before:] if e.get("responseStatus", {}).get("code") == 429]
    assert throttled == [], f"{len(throttled)} requests answered 429"
    assert operator.stop() == 0
