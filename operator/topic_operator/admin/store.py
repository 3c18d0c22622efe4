"""A cluster reached through Kafka's Admin protocol as the engine's ``ClusterStore``."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from kafka.admin import KafkaAdminClient

from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import reaching
from topic_operator.admin.reader import read_cluster
from topic_operator.admin.writer import AdminWriter
from topic_operator.cluster_store import DEFAULT_DEADLINE, Backend, Patience, WriteResult
from topic_operator.model import ClusterState
from topic_operator.plan import Action

__all__ = ["AdminStore"]


class AdminStore:
    """``admin`` (bootstrapped from ``settings``): reads in four requests, writes one request of each kind per
    batch. ``deadline`` bounds every request: it is the client's request time-out (``connection.open_admin``)."""

    def __init__(
        self, admin: KafkaAdminClient, settings: AdminSettings, *, deadline: float = DEFAULT_DEADLINE
    ) -> None:
        self.admin = admin
        self.settings = settings
        self.deadline = deadline
        self.writer = AdminWriter(admin, settings, timeout=deadline)

    @property
    def backend(self) -> Backend:
        return Backend.KRAFT

    def read_cluster(
        self,
        *,
        partition_states: bool = False,
        topics: Collection[str] | None = None,
        deadline: float | Patience = DEFAULT_DEADLINE,
    ) -> ClusterState:
        with reaching(self.settings, self.deadline):
            return read_cluster(self.admin, partition_states=partition_states, topics=topics)

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        return self.writer.apply_all(actions)
