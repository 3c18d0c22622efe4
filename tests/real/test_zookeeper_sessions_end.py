"""Every way a cluster's ZooKeeper session ends, under a running ``kto run`` on the real API server: the server
down for longer than kazoo's retry policy, the session expired, the server rebuilt on a fresh data directory,
and credentials refused after a restart. Each time the operator says so (KafkaCluster Ready=False with the
reason, ``kto_cluster_connected`` 0, one log line per change of state), stays alive (``/healthz`` 200: it
recovers by itself), and serves the cluster again within 10 s of ZooKeeper answering: a change declared during
the outage lands, though kopf would retry it only 30 s later.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from harness.kafka_cluster import make_kafka_cluster
from harness.kto_objects import KTO_API, kafka_cluster, kafka_topic, ready, wait_cluster_ready, wait_topic
from harness.kube_client import KubeClient
from harness.operator_process import Operator
from harness.real_apiserver import grant_secrets
from harness.waiting import eventually
from harness.zookeeper import connected
from topic_operator.testing.local_server import LocalZooKeeper, ServerSasl
from topic_operator.zookeeper.znodes import TopicConfigZNode

pytestmark = pytest.mark.timeout(150)

CHROOT = "/kafka"
SESSION_TIMEOUT = 4
SERVED_AGAIN_WITHIN = 10.0
USERS = {"kto": "s3cret"}


def _make_kafka_layout(server: LocalZooKeeper) -> None:
    """The chroot and a registered 6-broker cluster, persistent (as brokers that register again would)."""
    with connected(server.connect_string, **_auth(server)) as root:
        root.ensure_path(CHROOT)
    with connected(server.connect_string + CHROOT, **_auth(server)) as client:
        make_kafka_cluster(client, ephemeral=False)


def _auth(server: LocalZooKeeper) -> dict[str, object]:
    sasl = getattr(server, "_sasl", None)
    if sasl is None:
        return {}
    user, password = next(iter(sasl.users.items()))
    return {"sasl_options": {"mechanism": "DIGEST-MD5", "username": user, "password": password}}


@dataclass
class Setup:
    server: LocalZooKeeper
    kube: KubeClient
    namespace: str
    operator: Operator

    @property
    def label(self) -> str:
        return f"{self.namespace}/main"

    def cluster_ready(self) -> dict[str, object]:
        return ready(self.kube.get(KTO_API, "kafkaclusters", self.namespace, "main"))

    def wait_not_served(self, reason: str) -> None:
        eventually(lambda: self.cluster_ready().get("reason") == reason, timeout=60,
                   what=f"KafkaCluster Ready=False {reason}")  # fmt: skip
        assert self.cluster_ready()["status"] == "False"
        assert self.operator.metric("kto_cluster_connected", cluster=self.label) == 0
        assert self.operator.healthz()[0] == 200, "a disconnected cluster is no reason to restart"

    def change_during_outage(self, retention: int) -> None:
        self.kube.patch(KTO_API, "kafkatopics", self.namespace, "orders",
                        {"spec": {"config": {"retention.ms": retention}}})  # fmt: skip
        body = self.kube.get(KTO_API, "kafkatopics", self.namespace, "orders")
        wait_topic(self.kube, self.namespace, "orders", body["metadata"]["generation"], "ClusterUnavailable")

    def served_again(self, since: float, retention: int) -> float:
        """Until the change declared during the outage is in ZooKeeper; seconds since ``since``."""

        def landed() -> bool:
            with connected(self.server.connect_string + CHROOT, **_auth(self.server)) as client:
                data = client.get(TopicConfigZNode.path("orders"))[0]
            return TopicConfigZNode.decode("orders", data) == {"retention.ms": str(retention)}

        eventually(
            landed, timeout=60, what="the change declared during the outage in ZooKeeper", interval=0.2
        )
        took = time.monotonic() - since
        wait_cluster_ready(self.kube, self.namespace, timeout=15)
        assert self.operator.metric("kto_cluster_connected", cluster=self.label) == 1
        assert self.operator.healthz()[0] == 200
        return took

    def state_lines(self) -> tuple[int, int]:
        """(lines saying the cluster is not served, lines saying it is served again) in the operator's log."""
        output = self.operator.output()
        down = output.count(f"KafkaCluster {self.label}: not served") + output.count(
            f"KafkaCluster {self.label}: still not served"
        )
        back = output.count(f"KafkaCluster {self.label}: ZooKeeper session back") + output.count(
            f"KafkaCluster {self.label}: a new ZooKeeper session"
        )
        return down, back


@pytest.fixture
def setup(
    request: pytest.FixtureRequest,
    kube: KubeClient,
    namespace: str,
    operators: Callable[..., Operator],
) -> Iterator[Setup]:
    """A ZooKeeper of the test's own (so it can be stopped), a KafkaCluster on it and KafkaTopic ``orders``."""
    sasl = ServerSasl(users=USERS) if getattr(request, "param", False) else None
    with LocalZooKeeper(sasl=sasl) as server:
        _make_kafka_layout(server)
        operator = operators(KTO_ZK_SESSION_TIMEOUT=str(SESSION_TIMEOUT), KTO_ZK_CONNECTION_TIMEOUT="5",
                             KTO_RETRY_DELAY="30")  # fmt: skip
        operator.wait_ready()
        cluster = kafka_cluster(namespace, "main", server.connect_string + CHROOT)
        if sasl is not None:
            secret = {
                k: base64.b64encode(v.encode()).decode()
                for k, v in (("username", "kto"), ("password", "s3cret"))
            }
            grant_secrets(kube, namespace)  # the operator reads Secrets only where a RoleBinding lets it
            kube.create("secrets", {"apiVersion": "v1", "kind": "Secret",
                                    "metadata": {"name": "zk", "namespace": namespace}, "data": secret})  # fmt: skip
            cluster["spec"]["zookeeper"]["auth"] = {"type": "SASL", "secretName": "zk"}
        kube.create("kafkaclusters", cluster)
        wait_cluster_ready(kube, namespace)
        kube.create("kafkatopics", kafka_topic(namespace, "orders", config={"retention.ms": 3600000}))
        wait_topic(kube, namespace, "orders", 1, "Created")
        yield Setup(server, kube, namespace, operator)
        assert "Traceback" not in operator.output()


def test_zookeeper_down_for_longer_than_the_retry_policy(setup: Setup) -> None:
    setup.server.kill()
    setup.wait_not_served("ClusterUnavailable")
    setup.change_during_outage(60000)
    time.sleep(3 * SESSION_TIMEOUT)  # the outage itself: past the session timeout and several tries
    setup.server.restart()
    took = setup.served_again(time.monotonic(), 60000)
    assert took < SERVED_AGAIN_WITHIN, f"served again {took:.1f} s after ZooKeeper was back"
    down, back = setup.state_lines()
    assert (1 <= down <= 2, back) == (True, 1), setup.operator.output()[-3000:]


def test_an_expired_session(setup: Setup) -> None:
    setup.server.pause()  # frozen past the session timeout: on resuming, the server expires the session
    try:
        setup.wait_not_served("ClusterUnavailable")
        setup.change_during_outage(120000)
        time.sleep(2 * SESSION_TIMEOUT)
    finally:
        setup.server.resume()
    took = setup.served_again(time.monotonic(), 120000)
    assert took < SERVED_AGAIN_WITHIN, f"served again {took:.1f} s after ZooKeeper was back"
    assert setup.state_lines()[1] == 1


def test_a_server_rebuilt_on_a_fresh_data_directory(setup: Setup) -> None:
    """It refuses every client that saw a later zxid: only a new client gets in. Its Kafka cluster is back when
    the brokers have registered again; the topic, gone with the data, is created again."""
    setup.server.kill()
    setup.wait_not_served("ClusterUnavailable")
    setup.change_during_outage(180000)
    setup.server.restart(fresh_data=True)
    setup.wait_not_served("ChrootMissing")  # a new session reached the new server, which has no Kafka yet
    _make_kafka_layout(setup.server)
    took = setup.served_again(time.monotonic(), 180000)
    assert took < SERVED_AGAIN_WITHIN, f"served again {took:.1f} s after the cluster was back"


@pytest.mark.parametrize("setup", [True], indirect=True, ids=["sasl"])
def test_credentials_refused_after_a_restart(setup: Setup) -> None:
    setup.server.kill()
    setup.server.restart(sasl=ServerSasl(users={"kto": "rotated"}))
    setup.wait_not_served("AuthFailed")
    setup.change_during_outage(240000)
    setup.server.kill()
    setup.server.restart(sasl=ServerSasl(users=USERS))
    took = setup.served_again(time.monotonic(), 240000)
    assert took < SERVED_AGAIN_WITHIN, f"served again {took:.1f} s after ZooKeeper took the credentials again"
