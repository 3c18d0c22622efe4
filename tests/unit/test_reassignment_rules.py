"""The replica rules of a replication-factor change (``kafka.reassignment``): an increase keeps every replica in
order and adds new racks first, then the least-loaded brokers; a decrease keeps the preferred leader and as many
racks as it can; the request and throttle formats are Kafka's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topic_operator.kafka.assignment import BrokerMetadata
from topic_operator.kafka.errors import InvalidReplicaAssignmentError, InvalidReplicationFactorError
from topic_operator.kafka.reassignment import (
    PartitionMove,
    decrease_replication,
    increase_replication,
    moves_between,
    throttled_replicas,
)


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[BrokerMetadata], dict[int, tuple[int, ...]]]:
    """Registered brokers (all with racks, or none) and a topic's assignment over them."""
    count = draw(st.integers(1, 9))
    ids = draw(st.lists(st.integers(0, 50), min_size=count, max_size=count, unique=True))
    racked = draw(st.booleans())
    brokers = [BrokerMetadata(i, draw(st.sampled_from("abc")) if racked else None) for i in ids]
    width = draw(st.integers(1, count))
    partitions = draw(st.integers(1, 6))
    assignment = {p: tuple(draw(st.permutations(ids))[:width]) for p in range(partitions)}
    return brokers, assignment


def _racks(replicas: tuple[int, ...], brokers: list[BrokerMetadata]) -> set[str | None]:
    rack_of = {b.id: b.rack for b in brokers}
    return {rack_of[b] for b in replicas}


@given(clusters(), st.integers(0, 9), st.integers(0, 100))
def test_an_increase_keeps_every_replica_and_adds_new_racks_first(
    cluster: tuple[list[BrokerMetadata], dict[int, tuple[int, ...]]], extra: int, start: int
) -> None:
    brokers, assignment = cluster
    width = len(next(iter(assignment.values())))
    factor = min(len(brokers), width + extra)
    target = increase_replication(assignment, factor, brokers, load={}, start=start)
    assert target == increase_replication(assignment, factor, brokers, load={}, start=start)  # deterministic
    all_racks = {b.rack for b in brokers}
    for partition, replicas in target.items():
        assert len(replicas) == factor
        assert len(set(replicas)) == factor
        assert replicas[:width] == assignment[partition]
        if None not in all_racks:
            before = len(_racks(assignment[partition], brokers))
            assert len(_racks(replicas, brokers)) == min(len(all_racks), before + factor - width)


@given(clusters(), st.integers(1, 9))
def test_a_decrease_keeps_the_leader_the_order_and_the_most_racks(
    cluster: tuple[list[BrokerMetadata], dict[int, tuple[int, ...]]], factor: int
) -> None:
    brokers, assignment = cluster
    factor = min(
        factor, len(brokers)
    )  # above the registered brokers is refused (test_refusals_are_kafkas_words)
    target = decrease_replication(assignment, factor, brokers)
    for partition, replicas in target.items():
        original = assignment[partition]
        assert len(replicas) == min(factor, len(original))
        assert replicas[0] == original[0]
        assert [b for b in original if b in replicas] == list(replicas)  # the order kept
        assert len(_racks(replicas, brokers)) == min(len(replicas), len(_racks(original, brokers)))


def test_new_replicas_go_to_the_least_loaded_brokers_then_in_broker_order() -> None:
    brokers = [BrokerMetadata(i) for i in (1, 2, 3, 4)]
    load = {1: 5, 2: 5, 3: 9, 4: 0}
    target = increase_replication({0: (1,), 1: (2,), 2: (3,)}, 2, brokers, load=load)
    # Broker 4 takes replicas until it is as loaded as the others: here all three (0 -> 1 -> 2 -> 3 < 5).
    assert target == {0: (1, 4), 1: (2, 4), 2: (3, 4)}
    equal = increase_replication({0: (1,)}, 2, brokers, load={})
    assert equal == {0: (1, 2)}  # ties: Kafka's broker order (ids ascending without racks)
    assert increase_replication({0: (1,)}, 2, brokers, load={}, start=2) == {0: (1, 3)}  # rotated by the seed


def test_a_new_rack_wins_over_a_lighter_broker() -> None:
    brokers = [BrokerMetadata(1, "a"), BrokerMetadata(2, "a"), BrokerMetadata(3, "b")]
    assert increase_replication({0: (1,)}, 2, brokers, load={3: 100}) == {0: (1, 3)}


def test_a_decrease_drops_a_doubled_rack_before_the_last_replica() -> None:
    brokers = [BrokerMetadata(1, "a"), BrokerMetadata(2, "a"), BrokerMetadata(3, "b")]
    assert decrease_replication({0: (1, 2, 3)}, 2, brokers) == {0: (1, 3)}
    assert decrease_replication({0: (2, 3, 1)}, 2, brokers) == {0: (2, 3)}


def test_refusals_are_kafkas_words() -> None:
    brokers = [BrokerMetadata(1), BrokerMetadata(2)]
    with pytest.raises(
        InvalidReplicationFactorError, match=r"^Replication factor: 3 larger than available brokers: 2\.$"
    ):
        increase_replication({0: (1,)}, 3, brokers, load={})
    with pytest.raises(InvalidReplicationFactorError, match="must be larger than 0"):
        decrease_replication({0: (1, 2)}, 0, brokers)
    with pytest.raises(
        InvalidReplicationFactorError, match=r"^Replication factor: 2 larger than available brokers: 1\.$"
    ):
        decrease_replication(
            {0: (1, 2, 3)}, 2, brokers[:1]
        )  # brokers gone since: the target must fit those left
    with pytest.raises(
        InvalidReplicaAssignmentError, match=r"Duplicate replica assignment found: 0 -> \[1, 1\]"
    ):
        moves_between({0: (1, 2)}, {0: (1, 1)})


def test_moves_requests_and_throttles() -> None:
    moves = moves_between({0: (1, 2), 1: (2, 3), 2: (3, 1)}, {0: (1, 2, 4), 1: (2, 3), 2: (4, 1)})
    assert moves == [PartitionMove(0, (1, 2), (1, 2, 4)), PartitionMove(2, (3, 1), (4, 1))]
    assert [m.describe() for m in moves] == ["p0: [1, 2] -> [1, 2, 4]", "p2: [3, 1] -> [4, 1]"]
    assert (moves[1].adding, moves[1].removing) == ((4,), (3,))
    assert throttled_replicas(moves) == ("0:1,0:2,2:3,2:1", "0:4,2:4")
