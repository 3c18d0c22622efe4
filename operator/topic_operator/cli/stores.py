"""How a ``kto`` command reaches a cluster: its ZooKeeper (``--zookeeper``) or its brokers through Kafka's Admin
protocol (``--bootstrap-server`` with ``--command-config``, the flags of Kafka's own tools). Either way the
command gets one ``ClusterStore``, so reading, planning and writing are the same code."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from topic_operator.access.address import ClusterAddress, client_properties, ignored_property_warnings
from topic_operator.access.interface import ClusterStore
from topic_operator.access.stores import opened_store
from topic_operator.admin.client_settings import AdminSettings, settings_from_properties
from topic_operator.admin.errors import AdminSettingsError
from topic_operator.connect_string import ConnectStringError, parse_connect_string
from topic_operator.model import ClusterSpec

__all__ = ["add_bootstrap_options", "cluster_address", "command_address", "store_for"]


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


def _brokers(bootstrap_servers: str, command_config: str | None) -> AdminSettings:
    """The brokers' client settings from ``--command-config``. A property kto does not read is one warning line
    each, as Kafka's clients print them; a property that cannot be used ends the command naming it."""
    properties, where = client_properties(command_config)
    settings, ignored = settings_from_properties(bootstrap_servers, properties, where=where)
    for line in ignored_property_warnings(where, ignored):
        print(line, file=sys.stderr)
    return settings


def command_address(args: argparse.Namespace, cluster: ClusterSpec | None = None) -> ClusterAddress:
    """Where a command reaches its cluster: the KafkaCluster's addresses as the flags left them (``cluster``), or
    ``--zookeeper`` / ``--bootstrap-server``. The brokers when named, its ZooKeeper when named, both while a
    migration lets its stage choose the writer."""
    from topic_operator.cli.options import UsageError

    connect = (cluster.zookeeper_connect if cluster is not None else getattr(args, "zookeeper", None)) or ""
    servers = getattr(args, "bootstrap_server", None) or (cluster.bootstrap_servers if cluster else None)
    command_config = getattr(args, "command_config", None)
    if command_config and not servers:
        raise AdminSettingsError(
            "--command-config is for --bootstrap-server; ZooKeeper takes no client properties"
        )
    if not connect and not servers:
        raise ValueError("neither ZooKeeper nor brokers to reach the cluster by")
    if connect:
        try:
            parse_connect_string(connect)
        except ConnectStringError as error:
            raise UsageError(str(error)) from None
    return ClusterAddress(connect, _brokers(servers, command_config) if servers else None)


@contextmanager
def store_for(args: argparse.Namespace, cluster: ClusterSpec | None = None) -> Iterator[ClusterStore]:
    """The cluster's store (``command_address``), opened through ``access`` as every face opens one, for the
    ``with`` block. ZooKeeper is reconnected to for as long as ``--deadline`` allows, and refused when its path
    holds no Kafka cluster; kto reports the brokers' answers and reads nothing back, so their store does not
    wait for the metadata to show what it created (the operator does: it re-reads for the status)."""
    address = command_address(args, cluster)
    logging.getLogger("kazoo").addHandler(logging.NullHandler())  # kto's one-line errors say it all
    logging.getLogger("kazoo").propagate = False
    with opened_store(
        address, deadline=args.deadline, confirm_writes=False, ride_out_outages=True, require_kafka=True
    ) as store:
        yield store
