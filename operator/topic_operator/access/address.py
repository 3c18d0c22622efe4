"""Where a cluster is reached: its ZooKeeper connect string, its brokers with the client settings for them, or
both while it migrates to KRaft. One value for every face: a KafkaCluster read from manifests, ``kto``'s flags
and a fleet file all give the same ``ClusterAddress``, and ``stores.opened_store`` opens it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from topic_operator.admin.client_settings import AdminSettings, read_properties, settings_from_properties
from topic_operator.connect_string import ConnectStringError, parse_connect_string
from topic_operator.model import ClusterSpec

__all__ = [
    "ClusterAddress",
    "address_of",
    "client_properties",
    "cluster_identity",
    "ignored_property_warnings",
    "spec_identity",
]


@dataclass(frozen=True, slots=True)
class ClusterAddress:
    """One cluster's way in. ``zookeeper_connect`` is empty for a KRaft cluster; ``brokers`` is None for a
    cluster reached through ZooKeeper only. Plain data: it travels to a Spark task or a worker process."""

    zookeeper_connect: str = ""
    brokers: AdminSettings | None = None

    def __post_init__(self) -> None:
        if not self.zookeeper_connect and self.brokers is None:
            raise ValueError("a cluster address needs a ZooKeeper connect string, bootstrap servers or both")

    @property
    def text(self) -> str:
        """The address as messages name it: the bootstrap servers when there are brokers, else the ZooKeeper."""
        return self.brokers.servers_text if self.brokers is not None else self.zookeeper_connect


def address_of(
    cluster: ClusterSpec,
    client_properties: Mapping[str, str] | None = None,
    *,
    where: str = "client properties",
) -> tuple[ClusterAddress, tuple[str, ...]]:
    """``cluster``'s address, its brokers' client settings read from ``client_properties`` (Kafka's client
    property names, as ``--command-config`` holds them), and the properties that were ignored. Raises
    ``AdminSettingsError`` naming a property that cannot be used, and ``ValueError`` for a cluster with neither
    ZooKeeper nor brokers."""
    brokers: AdminSettings | None = None
    ignored: tuple[str, ...] = ()
    if cluster.bootstrap_servers:
        brokers, ignored = settings_from_properties(
            cluster.bootstrap_servers, client_properties or {}, where=where
        )
    return ClusterAddress(cluster.zookeeper_connect, brokers), ignored


def client_properties(command_config: str | None) -> tuple[dict[str, str], str]:
    """The client properties of ``--command-config`` (none without it), and how messages name where they came
    from. Raises ``AdminSettingsError`` for a file that cannot be read."""
    if not command_config:
        return {}, "client properties"
    return read_properties(command_config), f"--command-config {command_config}"


def ignored_property_warnings(where: str, ignored: Iterable[str]) -> list[str]:
    """One line for each property kto does not read, in the words Kafka's clients print."""
    return [
        f"warning: {where}: the configuration '{key}' was supplied but isn't a known config"
        for key in ignored
    ]


def cluster_identity(connect: str) -> str:
    """The normalised connect string: the same ensemble and chroot give the same identity."""
    try:
        hosts, chroot = parse_connect_string(connect)
    except ConnectStringError:
        return connect.strip()
    return ",".join(sorted({str(h).lower() for h in hosts})) + (chroot or "")


def spec_identity(zookeeper_connect: str, bootstrap_servers: str | None) -> str:
    """A cluster's identity, which tells two KafkaClusters that reach the same Kafka cluster apart from two that do
    not: its normalised connect string, or, for a cluster reached only through its
    brokers, its normalised bootstrap servers (``brokers:`` first, so that it never equals a connect string)."""
    if zookeeper_connect or not bootstrap_servers:
        return cluster_identity(zookeeper_connect)
    servers = sorted({s.strip().lower() for s in bootstrap_servers.split(",") if s.strip()})
    return "brokers:" + ",".join(servers)
