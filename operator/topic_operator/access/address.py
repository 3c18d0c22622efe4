"""Where a cluster is reached: its ZooKeeper connect string, its brokers with the client settings for them, or
both while it migrates to KRaft. One value for every face: a KafkaCluster read from manifests, ``kto``'s flags
and a fleet file all give the same ``ClusterAddress``, and ``stores.opened_store`` opens it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from topic_operator.admin.client_settings import AdminSettings, settings_from_properties
from topic_operator.model import ClusterSpec

__all__ = ["ClusterAddress", "address_of"]


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
