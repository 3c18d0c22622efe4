"""A ZooKeeper-to-KRaft migration on real Kafka servers: a KRaft controller started with the migration enabled,
and ZooKeeper-mode brokers restarted for the migration, then as KRaft brokers (and back, for a revert).

Kafka's procedure (3.9 ``docs/ops.html`` "ZooKeeper to KRaft Migration"), in the fewest servers that show every
stage: the controller's log directory is formatted with the cluster id ZooKeeper holds (``/cluster/id``); the
controller runs with ``zookeeper.metadata.migration.enable`` and ``zookeeper.connect`` (it creates ``/migration``
and waits for the brokers); the brokers are restarted with the same flag and the controller quorum's address (the
controller then takes ``/controller`` and copies the metadata, and dual-writes from then on); finally they are
restarted as KRaft brokers (``process.roles=broker``), which no longer register in ZooKeeper.

Both kinds of server are ``harness.real_kafka``'s: a KRaft controller is a ``KafkaBrokers`` of one node whose
settings are a controller's, so its launch, stop and logs are the brokers' own. The quorum is static
(``controller.quorum.voters``), which every release that migrates (3.4-3.9) accepts.
"""

from __future__ import annotations

import enum
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from harness.real_kafka import Broker, KafkaBrokers
from harness.server_binaries import KafkaDistribution
from topic_operator.testing.local_server import free_port

__all__ = ["BrokerMode", "KRaftController", "MigratingBrokers", "format_storage"]

ZK_STARTED = "started (kafka.server.KafkaServer)"
KRAFT_STARTED = "Kafka Server started (kafka.server.KafkaRaftServer)"
"""What a KRaft node (controller or broker) logs once it serves; ZooKeeper-mode brokers log ``ZK_STARTED``."""

JVM_ENVIRONMENT = {
    "KAFKA_HEAP_OPTS": "-Xms64m -Xmx256m",
    "KAFKA_JVM_PERFORMANCE_OPTS": "-server -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k "
    "-Djava.awt.headless=true",
    "KAFKA_GC_LOG_OPTS": " ",
    "KAFKA_JMX_OPTS": " ",
}
"""For ``kafka-storage.sh``: a small heap and the quick-starting JIT the servers get (``KafkaBrokers._launch``)."""


def format_storage(
    distribution: KafkaDistribution, config: Path, cluster_id: str, extra: Sequence[str] = ()
) -> None:
    """``kafka-storage.sh format`` of the log directories ``config`` names, for cluster ``cluster_id``."""
    logs = config.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            str(distribution.home / "bin" / "kafka-storage.sh"),
            "format",
            # one argument, "=" joined: an id that starts with "-" (base64url: one in 64 of them) would
            # otherwise be taken for an option, and the format refused
            f"--cluster-id={cluster_id}",
            "-c",
            str(config),
            *extra,
        ],
        env={**os.environ, **JVM_ENVIRONMENT, "LOG_DIR": str(logs)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"kafka-storage.sh format failed ({done.returncode}):\n{done.stdout}{done.stderr}")


def _settings(properties: str) -> dict[str, str]:
    """``key=value`` lines as ``KafkaBrokers._properties`` writes them."""
    return dict(line.split("=", 1) for line in properties.splitlines() if "=" in line)


def _started(broker: Broker) -> int:
    """How many launches of ``broker`` have finished starting, in either mode (its log spans every launch)."""
    text = broker.log_text()
    return text.count(ZK_STARTED) + text.count(KRAFT_STARTED)


class KRaftController(KafkaBrokers):
    """One KRaft controller (``process.roles=controller``) of ``distribution``, node ``node_id``.

    With ``migration`` (the default) it runs as Kafka's migration asks: ``zookeeper.connect`` to the brokers'
    ZooKeeper and chroot, and ``inter.broker.listener.name`` so it can send the ZooKeeper-mode brokers their
    metadata. Without it, it is a finalized controller. Its one node is ``brokers[0]``, so ``stop()``,
    ``start_broker``, ``stop_broker`` and ``logs()`` work as for brokers.
    """

    def __init__(
        self,
        distribution: KafkaDistribution,
        zookeeper_connect: str,
        chroot: str,
        directory: Path,
        node_id: int = 3000,
        inter_broker_listener: str = "PLAINTEXT",
    ) -> None:
        super().__init__(distribution, zookeeper_connect, chroot, directory, racks=())
        self.node = Broker(
            id=node_id, rack="", port=free_port(), directory=directory / f"controller-{node_id}"
        )
        self.brokers = [self.node]
        self.inter_broker_listener = inter_broker_listener
        self.migration = True

    @property
    def voters(self) -> str:
        """``controller.quorum.voters`` for every node that talks to this quorum."""
        return f"{self.node.id}@127.0.0.1:{self.node.port}"

    def format(self, cluster_id: str, extra: tuple[str, ...] = ()) -> None:
        """``kafka-storage.sh format``: the metadata log directory, of the cluster ZooKeeper already names (a
        controller formatted with another id is refused by the brokers). ``extra`` arguments go to the command
        (``--add-scram``: the bootstrap metadata the quorum starts from)."""
        format_storage(self.distribution, self._write_properties(), cluster_id, extra)

    def _write_properties(self) -> Path:
        self.node.directory.mkdir(parents=True, exist_ok=True)
        config = self.node.directory / "server.properties"
        config.write_text(self._properties(self.node))
        return config

    def _properties(self, broker: Broker) -> str:
        settings: dict[str, object] = {
            "process.roles": "controller",
            "node.id": broker.id,
            "controller.quorum.voters": self.voters,
            "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://127.0.0.1:{broker.port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": broker.log_dir,
            "num.network.threads": 2,
            "num.io.threads": 2,
        }
        if self.migration:
            settings |= {
                "zookeeper.metadata.migration.enable": "true",
                "zookeeper.connect": self.connect_string,
                "inter.broker.listener.name": self.inter_broker_listener,
            }
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _wait_started(self, broker: Broker, timeout: float) -> None:
        _wait_started(self, broker, timeout)


class BrokerMode(enum.Enum):
    """How a broker of ``MigratingBrokers`` is (re)started: the migration's three broker configurations."""

    ZOOKEEPER = "zookeeper"
    """A plain ZooKeeper-mode broker (before the migration, or after a revert's second roll)."""
    MIGRATION = "migration"
    """Still in ZooKeeper mode, with ``zookeeper.metadata.migration.enable`` and the controller quorum: it
    registers with the KRaft controller as well as in ZooKeeper."""
    KRAFT = "kraft"
    """A KRaft broker (``process.roles=broker``, ``node.id``): no ZooKeeper at all."""


class MigratingBrokers(KafkaBrokers):
    """``KafkaBrokers`` that can be restarted one by one in any ``BrokerMode``, at ``inter.broker.protocol.version``
    ``ibp`` (Kafka asks it to be the release's own before a migration)."""

    def __init__(
        self,
        distribution: KafkaDistribution,
        zookeeper_connect: str,
        chroot: str,
        directory: Path,
        racks: tuple[str, ...] = ("a",),
        ibp: str = "3.9",
    ) -> None:
        super().__init__(distribution, zookeeper_connect, chroot, directory, racks)
        self.ibp = ibp
        self.modes = {broker.id: BrokerMode.ZOOKEEPER for broker in self.brokers}
        self.controller: KRaftController | None = None
        """The quorum a broker in ``MIGRATION`` or ``KRAFT`` mode is pointed at."""

    def restart_broker(self, broker_id: int, mode: BrokerMode, timeout: float = 120.0) -> None:
        """A controlled shutdown, then a start in ``mode``, returning once the broker serves again."""
        if mode is not BrokerMode.ZOOKEEPER and self.controller is None:
            raise ValueError(f"a broker in {mode.value} mode needs the KRaft controller: set .controller")
        self.stop_broker(broker_id)
        self.modes[broker_id] = mode
        self.start_broker(broker_id, timeout)

    def knows_zookeeper_controller(self, broker_id: int, controller_id: int, epoch: int) -> bool:
        """Whether the broker has taken metadata from ZooKeeper controller ``controller_id`` of ``epoch``.

        Until it has, a broker in ``MIGRATION`` mode still holds the KRaft controller as its controller: stopped
        then (Kafka's revert rolls the brokers right after deleting ``/controller``) it asks the deprovisioned
        KRaft controller for a controlled shutdown and hangs (seen with 3.9.0: over 60 s, until killed, and then
        its registration outlives it until the session expires, so it cannot start again at once)."""
        log = self.broker(broker_id).directory / "logs" / "state-change.log"
        try:
            text = log.read_text(errors="replace")
        except FileNotFoundError:
            return False
        return (
            f"in response to UpdateMetadata request sent by controller {controller_id} epoch {epoch} " in text
        )

    def _properties(self, broker: Broker) -> str:
        settings: dict[str, object] = dict(_settings(super()._properties(broker)))
        mode = self.modes[broker.id]
        if mode is not BrokerMode.KRAFT:
            settings["inter.broker.protocol.version"] = self.ibp
        if mode is not BrokerMode.ZOOKEEPER:
            assert self.controller is not None
            settings |= {
                "controller.quorum.voters": self.controller.voters,
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            }
        if mode is BrokerMode.MIGRATION:
            settings["zookeeper.metadata.migration.enable"] = "true"
        if mode is BrokerMode.KRAFT:
            for key in ("broker.id", "zookeeper.connect", "zookeeper.session.timeout.ms"):
                settings.pop(key)
            settings |= {"process.roles": "broker", "node.id": broker.id}
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _wait_started(self, broker: Broker, timeout: float) -> None:
        _wait_started(self, broker, timeout)


def _wait_started(servers: KafkaBrokers, broker: Broker, timeout: float) -> None:
    """``KafkaBrokers._wait_started`` for either mode's start-up line: a KRaft node logs another one."""
    deadline = time.monotonic() + max(timeout, 1.0)
    while time.monotonic() < deadline:
        if _started(broker) >= broker.starts:
            return
        if broker.process is None or broker.process.poll() is not None:
            raise RuntimeError(f"Kafka node {broker.id} exited:\n{servers.logs(broker.id, 60)}")
        time.sleep(0.2)
    raise RuntimeError(
        f"Kafka node {broker.id} not started within {timeout:g} s:\n{servers.logs(broker.id, 60)}"
    )
