"""A ZooKeeper-mode cluster as the engine's ``ClusterStore``: read with ``snapshot.read_cluster``, written with the
``ZooKeeperWriter`` (one transaction per action, compare-and-set on the versions read)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from kazoo.client import KazooClient

from topic_operator.access.interface import (
    DEFAULT_DEADLINE,
    Backend,
    Patience,
    ReadRequest,
    WriteResult,
    read_deadline,
)
from topic_operator.kafka.errors import KafkaError
from topic_operator.model import ClusterState
from topic_operator.plan import Action
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import ZooKeeperWriter

__all__ = ["ZooKeeperStore"]


class ZooKeeperStore:
    """``client`` (started, rooted at the cluster's chroot) and the writer that writes through it: ``writer``, or
    one whose every transaction ZooKeeper may keep waiting ``deadline`` seconds."""

    def __init__(
        self,
        client: KazooClient,
        writer: ZooKeeperWriter | None = None,
        *,
        deadline: float = DEFAULT_DEADLINE,
    ) -> None:
        self.client = client
        self.writer = writer if writer is not None else ZooKeeperWriter(client, deadline=deadline)

    @property
    def backend(self) -> Backend:
        return Backend.ZOOKEEPER

    def read_cluster(self, **request: Unpack[ReadRequest]) -> ClusterState:
        """``snapshot.read_cluster``: every topic's overrides, whatever ``configs_of`` says (they are znodes of
        their own, read together with the topic's)."""
        return read_cluster(
            self.client,
            partition_states=request.get("partition_states", False),
            topics=request.get("topics"),
            deadline=read_deadline(request),
        )

    def validate(self, actions: Sequence[Action]) -> dict[str, KafkaError]:
        """ZooKeeper has no validate-only write: the port's rules, already applied by the planner, are the verdict."""
        return {}

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        return self.writer.apply_all(actions, deadline=deadline)
