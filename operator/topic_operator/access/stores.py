"""A ``ClusterAddress`` opened as the engine's ``ClusterStore``: ZooKeeper's, the brokers' (Kafka's Admin
protocol), or, with both, a ``StagedStore`` that writes through the one the migration's stage allows. Opened and
closed here, so no face builds its own kazoo or Kafka client to read a cluster."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Final

from topic_operator.access.address import ClusterAddress
from topic_operator.access.interface import DEFAULT_DEADLINE, ClusterStore

__all__ = ["STORE_MODULES", "opened_store"]

STORE_MODULES: Final = (
    "topic_operator.access.staged",
    "topic_operator.admin.connection",
    "topic_operator.admin.store",
    "topic_operator.zookeeper.connection",
    "topic_operator.zookeeper.settings",
    "topic_operator.zookeeper.store",
    "topic_operator.zookeeper.writer",
)
"""The modules ``opened_store`` imports on its first use (kazoo, kafka-python and the two stores: a third of a
second), named so that a pool of processes about to read clusters can load them once, before its workers fork,
rather than in each worker while the read waits."""


@contextmanager
def opened_store(
    address: ClusterAddress,
    *,
    deadline: float = DEFAULT_DEADLINE,
    connect_timeout: float | None = None,
    read_only: bool = False,
    confirm_writes: bool = True,
    ride_out_outages: bool = False,
    require_kafka: bool = False,
) -> Iterator[ClusterStore]:
    """The store ``address`` leads to, open for the ``with`` block and closed after it (boundedly: a hung
    server does not hold the caller). ``deadline`` bounds every request; ``connect_timeout`` (default: the
    deadline) how long reaching the cluster may take. ``read_only``: a ZooKeeper session that a read-only server
    may serve, for a caller that never writes (the drift job). ``confirm_writes``: whether the brokers' store
    waits for its writes to show in the metadata.

    ``ride_out_outages``: kazoo reconnects with no limit of its own, backing off at most a second, so that the
    deadline alone says when an outage has lasted too long (a ``kto`` command, which reports what it did by
    then). ``require_kafka``: refuse a ZooKeeper path that holds no Kafka cluster before anything is read."""
    from topic_operator.access.staged import StagedStore
    from topic_operator.admin.connection import connected as admin_connected
    from topic_operator.admin.store import AdminStore
    from topic_operator.zookeeper.connection import connected as zookeeper_connected
    from topic_operator.zookeeper.settings import DEFAULT_CONNECTION_TIMEOUT, ZooKeeperSettings
    from topic_operator.zookeeper.store import ZooKeeperStore
    from topic_operator.zookeeper.writer import ZooKeeperWriter

    reach = connect_timeout if connect_timeout is not None else deadline
    with ExitStack() as opened:
        on_zookeeper: ClusterStore | None = None
        on_brokers: ClusterStore | None = None
        if address.zookeeper_connect:
            if ride_out_outages:
                settings = ZooKeeperSettings(
                    connect=address.zookeeper_connect,
                    read_only=read_only,
                    deadline=deadline,
                    connection_timeout=min(reach, DEFAULT_CONNECTION_TIMEOUT),
                    connect_max_tries=-1,
                    connect_retry_deadline=None,
                    retry_max_delay=1.0,
                )
            else:
                settings = ZooKeeperSettings(
                    connect=address.zookeeper_connect,
                    read_only=read_only,
                    deadline=deadline,
                    connection_timeout=reach,
                    session_timeout=max(reach, 4.0),
                )
            client = opened.enter_context(zookeeper_connected(settings))
            writer = ZooKeeperWriter(client, deadline=deadline)
            if require_kafka:
                writer.require_kafka_cluster()
            on_zookeeper = ZooKeeperStore(client, writer)
        if address.brokers is not None:
            admin = opened.enter_context(
                admin_connected(address.brokers, deadline=deadline, bootstrap_timeout=reach)
            )
            on_brokers = AdminStore(admin, address.brokers, deadline=deadline, confirm_writes=confirm_writes)
        if on_zookeeper is not None and on_brokers is not None:
            yield StagedStore(
                on_zookeeper,
                on_brokers,
                zookeeper_address=address.zookeeper_connect,
                brokers_address=address.text,
            )
        else:
            store = on_zookeeper or on_brokers
            assert store is not None  # ClusterAddress holds one or both
            yield store
