"""Real Kafka brokers for tests: three brokers of one Apache Kafka distribution, in racks a, b and c, on
127.0.0.1, registered under a chroot of a real ZooKeeper (Debian's, as every ZooKeeper test uses).

Each broker is ``bin/kafka-server-start.sh`` of the distribution (``harness.server_binaries``), which execs java,
so the process's PID is the broker's. A broker is ready when its ``server.log`` says ``started
(kafka.server.KafkaServer)``. Brokers can be stopped (SIGTERM: a controlled shutdown), killed (SIGKILL) and started
again on the same port and log directory, which is what a broker restart or crash looks like to the cluster.

Settings are Kafka's own defaults but for what three brokers on one small machine need: replication factor 1 for
the internal topics, no automatic topic creation (a test must see only the topics it created), two network and I/O
threads, and a small heap with a JIT that starts fast (the brokers stay real; only their start-up is cheaper).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.lifecycle import StartedServer
from harness.real_apiserver import stop_process
from harness.server_binaries import KafkaDistribution
from topic_operator.testing.local_server import free_port

__all__ = ["QUICK_START_JVM", "Broker", "KafkaBrokers"]

QUICK_START_JVM: dict[str, str] = {
    "KAFKA_HEAP_OPTS": "-Xms128m -Xmx512m",
    "KAFKA_JVM_PERFORMANCE_OPTS": "-server -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -Djava.awt.headless=true",
}
"""The tests' JVM: a small heap, one GC thread and the JIT's quick first tier, so that a broker starts in seconds
and several fit on two cores. Kafka's own scripts choose a 1 GB heap, G1 and the full JIT when these are unset."""

RACKS = ("a", "b", "c")

SMALL_CLUSTER_SETTINGS: dict[str, object] = {
    "offsets.topic.replication.factor": 1,
    "offsets.topic.num.partitions": 3,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "group.initial.rebalance.delay.ms": 0,
    "auto.create.topics.enable": "false",
    "num.network.threads": 2,
    "num.io.threads": 2,
    "num.partitions": 1,
    "log.retention.check.interval.ms": 300000,
}
"""What three brokers on one small machine need beside Kafka's defaults (ZooKeeper-mode and KRaft brokers alike):
replication factor 1 for the internal topics, no automatic topic creation, two network and I/O threads."""
STARTED = "started (kafka.server.KafkaServer)"


@dataclass
class Broker:
    """One broker's identity, its files and (while it runs) its process."""

    id: int
    rack: str
    port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    """How many times it was launched: its ``server.log`` is appended to across restarts."""

    @property
    def log_dir(self) -> Path:
        """Where the broker keeps partitions (``log.dirs``)."""
        return self.directory / "data"

    @property
    def server_log(self) -> Path:
        return self.directory / "logs" / "server.log"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        """The whole ``server.log``, with the parts Kafka's log4j already rolled away: it rolls every hour
        (``server.log.2026-11-26-23``), and a broker restarted just after the hour would otherwise seem never to
        have started before, or a config change never to have been processed."""
        rolled = sorted(self.server_log.parent.glob(f"{self.server_log.name}.*"))
        texts = []
        for path in (*rolled, self.server_log):
            with contextlib.suppress(FileNotFoundError):
                texts.append(path.read_text(errors="replace"))
        return "".join(texts)


class KafkaBrokers(StartedServer):
    """Brokers of one distribution, sharing ``zookeeper_connect`` (``host:port``) under ``chroot``."""

    def __init__(
        self,
        distribution: KafkaDistribution,
        zookeeper_connect: str,
        chroot: str,
        directory: Path,
        racks: Sequence[str] = RACKS,
    ) -> None:
        self.distribution = distribution
        self.zookeeper_connect = zookeeper_connect
        self.chroot = chroot
        self.directory = directory
        self.brokers = [
            Broker(id=index + 1, rack=rack, port=free_port(), directory=directory / f"broker-{index + 1}")
            for index, rack in enumerate(racks)
        ]
        self.startup_seconds: float | None = None
        self.classpath: str | None = None
        """Extra classes for the JVM (``CLASSPATH``), such as a broker-side policy a test compiled."""
        self.extra_settings: dict[str, str] = {}
        """Settings added to every node's ``server.properties`` (a policy class, say)."""
        self.jvm_options: dict[str, str] = dict(QUICK_START_JVM)
        """The JVM's settings, as Kafka's start scripts read them from the environment; empty: the scripts' own."""

    @property
    def connect_string(self) -> str:
        """What ``kto`` and a KafkaCluster are given: ZooKeeper with the brokers' chroot."""
        return f"{self.zookeeper_connect}{self.chroot}"

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{b.port}" for b in self.brokers if b.running)

    def broker(self, broker_id: int) -> Broker:
        return next(b for b in self.brokers if b.id == broker_id)

    # -- lifecycle -----------------------------------------------------------------------------------------------

    def start(self, timeout: float = 120.0) -> KafkaBrokers:
        started = time.monotonic()
        for broker in self.brokers:
            self._launch(broker)
        for broker in self.brokers:
            self._wait_started(broker, timeout - (time.monotonic() - started))
        self.startup_seconds = time.monotonic() - started
        return self

    def start_broker(self, broker_id: int, timeout: float = 120.0) -> None:
        broker = self.broker(broker_id)
        self._launch(broker)
        self._wait_started(broker, timeout)

    def stop_broker(self, broker_id: int, grace: float = 60.0) -> None:
        """A controlled shutdown (SIGTERM): leadership moves away first."""
        broker = self.broker(broker_id)
        if broker.process is not None:
            stop_process(broker.process, grace)

    def kill_broker(self, broker_id: int) -> None:
        """A crash (SIGKILL): the broker's ZooKeeper session ends only when it expires."""
        broker = self.broker(broker_id)
        if broker.process is not None and broker.process.poll() is None:
            broker.process.kill()
            broker.process.wait(10)

    def stop(self) -> None:
        """Every broker at once (a throwaway cluster needs no controlled shutdown to be left consistent)."""
        threads = [
            threading.Thread(target=stop_process, args=(b.process, 10.0))
            for b in self.brokers
            if b.process is not None
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _properties(self, broker: Broker) -> str:
        settings = {
            "broker.id": broker.id,
            "broker.rack": broker.rack,
            "listeners": f"PLAINTEXT://127.0.0.1:{broker.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{broker.port}",
            "log.dirs": broker.log_dir,
            "zookeeper.connect": self.connect_string,
            "zookeeper.session.timeout.ms": 18000,
            **SMALL_CLUSTER_SETTINGS,
            # A controlled shutdown is retried this often: tests stop brokers and wait for it.
            "controlled.shutdown.retry.backoff.ms": 500,
        }
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _launch(self, broker: Broker) -> None:
        (broker.directory / "logs").mkdir(parents=True, exist_ok=True)
        config = broker.directory / "server.properties"
        config.write_text(
            self._properties(broker) + "".join(f"{k}={v}\n" for k, v in self.extra_settings.items())
        )
        environment = {
            **{name: value for name, value in os.environ.items() if name not in QUICK_START_JVM},
            "LOG_DIR": str(broker.directory / "logs"),
            **self.jvm_options,
            "KAFKA_GC_LOG_OPTS": " ",
            "KAFKA_JMX_OPTS": " ",
        }
        environment.pop("JMX_PORT", None)
        if self.classpath:  # kafka-run-class.sh appends it: classes a test built (a broker-side policy)
            environment["CLASSPATH"] = self.classpath
        broker.starts += 1
        broker.process = subprocess.Popen(
            [str(self.distribution.server_start), str(config)],
            env=environment,
            stdout=(broker.directory / "logs" / "stdout.log").open("ab"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def _wait_started(self, broker: Broker, timeout: float) -> None:
        """Until this launch's ``started`` line."""
        deadline = time.monotonic() + max(timeout, 1.0)
        while time.monotonic() < deadline:
            if broker.log_text().count(STARTED) >= broker.starts:
                return
            if broker.process is None or broker.process.poll() is not None:
                raise RuntimeError(f"Kafka broker {broker.id} exited:\n{self.logs(broker.id, 60)}")
            time.sleep(0.2)
        raise RuntimeError(
            f"Kafka broker {broker.id} not started within {timeout:g} s:\n{self.logs(broker.id, 60)}"
        )

    # -- reports -------------------------------------------------------------------------------------------------

    def logs(self, broker_id: int | None = None, lines: int = 60) -> str:
        chosen = self.brokers if broker_id is None else [self.broker(broker_id)]
        parts = []
        for broker in chosen:
            for path in (broker.server_log, broker.directory / "logs" / "stdout.log"):
                with contextlib.suppress(FileNotFoundError):
                    tail = path.read_text(errors="replace").splitlines()[-lines:]
                    parts.append(
                        f"--- broker {broker.id} {path.name} (last {len(tail)} lines)\n" + "\n".join(tail)
                    )
        return "\n".join(parts)

    def log_lines(self, broker_id: int, needle: str) -> Iterator[str]:
        return (line for line in self.broker(broker_id).log_text().splitlines() if needle in line)
