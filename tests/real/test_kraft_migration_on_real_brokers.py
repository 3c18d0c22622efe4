"""A ZooKeeper-to-KRaft migration of a real Kafka 3.9.0 cluster, stage by stage, and what kto says and does at each.

``tests/zookeeper/test_kraft_migration_stages.py`` writes the znodes by hand, as Kafka's sources say they are
written; here Kafka writes them. One ZooKeeper-mode broker (inter-broker protocol 3.9) and one KRaft controller
go through Kafka's documented procedure (``harness.real_kraft``): plain ZooKeeper mode, the controller quorum
waiting for the brokers (and deprovisioned again, Kafka's revert of that step), the brokers restarted for the
migration (the controller takes ``/controller`` and copies the metadata, then dual-writes), the brokers on KRaft,
and Kafka's revert from there (the brokers rolled back, ``/controller`` deleted, ``/migration`` left behind until
deleted by hand). At each stage the znodes are recorded and ``kto plan -o json``, ``kto plan`` and ``kto apply
--yes`` are run on a manifest that changes an existing topic's config and creates a topic.

The migration runs once for the module (40-50 s on two cores); each test asserts one stage of the record.
Two claims of the project were wrong here and are fixed: a create refused for another reason (no broker
registers once they run on KRaft) is refused for the migration first; and the quorum's stage names Kafka's revert
of it (the quorum deprovisioned, ``/migration`` left behind), which ZooKeeper cannot tell apart.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from kazoo.client import KazooClient
from kazoo.protocol.states import ZnodeStat

from harness.kraft_cluster import KRaftCluster
from harness.real_kraft import BrokerMode, KRaftController, MigratingBrokers
from harness.server_binaries import kafka_distributions
from harness.waiting import eventually
from harness.zookeeper import connected
from topic_operator.cli.main import main as kto_main
from topic_operator.drift.command import main as drift_main
from topic_operator.kafka.kraft_migration import MigrationFacts, MigrationStage, migration_stage
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.zookeeper.znodes import ControllerZNode, MigrationZNode

pytestmark = pytest.mark.timeout(300)

KAFKA_39 = next((d for d in kafka_distributions()[0] if d.version == "3.9.0"), None)
CONTROLLER_ID = 3000
BROKER_ID = 1
EXISTING, CREATED = "existing", "created"
"""A topic kto creates before the migration, then changes (its config); one it is asked to create during it."""

WATCHED = ("/migration", "/controller", "/controller_epoch")
GUARDED = ("/brokers/topics", "/config/topics", "/config/changes", "/admin/delete_topics")
"""What a kto write would touch: compared, children and data, before and after every ``kto apply``."""


@dataclass
class Run:
    """One kto command: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        report: dict[str, Any] = json.loads(self.out)
        return report


@dataclass
class Stage:
    """What ZooKeeper held and what kto said at one stage."""

    znodes: dict[str, Any]
    """``WATCHED`` paths -> ``{"data": <JSON>, "ephemeral": bool}`` or None; ``/brokers/ids`` -> id -> JSON."""
    plan_json: Run
    plan_text: Run
    apply: Run
    written: dict[str, Any]
    """``GUARDED`` as they were before ``kto apply``; ``after`` is the same read afterwards."""
    after: dict[str, Any]

    @property
    def report(self) -> dict[str, Any]:
        return self.plan_json.json()

    def rejections(self, topic: str) -> list[dict[str, Any]]:
        return next(t["rejections"] for t in self.report["topics"] if t["topic"] == topic)


@dataclass
class FleetRun:
    """A live ``kto drift`` over three clusters, each reached its own way: ``migrating`` (this cluster, declared
    with its ZooKeeper and its brokers), ``kraft-live`` (a cluster that was always KRaft, by its brokers) and
    ``zookeeper-view`` (this cluster's ZooKeeper alone)."""

    code: int
    err: str
    fleet: Path
    desired: Path
    out: Path


def drift_over_the_fleet(connect: str, brokers: str, kraft_servers: str, directory: Path) -> FleetRun:
    """``kto drift --clusters`` over the three clusters, with the processes engine; its outputs kept for the test."""

    def cluster(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": {"name": name},
                "spec": {"kafkaVersion": "3.9", **spec}}  # fmt: skip

    directory.mkdir(parents=True, exist_ok=True)
    fleet, desired, out = directory / "fleet.yaml", directory / "desired.yaml", directory / "drift"
    fleet.write_text(yaml.safe_dump_all([
        cluster("migrating", {"zookeeper": {"connect": connect}, "bootstrapServers": brokers}),
        cluster("kraft-live", {"bootstrapServers": kraft_servers}),
        cluster("zookeeper-view", {"zookeeper": {"connect": connect}}),
    ]))  # fmt: skip
    desired.write_text(yaml.safe_dump_all([
        {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": {"name": f"{name}-{EXISTING}"},
         "spec": {"cluster": name, "topicName": EXISTING, "partitions": 1, "replicas": 1,
                  "config": {"retention.ms": "7200000"}}}
        for name in ("migrating", "zookeeper-view")
    ]))  # fmt: skip
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = drift_main([
            "--desired", str(desired), "--clusters", str(fleet), "--out", str(out),
            "--engine", "processes", "--processes", "3", "--connect-timeout", "20", "-q",
        ])  # fmt: skip
    return FleetRun(code, err.getvalue(), fleet, desired, out)


@dataclass
class Migration:
    """The record of the whole walk, by stage name, and every version of ``/migration`` and ``/controller``
    seen by a data watch from the controller's start (the copying stage lasts a fraction of a second)."""

    stages: dict[str, Stage] = field(default_factory=dict)
    history: list[tuple[str, dict[str, Any], bool, int]] = field(default_factory=list)
    """(path, data, ephemeral, znode version), in the order written."""
    seconds: float = 0.0
    fleet: FleetRun | None = None
    """``kto drift`` read live, brokers on KRaft, over this cluster and two others."""


def read_json(zk: KazooClient, path: str) -> dict[str, Any] | None:
    if zk.exists(path) is None:
        return None
    data, stat = zk.get(path)
    return {"data": json.loads(data), "ephemeral": bool(stat.ephemeralOwner)}


def read_znodes(zk: KazooClient) -> dict[str, Any]:
    znodes: dict[str, Any] = {path: read_json(zk, path) for path in WATCHED}
    znodes["/brokers/ids"] = {
        int(b): json.loads(zk.get(f"/brokers/ids/{b}")[0]) for b in zk.get_children("/brokers/ids")
    }
    return znodes


def read_guarded(zk: KazooClient) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for parent in GUARDED:
        if zk.exists(parent) is None:
            continue
        for child in sorted(zk.get_children(parent)):
            tree[f"{parent}/{child}"] = zk.get(f"{parent}/{child}")[0]
    return tree


def kto(*argv: str) -> Run:
    """The CLI in this process (as ``harness.cli.kto`` does, without capsys: the record is module-scoped)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = kto_main(list(argv))
    return Run(code, out.getvalue(), err.getvalue())


def manifests(path: Path, connect: str, *, migrating: bool) -> Path:
    """KafkaCluster ``real`` (3.9) and its topics: ``EXISTING`` alone before the migration (created then), and
    during it ``EXISTING`` with a config change plus ``CREATED``, a topic to create."""
    topics = [(EXISTING, {"retention.ms": "3600000"} if migrating else {})]
    if migrating:
        topics.append((CREATED, {}))
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "kto.dev/v1alpha1",
            "kind": "KafkaCluster",
            "metadata": {"name": "real"},
            "spec": {"zookeeper": {"connect": connect}, "kafkaVersion": "3.9"},
        },
        *(
            {
                "apiVersion": "kto.dev/v1alpha1",
                "kind": "KafkaTopic",
                "metadata": {"name": name},
                "spec": {"cluster": "real", "partitions": 1, "replicas": 1, "config": config},
            }
            for name, config in topics
        ),
    ]
    path.write_text(yaml.safe_dump_all(documents))
    return path


def record(zk: KazooClient, connect: str, directory: Path, *, migrating: bool = True) -> Stage:
    files = manifests(directory / f"{uuid.uuid4().hex[:8]}.yaml", connect, migrating=migrating)
    znodes = read_znodes(zk)
    plan_json = kto("plan", "-f", str(files), "-o", "json")
    plan_text = kto("plan", "-f", str(files))
    written = read_guarded(zk)
    applied = kto("apply", "-f", str(files), "--yes")
    return Stage(znodes, plan_json, plan_text, applied, written, read_guarded(zk))


def migration_of(zk: KazooClient) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(zk.get("/migration")[0])
    return state


@pytest.fixture(scope="module")
def migration(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Migration]:
    """The walk, once: every server it starts is stopped (by PID) when the module ends or the walk fails."""
    if KAFKA_39 is None:
        found = ", ".join(d.version for d in kafka_distributions()[0])
        pytest.skip(f"Kafka 3.9.0 not found ({f'only {found}' if found else kafka_distributions()[1]})")
    zookeeper_server: LocalZooKeeper = request.getfixturevalue("zookeeper_server")
    kraft: KRaftCluster = request.getfixturevalue("kraft")
    started = time.monotonic()
    directory = tmp_path_factory.mktemp("kraft-migration")
    chroot = f"/kraft-migration-{uuid.uuid4().hex[:6]}"
    brokers = MigratingBrokers(KAFKA_39, zookeeper_server.connect_string, chroot, directory / "brokers")
    controller = KRaftController(
        KAFKA_39, zookeeper_server.connect_string, chroot, directory / "controller", CONTROLLER_ID
    )
    brokers.controller = controller
    walk = Migration()
    connect = brokers.connect_string
    try:
        with connected(zookeeper_server.connect_string) as admin:
            admin.ensure_path(chroot)
        brokers.start()
        with connected(connect) as zk:
            eventually(lambda: zk.exists("/controller"), timeout=60, what="a ZooKeeper controller")
            walk.stages["zookeeper"] = record(zk, connect, directory, migrating=False)

            def watch(path: str) -> None:
                def seen(data: bytes | None, stat: ZnodeStat | None, event: object = None) -> None:
                    if data is not None and stat is not None:
                        walk.history.append((path, json.loads(data), bool(stat.ephemeralOwner), stat.version))

                zk.DataWatch(path, seen)

            watch("/migration")
            watch("/controller")

            # The quorum: formatted with ZooKeeper's cluster id, started with the migration enabled.
            controller.format(json.loads(zk.get("/cluster/id")[0])["id"])
            controller.start()
            eventually(
                lambda: zk.exists("/migration"), timeout=60, what="/migration from the KRaft controller"
            )
            walk.stages["quorum_waiting"] = record(zk, connect, directory)

            # Kafka's revert of "Provisioning the KRaft controller quorum": deprovision it, nothing else.
            controller.stop()
            walk.stages["quorum_deprovisioned"] = record(zk, connect, directory)
            controller.start_broker(CONTROLLER_ID)

            # The brokers restarted for the migration: the controller takes /controller and copies the metadata.
            brokers.restart_broker(BROKER_ID, BrokerMode.MIGRATION)
            eventually(
                lambda: migration_of(zk)["kraft_metadata_offset"] >= 0,
                timeout=60,
                what="the metadata migrated",
            )
            walk.stages["dual_write"] = record(zk, connect, directory)

            # The brokers restarted as KRaft brokers: none registers in ZooKeeper.
            brokers.restart_broker(BROKER_ID, BrokerMode.KRAFT)
            eventually(lambda: not zk.get_children("/brokers/ids"), timeout=30, what="no broker in ZooKeeper")
            walk.stages["brokers_on_kraft"] = record(zk, connect, directory)
            walk.fleet = drift_over_the_fleet(
                connect, brokers.bootstrap_servers, kraft.bootstrap_servers, directory / "fleet"
            )

            # Kafka's revert of "Migrating brokers to KRaft": the brokers back in ZooKeeper mode (the migration
            # still enabled), the quorum deprovisioned, /controller deleted, then a second roll without it.
            brokers.restart_broker(BROKER_ID, BrokerMode.MIGRATION)
            eventually(
                lambda: zk.get_children("/brokers/ids"), timeout=30, what="the broker back in ZooKeeper"
            )
            walk.stages["rolled_back_kraft_controller"] = record(zk, connect, directory)
            controller.stop()
            zk.delete("/controller")
            eventually(
                lambda: json.loads(zk.get("/controller")[0])["kraftControllerEpoch"] == -1,
                timeout=60,
                what="a ZooKeeper controller again",
            )
            epoch = int(zk.get("/controller_epoch")[0])
            eventually(
                lambda: brokers.knows_zookeeper_controller(BROKER_ID, BROKER_ID, epoch),
                timeout=30,
                what=f"broker {BROKER_ID} taking metadata from ZooKeeper controller epoch {epoch}",
            )
            brokers.restart_broker(BROKER_ID, BrokerMode.ZOOKEEPER)
            eventually(
                lambda: zk.exists("/controller"), timeout=60, what="a ZooKeeper controller after the roll"
            )
            walk.stages["reverted"] = record(zk, connect, directory)

            # Kafka's revert steps for that stage leave /migration; deleted by hand, kto writes again.
            zk.delete("/migration")
            walk.stages["migration_deleted"] = record(zk, connect, directory)
            eventually(
                lambda: b'"topic_id"' in zk.get(f"/brokers/topics/{CREATED}")[0],
                timeout=30,
                what="the ZooKeeper controller giving the created topic its id",
            )
        walk.seconds = time.monotonic() - started
        yield walk
    except BaseException:
        print(brokers.logs(lines=40))
        print(controller.logs(lines=60))
        raise
    finally:
        brokers.stop()
        controller.stop()


def assert_nothing_written(stage: Stage) -> None:
    assert stage.apply.code == 1, stage.apply.out + stage.apply.err
    assert stage.after == stage.written
    assert f"/brokers/topics/{CREATED}" not in stage.after


def assert_migration_named(stage: Stage, kraft_migration: str, stage_starts: str) -> None:
    """The header of ``-o json``, the warning and the note on stderr, and every refusal naming the migration."""
    assert stage.plan_json.code == 1
    assert stage.report["kraft_migration"] == kraft_migration
    assert stage.report["kraft_migration_stage"].startswith(stage_starts)
    for run in (stage.plan_text, stage.apply):
        assert (
            f"warning: cluster real is migrating to KRaft ({kraft_migration}): kto reads and plans, and writes "
            "nothing" in run.err
        )
        assert f"note: the migration to KRaft: {stage_starts}" in run.err
    (refusal,) = stage.rejections(EXISTING)
    assert refusal["message"].startswith(
        f"Topic {EXISTING} cannot be changed: cluster real is migrating to KRaft ({kraft_migration})"
    )


def assert_create_refused_for_the_migration(stage: Stage) -> None:
    refusal = stage.rejections(CREATED)[0]  # the migration first; a placement refusal may follow it
    assert refusal["kafka_class"] == "kafka.admin.AdminOperationException"
    assert "A topic znode created now would have no topic_id" in refusal["message"]


# -- before the migration ------------------------------------------------------------------------------------


def test_before_the_migration_kto_writes(migration: Migration) -> None:
    stage = migration.stages["zookeeper"]
    assert stage.znodes["/migration"] is None
    controller = stage.znodes["/controller"]
    assert controller["ephemeral"]
    assert (controller["data"]["version"], controller["data"]["brokerid"]) == (2, BROKER_ID)
    assert controller["data"]["kraftControllerEpoch"] == -1
    assert stage.report["kraft_migration"] is None
    assert stage.report["kraft_migration_stage"] is None
    assert stage.plan_json.code == 2
    assert "migrating" not in stage.plan_text.err
    assert stage.apply.code == 0, stage.apply.err
    assert f"/brokers/topics/{EXISTING}" in stage.after


# -- the quorum ----------------------------------------------------------------------------------------------


def test_the_quorum_creates_migration_all_minus_one_and_waits(migration: Migration) -> None:
    stage = migration.stages["quorum_waiting"]
    assert stage.znodes["/migration"] == {
        "data": {
            "version": 0,
            "kraft_controller_id": -1,
            "kraft_controller_epoch": -1,
            "kraft_metadata_offset": -1,
            "kraft_metadata_epoch": -1,
        },
        "ephemeral": False,
    }
    assert stage.znodes["/controller"]["data"]["brokerid"] == BROKER_ID  # the ZooKeeper controller still runs
    assert stage.znodes["/controller"]["ephemeral"]
    assert_migration_named(
        stage,
        "/migration exists (no KRaft controller recorded in it yet)",
        "a KRaft controller quorum created /migration and waits for the brokers to register with it; ZooKeeper "
        f"controller broker {BROKER_ID} still runs the cluster",
    )
    assert_create_refused_for_the_migration(stage)
    assert_nothing_written(stage)


def test_a_deprovisioned_quorum_leaves_migration_and_kto_still_writes_nothing(migration: Migration) -> None:
    """Kafka's revert of "Provisioning the KRaft controller quorum" is "Deprovision the KRaft controller quorum.
    Then you are done." (3.9 docs/ops.html): /migration stays, all -1, and ZooKeeper looks as in the last stage."""
    waiting, gone = migration.stages["quorum_waiting"], migration.stages["quorum_deprovisioned"]
    assert gone.znodes == waiting.znodes
    assert gone.report["kraft_migration_stage"] == waiting.report["kraft_migration_stage"]
    assert_nothing_written(gone)


def test_a_deprovisioned_quorum_is_named_as_a_possible_revert(migration: Migration) -> None:
    words = migration.stages["quorum_deprovisioned"].report["kraft_migration_stage"]
    assert "deprovisioned instead (Kafka's revert of this step)" in words
    assert "delete /migration and kto writes again" in words


# -- the KRaft controller takes over -------------------------------------------------------------------------


def test_the_kraft_controller_takes_controller_and_39_records_itself_at_once(migration: Migration) -> None:
    """3.9 writes its id and epoch to /migration as it takes /controller, before the copy (KAFKA-16171): a
    fraction of a second that kto cannot be run in, so it is read back from the data watch."""
    kraft = [
        data for path, data, ephemeral, _ in migration.history if path == "/controller" and not ephemeral
    ]
    assert kraft, migration.history
    controller = kraft[0]
    assert controller["version"] == 2
    assert controller["brokerid"] == CONTROLLER_ID
    epoch = controller["kraftControllerEpoch"]
    assert epoch >= 0
    migrations = [(data, version) for path, data, _, version in migration.history if path == "/migration"]
    assert [version for _, version in migrations[:2]] == [0, 1], migrations[:3]
    copying = migrations[1][0]
    assert copying == {
        "version": 0,
        "kraft_controller_id": CONTROLLER_ID,
        "kraft_controller_epoch": epoch,
        "kraft_metadata_offset": -1,
        "kraft_metadata_epoch": -1,
    }
    # That znode, read by kto's own decoder, is the copying stage.
    state = MigrationZNode.decode(json.dumps(copying).encode())
    holder = ControllerZNode.decode(json.dumps(controller).encode())
    facts = MigrationFacts(
        True,
        state.kraft_controller_id,
        state.kraft_controller_epoch,
        state.kraft_metadata_offset,
        state.kraft_metadata_epoch,
        controller_broker=holder.broker_id,
        controller_kraft_epoch=holder.kraft_controller_epoch,
        registered_brokers=1,
    )
    assert migration_stage(facts) is MigrationStage.KRAFT_CONTROLLER_COPYING


def test_dual_write(migration: Migration) -> None:
    stage = migration.stages["dual_write"]
    controller, state = stage.znodes["/controller"], stage.znodes["/migration"]["data"]
    assert not controller["ephemeral"]  # the KRaft controller's /controller is persistent
    assert controller["data"]["brokerid"] == CONTROLLER_ID
    epoch = controller["data"]["kraftControllerEpoch"]
    assert state["kraft_controller_id"] == CONTROLLER_ID
    assert state["kraft_controller_epoch"] == epoch
    assert state["kraft_metadata_offset"] >= 0
    assert state["kraft_metadata_epoch"] == epoch
    # A broker restarted for the migration still registers in ZooKeeper.
    assert list(stage.znodes["/brokers/ids"]) == [BROKER_ID]
    assert_migration_named(
        stage,
        f"/migration exists (KRaft controller {CONTROLLER_ID}, epoch {epoch})",
        "the metadata is migrated (",
    )
    dual_write = f"KRaft controller {CONTROLLER_ID} owns it and writes it to ZooKeeper (dual-write)"
    assert dual_write in stage.report["kraft_migration_stage"]
    assert_create_refused_for_the_migration(stage)
    assert_nothing_written(stage)


def test_dual_write_rewrites_migration_as_the_kraft_log_grows(migration: Migration) -> None:
    """The controller records every committed offset in /migration (a no-op record every 500 ms when idle), so
    the stage's words, which carry the offset, differ from one read to the next."""
    offsets = {
        data["kraft_metadata_offset"]
        for path, data, _, _ in migration.history
        if path == "/migration" and data["kraft_metadata_offset"] >= 0
    }
    assert len(offsets) >= 3, sorted(offsets)


# -- the brokers on KRaft ------------------------------------------------------------------------------------


def test_brokers_on_kraft(migration: Migration) -> None:
    stage = migration.stages["brokers_on_kraft"]
    assert stage.znodes["/brokers/ids"] == {}
    epoch = stage.znodes["/controller"]["data"]["kraftControllerEpoch"]
    assert stage.znodes["/migration"]["data"]["kraft_metadata_offset"] >= 0
    assert_migration_named(
        stage,
        f"/migration exists (KRaft controller {CONTROLLER_ID}, epoch {epoch})",
        "the metadata is migrated and no broker registers in ZooKeeper: the brokers run as KRaft brokers under "
        f"KRaft controller {CONTROLLER_ID}",
    )
    assert_nothing_written(stage)


def test_a_create_on_kraft_brokers_is_refused_for_the_migration(migration: Migration) -> None:
    assert_create_refused_for_the_migration(migration.stages["brokers_on_kraft"])


# -- Kafka's revert after the brokers moved ------------------------------------------------------------------


def test_brokers_back_in_zookeeper_under_the_kraft_controller_are_dual_write(migration: Migration) -> None:
    stage = migration.stages["rolled_back_kraft_controller"]
    assert list(stage.znodes["/brokers/ids"]) == [BROKER_ID]
    assert stage.znodes["/controller"]["data"]["brokerid"] == CONTROLLER_ID
    assert "(dual-write)" in stage.report["kraft_migration_stage"]
    assert_nothing_written(stage)


def test_a_revert_leaves_migration_behind(migration: Migration) -> None:
    stage = migration.stages["reverted"]
    assert stage.znodes["/controller"]["ephemeral"]
    assert stage.znodes["/controller"]["data"]["brokerid"] == BROKER_ID
    assert stage.znodes["/controller"]["data"]["kraftControllerEpoch"] == -1
    state = stage.znodes["/migration"]["data"]
    assert state["kraft_controller_id"] == CONTROLLER_ID
    assert state["kraft_metadata_offset"] >= 0
    assert_migration_named(
        stage,
        f"/migration exists (KRaft controller {CONTROLLER_ID}, epoch {state['kraft_controller_epoch']})",
        f"/migration records a migrated metadata (KRaft metadata epoch {state['kraft_metadata_epoch']}) but "
        f"ZooKeeper controller broker {BROKER_ID} holds /controller: the cluster was reverted to ZooKeeper mode",
    )
    assert_create_refused_for_the_migration(stage)
    assert_nothing_written(stage)


def test_once_migration_is_deleted_kto_writes_again(migration: Migration) -> None:
    stage = migration.stages["migration_deleted"]
    assert stage.znodes["/migration"] is None
    assert stage.report["kraft_migration"] is None
    assert stage.report["kraft_migration_stage"] is None
    assert stage.plan_json.code == 2
    assert "migrating" not in stage.plan_text.err
    assert stage.apply.code == 0, stage.apply.out + stage.apply.err
    assert f"/brokers/topics/{CREATED}" in stage.after
    assert json.loads(stage.after[f"/config/topics/{EXISTING}"])["config"]["retention.ms"] == "3600000"
    print(f"the migration walk took {migration.seconds:.1f} s")


def test_live_drift_reads_each_cluster_through_its_own_way_in(migration: Migration) -> None:
    """One live ``kto drift`` over a cluster mid-migration (brokers on KRaft), a KRaft cluster and a ZooKeeper
    address: each is read through the store its address and the migration's stage make authoritative, the report
    says which, and each plan file is what ``kto plan -o json`` prints for the snapshot the run saved."""
    run = migration.fleet
    assert run is not None
    assert run.code == 2, run.err  # changes found, nothing failed
    summary = json.loads((run.out / "summary.json").read_text())
    release = {c["name"]: c["kafka_release"] for c in summary["clusters"]}
    read = {c["name"]: c["read"] for c in summary["clusters"]}
    assert read["migrating"] == {"from": "live", "through": "AdminProtocol", "stage": "BrokersOnKRaft"}
    assert read["kraft-live"] == {"from": "live", "through": "AdminProtocol", "stage": None}
    assert read["zookeeper-view"]["through"] == "ZooKeeper"
    assert read["zookeeper-view"]["stage"] is not None  # ZooKeeper shows the migration under way
    assert {c["name"] for c in summary["clusters"] if c["observed"]} == set(release)
    assert "read through the brokers" in release["migrating"]
    assert "migrating to KRaft" in release["migrating"]
    assert "writes through AdminProtocol" in release["migrating"]
    assert "read through the brokers" in release["kraft-live"]
    assert "migrating" not in release["kraft-live"]
    assert "ZooKeeper shows Kafka" in release["zookeeper-view"]
    assert "read through the brokers" not in release["zookeeper-view"]

    for name in ("migrating", "kraft-live", "zookeeper-view"):
        plan = json.loads((run.out / "plans" / f"{name}.json").read_text())
        saved = next((run.out / "snapshots" / f"cluster={name}").glob("part-*"))
        printed = kto(
            "plan", "-f", str(run.fleet), "-f", str(run.desired), "--cluster", name, "--snapshot", str(saved),
            "-o", "json",
        )  # fmt: skip
        document = printed.json()
        assert document.pop("manifest_errors") == []
        assert plan == document, name
    migrating = json.loads((run.out / "plans" / "migrating.json").read_text())
    assert migrating["writes"]["through"] == "AdminProtocol"
    assert {t["topic"]: t["status"] for t in migrating["topics"]}[EXISTING] == "change"
