"""Builders for planner inputs: plain ClusterState / TopicSpec values, as a snapshot or the loader makes them."""

from collections.abc import Mapping

from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.model import Broker, ClusterSpec, ClusterState, DeletionPolicy, TopicSpec, TopicState

RACKS = ("rack-a", "rack-b", "rack-c", "rack-a", "rack-b", "rack-c")


def brokers(racks: tuple[str | None, ...] = RACKS) -> dict[int, Broker]:
    return {i: Broker(i, rack) for i, rack in enumerate(racks)}


def cluster_state(
    *topics: TopicState,
    racks: tuple[str | None, ...] = RACKS,
    orphan_configs: Mapping[str, int] | None = None,
    marked_for_deletion: frozenset[str] = frozenset(),
    unreadable: Mapping[str, str] | None = None,
) -> ClusterState:
    return ClusterState(
        cluster_id="test-cluster",
        brokers=brokers(racks),
        topics={t.name: t for t in topics},
        controller=0,
        orphan_configs=dict(orphan_configs or {}),
        marked_for_deletion=marked_for_deletion | {t.name for t in topics if t.marked_for_deletion},
        unreadable_topics=dict(unreadable or {}),
    )


def existing(
    name: str,
    assignment: Mapping[int, tuple[int, ...]],
    config: Mapping[str, str] | None = None,
    *,
    version: int = 0,
    config_version: int | None = 0,
    topic_id: str | None = "q3xFy1sLTyajJv4JTtj6qQ",
    marked: bool = False,
    adding: Mapping[int, tuple[int, ...]] | None = None,
) -> TopicState:
    return TopicState(
        name=name,
        partitions=dict(assignment),
        topic_id=topic_id,
        adding_replicas=dict(adding or {}),
        config=dict(config or {}),
        topic_znode_version=version,
        config_znode_version=config_version,
        marked_for_deletion=marked,
    )


def spec(
    name: str,
    partitions: int = 3,
    replicas: int = 3,
    config: Mapping[str, str] | None = None,
    *,
    cluster: str = "main",
    assignment: Mapping[int, tuple[int, ...]] | None = None,
    rack_mode: RackAwareMode = RackAwareMode.ENFORCED,
    deletion: DeletionPolicy = DeletionPolicy.RETAIN,
    source: str = "",
) -> TopicSpec:
    return TopicSpec(
        cluster=cluster,
        name=name,
        partitions=partitions,
        replicas=replicas,
        config=dict(config or {}),
        replica_assignment=assignment,
        rack_aware_mode=rack_mode,
        deletion_policy=deletion,
        source=source or f"{name}.yaml#0",
    )


def cluster_spec(**overrides: object) -> ClusterSpec:
    values: dict[str, object] = {"name": "main", "zookeeper_connect": "127.0.0.1:2181/kafka", **overrides}
    return ClusterSpec(**values)  # type: ignore[arg-type]
