"""A cluster reached through Kafka's Admin protocol as the engine's ``ClusterStore``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Unpack

from kafka.admin import KafkaAdminClient

from topic_operator.access.interface import (
    DEFAULT_DEADLINE,
    Backend,
    Patience,
    ReadRequest,
    WriteResult,
)
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

    def read_cluster(self, **request: Unpack[ReadRequest]) -> ClusterState:
        """Metadata, and the overrides of the topics ``configs_of`` names (every topic's by default), within the
        store's own deadline: a client's requests time out on their own, so the request's is not needed."""
        with reaching(self.settings, self.deadline):
            return read_cluster(
                self.admin,
                partition_states=request.get("partition_states", False),
                topics=request.get("topics"),
                configs_of=request.get("configs_of"),
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
