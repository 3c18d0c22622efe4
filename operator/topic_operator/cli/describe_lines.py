"""Topics described the way ``kafka-topics.sh --describe`` prints them, from a snapshot with partition states.

Operators already read that format (and grep it), so ``kto describe`` keeps its layout: a topic line with id,
partition count, replication factor and config overrides, then a tab-indented line per partition with leader,
replicas and ISR. The two filters match kafka-topics.sh's: under-replicated partitions (ISR smaller than the
replica list) and unavailable partitions (no leader, or a leader that is not a live broker). A topic being
reassigned says so on its topic line, and its moving partitions show the replicas being added and removed, as
kafka-topics.sh does. A partition whose
state znode cannot be read shows ``Leader: unknown`` and ``Isr: unknown``, and both filters show it: it cannot be
known to be healthy.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from topic_operator.model import ClusterState, PartitionState, TopicState, is_unavailable, is_under_replicated

__all__ = ["describe_lines"]


def _joined(ids: tuple[int, ...]) -> str:
    return ",".join(map(str, ids))


def _topic_line(topic: TopicState) -> str:
    configs = ",".join(f"{k}={v}" for k, v in sorted(topic.config.items()))
    line = (
        f"Topic: {topic.name}\tTopicId: {topic.topic_id or 'AAAAAAAAAAAAAAAAAAAAAA'}\t"
        f"PartitionCount: {topic.partition_count}\tReplicationFactor: {topic.replication_factor}\tConfigs: {configs}"
    )
    if topic.reassignment_in_progress:
        line += "\tReassignmentInProgress: true"
    return line + ("\tMarkedForDeletion: true" if topic.marked_for_deletion else "")


def _partition_line(topic: TopicState, partition: int, state: PartitionState | None) -> str:
    leader = "none" if state is None or state.leader < 0 else str(state.leader)
    isr = _joined(state.isr) if state is not None else ""
    if partition in topic.unreadable_partition_states:
        leader = isr = "unknown"
    line = f"\tTopic: {topic.name}\tPartition: {partition}\tLeader: {leader}\tReplicas: {_joined(topic.partitions[partition])}\tIsr: {isr}"
    adding = topic.adding_replicas.get(partition)
    removing = topic.removing_replicas.get(partition)
    if adding:
        line += f"\tAdding Replicas: {_joined(adding)}"
    if removing:
        line += f"\tRemoving Replicas: {_joined(removing)}"
    return line + ("\tMarkedForDeletion: true" if topic.marked_for_deletion else "")


def describe_lines(
    state: ClusterState,
    topics: Collection[str] = (),
    *,
    under_replicated: bool = False,
    unavailable: bool = False,
) -> Iterator[str]:
    """Lines for the named topics (all when empty), sorted. With a filter, only matching partitions are shown
    and, as in kafka-topics.sh, topic lines are left out."""
    live = set(state.brokers)
    names = sorted(t for t in state.topics if not topics or t in topics)
    for name in names:
        topic = state.topics[name]
        states = topic.partition_states or {}
        filtered = under_replicated or unavailable
        if not filtered:
            yield _topic_line(topic)
        for partition in sorted(topic.partitions):
            partition_state = states.get(partition)
            unknown = partition in topic.unreadable_partition_states
            if (
                under_replicated
                and not unknown
                and not is_under_replicated(topic.partitions[partition], partition_state)
            ):
                continue
            if unavailable and not unknown and not is_unavailable(partition_state, live):
                continue
            yield _partition_line(topic, partition, partition_state)
