"""A cluster reached through Kafka's Admin protocol as the engine's ``ClusterStore``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Sequence

from kafka.admin import KafkaAdminClient

from topic_operator.access.interface import DEFAULT_DEADLINE, Backend, Patience, WriteResult
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import open_admin, reaching
from topic_operator.admin.reader import read_cluster
from topic_operator.admin.writer import AdminWriter
from topic_operator.kafka.errors import KafkaError
from topic_operator.model import ClusterState
from topic_operator.plan import Action

__all__ = ["AdminStore", "open_store"]


class AdminStore:
    """``admin`` (bootstrapped from ``settings``): reads in four requests, writes one request of each kind per
    batch. ``deadline`` bounds every request: it is the client's request time-out (``connection.open_admin``).
    ``may_write`` is asked before each write request (the operator's leader lease); ``confirm_writes``: see
    ``AdminWriter``."""

    def __init__(
        self,
        admin: KafkaAdminClient,
        settings: AdminSettings,
        *,
        deadline: float = DEFAULT_DEADLINE,
        may_write: Callable[[], bool] | None = None,
        confirm_writes: bool = True,
    ) -> None:
        self.admin = admin
        self.settings = settings
        self.deadline = deadline
        self.writer = AdminWriter(
            admin, settings, timeout=deadline, may_write=may_write, confirm_writes=confirm_writes
        )

    @property
    def backend(self) -> Backend:
        return Backend.KRAFT

    def read_cluster(
        self,
        *,
        partition_states: bool = False,
        topics: Collection[str] | None = None,
        deadline: float | Patience = DEFAULT_DEADLINE,
        configs_of: Collection[str] | None = None,
    ) -> ClusterState:
        with reaching(self.settings, self.deadline):
            return read_cluster(
                self.admin,
                partition_states=partition_states,
                topics=topics,
                configs_of=configs_of,
                deadline=self.deadline,
            )

    def close(self) -> None:
        """Close the client (bounded: kafka-python stops its I/O thread)."""
        with contextlib.suppress(Exception):
            self.admin.close()

    def validate(self, actions: Sequence[Action]) -> dict[str, KafkaError]:
        """The brokers' ``validate_only`` verdict on ``actions`` (``AdminWriter.validate_all``)."""
        return self.writer.validate_all(actions)

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        return self.writer.apply_all(actions)


def open_store(
    settings: AdminSettings,
    *,
    deadline: float,
    bootstrap_timeout: float | None = None,
    may_write: Callable[[], bool] | None = None,
) -> AdminStore:
    """A store on a client whose bootstrap succeeded within ``bootstrap_timeout`` (default: ``deadline``; else
    ``admin.errors``)."""
    admin = open_admin(settings, deadline=deadline, bootstrap_timeout=bootstrap_timeout)
    return AdminStore(admin, settings, deadline=deadline, may_write=may_write)
