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

While the controller carries a reassignment out, the topic znode lists each moving partition's target replicas
followed by the ones being removed, with ``adding_replicas``/``removing_replicas`` maps (§14): ``in_flight``
reads the moves back from them. A partition is moved only while it is healthy (``check_partitions_healthy``).

Pure: plain data in, plain data out; the ZooKeeper layer writes the request and the throttles.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from topic_operator.kafka.assignment import (
    BrokerMetadata,
    check_replication_factor,
    rack_alternated_broker_list,
)
from topic_operator.kafka.errors import AdminOperationError, InvalidReplicaAssignmentError

__all__ = [
    "BROKER_THROTTLE_RATES",
    "THROTTLED_REPLICAS_KEYS",
    "Health",
    "PartitionMove",
    "brokers_in_throttle_lists",
    "check_partitions_healthy",
    "decrease_replication",
    "in_flight",
    "increase_replication",
    "moves_between",
    "throttled_replicas",
]

LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
THROTTLED_REPLICAS_KEYS = (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS)
"""The topic configs ``kafka-reassign-partitions.sh --throttle`` sets and ``--verify`` removes."""

BROKER_THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
"""The dynamic broker configs (bytes/s) the same tool sets on every broker a move involves."""

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


def throttled_replicas(moves: Sequence[PartitionMove]) -> tuple[str, str]:
    """The topic's ``leader.replication.throttled.replicas`` (every current replica of a moving partition) and
    ``follower.replication.throttled.replicas`` (every replica being added), as ``partition:broker`` lists."""
    leaders = ",".join(f"{m.partition}:{b}" for m in moves for b in m.current)
    followers = ",".join(f"{m.partition}:{b}" for m in moves for b in m.adding)
    return leaders, followers


def brokers_in_throttle_lists(config: Mapping[str, str]) -> tuple[int, ...]:
    """The brokers a topic's throttled-replica lists name, sorted: the ones whose throttle rates a finished
    reassignment leaves behind. ``*`` and malformed items name no broker (nothing is guessed)."""
    brokers: set[int] = set()
    for key in THROTTLED_REPLICAS_KEYS:
        for item in config.get(key, "").split(","):
            partition, colon, broker = item.strip().partition(":")
            if colon and partition.isdigit() and broker.isdigit():
                brokers.add(int(broker))
    return tuple(sorted(brokers))


def in_flight(partitions: Assignment, adding: Assignment, removing: Assignment) -> list[PartitionMove]:
    """The moves the controller is carrying out, read back from a topic znode (§14): a moving partition lists its
    target followed by the replicas being removed, so the original replicas are the list without ``adding`` and
    the target the list without ``removing``."""
    moves: list[PartitionMove] = []
    for partition in sorted(set(adding) | set(removing)):
        added, removed = set(adding.get(partition, ())), set(removing.get(partition, ()))
        if not added and not removed:
            continue
        replicas = tuple(partitions.get(partition, ()))
        current = tuple(b for b in replicas if b not in added)
        target = tuple(b for b in replicas if b not in removed)
        moves.append(PartitionMove(partition, current, target))
    return moves


@dataclass(frozen=True, slots=True)
class Health:
    """A partition's leader and in-sync replicas, as its state znode holds them (None: no state)."""

    leader: int
    isr: tuple[int, ...]


def check_partitions_healthy(
    topic: str,
    moves: Sequence[PartitionMove],
    health: Mapping[int, Health | None],
    live: Collection[int],
) -> None:
    """Refuse to move a partition that is offline (no leader among the live brokers) or under-replicated (a
    replica out of the ISR): the new replicas would copy from a leader that may be gone, and a removed replica
    may be the only in-sync copy. Kafka's tool does not check this; the refusal says so."""
    for move in moves:
        state = health.get(move.partition)
        name = f"{topic}-{move.partition}"
        if state is None or state.leader < 0 or state.leader not in live:
            leader = "no state" if state is None else f"leader {state.leader}"
            raise AdminOperationError(
                f"Partition {name} is offline ({leader}, live brokers {sorted(live)}): its replicas are not "
                "moved until it has a live leader.",
                field="replicas",
                stricter_than_kafka=True,
            )
        missing = [b for b in move.current if b not in state.isr]
        if missing:
            raise AdminOperationError(
                f"Partition {name} is under-replicated (replicas {list(move.current)}, ISR {list(state.isr)}): "
                "its replicas are not moved until every replica is in sync.",
                field="replicas",
                stricter_than_kafka=True,
            )
