"""Replica changes of existing partitions: where a replication-factor change puts replicas, which partitions
move, and the request and throttle formats Kafka's reassignment takes (semantics §14).

Kafka changes the replicas of an existing partition only through a partition reassignment, and it has no rule of
its own for a replication-factor change (``kafka-reassign-partitions.sh --generate`` re-places whole topics from
scratch, moving replicas that need not move). The rules here move as little as possible, and are deterministic,
so every replica of the operator and every ``kto plan`` computes the same target:

* **An increase** keeps every replica of a partition, in order (so its preferred leader stays), and appends new
  ones, one at a time, choosing among the brokers not yet in the partition:
  1. a broker on a rack the partition does not use yet (when brokers have racks);
  2. then the broker holding the fewest replicas in the cluster, counting those placed so far;
  3. then the first in Kafka's broker order (``rack_alternated_broker_list`` when racks are set, else ids in
     ascending order) rotated by ``start``, the topic's seed, so that topics with equal loads do not all pile
     onto the same broker.
* **A decrease** drops replicas from the end of the list, never the first (the preferred leader), and drops a
  replica whose rack another kept replica also covers before one whose rack would then go unused.

Either way the target must fit the brokers registered now, in Kafka's words (``check_replication_factor``).

Pure: plain data in, plain data out; the ZooKeeper layer writes what ``reassignment_request`` and
``throttled_replicas`` return.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from topic_operator.kafka.assignment import (
    BrokerMetadata,
    check_replication_factor,
    rack_alternated_broker_list,
)
from topic_operator.kafka.errors import InvalidReplicaAssignmentError

__all__ = [
    "PartitionMove",
    "decrease_replication",
    "increase_replication",
    "moves_between",
    "reassignment_request",
    "throttled_replicas",
]

Assignment = Mapping[int, Sequence[int]]
"""Partition id -> replicas, preferred leader first."""


@dataclass(frozen=True, slots=True)
class PartitionMove:
    """One partition's change: its replicas now and the replicas it is to have."""

    partition: int
    current: tuple[int, ...]
    target: tuple[int, ...]

    @property
    def adding(self) -> tuple[int, ...]:
        """The replicas the target adds (the controller's ``adding_replicas``), in target order."""
        return tuple(b for b in self.target if b not in self.current)

    @property
    def removing(self) -> tuple[int, ...]:
        """The replicas the target drops (the controller's ``removing_replicas``), in current order."""
        return tuple(b for b in self.current if b not in self.target)

    def describe(self) -> str:
        """As the plan shows it: ``p3: [1, 2] -> [1, 2, 4]``."""
        return f"p{self.partition}: {list(self.current)} -> {list(self.target)}"


def _broker_order(brokers: Sequence[BrokerMetadata], start: int) -> list[int]:
    racks = {b.id: b.rack for b in brokers if b.rack is not None}
    order = (
        rack_alternated_broker_list(racks) if len(racks) == len(brokers) else sorted(b.id for b in brokers)
    )
    if not order:
        return order
    shift = start % len(order)
    return order[shift:] + order[:shift]


def increase_replication(
    assignment: Assignment,
    replication_factor: int,
    brokers: Sequence[BrokerMetadata],
    *,
    load: Mapping[int, int],
    start: int = 0,
) -> dict[int, tuple[int, ...]]:
    """Every partition with ``replication_factor`` replicas: its own kept in order, new ones appended (see the
    module docstring). ``load`` is each broker's replica count in the cluster before the change."""
    check_replication_factor(replication_factor, len(brokers))
    rack_of = {b.id: b.rack for b in brokers}
    order = _broker_order(brokers, start)
    position = {broker: index for index, broker in enumerate(order)}
    counts = {broker: load.get(broker, 0) for broker in order}
    target: dict[int, tuple[int, ...]] = {}
    for partition in sorted(assignment):
        replicas = list(assignment[partition])
        while len(replicas) < replication_factor:
            used_racks = {rack_of.get(b) for b in replicas}
            candidates = [b for b in order if b not in replicas]

            def preference(broker: int, used: set[str | None] = used_racks) -> tuple[bool, int, int]:
                new_rack = rack_of[broker] is not None and rack_of[broker] not in used
                return (not new_rack, counts[broker], position[broker])

            chosen = min(candidates, key=preference)
            replicas.append(chosen)
            counts[chosen] += 1
        target[partition] = tuple(replicas)
    return target


def decrease_replication(
    assignment: Assignment, replication_factor: int, brokers: Sequence[BrokerMetadata]
) -> dict[int, tuple[int, ...]]:
    """Every partition cut to ``replication_factor`` replicas from the end, keeping the preferred leader and as
    many racks as possible (see the module docstring)."""
    check_replication_factor(replication_factor, len(brokers))
    rack_of = {b.id: b.rack for b in brokers}
    target: dict[int, tuple[int, ...]] = {}
    for partition in sorted(assignment):
        replicas = list(assignment[partition])
        while len(replicas) > replication_factor:
            for index in range(len(replicas) - 1, 0, -1):  # from the end; never index 0
                others = replicas[:index] + replicas[index + 1 :]
                if rack_of.get(replicas[index]) in {rack_of.get(b) for b in others}:
                    break
            else:
                index = len(replicas) - 1  # every replica's rack is its own: drop the last
            del replicas[index]
        target[partition] = tuple(replicas)
    return target


def moves_between(current: Assignment, target: Assignment) -> list[PartitionMove]:
    """The partitions whose replicas change, by partition id; a duplicate or empty target is refused in Kafka's
    words, before anything is written."""
    moves: list[PartitionMove] = []
    for partition in sorted(target):
        wanted = tuple(target[partition])
        if not wanted:
            raise InvalidReplicaAssignmentError(
                f"Empty replica list for partition {partition}.", field="replicaAssignment"
            )
        if len(set(wanted)) != len(wanted):
            raise InvalidReplicaAssignmentError(
                f"Duplicate replica assignment found: {partition} -> {list(wanted)}",
                field="replicaAssignment",
            )
        now = tuple(current.get(partition, ()))
        if wanted != now:
            moves.append(PartitionMove(partition, now, wanted))
    return moves


def reassignment_request(topic: str, moves: Sequence[PartitionMove]) -> dict[str, Any]:
    """The body of ``/admin/reassign_partitions`` (version 1), as ``kafka-reassign-partitions.sh`` writes it."""
    return {
        "version": 1,
        "partitions": [{"topic": topic, "partition": m.partition, "replicas": list(m.target)} for m in moves],
    }


def throttled_replicas(moves: Sequence[PartitionMove]) -> tuple[str, str]:
    """The topic's ``leader.replication.throttled.replicas`` (every current replica of a moving partition) and
    ``follower.replication.throttled.replicas`` (every replica being added), as ``partition:broker`` lists."""
    leaders = ",".join(f"{m.partition}:{b}" for m in moves for b in m.current)
    followers = ",".join(f"{m.partition}:{b}" for m in moves for b in m.adding)
    return leaders, followers
