"""A cluster that was always KRaft, on real Kafka servers: one controller and brokers in racks, no ZooKeeper.

Kafka's own quick start for KRaft (3.9 ``docs/quickstart.html``): a cluster id, every node's log directory
formatted with it by ``kafka-storage.sh format``, then a controller (``process.roles=controller``) and brokers
(``process.roles=broker``) that find it through ``controller.quorum.voters``. The servers are
``harness.real_kraft``'s controller and ``harness.real_kafka``'s brokers with a KRaft broker's settings, so their
launch, stop and logs are the same; only the settings and the formatting differ.

``security`` adds a second listener to every broker for clients (SASL_SSL with SCRAM, or SSL): the brokers talk to
each other and to the controller over PLAINTEXT, and a test reaches the client listener as a user would.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.real_apiserver import Credentials
from harness.real_kafka import RACKS, SMALL_CLUSTER_SETTINGS, Broker, KafkaBrokers
from harness.real_kraft import KRaftController, _wait_started, format_storage
from harness.server_binaries import KafkaDistribution, kafka_distributions
from topic_operator.testing.local_server import free_port

__all__ = [
    "SECURED_PASSWORD",
    "SECURED_USER",
    "ClientListener",
    "KRaftCluster",
    "kraft_cluster_or_skip",
    "kraft_distribution",
    "new_cluster_id",
    "secured_kraft_cluster_or_skip",
]

SECURED_USER = "kto"
SECURED_PASSWORD = "kto-Secret-1"
"""The SCRAM-SHA-512 user of ``secured_kraft_cluster_or_skip``'s cluster."""


def kraft_distribution(line: str = "3.9") -> tuple[KafkaDistribution | None, str]:
    """The distribution of release ``line`` whose KRaft mode a test runs (by default 3.9, the bridge every
    ZooKeeper-era cluster crosses; 4.1 for the first line with no ZooKeeper at all), or None and the one-line
    reason there is none."""
    found, missing = kafka_distributions()
    lines = [d for d in found if d.line == line]
    if not lines:
        return None, missing or f"no Kafka {line} distribution among {', '.join(d.version for d in found)}"
    if int(line.split(".")[0]) >= 4 and (java := java_release()) < 17:
        return (
            None,
            f"Kafka {line} needs Java 17; the java on PATH is {java or 'missing'} (set JAVA_HOME to a JDK 17)",
        )
    return lines[-1], ""


def java_release() -> int:
    """The feature release of the ``java`` Kafka's scripts run (``$JAVA_HOME/bin/java``, else the one on PATH);
    0 when there is none."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if java is None:
        return 0
    try:
        answer = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return 0
    found = re.search(r'version "(1\.)?(\d+)', answer.stderr + answer.stdout)
    return int(found.group(2)) if found else 0


def new_cluster_id() -> str:
    """What ``kafka-storage.sh random-uuid`` prints: 16 random bytes, URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


@dataclass(frozen=True)
class ClientListener:
    """A listener for clients beside the brokers' PLAINTEXT one.

    ``protocol`` is ``SASL_SSL`` or ``SSL``; ``certificate``/``key`` are the brokers' PEM files (one certificate
    for every broker, with ``IP:127.0.0.1`` among its names); ``scram`` the users (name -> password) given to
    ``kafka-storage.sh format --add-scram`` for ``mechanism``."""

    protocol: str
    certificate: Path
    key: Path
    mechanism: str = "SCRAM-SHA-512"
    scram: tuple[tuple[str, str], ...] = ()


class KRaftCluster(KafkaBrokers):
    """KRaft brokers in ``racks`` (ids 1, 2, 3, ...) and the controller they need, started and stopped together."""

    def __init__(
        self,
        distribution: KafkaDistribution,
        directory: Path,
        racks: Sequence[str] = RACKS,
        client_listener: ClientListener | None = None,
    ) -> None:
        super().__init__(distribution, "", "", directory, racks)
        self.cluster_id = new_cluster_id()
        self.controller = KRaftController(distribution, "", "", directory / "controller")
        self.controller.migration = False
        self.client_listener = client_listener
        self.client_ports = {b.id: free_port() for b in self.brokers}

    @property
    def client_bootstrap_servers(self) -> str:
        """The client listener's addresses (the PLAINTEXT ones when there is none)."""
        if self.client_listener is None:
            return self.bootstrap_servers
        return ",".join(f"127.0.0.1:{self.client_ports[b.id]}" for b in self.brokers if b.running)

    def start(self, timeout: float = 180.0) -> KRaftCluster:
        self.controller.format(self.cluster_id, tuple(self._scram_arguments()))
        for broker in self.brokers:
            broker.directory.mkdir(parents=True, exist_ok=True)
            config = broker.directory / "server.properties"
            config.write_text(self._properties(broker))
            format_storage(self.distribution, config, self.cluster_id, self._scram_arguments())
        self.controller.start(timeout)
        super().start(timeout)
        return self

    def stop(self) -> None:
        super().stop()
        self.controller.stop()

    def logs(self, broker_id: int | None = None, lines: int = 60) -> str:
        own = super().logs(broker_id, lines)
        return own if broker_id is not None else f"{own}\n{self.controller.logs(lines=lines)}"

    def _scram_arguments(self) -> list[str]:
        listener = self.client_listener
        if listener is None or not listener.scram:
            return []
        arguments: list[str] = []
        for name, password in listener.scram:
            arguments += ["--add-scram", f"{listener.mechanism}=[name={name},password={password}]"]
        return arguments

    def _properties(self, broker: Broker) -> str:
        plain = f"PLAINTEXT://127.0.0.1:{broker.port}"
        protocols = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
        listeners = plain
        settings: dict[str, object] = {}
        listener = self.client_listener
        if listener is not None:
            listeners = f"{plain},CLIENTS://127.0.0.1:{self.client_ports[broker.id]}"
            protocols += f",CLIENTS:{listener.protocol}"
            settings |= {
                "listener.name.clients.ssl.keystore.type": "PEM",
                "listener.name.clients.ssl.keystore.location": _pem_keystore(broker.directory, listener),
            }
            if listener.protocol == "SASL_SSL":
                mechanism = listener.mechanism.lower()
                settings |= {
                    "listener.name.clients.sasl.enabled.mechanisms": listener.mechanism,
                    f"listener.name.clients.{mechanism}.sasl.jaas.config": (
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                    ),
                }
        settings = {
            "process.roles": "broker",
            "node.id": broker.id,
            "broker.rack": broker.rack,
            "controller.quorum.voters": self.controller.voters,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listeners": listeners,
            "advertised.listeners": listeners,
            "listener.security.protocol.map": protocols,
            "log.dirs": broker.log_dir,
            **SMALL_CLUSTER_SETTINGS,
            **settings,
        }
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _wait_started(self, broker: Broker, timeout: float) -> None:
        _wait_started(self, broker, timeout)


def _pem_keystore(directory: Path, listener: ClientListener) -> Path:
    """The brokers' key and certificate in one PEM file, as Kafka's PEM key store takes them (key first)."""
    path = directory / "keystore.pem"
    path.write_text(listener.key.read_text() + listener.certificate.read_text())
    return path


@contextlib.contextmanager
def kraft_cluster_or_skip(
    directory: Path, line: str = "3.9", prepare: Callable[[KRaftCluster], object] | None = None
) -> Iterator[KRaftCluster]:
    """A started ``KRaftCluster`` of ``kraft_distribution(line)`` in ``directory``, stopped at the end; the test
    is skipped, with what is missing, when ``../shared/servers`` has none. ``prepare`` sees it before it starts."""
    distribution, missing = kraft_distribution(line)
    if distribution is None:
        pytest.skip(f"a real KRaft cluster: {missing}")
    cluster = KRaftCluster(distribution, directory)
    if prepare is not None:
        prepare(cluster)
    with cluster:
        yield cluster


@contextlib.contextmanager
def secured_kraft_cluster_or_skip(
    directory: Path, user: str = SECURED_USER, password: str = SECURED_PASSWORD
) -> Iterator[tuple[KRaftCluster, Credentials]]:
    """A started Kafka 3.9 KRaft cluster whose client listener speaks SASL_SSL with SCRAM-SHA-512, as a secured
    production cluster is set up, with one user; and the credentials whose CA signed the brokers' certificate
    (``ca_file``, for a client's trust store). Skipped, with what is missing, when ``../shared/servers`` has no
    such distribution."""
    distribution, missing = kraft_distribution()
    if distribution is None:
        pytest.skip(f"a real KRaft cluster: {missing}")
    directory.mkdir(parents=True, exist_ok=True)
    credentials = Credentials.make(directory)
    listener = ClientListener(
        "SASL_SSL", credentials.cert_file, credentials.key_file, "SCRAM-SHA-512", ((user, password),)
    )
    with KRaftCluster(distribution, directory / "cluster", client_listener=listener) as cluster:
        yield cluster, credentials
