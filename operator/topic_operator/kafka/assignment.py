"""Replica placement exactly as Kafka's ``AdminUtils`` / ``AdminZkClient`` do it (semantics §1, §2, §3.3, §3.5).

A topic created by this project must be placed where ``kafka-topics.sh`` would have placed it, and partitions added
later must continue Kafka's placement, so that operators reading a cluster cannot tell who created a topic. The
algorithms are ported step for step; only the speed-ups are ours (see ``_rack_unaware`` / ``_rack_aware``).

Stricter than Kafka, each flagged with ``stricter_than_kafka=True`` on the error:

* partition ids of a manual assignment must be exactly ``0..n-1`` (Kafka only compares a sum, so ``{-5, 0, 3}``
  passes there);
* the replication factor must be at least 1 (Kafka writes ``{0: []}``);
* replicas must name registered brokers whenever the broker list is known (a real broker leaves such a partition
  offline forever, with no error logged: semantics §13.4);
* new partitions given by hand must be exactly the new ids (Kafka would silently overwrite existing partitions'
  lists, which its controller then ignores);
* duplicate broker ids and values that overflow Kafka's 32-bit arithmetic are rejected (Kafka divides by zero,
  throws an index error, or loops ~10^9 times per partition: semantics §1.7).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from topic_operator.kafka.errors import (
    AdminOperationError,
    BrokerNotAvailableError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    KafkaError,
)
from topic_operator.kafka.java_lang import INT_MAX, INT_MIN

__all__ = [
    "BrokerMetadata",
    "RackAwareMode",
    "assign_new_partitions",
    "assign_replicas_to_brokers",
    "check_replication_factor",
    "get_broker_metadatas",
    "rack_alternated_broker_list",
    "replica_index",
    "validate_replica_assignment",
]

# Kafka does all of this arithmetic in Java ints; anything that could pass INT_MAX is refused up front.


@dataclass(frozen=True, slots=True)
class BrokerMetadata:
    """A registered broker as placement sees it: its id and, when ``broker.rack`` is set, its rack.

    The empty string is a rack like any other (Kafka treats a present-but-empty rack as present).
    """

    id: int
    rack: str | None = None


class RackAwareMode(Enum):
    """How racks are taken into account when choosing brokers for a new topic (Kafka's ``RackAwareMode``)."""

    ENFORCED = "Enforced"
    """Use racks; refuse when only some brokers have one (``kafka-topics.sh``'s default)."""
    SAFE = "Safe"
    """Use racks when every broker has one, otherwise ignore them (Kafka's auto topic creation)."""
    DISABLED = "Disabled"
    """Ignore racks."""


# --------------------------------------------------------------------------------------------------------------
# Argument checks that Kafka gets from its type system.


def _require_int(value: object, what: str, error: type[KafkaError], field: str) -> int:
    """Kafka's arguments are Java ints; reject anything else (including bool) before any rule runs."""
    if type(value) is not int:
        raise error(f"{what} must be an integer, got {value!r}.", field=field, stricter_than_kafka=True)
    if not INT_MIN <= value <= INT_MAX:
        raise error(
            f"{what} {value} is outside Kafka's 32-bit integer range.", field=field, stricter_than_kafka=True
        )
    return value


def _require_distinct_broker_ids(brokers: Iterable[BrokerMetadata]) -> None:
    seen: set[int] = set()
    duplicates: set[int] = set()
    for broker in brokers:
        _require_int(broker.id, "Broker id", AdminOperationError, "brokers")
        if broker.id in seen:
            duplicates.add(broker.id)
        seen.add(broker.id)
    if duplicates:
        raise AdminOperationError(
            f"Duplicate broker ids in the broker list: {', '.join(map(str, sorted(duplicates)))}.",
            field="brokers",
            stricter_than_kafka=True,
        )


# --------------------------------------------------------------------------------------------------------------
# Rack-aware broker selection (semantics §2).


def get_broker_metadatas(
    brokers: Iterable[BrokerMetadata],
    mode: RackAwareMode = RackAwareMode.ENFORCED,
    broker_list: Collection[int] | None = None,
) -> list[BrokerMetadata]:
    """``AdminZkClient.getBrokerMetadatas``: the brokers placement may use, sorted by id, racks kept or dropped.

    ``broker_list`` keeps only those ids; unknown ids in it are ignored, as in Kafka.
    """
    registered = list(brokers)
    _require_distinct_broker_ids(registered)
    kept = sorted(
        (b for b in registered if broker_list is None or b.id in broker_list),
        key=lambda b: b.id,
    )
    with_rack = sum(1 for b in kept if b.rack is not None)
    mixed = 0 < with_rack < len(kept)
    if mode is RackAwareMode.ENFORCED and mixed:
        raise AdminOperationError(
            "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
            "assignment without rack information.",
            field="rackAwareMode",
        )
    if mode is RackAwareMode.DISABLED or (mode is RackAwareMode.SAFE and mixed):
        return [BrokerMetadata(b.id, None) for b in kept]
    return kept


def _java_string_order(text: str) -> bytes:
    """Java compares strings by UTF-16 code units; UTF-16-BE bytes sort the same way (Python sorts code points)."""
    return text.encode("utf-16-be", "surrogatepass")


def check_replication_factor(replication_factor: int, available_brokers: int) -> None:
    """Kafka's two rules for a replication factor, in its words: positive, and no more than the brokers."""
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.", field="replicas")
    if replication_factor > available_brokers:
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {available_brokers}.",
            field="replicas",
        )


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> list[int]:
    """``getRackAlternatedBrokerList``: one broker from each rack in turn, racks and ids in ascending order.

    Consecutive positions then lie in different racks for as long as every rack still has brokers left, which
    is what lets the rack-aware walk spread a partition's replicas over racks.
    """
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker_id)
    queues = [sorted(by_rack[rack]) for rack in sorted(by_rack, key=_java_string_order)]
    result: list[int] = []
    depth = 0
    while len(result) < len(broker_racks):
        result.extend(queue[depth] for queue in queues if depth < len(queue))
        depth += 1
    return result


# --------------------------------------------------------------------------------------------------------------
# assignReplicasToBrokers (semantics §1).


def replica_index(
    first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int
) -> int:
    """Kafka's ``replicaIndex``: the position of a follower, never equal to ``first_replica_index``."""
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """``AdminUtils.assignReplicasToBrokers``: partition id -> replicas, the first replica being the preferred leader.

    Rack-unaware when no broker has a rack (placement follows the order of ``brokers``, which Kafka's own callers
    sort by id), rack-aware when every broker has one. ``fixed_start_index >= 0`` fixes both the start position
    and the initial follower shift; otherwise both are drawn from ``rng`` (start first, then shift), so a seeded
    ``random.Random`` makes the result reproducible. New partition ids start at ``max(0, start_partition_id)``.
    """
    _require_int(n_partitions, "Number of partitions", InvalidPartitionsError, "partitions")
    _require_int(replication_factor, "Replication factor", InvalidReplicationFactorError, "replicas")
    _require_int(fixed_start_index, "Fixed start index", AdminOperationError, "replicaAssignment")
    _require_int(start_partition_id, "Start partition id", InvalidPartitionsError, "partitions")

    if n_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.", field="partitions")
    check_replication_factor(replication_factor, len(brokers))
    racks_present = sum(1 for b in brokers if b.rack is not None)
    if 0 < racks_present < len(brokers):
        raise AdminOperationError(
            "Not all brokers have rack information for replica rack aware assignment.", field="brokers"
        )
    _require_distinct_broker_ids(brokers)

    n = len(brokers)
    if fixed_start_index >= 0:
        start_index = replica_shift = fixed_start_index
    else:
        draw = rng if rng is not None else random.Random()
        start_index = draw.randrange(n)
        replica_shift = draw.randrange(n)
    first_id = max(0, start_partition_id)
    num_racks = len({b.rack for b in brokers}) if racks_present else 1
    _require_no_int_overflow(
        n, first_id, n_partitions, replication_factor, start_index, replica_shift, num_racks
    )

    if racks_present:
        return _rack_aware(brokers, n_partitions, replication_factor, start_index, replica_shift, first_id)
    return _rack_unaware(
        [b.id for b in brokers], n_partitions, replication_factor, start_index, replica_shift, first_id
    )


def _require_no_int_overflow(
    n: int, first_id: int, n_partitions: int, rf: int, start_index: int, shift: int, num_racks: int
) -> None:
    """Refuse inputs for which Kafka's int arithmetic would overflow (semantics §1.7), so that for every accepted
    input Python's unbounded ints compute exactly what Kafka computes."""
    last_id = first_id + n_partitions - 1
    if last_id > INT_MAX:
        raise InvalidPartitionsError(
            f"Partition ids {first_id}..{last_id} would exceed Kafka's largest partition id {INT_MAX}.",
            field="partitions",
            stricter_than_kafka=True,
        )
    shifts = last_id // n - (max(first_id, 1) - 1) // n
    if last_id + start_index > INT_MAX or (shift + shifts) * num_racks + rf * n > INT_MAX:
        raise AdminOperationError(
            f"Start index {start_index} with partition ids up to {last_id} would overflow Kafka's 32-bit "
            "placement arithmetic.",
            field="replicaAssignment",
            stricter_than_kafka=True,
        )


def _blocks(first_id: int, n_partitions: int, n: int, shift: int) -> Iterable[tuple[int, int, int]]:
    """Split the partition ids into runs that share one follower shift: Kafka bumps the shift at every absolute
    partition id that is a positive multiple of ``n``. Yields (first id, end id exclusive, shift)."""
    end = first_id + n_partitions
    p = first_id
    while p < end:
        if p > 0 and p % n == 0:
            shift += 1
        block_end = min(end, (p // n + 1) * n)
        yield p, block_end, shift
        p = block_end


def _rack_unaware(
    ids: list[int], n_partitions: int, rf: int, start_index: int, shift: int, first_id: int
) -> dict[int, list[int]]:
    """Semantics §1.4. Within a block (at most ``n`` partitions) the follower offsets from the leader are fixed
    and the leader positions are consecutive modulo ``n``, so each replica column of the block is one slice of
    the broker list repeated three times (leader position < n, offset < n, block length <= n)."""
    n = len(ids)
    tripled = ids * 3
    result: dict[int, list[int]] = {}
    for block_start, block_end, block_shift in _blocks(first_id, n_partitions, n, shift):
        offsets = [0] + [1 + (block_shift + j) % (n - 1) for j in range(rf - 1)]
        first = (block_start + start_index) % n
        length = block_end - block_start
        columns = [tripled[first + offset : first + offset + length] for offset in offsets]
        result.update(zip(range(block_start, block_end), map(list, zip(*columns, strict=True)), strict=True))
    return result


@dataclass(frozen=True, slots=True)
class _RackLayout:
    """What rack-aware placement derives from a broker set alone: the rack-alternated list, each position's rack
    and the walks already done, keyed by (leader position, effective shift, replication factor)."""

    arr: tuple[int, ...]
    rack_at: tuple[int, ...]
    num_racks: int
    walks: dict[tuple[int, int, int], tuple[int, ...]]


@functools.lru_cache(maxsize=64)
def _rack_layout(brokers: frozenset[tuple[int, str]]) -> _RackLayout:
    """Every topic of a cluster places over the same brokers, so the layout and its walks are shared between
    calls (a 6-broker cluster has at most 30 distinct walks per replication factor)."""
    rack_of = dict(brokers)
    arr = tuple(rack_alternated_broker_list(rack_of))
    rack_numbers = {rack: i for i, rack in enumerate(sorted(set(rack_of.values()), key=_java_string_order))}
    return _RackLayout(arr, tuple(rack_numbers[rack_of[b]] for b in arr), len(rack_numbers), {})


def _rack_aware(
    brokers: Sequence[BrokerMetadata], n_partitions: int, rf: int, start_index: int, shift: int, first_id: int
) -> dict[int, list[int]]:
    """Semantics §1.6. A partition's replicas depend only on its leader position and on the follower shift
    modulo ``n - 1``, so walks are computed once per broker set and reused (see ``_rack_layout``)."""
    layout = _rack_layout(frozenset((b.id, b.rack) for b in brokers if b.rack is not None))
    n = len(layout.arr)
    walks = layout.walks
    result: dict[int, list[int]] = {}
    for block_start, block_end, block_shift in _blocks(first_id, n_partitions, n, shift):
        effective_shift = (block_shift * layout.num_racks) % (n - 1) if n > 1 else 0
        for p in range(block_start, block_end):
            first = (p + start_index) % n
            key = (first, effective_shift, rf)
            walk = walks.get(key)
            if walk is None:
                walk = _rack_aware_walk(
                    layout.arr, layout.rack_at, layout.num_racks, first, effective_shift, rf
                )
                walks[key] = walk
            result[p] = list(walk)
    return result


def _rack_aware_walk(
    arr: Sequence[int], rack_at: Sequence[int], num_racks: int, first: int, shift: int, rf: int
) -> tuple[int, ...]:
    """One partition of §1.6: walk the rack-alternated list with one counter ``k`` for the whole partition,
    skipping brokers whose rack already holds a replica until every rack does."""
    n = len(arr)
    replicas = [arr[first]]
    racks_used = {rack_at[first]}
    positions_used = {first}
    k = 0
    for _ in range(rf - 1):
        while True:
            position = (first + 1 + (shift + k) % (n - 1)) % n
            k += 1
            rack_ok = rack_at[position] not in racks_used or len(racks_used) == num_racks
            broker_ok = position not in positions_used or len(positions_used) == n
            if rack_ok and broker_ok:
                replicas.append(arr[position])
                racks_used.add(rack_at[position])
                positions_used.add(position)
                break
    return tuple(replicas)


# --------------------------------------------------------------------------------------------------------------
# Manual assignments at creation (semantics §3.3 steps 5-7).


def _scala_list(replicas: Sequence[int]) -> str:
    return f"List({', '.join(map(str, replicas))})"


def _scala_assignment(assignment: Mapping[int, Sequence[int]]) -> str:
    """Kafka renders the map with Scala's ``toString``; its entry order is a hash order, so ours is sorted."""
    return f"Map({', '.join(f'{p} -> {_scala_list(assignment[p])}' for p in sorted(assignment))})"


def _require_int_keys_and_replicas(assignment: Mapping[int, Sequence[int]]) -> None:
    for partition, replicas in assignment.items():
        _require_int(partition, "Partition id", InvalidReplicaAssignmentError, "replicaAssignment")
        if isinstance(replicas, (str, bytes)) or not isinstance(replicas, Sequence):
            raise InvalidReplicaAssignmentError(
                f"Replicas of partition {partition} must be a list of broker ids, got {replicas!r}.",
                field="replicaAssignment",
                stricter_than_kafka=True,
            )
        for broker in replicas:
            _require_int(broker, "Broker id", InvalidReplicaAssignmentError, "replicaAssignment")
            if broker < 0:
                raise InvalidReplicaAssignmentError(
                    f"Broker id {broker} in partition {partition} is negative; broker ids are 0 or greater.",
                    field="replicaAssignment",
                    stricter_than_kafka=True,
                )


def _unavailable_brokers_message(partition: int, replicas: Sequence[int], available: Iterable[int]) -> str:
    return (
        f"Some brokers specified for partition id {partition} are not available. "
        f"Specified brokers: {', '.join(map(str, replicas))}, "
        f"available brokers: {', '.join(map(str, sorted(available)))}."
    )


def validate_replica_assignment(
    assignment: Mapping[int, Sequence[int]], brokers: Collection[int] | None = None
) -> None:
    """``validateTopicCreate``'s checks of a manual assignment, in Kafka's order, plus ours (module docstring).

    ``brokers``: the registered broker ids, when known; every replica must then name one of them.
    """
    _require_int_keys_and_replicas(assignment)
    if len({len(replicas) for replicas in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentError(
            "All partitions should have the same number of replicas", field="replicaAssignment"
        )
    if not next(iter(assignment.values())):
        raise InvalidReplicaAssignmentError(
            f"Cannot have replication factor of 0 for partition id {min(assignment)}.",
            field="replicaAssignment",
            stricter_than_kafka=True,
        )
    if any(len(set(replicas)) != len(replicas) for replicas in assignment.values()):
        raise InvalidReplicaAssignmentError(
            f"Duplicate replica assignment found: {_scala_assignment(assignment)}", field="replicaAssignment"
        )
    count = len(assignment)
    if set(assignment) != set(range(count)):
        kafka_accepts = sum(p for p in assignment if p >= 0) == count * (count - 1) // 2
        raise InvalidReplicaAssignmentError(
            "partitions should be a consecutive 0-based integer sequence",
            field="replicaAssignment",
            stricter_than_kafka=kafka_accepts,
        )
    if brokers is not None:
        available = set(brokers)
        for partition in sorted(assignment):
            if not available.issuperset(assignment[partition]):
                raise BrokerNotAvailableError(
                    _unavailable_brokers_message(partition, assignment[partition], available),
                    field="replicaAssignment",
                    stricter_than_kafka=True,
                )


# --------------------------------------------------------------------------------------------------------------
# Adding partitions (semantics §3.5).


def _scala_existing_assignment(existing: Mapping[int, Sequence[int]]) -> str:
    """How Kafka prints ``Map[Int, ReplicaAssignment]`` (no reassignment is in flight when partitions are added)."""
    entries = (
        f"{p} -> ReplicaAssignment(replicas={','.join(map(str, existing[p]))}, addingReplicas=, removingReplicas=)"
        for p in sorted(existing)
    )
    return f"Map({', '.join(entries)})"


def _validate_manual_new_partitions(
    manual: Mapping[int, Sequence[int]], expected_rf: int, available: Collection[int]
) -> None:
    """``AdminZkClient.validateReplicaAssignment``: per entry (in partition order, where Kafka uses hash order)
    empty, duplicate and unknown-broker checks, then one report of every replication factor that differs."""
    for partition in sorted(manual):
        replicas = manual[partition]
        if not replicas:
            raise InvalidReplicaAssignmentError(
                f"Cannot have replication factor of 0 for partition id {partition}.",
                field="replicaAssignment",
            )
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate brokers not allowed in replica assignment: {', '.join(map(str, replicas))} "
                f"for partition id {partition}.",
                field="replicaAssignment",
            )
        if not set(available).issuperset(replicas):
            raise BrokerNotAvailableError(
                _unavailable_brokers_message(partition, replicas, available), field="replicaAssignment"
            )
    bad = [(p, len(manual[p])) for p in sorted(manual) if len(manual[p]) != expected_rf]
    if bad:
        raise InvalidReplicaAssignmentError(
            f"Inconsistent replication factor between partitions, partition 0 has {expected_rf} while partitions "
            f"[{', '.join(str(p) for p, _ in bad)}] have replication factors "
            f"[{', '.join(str(rf) for _, rf in bad)}], respectively.",
            field="replicaAssignment",
        )


def assign_new_partitions(
    existing: Mapping[int, Sequence[int]],
    brokers: Sequence[BrokerMetadata],
    num_partitions: int,
    manual: Mapping[int, Sequence[int]] | None = None,
    *,
    topic: str = "",
) -> dict[int, list[int]]:
    """``AdminZkClient.createNewPartitionsAssignment``: replicas for partitions ``len(existing)..num_partitions-1``.

    Only the new partitions are returned; the caller writes them together with the existing ones. Without a
    manual map Kafka continues from partition 0's leader: the start position is the first broker (by id) whose id
    is at least that leader's, and it fixes both start and shift. ``brokers`` are the usable brokers as
    ``get_broker_metadatas`` returns them (any order; they are sorted by id here, as Kafka's list is). Pass
    ``topic`` so that messages name it.
    """
    _require_int(num_partitions, "Number of partitions", InvalidPartitionsError, "partitions")
    _require_int_keys_and_replicas(existing)
    if 0 not in existing:
        raise AdminOperationError(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing. "
            f"Assignment: {_scala_existing_assignment(existing)}",
            field="partitions",
        )
    if set(existing) != set(range(len(existing))):
        raise AdminOperationError(
            f"Unexpected existing replica assignment for topic '{topic}': partition ids "
            f"{sorted(existing)} are not 0..{len(existing) - 1}, so new ids would overwrite existing partitions.",
            field="partitions",
            stricter_than_kafka=True,
        )
    partition_zero = existing[0]
    if not partition_zero:
        raise AdminOperationError(
            f"Unexpected existing replica assignment for topic '{topic}': partition 0 has no replicas.",
            field="partitions",
            stricter_than_kafka=True,
        )
    to_add = num_partitions - len(existing)
    if to_add <= 0:
        raise InvalidPartitionsError(
            f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
            f"{len(existing)} partitions, {num_partitions} would not be an increase.",
            field="partitions",
        )
    by_id = sorted(brokers, key=lambda b: b.id)
    if manual is not None:
        _require_int_keys_and_replicas(manual)
        _validate_manual_new_partitions(manual, len(partition_zero), [b.id for b in by_id])
        _require_exactly_new_ids(manual, len(existing), num_partitions, to_add, topic)
        return {p: list(manual[p]) for p in sorted(manual)}
    start_index = next((i for i, b in enumerate(by_id) if b.id >= partition_zero[0]), 0)
    return assign_replicas_to_brokers(
        by_id,
        to_add,
        len(partition_zero),
        fixed_start_index=start_index,
        start_partition_id=len(existing),
    )


def _require_exactly_new_ids(
    manual: Mapping[int, Sequence[int]], old_count: int, new_count: int, to_add: int, topic: str
) -> None:
    if len(manual) != to_add:
        raise InvalidReplicaAssignmentError(
            f"Increasing the number of partitions by {to_add} but {len(manual)} assignments provided.",
            field="replicaAssignment",
            stricter_than_kafka=True,
        )
    if set(manual) != set(range(old_count, new_count)):
        raise InvalidReplicaAssignmentError(
            f"The new partitions of topic '{topic}' are {old_count}..{new_count - 1}, but the assignment names "
            f"partitions {sorted(manual)}.",
            field="replicaAssignment",
            stricter_than_kafka=True,
        )
