"""The plain data the engine works on: what a cluster actually holds (``ClusterState``), read from ZooKeeper.

Frozen dataclasses with no behaviour beyond derived properties, so the planner stays a pure function of them and a
snapshot can be written to JSON lines and read back by the Spark job unchanged. The desired side (``TopicSpec``,
``ClusterSpec``) joins this module with the manifests work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from topic_operator.kafka.assignment import BrokerMetadata

__all__ = ["Broker", "ClusterState", "PartitionState", "TopicState"]


@dataclass(frozen=True, slots=True)
class Broker:
    """A registered broker (``/brokers/ids/<id>``). ``epoch`` is the registration znode's czxid, which Kafka uses
    as the broker epoch: it changes whenever the broker re-registers."""

    id: int
    rack: str | None = None
    endpoints: tuple[str, ...] = ()
    epoch: int = 0

    def metadata(self) -> BrokerMetadata:
        return BrokerMetadata(self.id, self.rack)


@dataclass(frozen=True, slots=True)
class PartitionState:
    """The controller's view of one partition (``.../partitions/<p>/state``); ``partition_epoch`` is the znode's
    data version."""

    leader: int
    isr: tuple[int, ...]
    leader_epoch: int
    controller_epoch: int
    leader_recovery_state: int = 0
    partition_epoch: int = 0


@dataclass(frozen=True, slots=True)
class TopicState:
    """One topic as ZooKeeper holds it.

    ``topic_znode_version`` / ``config_znode_version`` are the znodes' data versions, the compare-and-set tokens of
    every write (``config_znode_version`` is None when ``/config/topics/<t>`` does not exist). ``config`` is the
    override set exactly as stored. ``partition_states`` is None unless partition states were asked for.
    """

    name: str
    partitions: Mapping[int, tuple[int, ...]]
    topic_id: str | None = None
    adding_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    config: Mapping[str, str] = field(default_factory=dict)
    topic_znode_version: int = 0
    config_znode_version: int | None = None
    marked_for_deletion: bool = False
    pending_reassignment: bool = False
    partition_states: Mapping[int, PartitionState] | None = None

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        """Partition 0's replica count, the one Kafka's addPartitions takes as the topic's (0 when absent)."""
        return len(self.partitions.get(0, ()))

    @property
    def reassignment_in_progress(self) -> bool:
        """Adding/removing replicas in the topic znode, or an entry in ``/admin/reassign_partitions``."""
        return (
            self.pending_reassignment
            or any(self.adding_replicas.values())
            or any(self.removing_replicas.values())
        )


@dataclass(frozen=True, slots=True)
class ClusterState:
    """A whole cluster as read at one moment: brokers, controller, cluster id and every topic."""

    cluster_id: str | None
    brokers: Mapping[int, Broker]
    topics: Mapping[str, TopicState]
    controller: int | None = None
    orphan_configs: Mapping[str, int] = field(default_factory=dict)
    """Topic config znodes whose topic does not exist (name -> znode version): left by an interrupted create
    or a deletion in progress. A create must overwrite them at that version."""
    unreadable_topics: Mapping[str, str] = field(default_factory=dict)
    """Topics whose znodes are not in a format Kafka writes (name -> problem). Kept out of ``topics`` so that
    nothing is planned on a guess, and reported instead."""

    @property
    def broker_metadata(self) -> list[BrokerMetadata]:
        """The brokers as placement takes them, sorted by id."""
        return [self.brokers[i].metadata() for i in sorted(self.brokers)]
