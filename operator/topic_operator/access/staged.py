"""A cluster declared with both its ZooKeeper and its brokers, as one ``ClusterStore`` that writes through the
path the migration's stage allows (``kafka.kraft_migration.choose_writer``): ZooKeeper before a migration, the
brokers once a KRaft controller owns the metadata, neither in between.

Reads come from the store that will write: ZooKeeper's state in ZooKeeper mode (and while nothing may be
written, so that the planner refuses naming the stage), the brokers' state once they write, told where the
migration stands from ZooKeeper, which is then only read.

A change lands once, through one path, even when the stage moves under it. Every write first reads the stage
again; when it is not the one the plan was read at, nothing is written and each action is a conflict, which the
``Reconciler`` answers by reading those topics again (from the store the new stage writes through) and planning
them again. The brokers' path needs no more than that: whichever controller is active applies what they forward,
once. ZooKeeper's writer refuses on its own as soon as ``/migration`` exists.

Before anything else, both addresses must reach the same cluster: ZooKeeper's ``/cluster/id`` and the id the
brokers report must be equal, or every read raises ``ClusterMismatchError``.

Pure: it drives two stores through the ``ClusterStore`` protocol, whichever packages implement them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol, Unpack

from topic_operator.access.interface import (
    DEFAULT_DEADLINE,
    Backend,
    ClusterMismatchError,
    ClusterStore,
    ClusterUnavailableError,
    Outcome,
    Patience,
    ReadRequest,
    WriteResult,
    read_deadline,
)
from topic_operator.kafka.errors import KafkaError
from topic_operator.kafka.kraft_migration import Writer, WriterChoice, choose_writer
from topic_operator.model import ClusterState
from topic_operator.plan import Action

__all__ = ["StagedStore", "WriterMovedError", "staged_writer"]


class WriterMovedError(Exception):
    """The migration moved to another stage between the read a plan was made from and its write."""


def staged_writer(zookeeper: ClusterState) -> WriterChoice:
    """The writer for a cluster declared with both, from what its ZooKeeper shows."""
    return choose_writer(zookeeper.migration, zookeeper=True, brokers=True)


class StagedStore:
    """``zookeeper`` and ``brokers``: two stores of one cluster. ``zookeeper_address`` and ``brokers_address``
    name them in messages."""

    def __init__(
        self,
        zookeeper: ClusterStore,
        brokers: ClusterStore,
        *,
        zookeeper_address: str,
        brokers_address: str,
    ) -> None:
        self.zookeeper = zookeeper
        self.brokers = brokers
        self.zookeeper_address = zookeeper_address
        self.brokers_address = brokers_address
        self.choice: WriterChoice | None = None
        """The writer of the last read: what the plans made from it are written through."""
        self._same_cluster: str | None = None
        """The cluster id both addresses were found to reach (checked once, then at each read of the brokers)."""

    @property
    def backend(self) -> Backend:
        """The protocol of the last read (ZooKeeper until a read says otherwise)."""
        if self.choice is not None and self.choice.writer is Writer.ADMIN_PROTOCOL:
            return Backend.KRAFT
        return Backend.ZOOKEEPER

    # -- the parts, for a caller that holds its own views (the operator's watched ZooKeeper) -----------------

    def check_same_cluster(self, zookeeper: ClusterState, brokers: ClusterState | None = None) -> None:
        """Raise ``ClusterMismatchError`` unless ZooKeeper and the brokers hold the same cluster id. Without a
        state of the brokers they are asked, once for the store's life (their id cannot change under them)."""
        if brokers is None:
            if self._same_cluster is not None and self._same_cluster == zookeeper.cluster_id:
                return
            brokers = self._brokers_read(lambda: self.brokers.read_cluster(topics=(), configs_of=()))
        if zookeeper.cluster_id is None or zookeeper.cluster_id != brokers.cluster_id:
            raise ClusterMismatchError(
                f"ZooKeeper {self.zookeeper_address} holds Kafka cluster {zookeeper.cluster_id} (/cluster/id) "
                f"but the brokers {self.brokers_address} report cluster {brokers.cluster_id}: spec.zookeeper and "
                "spec.bootstrapServers must reach the same cluster; nothing is written"
            )
        self._same_cluster = zookeeper.cluster_id

    def planned(self, zookeeper: ClusterState) -> WriterChoice:
        """The writer ``zookeeper`` (a state of the cluster's ZooKeeper) calls for; what plans made now are
        written through."""
        self.choice = staged_writer(zookeeper)
        return self.choice

    def on_the_brokers(self, brokers: ClusterState, zookeeper: ClusterState) -> ClusterState:
        """The brokers' ``brokers`` state told where the migration stands, from ``zookeeper``; its cluster id
        checked against ZooKeeper's."""
        self.check_same_cluster(zookeeper, brokers)
        return dataclasses.replace(
            brokers,
            migration=zookeeper.migration,
            kraft_migration_stage=zookeeper.kraft_migration_stage,
            writer=self.choice,
        )

    def staged(self, zookeeper: ClusterState) -> ClusterState:
        """``zookeeper`` (read through ZooKeeper, which writes or nothing does) with the staged writer."""
        return dataclasses.replace(zookeeper, writer=self.choice)

    def brokers_failed(self, error: Exception) -> ClusterUnavailableError:
        """The brokers' failure, saying what it stops: every write while they are the writer (ZooKeeper is not
        written instead), or, before they were ever checked, every write until they show the same cluster id."""
        if self.choice is not None and self.choice.writer is Writer.ADMIN_PROTOCOL:
            return ClusterUnavailableError(
                f"{error}; ZooKeeper shows a KRaft controller owning the metadata (stage {self.choice.stage}), "
                "so nothing is written through ZooKeeper either"
            )
        return ClusterUnavailableError(
            f"{error}; the brokers must answer once, to show they are the cluster ZooKeeper holds (its "
            "/cluster/id): nothing is written until they do"
        )

    # -- ClusterStore ------------------------------------------------------------------------------------------

    def read_cluster(self, **request: Unpack[ReadRequest]) -> ClusterState:
        """The cluster from the store the stage writes through; ZooKeeper's when nothing may be written. The stage
        comes first, from ZooKeeper's cluster-wide znodes alone."""
        head = self.zookeeper.read_cluster(topics=(), deadline=read_deadline(request))
        self.check_same_cluster(head)
        choice = self.planned(head)
        if choice.writer is not Writer.ADMIN_PROTOCOL:
            return self.staged(self.zookeeper.read_cluster(**request))
        brokers = self._brokers_read(lambda: self.brokers.read_cluster(**request))
        return self.on_the_brokers(brokers, head)

    def validate(self, actions: Sequence[Action]) -> dict[str, KafkaError]:
        """The brokers' verdict while they write; ZooKeeper has none (``ZooKeeperStore.validate``)."""
        if self.backend is Backend.KRAFT:
            return self.brokers.validate(actions)
        return self.zookeeper.validate(actions)

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        """Write through the path the plan was read for, after checking the stage has not moved; when it has,
        nothing is written and every action is a conflict (re-read and re-planned by the caller)."""
        if not actions:
            return []
        planned = self.choice
        head = self.zookeeper.read_cluster(
            topics=(), deadline=DEFAULT_DEADLINE if deadline is None else deadline
        )
        now = staged_writer(head)
        if planned is None or now.writer is not planned.writer:
            was = "no read" if planned is None else f"stage {planned.stage} ({planned.writer.value})"
            error = WriterMovedError(
                f"the migration to KRaft moved from {was} to stage {now.stage} ({now.writer.value}) between "
                f"the read and the write: nothing was written; read again and planned for {now.writer.value}"
            )
            return [WriteResult(action, Outcome.CONFLICT, error) for action in actions]
        store = {Writer.ZOOKEEPER: self.zookeeper, Writer.ADMIN_PROTOCOL: self.brokers}.get(now.writer)
        if store is None:  # the planner refuses every change while nothing may write: never sent here
            error = WriterMovedError(f"nothing may be written at stage {now.stage}: {now.why}")
            return [WriteResult(action, Outcome.NOT_WRITTEN, error) for action in actions]
        if store is self.brokers:
            try:
                return store.apply_all(actions, deadline=deadline)
            except ClusterUnavailableError as error:
                raise self.brokers_failed(error) from error
        return store.apply_all(actions, deadline=deadline)

    def _brokers_read(self, read: _Read) -> ClusterState:
        try:
            return read()
        except ClusterUnavailableError as error:
            raise self.brokers_failed(error) from error


class _Read(Protocol):
    def __call__(self) -> ClusterState: ...
