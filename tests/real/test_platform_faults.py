"""The platform's faults around a running operator, with the real API server and a real ZooKeeper: an API server
restart in the middle of a burst of creates, and the operator SIGKILLed in the middle of a batch of config
changes. Either way every change lands, and nothing is written twice."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from kazoo.client import KazooClient

from harness.kto_objects import KTO_API, events_of, kafka_cluster, kafka_topic, ready, wait_cluster_ready
from harness.kube_client import KubeApiError, KubeClient
from harness.operator_process import Operator
from harness.real_apiserver import RealApiServer
from harness.waiting import eventually
from harness.zookeeper import ZkChroot
from topic_operator.zookeeper.znodes import TopicConfigZNode

pytestmark = pytest.mark.timeout(240)


def _persistently(call: Callable[[], Any], *, conflict_is_done: bool) -> None:
    """A client's call through an API server outage: refused connections are retried; a create whose answer
    was lost comes back as 409 AlreadyExists, which means it was done."""

    def attempt() -> bool:
        try:
            call()
        except KubeApiError as error:
            if error.status == 409 and conflict_is_done:
                return True
            if error.status in (429, 500, 503, 504):
                return False
            raise
        return True

    eventually(attempt, timeout=120, what="the API server to take the request", interval=0.2,
               expected=(OSError,))  # fmt: skip


class _NotYet:
    """A falsy answer that says, when a wait times out, what was still missing."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return self.text


def _all_settled(
    kube: KubeClient, namespace: str, count: int, generation: int, reasons: Iterable[str]
) -> bool | _NotYet:
    wanted = set(reasons)
    bodies = kube.list(KTO_API, "kafkatopics", namespace)
    pending = {
        b["metadata"]["name"]: ((b.get("status") or {}).get("observedGeneration"), ready(b).get("reason"))
        for b in bodies
        if (b.get("status") or {}).get("observedGeneration") != generation
        or ready(b).get("reason") not in wanted
    }
    if len(bodies) == count and not pending:
        return True
    shown = ", ".join(
        f"{name} (generation {seen}, {reason})" for name, (seen, reason) in sorted(pending.items())[:5]
    )
    return _NotYet(f"{len(bodies)} of {count} listed, {len(pending)} not settled: {shown}")


def test_an_api_server_restart_in_a_burst_of_creates_loses_nothing_and_writes_nothing_twice(
    apiserver: RealApiServer,
    kube: KubeClient,
    namespace: str,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
) -> None:
    operator = operators()
    operator.wait_ready()
    kube.create("kafkaclusters", kafka_cluster(namespace, "main", zk_chroot.connect_string))
    wait_cluster_ready(kube, namespace)

    names = [f"burst-{i:03d}" for i in range(300)]
    created = threading.Semaphore(0)

    def create(name: str) -> None:
        _persistently(lambda: kube.create("kafkatopics", kafka_topic(namespace, name, partitions=2)),
                      conflict_is_done=True)  # fmt: skip
        created.release()

    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(create, name) for name in names]
        for _ in range(100):  # a third of them in, then the API server goes away for a while
            assert created.acquire(timeout=60)
        apiserver.stop_apiserver()
        kafka_zk.sync("/")
        threading.Event().wait(8)  # the outage itself: how long the server is down is the scenario
        apiserver.start_apiserver()
        for future in futures:
            future.result()

    kube.wait_for(lambda: _all_settled(kube, namespace, 300, 1, {"Created"}), timeout=120,
                  what="all 300 KafkaTopics Created")  # fmt: skip
    assert sorted(kafka_zk.get_children("/brokers/topics")) == names
    # Written once each: neither znode of any topic was ever rewritten.
    rewritten = [n for n in names if kafka_zk.exists(f"/brokers/topics/{n}").version
                 or kafka_zk.exists(f"/config/topics/{n}").version]  # fmt: skip
    assert rewritten == []
    # Said at most once each. (Events are best effort in Kubernetes: those queued when a replica stands down are
    # dropped with it, while the status written by the next attempt still says Created.)
    twice = [n for n in names if [r for _, r in events_of(kube, namespace, n)].count("Created") > 1]
    assert twice == [], "a Created Event posted twice"
    assert operator.process.poll() is None, "the operator lived through the restart"
    assert "Traceback" not in operator.output()


def test_the_operator_killed_in_a_batch_of_config_changes_lands_each_change_once(
    kube: KubeClient,
    namespace: str,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    operators: Callable[..., Operator],
) -> None:
    first = operators()
    first.wait_ready()
    kube.create("kafkaclusters", kafka_cluster(namespace, "main", zk_chroot.connect_string))
    wait_cluster_ready(kube, namespace)
    names = [f"conf-{i:03d}" for i in range(200)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: kube.create("kafkatopics", kafka_topic(
            namespace, n, partitions=1, config={"retention.ms": 3600000})), names))  # fmt: skip
    kube.wait_for(lambda: _all_settled(kube, namespace, 200, 1, {"Created"}), timeout=90,
                  what="all 200 KafkaTopics Created")  # fmt: skip
    before = set(kafka_zk.get_children("/config/changes"))

    def changed() -> int:
        return len(set(kafka_zk.get_children("/config/changes")) - before)

    patch = {"spec": {"config": {"retention.ms": 7200000}}}
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(kube.patch, KTO_API, "kafkatopics", namespace, n, patch) for n in names]
        eventually(lambda: changed() > 0, timeout=60, what="the first config change written", interval=0.02)
        first.kill()  # in the middle of the batches: some changes written, their statuses not
        for future in futures:
            future.result()
    landed_before_restart = changed()
    second = operators()
    second.wait_ready()
    kube.wait_for(lambda: _all_settled(kube, namespace, 200, 2, {"Updated", "InSync"}), timeout=120,
                  what="all 200 KafkaTopics settled at generation 2")  # fmt: skip
    for name in names:
        config = TopicConfigZNode.decode(name, kafka_zk.get(TopicConfigZNode.path(name))[0])
        assert config == {"retention.ms": "7200000"}, name
    assert 0 < landed_before_restart < 200, (
        f"the kill was not mid-batch ({landed_before_restart} of 200 written)"
    )
    assert changed() == 200, "one change notification per topic: nothing written twice"
    assert second.stop() == 0
