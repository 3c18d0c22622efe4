"""Where the real servers' binaries are: environment variables first, then ``../shared/servers/``, then PATH.

The real-server tier (``tests/real``) runs a real kube-apiserver with etcd and real Kafka brokers, as envtest does
for Go operators. None of them is on PyPI or in every Debian install, so each is looked up here and, when absent,
the tests that need it skip with one line that names what is missing and the variable that would point at it.

| server | variable | then |
|---|---|---|
| kube-apiserver | ``KTO_KUBE_APISERVER`` (the binary) | ``../shared/servers/kube-apiserver/kube-apiserver`` |
| etcd | ``KTO_ETCD`` (the binary) | ``etcd`` on PATH (Debian's ``etcd-server``) |
| Kafka | ``KTO_KAFKA_HOME`` (one or more distributions, ``:``-separated) | every ``../shared/servers/kafka_*/`` |
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Found",
    "KafkaDistribution",
    "etcd",
    "kafka_distributions",
    "kube_apiserver",
    "zookeeper_mode_distributions",
]

ROOT = Path(__file__).resolve().parents[2]
SHARED_SERVERS = ROOT.parent / "shared" / "servers"
"""The folder beside the project's checkout that holds the servers no registry carries."""

_KAFKA_JAR = re.compile(r"kafka_(?P<scala>[0-9.]+)-(?P<version>[0-9][0-9A-Za-z.\-]*)\.jar")


@dataclass(frozen=True)
class Found:
    """A binary's path, or why there is none (one line, for ``pytest.skip``)."""

    path: Path | None
    missing: str = ""


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _lookup(variable: str, default: Path | None, name: str, on_path: str | None = None) -> Found:
    given = os.environ.get(variable)
    if given:
        path = Path(given)
        if _executable(path):
            return Found(path)
        return Found(None, f"{name}: {variable}={given} is not an executable file")
    if default is not None and _executable(default):
        return Found(default)
    if on_path is not None:
        which = shutil.which(on_path)
        if which:
            return Found(Path(which))
    where = f"{default}" if default is not None else f"{on_path} on PATH"
    return Found(None, f"{name} not found: set {variable}, or provide {where}")


def kube_apiserver() -> Found:
    return _lookup(
        "KTO_KUBE_APISERVER", SHARED_SERVERS / "kube-apiserver" / "kube-apiserver", "kube-apiserver"
    )


def etcd() -> Found:
    return _lookup("KTO_ETCD", None, "etcd (Debian's etcd-server)", on_path="etcd")


def api_server_binaries() -> tuple[Path, Path] | str:
    """(kube-apiserver, etcd), or one line saying what is missing."""
    apiserver, store = kube_apiserver(), etcd()
    if apiserver.path is None or store.path is None:
        return "; ".join(found.missing for found in (apiserver, store) if found.missing)
    return apiserver.path, store.path


@dataclass(frozen=True)
class KafkaDistribution:
    """An Apache Kafka binary distribution (``bin/``, ``config/``, ``libs/``) and the release it is."""

    home: Path
    version: str
    """As its ``libs/kafka_<scala>-<version>.jar`` says: ``3.3.1``, ``3.9.0``."""

    @property
    def line(self) -> str:
        """The release line (``3.9``), what ``KafkaCluster.spec.kafkaVersion`` names."""
        return ".".join(self.version.split(".")[:2])

    @property
    def has_zookeeper_mode(self) -> bool:
        """Whether its brokers can run in ZooKeeper mode: every release before 4.0 (4.0 removed it)."""
        return int(self.version.split(".")[0]) < 4

    @property
    def server_start(self) -> Path:
        return self.home / "bin" / "kafka-server-start.sh"


def _distribution(home: Path) -> KafkaDistribution | None:
    libs = home / "libs"
    if not (home / "bin" / "kafka-server-start.sh").is_file() or not libs.is_dir():
        return None
    for jar in sorted(libs.iterdir()):
        match = _KAFKA_JAR.fullmatch(jar.name)
        if match:
            return KafkaDistribution(home, match["version"])
    return None


def zookeeper_mode_distributions() -> tuple[list[KafkaDistribution], str]:
    """``kafka_distributions`` whose brokers run in ZooKeeper mode (before 4.0), and (when none) why."""
    found, missing = kafka_distributions()
    zookeeper_mode = [d for d in found if d.has_zookeeper_mode]
    if zookeeper_mode or not found:
        return zookeeper_mode, missing
    return [], f"no Kafka distribution with ZooKeeper mode among {', '.join(d.version for d in found)}"


def kafka_distributions() -> tuple[list[KafkaDistribution], str]:
    """Every Kafka distribution found, oldest first, and (when none) the one-line reason."""
    given = os.environ.get("KTO_KAFKA_HOME")
    homes = (
        [Path(part) for part in given.split(os.pathsep) if part]
        if given
        else sorted(SHARED_SERVERS.glob("kafka_*"))
    )
    found = [d for d in map(_distribution, homes) if d is not None]
    found.sort(key=lambda d: tuple(int(p) if p.isdigit() else 0 for p in d.version.split(".")))
    if found:
        return found, ""
    if given:
        return (
            [],
            f"Kafka: KTO_KAFKA_HOME={given} holds no Kafka distribution (bin/kafka-server-start.sh, libs/)",
        )
    return [], f"Kafka not found: set KTO_KAFKA_HOME, or provide {SHARED_SERVERS}/kafka_*/"
