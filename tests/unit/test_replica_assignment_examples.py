"""The exact placements of Kafka's own tests (semantics §1.4-§1.7, §3.5) are reproduced."""

import random

from topic_operator.kafka.assignment import (
    BrokerMetadata,
    assign_new_partitions,
    assign_replicas_to_brokers,
    rack_alternated_broker_list,
    replica_index,
)

SIX_BROKERS_THREE_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def brokers(ids: range | list[int]) -> list[BrokerMetadata]:
    return [BrokerMetadata(i) for i in ids]


def racked(racks: dict[int, str]) -> list[BrokerMetadata]:
    return [BrokerMetadata(i, rack) for i, rack in racks.items()]


def test_rack_unaware_kafka_test_replica_assignment() -> None:
    assert assign_replicas_to_brokers(brokers(range(5)), 10, 3, fixed_start_index=0) == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }  # fmt: skip


def test_rack_unaware_follows_the_callers_broker_order() -> None:
    assert assign_replicas_to_brokers(brokers([3, 1, 2]), 2, 2, fixed_start_index=0) == {0: [3, 1], 1: [1, 2]}


def test_replica_index_never_returns_the_leader_position() -> None:
    assert [replica_index(2, 0, j, 5) for j in range(4)] == [3, 4, 0, 1]
    assert [replica_index(2, 1, j, 5) for j in range(4)] == [4, 0, 1, 3]


def test_rack_alternated_list_examples() -> None:
    assert rack_alternated_broker_list(SIX_BROKERS_THREE_RACKS) == [0, 3, 1, 5, 4, 2]
    without_5 = {k: v for k, v in SIX_BROKERS_THREE_RACKS.items() if k != 5}
    assert rack_alternated_broker_list(without_5) == [0, 3, 1, 4, 2]
    assert rack_alternated_broker_list({0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}) == [0, 1, 2, 3, 4]


def test_rack_names_sort_in_java_utf16_order() -> None:
    # By code point U+FF5E sorts before U+1F600; in UTF-16 units U+1F600 (0xD83D 0xDE00) comes first, as in Java.
    assert sorted(["\U0001f600", "\uff5e"]) == ["\uff5e", "\U0001f600"]
    assert rack_alternated_broker_list({0: "\U0001f600", 1: "\uff5e"}) == [0, 1]
    assert rack_alternated_broker_list({0: "\uff5e", 1: "\U0001f600"}) == [1, 0]


def test_rack_aware_kafka_test_example() -> None:
    result = assign_replicas_to_brokers(
        racked(SIX_BROKERS_THREE_RACKS), 7, 3, fixed_start_index=0, start_partition_id=0
    )
    assert result == {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
        6: [0, 4, 2],
    }


def test_rack_aware_ignores_the_callers_broker_order() -> None:
    shuffled = racked(SIX_BROKERS_THREE_RACKS)
    random.Random(7).shuffle(shuffled)
    assert assign_replicas_to_brokers(shuffled, 7, 3, 0, 0) == assign_replicas_to_brokers(
        racked(SIX_BROKERS_THREE_RACKS), 7, 3, 0, 0
    )


def test_empty_string_rack_is_a_rack() -> None:
    result = assign_replicas_to_brokers([BrokerMetadata(0, ""), BrokerMetadata(1, "r")], 2, 2, 0)
    assert result == {0: [0, 1], 1: [1, 0]}


def test_start_partition_id_keys_and_shift_at_absolute_multiples() -> None:
    six = brokers(range(6))
    from_twelve = assign_replicas_to_brokers(six, 7, 2, fixed_start_index=0, start_partition_id=12)
    assert sorted(from_twelve) == list(range(12, 19))
    # The shift (fixed at 0) goes up only at multiples of 6 inside the run: to 1 at p = 12, to 2 at p = 18.
    # Follower offset = 1 + shift % 5: two positions after the leader, then three.
    assert from_twelve[12] == [0, 2]
    assert from_twelve[17] == [5, 1]
    assert from_twelve[18] == [0, 3]


def test_negative_start_partition_id_means_zero() -> None:
    assert assign_replicas_to_brokers(brokers(range(3)), 2, 1, 0, -1) == {0: [0], 1: [1]}


def test_fixed_start_index_fixes_start_and_shift() -> None:
    # start 2 and shift 2 on 5 brokers: leader at position 2, followers at 1 + (2 + j) % 4.
    assert assign_replicas_to_brokers(brokers(range(5)), 1, 3, fixed_start_index=2) == {0: [2, 0, 1]}


def test_single_broker_with_rf_one() -> None:
    assert assign_replicas_to_brokers(brokers([7]), 3, 1, fixed_start_index=0) == {0: [7], 1: [7], 2: [7]}


def test_random_start_is_reproducible_with_a_seed_and_draws_start_then_shift() -> None:
    five = brokers(range(5))
    first = assign_replicas_to_brokers(five, 10, 3, rng=random.Random(42))
    assert first == assign_replicas_to_brokers(five, 10, 3, rng=random.Random(42))
    draws = random.Random(42)
    start, shift = draws.randrange(5), draws.randrange(5)
    assert first[0][0] == start
    assert first[0][1] == replica_index(start, shift, 0, 5)


def test_add_partitions_kafka_examples() -> None:
    four = brokers(range(4))
    assert assign_new_partitions({0: [2, 3, 0, 1]}, four, 7) == {
        1: [3, 2, 0, 1], 2: [0, 3, 1, 2], 3: [1, 0, 2, 3], 4: [2, 3, 0, 1], 5: [3, 0, 1, 2], 6: [0, 1, 2, 3],
    }  # fmt: skip
    assert assign_new_partitions({0: [1, 2]}, four, 3) == {1: [2, 0], 2: [3, 1]}
    assert assign_new_partitions({0: [0, 1]}, four, 3) == {1: [1, 2], 2: [2, 3]}


def test_add_partitions_sorts_brokers_by_id_and_skips_missing_leader() -> None:
    # Partition 0's leader (broker 5) is gone: the start is the first broker with an id >= 5, else position 0.
    assert assign_new_partitions({0: [5, 1], 1: [1, 6]}, brokers([6, 1, 3]), 3) == assign_new_partitions(
        {0: [5, 1], 1: [1, 6]}, brokers([1, 3, 6]), 3
    )
    assert assign_new_partitions({0: [9]}, brokers([1, 3, 6]), 2) == {1: [3]}


def test_add_partitions_rack_aware_uses_the_id_sorted_position_quirk() -> None:
    # Start position = index of broker 3 in the id-sorted list (3), used in the rack-alternated list [0,3,1,5,4,2].
    result = assign_new_partitions({0: [3, 1]}, racked(SIX_BROKERS_THREE_RACKS), 2)
    assert result == assign_replicas_to_brokers(racked(SIX_BROKERS_THREE_RACKS), 1, 2, 3, 1)
    assert result[1][0] == 4


def test_manual_new_partitions_are_used_as_given() -> None:
    assert assign_new_partitions({0: [0, 1]}, brokers(range(3)), 3, {1: [2, 0], 2: [1, 2]}) == {
        1: [2, 0],
        2: [1, 2],
    }
