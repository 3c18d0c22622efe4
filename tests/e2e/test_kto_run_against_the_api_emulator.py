"""``kto run`` as shipped: a real subprocess that logs in through a generated kubeconfig to kmock (kopf's own API
emulator, with the API server's bookkeeping: ``harness.kube_api``) and reconciles a real ZooKeeper.

It covers what the handler tests cannot: the login, the watches of both kinds, kopf's settings as ``kto run``
builds them, readiness, statuses and Events arriving at the API, finalizers, and a clean exit on SIGTERM. What only
a real API server shows (admission with CEL, RBAC, its own timing) is checked outside CI.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from harness.kube_api import ApiServer, Served, crd_resources
from harness.kube_client import KubeClient, write_kubeconfig
from harness.operator_process import Operator, start_operator
from harness.zookeeper import ZkChroot
from topic_operator.zookeeper.znodes import TopicConfigZNode, TopicZNode

ROOT = Path(__file__).resolve().parents[2]
API = "kto.dev/v1alpha1"
NS = "team-a"
TOKEN = "kto-e2e-token"
KINDS = crd_resources(*sorted((ROOT / "crds").glob("*.yaml")))

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def _start(tmp_path: Path, kubeconfig: Path | None, **env: str) -> Operator:
    return start_operator(tmp_path, kubeconfig, "--namespace", NS, **env)


@pytest.fixture
def served() -> Iterator[Served]:
    with ApiServer.run(kinds=KINDS, token=TOKEN) as served:
        yield served


@pytest.fixture
def kube(served: Served) -> KubeClient:
    return KubeClient(served.url, TOKEN)


@pytest.fixture
def operator(tmp_path: Path, served: Served) -> Iterator[Operator]:
    operator = _start(tmp_path, write_kubeconfig(tmp_path / "kubeconfig", served.url, TOKEN))
    try:
        yield operator
    finally:
        if operator.process.poll() is None:
            operator.process.kill()
            operator.process.wait(10)


def _ready(body: dict[str, Any]) -> dict[str, Any]:
    return next((c for c in (body.get("status") or {}).get("conditions", []) if c["type"] == "Ready"), {})


def _topic(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "KafkaTopic",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"cluster": "main", "partitions": 3, "replicas": 3, **spec},
    }


def _wait_topic(
    kube: KubeClient, name: str, generation: int, reason: str, timeout: float = 30
) -> dict[str, Any]:
    def settled() -> dict[str, Any] | None:
        body: dict[str, Any] = kube.get(API, "kafkatopics", NS, name)
        status = body.get("status") or {}
        done = status.get("observedGeneration") == generation and _ready(body).get("reason") == reason
        return body if done else None

    result: dict[str, Any] = kube.wait_for(
        settled, timeout=timeout, what=f"KafkaTopic {name} {reason} at {generation}"
    )
    return result


def test_kto_run_logs_in_watches_both_kinds_and_reconciles(
    tmp_path: Path,
    served: Served,
    kube: KubeClient,
    operator: Operator,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
) -> None:
    kube.wait_for(lambda: operator.readyz()[0] == 200, timeout=30, what="/readyz to answer 200")
    assert operator.process.poll() is None

    kube.create("kafkaclusters", {
        "apiVersion": API, "kind": "KafkaCluster", "metadata": {"name": "main", "namespace": NS},
        "spec": {"zookeeper": {"connect": zk_chroot.connect_string}, "allowDelete": True},
    })  # fmt: skip
    kube.wait_for(
        lambda: _ready(kube.get(API, "kafkaclusters", NS, "main")).get("status") == "True",
        timeout=30,
        what="KafkaCluster main Ready",
    )

    # Created, with its config, in Kafka's format.
    kube.create("kafkatopics", _topic("orders", config={"retention.ms": 3600000}))
    body = _wait_topic(kube, "orders", 1, "Created")
    assert body["status"]["partitions"] == 3
    assert sorted(TopicZNode.decode("orders", kafka_zk.get(TopicZNode.path("orders"))[0]).partitions) == [
        0,
        1,
        2,
    ]
    assert TopicConfigZNode.decode("orders", kafka_zk.get(TopicConfigZNode.path("orders"))[0]) == {
        "retention.ms": "3600000"
    }
    assert "finalizers" not in body["metadata"], "Retain topics get no finalizer"

    # Grown; then re-configured, with one change notification.
    notifications = set(kafka_zk.get_children("/config/changes"))
    kube.patch(API, "kafkatopics", NS, "orders", {"spec": {"partitions": 6}})
    body = _wait_topic(kube, "orders", 2, "Updated")
    assert sorted(TopicZNode.decode("orders", kafka_zk.get(TopicZNode.path("orders"))[0]).partitions) == list(
        range(6)
    )
    assert body["status"]["partitions"] == 6
    kube.patch(API, "kafkatopics", NS, "orders", {"spec": {"config": {"retention.ms": 7200000}}})
    _wait_topic(kube, "orders", 3, "Updated")
    assert TopicConfigZNode.decode("orders", kafka_zk.get(TopicConfigZNode.path("orders"))[0]) == {
        "retention.ms": "7200000"
    }
    assert len(set(kafka_zk.get_children("/config/changes")) - notifications) == 1

    # Events reached the API, about the KafkaTopic.
    events = [e for e in kube.list("v1", "events", NS) if e["involvedObject"].get("name") == "orders"]
    assert {"Created", "Updated"} <= {e["reason"] for e in events}

    # Retain: deleting the KafkaTopic leaves the Kafka topic.
    kube.delete(API, "kafkatopics", NS, "orders")
    kube.wait_for(lambda: served.call(lambda: served.api.get("kafkatopics", NS, "orders")) is None, timeout=10,
                  what="KafkaTopic orders gone")  # fmt: skip
    assert kafka_zk.exists(TopicZNode.path("orders"))

    # Delete: a finalizer holds the KafkaTopic until the Kafka topic is marked for deletion.
    kube.create("kafkatopics", _topic("scratch", deletionPolicy="Delete"))
    body = _wait_topic(kube, "scratch", 1, "Created")
    kube.wait_for(
        lambda: kube.get(API, "kafkatopics", NS, "scratch")["metadata"].get("finalizers"),
        timeout=10,
        what="the finalizer of a Delete topic",
    )
    kube.delete(API, "kafkatopics", NS, "scratch")
    kube.wait_for(lambda: served.call(lambda: served.api.get("kafkatopics", NS, "scratch")) is None, timeout=30,
                  what="KafkaTopic scratch gone")  # fmt: skip
    assert kafka_zk.exists("/admin/delete_topics/scratch")

    assert operator.stop() == 0
    output = operator.output()
    assert "Traceback" not in output, output[-3000:]


@pytest.mark.parametrize("election", ["true", "false"], ids=["leader-election", "single"])
def test_a_token_the_api_refuses_ends_the_process_with_one_line_and_never_ready(
    tmp_path: Path, served: Served, election: str
) -> None:
    """With leader election the refusal comes from reading the Lease, without it from kopf's own login."""
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", served.url, "not-the-token")
    operator = _start(tmp_path, kubeconfig, KTO_LEADER_ELECTION=election)
    try:
        deadline = time.monotonic() + 60
        seen_ready = False
        while operator.process.poll() is None and time.monotonic() < deadline:
            seen_ready = seen_ready or operator.readyz()[0] == 200
            time.sleep(0.2)
        assert operator.process.poll() == 1, operator.output()[-3000:]
    finally:
        operator.stop()
    output = operator.output()
    assert not seen_ready
    assert "Traceback" not in output, output[-3000:]
    assert output.strip().splitlines()[-1].startswith("kto run: "), output[-3000:]


def test_no_credentials_anywhere_is_one_line(tmp_path: Path) -> None:
    operator = _start(tmp_path, None)
    try:
        assert operator.process.wait(60) == 1
    finally:
        operator.stop()
    output = operator.output()
    assert "Traceback" not in output, output[-3000:]
    assert output.strip().splitlines()[-1].startswith("kto run: cannot log in to the Kubernetes API"), output


@pytest.mark.parametrize("endpoint", ["KTO_HEALTH_PORT", "KTO_METRICS_PORT"])
def test_a_port_already_taken_ends_the_process_with_one_line(
    tmp_path: Path, served: Served, endpoint: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", served.url, TOKEN)
        operator = _start(tmp_path, kubeconfig, KTO_LISTEN_HOST="127.0.0.1", **{endpoint: str(port)})
        try:
            assert operator.process.wait(60) == 1, operator.output()[-3000:]
        finally:
            operator.stop()
    output = operator.output()
    assert "Traceback" not in output, output[-3000:]
    last = output.strip().splitlines()[-1]
    assert last.startswith(f"kto run: cannot listen on 127.0.0.1:{port} for "), output[-3000:]
    assert "Address already in use" in last
