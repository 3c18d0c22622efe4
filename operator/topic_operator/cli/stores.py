"""How a ``kto`` command reaches a cluster: its ZooKeeper (``--zookeeper``) or its brokers through Kafka's Admin
protocol (``--bootstrap-server`` with ``--command-config``, the flags of Kafka's own tools). Either way the
command gets one ``ClusterStore``, so reading, planning and writing are the same code."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from topic_operator.access.interface import ClusterStore
from topic_operator.model import ClusterSpec

__all__ = ["add_bootstrap_options", "admin_store", "cluster_address"]


def add_bootstrap_options(command: argparse.ArgumentParser, *, group: Any = None) -> None:
    """``--bootstrap-server`` (in ``group`` when given, e.g. one exclusive with ``--zookeeper``) and
    ``--command-config``."""
    (group or command).add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT[,...]",
        help="reach the cluster through its brokers (Kafka's Admin protocol): a KRaft cluster, or one whose "
        "KRaft controller is active; comma-separated, as Kafka's tools take it",
    )
    command.add_argument(
        "--command-config",
        metavar="FILE",
        help="client properties for --bootstrap-server, as Kafka's tools read them: security.protocol, "
        "sasl.mechanism and sasl.jaas.config (PLAIN, SCRAM-SHA-256/512), PEM ssl.truststore.* and ssl.keystore.*",
    )


def cluster_address(args: argparse.Namespace) -> str:
    """The address a command's messages name the cluster by."""
    return str(getattr(args, "bootstrap_server", None) or getattr(args, "zookeeper", None) or "")


@contextmanager
def admin_store(
    bootstrap_servers: str, command_config: str | None, deadline: float
) -> Iterator[ClusterStore]:
    """A store on the brokers, closed at the end. A property kto does not read is one warning line each, as
    Kafka's clients print them; a property that cannot be used ends the command naming it."""
    from topic_operator.access.address import ClusterAddress, client_properties, ignored_property_warnings
    from topic_operator.access.stores import opened_store
    from topic_operator.admin.client_settings import settings_from_properties

    properties, where = client_properties(command_config)
    settings, ignored = settings_from_properties(bootstrap_servers, properties, where=where)
    for line in ignored_property_warnings(where, ignored):
        print(line, file=sys.stderr)
    # kto reports the brokers' answers and reads nothing back, so it does not wait for the metadata to show what
    # it created (the operator does: it re-reads for the status)
    with opened_store(ClusterAddress(brokers=settings), deadline=deadline, confirm_writes=False) as store:
        yield store


def chosen_store(
    args: argparse.Namespace,
    zookeeper: Callable[[], AbstractContextManager[ClusterStore]] | None,
    *,
    bootstrap_servers: str | None = None,
    zookeeper_address: str = "",
) -> AbstractContextManager[ClusterStore]:
    """The brokers when ``--bootstrap-server`` (or ``bootstrap_servers``, from a KafkaCluster) names them, else
    ``zookeeper()``; with both, a ``StagedStore`` over the two, which writes through the one the migration's
    stage allows."""
    servers = getattr(args, "bootstrap_server", None) or bootstrap_servers
    if servers and zookeeper is not None:
        return _staged(zookeeper, admin_store(servers, getattr(args, "command_config", None), args.deadline),
                       zookeeper_address=zookeeper_address, brokers_address=servers)  # fmt: skip
    if servers:
        return admin_store(servers, getattr(args, "command_config", None), args.deadline)
    if getattr(args, "command_config", None):
        from topic_operator.admin.errors import AdminSettingsError

        raise AdminSettingsError(
            "--command-config is for --bootstrap-server; ZooKeeper takes no client properties"
        )
    if zookeeper is None:
        raise ValueError("neither ZooKeeper nor brokers to reach the cluster by")
    return zookeeper()


@contextmanager
def _staged(
    zookeeper: Callable[[], AbstractContextManager[ClusterStore]],
    brokers: AbstractContextManager[ClusterStore],
    *,
    zookeeper_address: str,
    brokers_address: str,
) -> Iterator[ClusterStore]:
    """Both stores open, as one ``StagedStore``; both closed at the end."""
    from topic_operator.access.staged import StagedStore

    with zookeeper() as on_zookeeper, brokers as on_brokers:
        yield StagedStore(
            on_zookeeper,
            on_brokers,
            zookeeper_address=zookeeper_address,
            brokers_address=brokers_address,
        )


@contextmanager
def zookeeper_client(connect: str, deadline: float, *, require_kafka: bool = True) -> Iterator[Any]:
    """A client on the cluster, closed (boundedly) at the end; refuses a path that is not a Kafka cluster.

    kazoo may reconnect for as long as it likes (no retry limit): the command's deadline decides when to stop
    waiting, and kazoo's own log lines stay out of the way of kto's one-line errors.
    """
    from topic_operator.cli.options import UsageError
    from topic_operator.connect_string import ConnectStringError
    from topic_operator.zookeeper.connection import DEFAULT_CONNECTION_TIMEOUT, ZooKeeperSettings, connected
    from topic_operator.zookeeper.writer import ZooKeeperWriter

    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    logging.getLogger("kazoo").propagate = False
    try:
        settings = ZooKeeperSettings(
            connect=connect,
            deadline=deadline,
            connection_timeout=min(deadline, DEFAULT_CONNECTION_TIMEOUT),
            connect_max_tries=-1,
            connect_retry_deadline=None,
            retry_max_delay=1.0,
        )
    except ConnectStringError as error:
        raise UsageError(str(error)) from None
    with connected(settings) as client:
        if require_kafka:
            ZooKeeperWriter(client, deadline=deadline).require_kafka_cluster()
        yield client


@contextmanager
def zookeeper_store(connect: str, deadline: float) -> Iterator[Any]:
    """``zookeeper_client`` as the engine's store."""
    from topic_operator.zookeeper.store import ZooKeeperStore
    from topic_operator.zookeeper.writer import ZooKeeperWriter

    with zookeeper_client(connect, deadline) as client:
        yield ZooKeeperStore(client, ZooKeeperWriter(client, deadline=deadline))


def store_for(
    args: argparse.Namespace, cluster: ClusterSpec | None = None
) -> contextlib.AbstractContextManager[Any]:
    """The cluster's store: its brokers when ``--bootstrap-server`` or the KafkaCluster's ``bootstrapServers``
    names them, else its ZooKeeper (``--zookeeper`` or the KafkaCluster's)."""
    from topic_operator.cli.stores import chosen_store

    connect = cluster.zookeeper_connect if cluster is not None else args.zookeeper
    servers = cluster.bootstrap_servers if cluster is not None else None
    zookeeper = (lambda: zookeeper_store(connect, args.deadline)) if connect else None
    return chosen_store(args, zookeeper, bootstrap_servers=servers, zookeeper_address=connect or "")
