"""Two replicas of ``kto run`` on the real API server, as the install's ServiceAccount, electing the working one
through the leader Lease: the standby acts within 15 s of the active one's death, at once on a clean handover,
and the two never write at the same time, even when the active one loses the API server but not ZooKeeper.
"""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.kto_objects import events_of, kafka_cluster, kafka_topic, wait_cluster_ready, wait_topic
from harness.kube_client import KubeClient
from harness.operator_process import Operator
from harness.real_apiserver import RealApiServer
from harness.tcp_proxy import TcpProxy
from harness.waiting import eventually
from harness.zookeeper import ZkChroot

pytestmark = pytest.mark.timeout(150)

TAKE_OVER_WITHIN = 15.0
TOOK = "took the leader lease"


def _ready_body(operator: Operator) -> str:
    return operator.readyz()[1]


def _leading(operator: Operator) -> bool:
    return TOOK in operator.output()


def _log_time(operator: Operator, needle: str) -> datetime.datetime:
    """When the operator logged ``needle`` first (its plain log lines start with ``[date time,ms]``)."""
    for line in operator.output().splitlines():
        if needle in line:
            stamp = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]", line)
            assert stamp, line
            return datetime.datetime.strptime(f"{stamp[1]}.{stamp[2]}", "%Y-%m-%d %H:%M:%S.%f")
    raise AssertionError(f"{needle!r} not in the log:\n{operator.output()[-3000:]}")


def _two_replicas(
    operators: Callable[..., Operator],
    kube: KubeClient,
    namespace: str,
    zk_chroot: ZkChroot,
    **first_env: str,
) -> tuple[Operator, Operator]:
    active = operators(**first_env)
    active.wait_ready()
    eventually(lambda: _leading(active), timeout=30, what="the first replica taking the Lease")
    standby = operators()
    standby.wait_ready()  # a standby is ready: a rolling update must not wait for it to lead
    assert "standby" in _ready_body(standby)
    kube.create("kafkaclusters", kafka_cluster(namespace, "main", zk_chroot.connect_string))
    wait_cluster_ready(kube, namespace)
    kube.create("kafkatopics", kafka_topic(namespace, "before"))
    wait_topic(kube, namespace, "before", 1, "Created")
    # The Event is posted after the status, from a queue of its own: a replica killed in between never posts it.
    # The tests then check that the other replica did nothing about "before" a second time, so the first's
    # work is whole before either replica is stopped.
    eventually(
        lambda: [r for _, r in events_of(kube, namespace, "before")] == ["Created"],
        timeout=30,
        what="the first replica's Created Event for 'before'",
    )
    assert not _leading(standby)
    return active, standby


def test_the_standby_acts_within_15_s_of_the_active_replicas_death(
    kube: KubeClient,
    namespace: str,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
) -> None:
    active, _standby = _two_replicas(operators, kube, namespace, zk_chroot)
    active.kill()  # SIGKILL: no release, the Lease must expire
    killed = time.monotonic()
    kube.create("kafkatopics", kafka_topic(namespace, "after"))
    wait_topic(kube, namespace, "after", 1, "Created", timeout=60)
    took = time.monotonic() - killed
    assert took < TAKE_OVER_WITHIN, (
        f"the standby made the first new KafkaTopic Ready {took:.1f} s after the kill"
    )
    assert sorted(kafka_zk.get_children("/brokers/topics")) == ["after", "before"]
    assert [r for _, r in events_of(kube, namespace, "before")] == ["Created"], "nothing done twice"


def test_a_clean_stop_hands_over_at_once(
    kube: KubeClient,
    namespace: str,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
) -> None:
    active, standby = _two_replicas(operators, kube, namespace, zk_chroot)
    assert active.stop() == 0  # SIGTERM, as a rolling update or a node drain
    stopped = time.monotonic()
    eventually(lambda: _leading(standby), timeout=30, what="the standby taking the released Lease")
    assert time.monotonic() - stopped < 2 * 2.0 + 1, "a released Lease is taken at the standby's next look"
    assert "released the leader lease" in active.output()
    kube.create("kafkatopics", kafka_topic(namespace, "after"))
    wait_topic(kube, namespace, "after", 1, "Created")


def test_a_replica_cut_off_from_the_api_server_stops_writing_before_the_standby_starts(
    apiserver: RealApiServer,
    kube: KubeClient,
    namespace: str,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
    operator_kubeconfig: Path,
    tmp_path: Path,
) -> None:
    """Its ZooKeeper stays reachable: only the Lease tells it to stop. It stops writing once it has not renewed
    for the renew deadline, which is before the Lease can expire for the standby, and waits as a standby itself,
    in the same process: once the API server answers again it follows the new holder, and does not take over."""
    with TcpProxy(apiserver.port) as proxy:
        token = operator_kubeconfig.read_text()
        cut_off_config = tmp_path / "through-proxy"
        cut_off_config.write_text(token.replace(f"127.0.0.1:{apiserver.port}", f"127.0.0.1:{proxy.port}"))
        active = operators(kubeconfig=cut_off_config)
        active.wait_ready()
        eventually(lambda: _leading(active), timeout=30, what="the replica behind the proxy taking the Lease")
        standby = operators()
        standby.wait_ready()
        kube.create("kafkaclusters", kafka_cluster(namespace, "main", zk_chroot.connect_string))
        wait_cluster_ready(kube, namespace)
        proxy.cut()
        eventually(
            lambda: "waiting for the Lease again as a standby" in active.output(),
            timeout=30,
            what="the cut-off replica standing down",
        )
        eventually(lambda: _leading(standby), timeout=30, what="the standby taking the expired Lease")
        assert _log_time(active, "lost the leader lease") < _log_time(standby, TOOK), "they overlapped"
        proxy.restore()
        eventually(
            lambda: "standby" in _ready_body(active) and "is held by" in _ready_body(active),
            timeout=30,
            what="the replica that stood down following the new holder",
        )
        assert active.process.poll() is None, "it waits as a standby, it does not exit"
        kube.create("kafkatopics", kafka_topic(namespace, "after"))
        wait_topic(kube, namespace, "after", 1, "Created")
        assert active.output().count(TOOK) == 1, "the replica that stood down did not take the Lease back"
    assert "Traceback" not in active.output()
