"""The operator keeps applying KafkaTopics through a real ZooKeeper-to-KRaft migration of Kafka 3.9.0, and through
a revert, on the real kube-apiserver.

A KafkaCluster names both the cluster's ZooKeeper and its brokers. Two brokers (racks a and b) and one KRaft
controller go through Kafka's documented procedure (``harness.real_kraft``), and at every stage KafkaTopics are
created and changed:
- ZooKeeper mode: written to ZooKeeper;
- the quorum waiting for the brokers: nothing is written, and the changes wait;
- the brokers rolled into migration mode: the controller takes over and copies the metadata (a fraction of a
  second, during which the waiting changes stay pending), then dual-writes, and the changes that waited land
  through the brokers;
- hybrid (one broker on KRaft), then dual-write with every broker on KRaft, then finalized: through the brokers.
Then ``spec.zookeeper`` is removed and ZooKeeper stopped, and every KafkaTopic is found in sync on the KRaft
cluster.

Each change is checked to land once: one Event of its kind per KafkaTopic generation, the partitions and the
overrides declared, and each created topic's replicas where the product's own placement puts them on the brokers
of its stage (Kafka's controller would choose otherwise, with its StripedReplicaPlacer).

The revert: the same cluster rolled back from dual-write (``/controller`` deleted, the brokers rolled back to
ZooKeeper mode), where ``/migration`` left behind holds every change until it is deleted, then ZooKeeper again.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from kazoo.client import KazooClient

from harness.kafka_clients import topic_config, wait_for_leaders
from harness.kto_objects import KTO_API, events_of, kafka_topic, ready, wait_topic
from harness.kube_client import KubeClient
from harness.operator_process import Operator, ready_operator
from harness.real_apiserver import AS_DEPLOYED
from harness.real_kraft import BrokerMode, KRaftController, MigratingBrokers
from harness.server_binaries import kafka_distributions
from harness.waiting import eventually
from harness.zookeeper import connected
from topic_operator.model import Broker, ClusterSpec, ClusterState, TopicSpec
from topic_operator.plan import CreateTopic, plan_topic
from topic_operator.testing.local_server import LocalZooKeeper

pytestmark = pytest.mark.timeout(600)

KAFKA_39 = next((d for d in kafka_distributions()[0] if d.version == "3.9.0"), None)
CLUSTER = "migrating"
CONTROLLER_ID = 3000
RACKS = {1: "a", 2: "b"}
KTO = str(Path(sys.executable).parent / "kto")
HANDOVER = 10.0
"""Seconds within which a change held by the migration lands once the KafkaCluster shows the stage that allows it
(the target is 5 s; the margin is for a loaded CI machine)."""
IN_A_STAGE = 30.0
"""Seconds within which a change made in a stage that allows writing lands, brokers rolling included."""


@pytest.fixture(scope="module")
def operator(operator_kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    # The default drift interval (300 s): a change that waited for a stage lands because the keeper runs a round
    # as soon as the stage moves, never because a timer came round. A short deadline, for the seconds a restarted
    # broker keeps requests waiting.
    with ready_operator(
        tmp_path_factory.mktemp("migration-operator"),
        operator_kubeconfig,
        **AS_DEPLOYED,
        KTO_RETRY_DELAY="3",
        KTO_ZK_DEADLINE="15",
        KTO_ZK_CONNECTION_TIMEOUT="10",
    ) as started:
        yield started


@dataclass
class Walk:
    """The servers of one walk and what the test saw of the KafkaCluster's stage."""

    kube: KubeClient
    namespace: str
    zookeeper: LocalZooKeeper
    brokers: MigratingBrokers
    controller: KRaftController
    stages: list[str] = field(default_factory=list)
    """Every ``status.writes.stage`` the KafkaCluster showed, in order, without repeats."""
    declared: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each KafkaTopic's spec as last declared."""

    @property
    def bootstrap(self) -> str:
        return self.brokers.bootstrap_servers

    def zk(self) -> contextlib.AbstractContextManager[KazooClient]:
        return connected(self.brokers.connect_string)

    def cluster(self) -> dict[str, Any]:
        body: dict[str, Any] = self.kube.get(KTO_API, "kafkaclusters", self.namespace, CLUSTER)
        return body

    def wait_writes(self, stage: str, through: str, timeout: float = 90) -> dict[str, Any]:
        """Until the KafkaCluster's status shows ``stage`` written ``through``; its ``status.writes`` then."""

        def shown() -> dict[str, Any] | None:
            writes: dict[str, Any] = (self.cluster().get("status") or {}).get("writes") or {}
            return writes if (writes.get("stage"), writes.get("through")) == (stage, through) else None

        found: dict[str, Any] = self.kube.wait_for(
            shown, timeout=timeout, what=f"KafkaCluster stage {stage}, writes through {through}"
        )
        return found

    def create(self, name: str, **spec: Any) -> None:
        self.declared[name] = {"partitions": 2, "replicas": 2, **spec}
        self.kube.create(
            "kafkatopics", kafka_topic(self.namespace, name, cluster=CLUSTER, **self.declared[name])
        )

    def change(self, name: str, **spec: Any) -> None:
        self.declared[name] = {**self.declared[name], **spec}
        self.kube.patch(KTO_API, "kafkatopics", self.namespace, name, {"spec": spec})

    def status(self, name: str) -> dict[str, Any]:
        body: dict[str, Any] = self.kube.get(KTO_API, "kafkatopics", self.namespace, name)
        return body

    def landed_once(self, name: str, generation: int, reason: str, *, timeout: float = 120) -> None:
        """The KafkaTopic reached ``reason`` at ``generation``, with one Event of that reason per generation
        that asked for it (a change written through two paths, or twice, would say so twice)."""
        wait_topic(self.kube, self.namespace, name, generation, reason, timeout=timeout)
        expected = 1 if reason == "Created" else generation - 1

        def said() -> list[str]:
            return [r for _, r in events_of(self.kube, self.namespace, name) if r in ("Created", "Updated")]

        # The Event is posted after the status that it accompanies: wait for it, then count.
        with contextlib.suppress(AssertionError):
            eventually(lambda: said().count(reason) >= expected, timeout=15, what=f"{name}'s {reason} Event")
        found = said()
        if found.count(reason) != expected:
            print(json.dumps(self.events(name), indent=1))
        assert found.count(reason) == expected, (name, found)

    def events(self, name: str) -> list[tuple[str, str, str, int]]:
        """Every Event about the KafkaTopic: reason, message, time and count, for a failure's message."""
        found = self.kube.list(
            "v1",
            "events",
            self.namespace,
            fieldSelector=f"involvedObject.name={name},involvedObject.kind=KafkaTopic",
        )
        return [(e["reason"], e["message"], e.get("lastTimestamp"), e.get("count")) for e in found]

    def waits(self, name: str, generation: int) -> dict[str, Any]:
        """The KafkaTopic's change is held: Ready=False, KRaftMigration, at ``generation``."""
        body = wait_topic(self.kube, self.namespace, name, generation, "KRaftMigration", timeout=60)
        return ready(body)


def planned(name: str, partitions: int, replicas: int, brokers: dict[int, str]) -> dict[int, list[int]]:
    """Where the product's own placement puts a new topic on ``brokers`` (id -> rack): what the operator plans,
    whichever path writes it."""
    state = ClusterState(
        cluster_id="any", brokers={b: Broker(b, rack) for b, rack in brokers.items()}, topics={}
    )
    spec = TopicSpec(cluster=CLUSTER, name=name, partitions=partitions, replicas=replicas)
    (create,) = plan_topic(spec, state, ClusterSpec(name=CLUSTER, zookeeper_connect="")).actions
    assert isinstance(create, CreateTopic)
    return {p: list(r) for p, r in sorted(create.assignment.items())}


def served_replicas(walk: Walk, name: str, partitions: int) -> dict[int, list[int]]:
    """Each partition's replicas once the brokers serve all ``partitions`` with leaders: a broker's metadata
    may lag what the controller committed (a controller just restarted, a broker just back)."""
    served = wait_for_leaders(walk.bootstrap, name, partitions)
    return {p: list(info.replicas) for p, info in sorted(served.items())}


def served_config(walk: Walk, name: str, wanted: dict[str, str], timeout: float = 30) -> dict[str, str]:
    """The topic's overrides as the brokers describe them, read until they are ``wanted`` (a broker applies the
    controller's records at its own pace) or ``timeout`` passes: the last read either way."""
    deadline = time.monotonic() + timeout
    while (found := topic_config(walk.bootstrap, name)) != wanted and time.monotonic() < deadline:
        time.sleep(0.3)
    return found


def zookeeper_replicas(zk: KazooClient, name: str) -> dict[int, list[int]]:
    data = json.loads(zk.get(f"/brokers/topics/{name}")[0])
    return {int(p): r for p, r in sorted(data["partitions"].items(), key=lambda i: int(i[0]))}


def zookeeper_overrides(zk: KazooClient, name: str) -> dict[str, str]:
    if zk.exists(f"/config/topics/{name}") is None:
        return {}
    config: dict[str, str] = json.loads(zk.get(f"/config/topics/{name}")[0])["config"]
    return config


def in_sync_on_the_brokers(walk: Walk) -> None:
    """Every declared topic as the brokers hold it: partitions, replication factor and overrides."""
    for name, spec in walk.declared.items():
        replicas = served_replicas(walk, name, spec["partitions"])
        assert len(replicas) == spec["partitions"], (name, replicas)
        assert {len(r) for r in replicas.values()} == {spec["replicas"]}, (name, replicas)
        wanted = {k: str(v) for k, v in (spec.get("config") or {}).items()}
        assert served_config(walk, name, wanted) == wanted, name


@contextlib.contextmanager
def stage_recorder(walk: Walk) -> Iterator[None]:
    """Poll the KafkaCluster's ``status.writes.stage`` (every 0.1 s) into ``walk.stages`` while the block runs."""
    done = threading.Event()

    def record() -> None:
        while not done.wait(0.1):
            with contextlib.suppress(Exception):
                stage = ((walk.cluster().get("status") or {}).get("writes") or {}).get("stage")
                if stage is not None and (not walk.stages or walk.stages[-1] != stage):
                    walk.stages.append(stage)

    thread = threading.Thread(target=record, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(5)


@pytest.fixture
def walk(kube: KubeClient, namespace: str, tmp_path: Path) -> Iterator[Walk]:
    """A ZooKeeper of its own (a walk ends by stopping it), two ZooKeeper-mode brokers on it, and a KRaft
    controller not started yet; every server stopped by PID at the end, whatever happened."""
    if KAFKA_39 is None:
        found = ", ".join(d.version for d in kafka_distributions()[0])
        pytest.skip(f"Kafka 3.9.0 not found ({f'only {found}' if found else kafka_distributions()[1]})")
    chroot = f"/migration-{uuid.uuid4().hex[:6]}"
    with LocalZooKeeper() as zookeeper:
        brokers = MigratingBrokers(
            KAFKA_39, zookeeper.connect_string, chroot, tmp_path / "brokers", racks=tuple(RACKS.values())
        )
        controller = KRaftController(
            KAFKA_39, zookeeper.connect_string, chroot, tmp_path / "controller", CONTROLLER_ID
        )
        brokers.controller = controller
        try:
            with connected(zookeeper.connect_string) as admin:
                admin.ensure_path(chroot)
            brokers.start()
            walk = Walk(kube, namespace, zookeeper, brokers, controller)
            with walk.zk() as zk:
                kube.wait_for(lambda: zk.exists("/controller"), timeout=60, what="a ZooKeeper controller")
            yield walk
        except BaseException:
            print(brokers.logs(lines=40))
            print(controller.logs(lines=60))
            raise
        finally:
            brokers.stop()
            controller.stop()


def declare_cluster(walk: Walk) -> None:
    walk.kube.create(
        "kafkaclusters",
        {
            "apiVersion": KTO_API,
            "kind": "KafkaCluster",
            "metadata": {"namespace": walk.namespace, "name": CLUSTER},
            "spec": {
                "zookeeper": {"connect": walk.brokers.connect_string},
                "bootstrapServers": walk.bootstrap,
                "kafkaVersion": "3.9",
            },
        },
    )


def start_the_quorum(walk: Walk) -> None:
    """Kafka's step 1: the controller formatted with ZooKeeper's cluster id, started with the migration on."""
    with walk.zk() as zk:
        cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    walk.controller.format(cluster_id)
    walk.controller.start()


def kto_manifest(walk: Walk, path: Path, topic: str) -> Path:
    """A KafkaCluster naming both ZooKeeper and the brokers, and one topic for ``kto`` (not a KafkaTopic of the
    operator's: the file is only read by kto)."""
    documents = [
        {
            "apiVersion": KTO_API,
            "kind": "KafkaCluster",
            "metadata": {"name": CLUSTER},
            "spec": {
                "zookeeper": {"connect": walk.brokers.connect_string},
                "bootstrapServers": walk.bootstrap,
                "kafkaVersion": "3.9",
            },
        },
        {
            "apiVersion": KTO_API,
            "kind": "KafkaTopic",
            "metadata": {"name": topic},
            "spec": {"cluster": CLUSTER, "partitions": 2, "replicas": 2},
        },
    ]
    path.write_text(yaml.safe_dump_all(documents))
    return path


def kto(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KTO, *argv], capture_output=True, text=True, timeout=120, check=False)


def roll(walk: Walk, mode: BrokerMode) -> None:
    for broker in RACKS:
        walk.brokers.restart_broker(broker, mode)


def wait_until(check: Callable[[], bool], what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        time.sleep(0.2)


def test_the_operator_writes_through_every_stage_of_a_migration(
    walk: Walk, operator: Operator, tmp_path: Path
) -> None:
    with stage_recorder(walk):
        # ZooKeeper mode: written to ZooKeeper, as before.
        declare_cluster(walk)
        writes = walk.wait_writes("ZooKeeper", "ZooKeeper")
        assert "the brokers take over once a KRaft controller owns the metadata" in writes["reason"]
        walk.create("before", config={"retention.ms": 3600000})
        walk.landed_once("before", 1, "Created")
        with walk.zk() as zk:
            assert zookeeper_replicas(zk, "before") == planned("before", 2, 2, RACKS)
            assert zookeeper_overrides(zk, "before") == {"retention.ms": "3600000"}

        # The quorum waits for the brokers: nothing is written, the changes wait.
        start_the_quorum(walk)
        writes = walk.wait_writes("QuorumWaiting", "None")
        assert "changes wait and are retried" in writes["reason"]
        cluster_ready = ready(walk.cluster())
        assert (cluster_ready["status"], cluster_ready["reason"]) == ("False", "KRaftMigration")
        walk.create("waited")
        walk.change("before", config={"retention.ms": 7200000})
        held = walk.waits("waited", 1)
        assert "Stage QuorumWaiting" in held["message"]
        walk.waits("before", 2)
        with walk.zk() as zk:
            assert zk.exists("/brokers/topics/waited") is None
            assert zookeeper_overrides(zk, "before") == {"retention.ms": "3600000"}
        # kto, given both, chooses the same way: it plans, says why nothing can be written, and writes nothing.
        manifest = kto_manifest(walk, tmp_path / "by-kto.yaml", "by-kto")
        planned_now = kto("plan", "-f", str(manifest), "-o", "json")
        assert planned_now.returncode == 1, planned_now.stderr
        assert json.loads(planned_now.stdout)["writes"]["through"] == "None"
        assert "stage QuorumWaiting, writes through None" in planned_now.stderr
        refused = kto("apply", "-f", str(manifest), "--yes")
        assert refused.returncode == 1, refused.stdout + refused.stderr
        with walk.zk() as zk:
            assert zk.exists("/brokers/topics/by-kto") is None

        # The brokers rolled into migration mode: the controller takes over, copies, and dual-writes. What
        # waited lands through the brokers, once.
        roll(walk, BrokerMode.MIGRATION)
        walk.wait_writes("DualWrite", "AdminProtocol")
        allowed = time.monotonic()
        walk.landed_once("waited", 1, "Created", timeout=HANDOVER)
        walk.landed_once("before", 2, "Updated", timeout=HANDOVER)
        print(f"held changes landed {time.monotonic() - allowed:.1f} s after the stage showed DualWrite")
        assert served_replicas(walk, "waited", 2) == planned("waited", 2, 2, RACKS)
        assert served_config(walk, "before", {"retention.ms": "7200000"}) == {"retention.ms": "7200000"}
        with walk.zk() as zk:  # dual-written by the KRaft controller
            wait_until(lambda: zk.exists("/brokers/topics/waited") is not None, "waited in ZooKeeper")
            wait_until(
                lambda: zookeeper_overrides(zk, "before") == {"retention.ms": "7200000"},
                "the change dual-written to ZooKeeper",
            )

        # Hybrid: broker 1 on KRaft, broker 2 still in ZooKeeper.
        walk.brokers.restart_broker(1, BrokerMode.KRAFT)
        walk.create("hybrid", partitions=3, config={"cleanup.policy": "compact"})
        walk.change("waited", partitions=3)
        walk.landed_once("hybrid", 1, "Created", timeout=IN_A_STAGE)
        walk.landed_once("waited", 2, "Updated", timeout=IN_A_STAGE)
        assert served_replicas(walk, "hybrid", 3) == planned("hybrid", 3, 2, RACKS)
        assert walk.cluster()["status"]["writes"]["stage"] == "DualWrite"

        # Dual-write with every broker on KRaft: none registers in ZooKeeper.
        walk.brokers.restart_broker(2, BrokerMode.KRAFT)
        writes = walk.wait_writes("BrokersOnKRaft", "AdminProtocol")
        assert "spec.zookeeper may be removed" in writes["reason"]
        walk.create("all-kraft", replicas=1)
        walk.change("hybrid", config={"cleanup.policy": "compact", "retention.ms": 600000})
        walk.landed_once("all-kraft", 1, "Created", timeout=IN_A_STAGE)
        walk.landed_once("hybrid", 2, "Updated", timeout=IN_A_STAGE)
        assert served_replicas(walk, "all-kraft", 2) == planned("all-kraft", 2, 1, RACKS)
        # kto now writes through the brokers, placing as the product places.
        applied = kto("apply", "-f", str(kto_manifest(walk, manifest, "by-kto")), "--yes")
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert "stage BrokersOnKRaft, writes through AdminProtocol" in applied.stderr
        assert served_replicas(walk, "by-kto", 2) == planned("by-kto", 2, 2, RACKS)

        # Finalized: the controller restarted without the migration. ZooKeeper cannot tell it from the last
        # stage; the brokers still write.
        walk.controller.stop()
        walk.controller.migration = False
        walk.controller.start()
        walk.create("finalized")
        walk.change("all-kraft", partitions=4)
        walk.landed_once("finalized", 1, "Created", timeout=IN_A_STAGE)
        walk.landed_once("all-kraft", 2, "Updated", timeout=IN_A_STAGE)
        assert served_replicas(walk, "finalized", 2) == planned("finalized", 2, 2, RACKS)

        # spec.zookeeper removed, and ZooKeeper stopped: the cluster is KRaft, and the whole declaration in sync.
        walk.kube.patch(KTO_API, "kafkaclusters", walk.namespace, CLUSTER, {"spec": {"zookeeper": None}})
        walk.wait_writes("KRaft", "AdminProtocol")
        walk.zookeeper.stop()
        walk.change("finalized", config={"retention.ms": 900000})
        walk.landed_once("finalized", 2, "Updated", timeout=IN_A_STAGE)
    in_sync_on_the_brokers(walk)
    for name in walk.declared:
        status = walk.status(name)["status"]
        assert ready(walk.status(name))["status"] == "True", (name, status)
        assert not status.get("driftCount"), (name, status)
    order = ["ZooKeeper", "QuorumWaiting", "DualWrite", "BrokersOnKRaft", "KRaft"]
    seen = [stage for stage in walk.stages if stage in order]
    assert seen == order, walk.stages
    events = events_of(walk.kube, walk.namespace, CLUSTER, kind="KafkaCluster")
    assert ("Normal", "WriterChanged") in events
    print(f"stages seen: {walk.stages}")


def test_a_revert_holds_changes_until_migration_is_deleted(walk: Walk, operator: Operator) -> None:
    declare_cluster(walk)
    walk.wait_writes("ZooKeeper", "ZooKeeper")
    walk.create("kept", config={"retention.ms": 3600000})
    walk.landed_once("kept", 1, "Created")

    start_the_quorum(walk)
    walk.wait_writes("QuorumWaiting", "None")
    roll(walk, BrokerMode.MIGRATION)
    walk.wait_writes("DualWrite", "AdminProtocol")
    walk.create("dual")
    walk.landed_once("dual", 1, "Created")
    assert served_replicas(walk, "dual", 2) == planned("dual", 2, 2, RACKS)

    # The brokers gone while a KRaft controller owns the metadata: Ready=False with the reason, and nothing is
    # written through ZooKeeper instead; back, the change that waited lands through them.
    for broker in RACKS:
        walk.brokers.stop_broker(broker)
    walk.create("unreachable")

    def not_ready() -> dict[str, Any] | None:
        condition = ready(walk.cluster())
        return condition if condition.get("status") == "False" else None

    down = walk.kube.wait_for(not_ready, timeout=90, what="the KafkaCluster Ready=False")
    assert down["reason"] == "ClusterUnavailable", down
    wait_topic(walk.kube, walk.namespace, "unreachable", 1, "ClusterUnavailable", timeout=90)
    with walk.zk() as zk:
        assert zk.exists("/brokers/topics/unreachable") is None
    for broker in RACKS:
        walk.brokers.start_broker(broker)
    walk.landed_once("unreachable", 1, "Created")
    walk.declared.pop("unreachable")

    # Kafka's revert: the quorum deprovisioned, /controller deleted, a ZooKeeper controller again, the brokers
    # rolled back to plain ZooKeeper mode. /migration stays: changes wait for it to go.
    walk.controller.stop()
    with walk.zk() as zk:
        zk.delete("/controller")
        wait_until(
            lambda: (
                zk.exists("/controller") is not None
                and json.loads(zk.get("/controller")[0])["kraftControllerEpoch"] == -1
            ),
            "a ZooKeeper controller again",
        )
        epoch = int(zk.get("/controller_epoch")[0])
        controller = json.loads(zk.get("/controller")[0])["brokerid"]
    for broker in RACKS:
        wait_until(
            lambda b=broker: walk.brokers.knows_zookeeper_controller(b, controller, epoch),  # type: ignore[misc]
            f"broker {broker} taking metadata from ZooKeeper controller epoch {epoch}",
        )
    roll(walk, BrokerMode.ZOOKEEPER)
    writes = walk.wait_writes("Reverted", "None")
    assert "delete /migration" in writes["reason"]
    walk.change("kept", config={"retention.ms": 7200000})
    walk.create("after")
    walk.waits("kept", 2)
    walk.waits("after", 1)
    with walk.zk() as zk:
        assert zk.exists("/brokers/topics/after") is None
        assert zookeeper_overrides(zk, "kept") == {"retention.ms": "3600000"}

        # Kafka's last revert step, by hand: ZooKeeper is written again.
        zk.delete("/migration")
    walk.wait_writes("ZooKeeper", "ZooKeeper")
    walk.landed_once("kept", 2, "Updated", timeout=HANDOVER)
    walk.landed_once("after", 1, "Created", timeout=HANDOVER)
    with walk.zk() as zk:
        assert zookeeper_overrides(zk, "kept") == {"retention.ms": "7200000"}
        assert zookeeper_replicas(zk, "after") == planned("after", 2, 2, RACKS)
        assert zookeeper_replicas(zk, "dual") == planned("dual", 2, 2, RACKS)
    events = events_of(walk.kube, walk.namespace, CLUSTER, kind="KafkaCluster")
    assert events.count(("Normal", "WriterChanged")) >= 3, events
