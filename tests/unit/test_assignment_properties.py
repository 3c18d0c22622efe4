"""The invariants Kafka relies on hold for any input, and the fast port equals a literal transcription of
Kafka's loops (``AdminUtils.assignReplicasToBrokers``), which is kept here as the oracle."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from topic_operator.kafka.assignment import (
    BrokerMetadata,
    assign_new_partitions,
    assign_replicas_to_brokers,
    rack_alternated_broker_list,
)


def kafka_replica_index(first: int, second_shift: int, index: int, n: int) -> int:
    return (first + 1 + (second_shift + index) % (n - 1)) % n


def kafka_rack_unaware(
    ids: list[int], n_partitions: int, rf: int, fixed: int, start_id: int
) -> dict[int, list[int]]:
    """AdminUtils' rack-unaware loop, line for line, with a fixed start index."""
    result: dict[int, list[int]] = {}
    start_index = fixed
    current = max(0, start_id)
    next_shift = fixed
    for _ in range(n_partitions):
        if current > 0 and current % len(ids) == 0:
            next_shift += 1
        first = (current + start_index) % len(ids)
        replicas = [ids[first]]
        for j in range(rf - 1):
            replicas.append(ids[kafka_replica_index(first, next_shift, j, len(ids))])
        result[current] = replicas
        current += 1
    return result


def kafka_rack_aware(
    racks: dict[int, str], n_partitions: int, rf: int, fixed: int, start_id: int
) -> dict[int, list[int]]:
    """AdminUtils' rack-aware loop, line for line, with a fixed start index."""
    arranged = rack_alternated_broker_list(racks)
    n = len(arranged)
    num_racks = len(set(racks.values()))
    result: dict[int, list[int]] = {}
    start_index = fixed
    current = max(0, start_id)
    next_shift = fixed
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            next_shift += 1
        first = (current + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_with_replicas = {racks[leader]}
        brokers_with_replicas = {leader}
        k = 0
        for _ in range(rf - 1):
            done = False
            while not done:
                broker = arranged[kafka_replica_index(first, next_shift * num_racks, k, n)]
                rack = racks[broker]
                if (rack not in racks_with_replicas or len(racks_with_replicas) == num_racks) and (
                    broker not in brokers_with_replicas or len(brokers_with_replicas) == n
                ):
                    replicas.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    done = True
                k += 1
        result[current] = replicas
        current += 1
    return result


broker_ids = st.lists(st.integers(0, 5000), min_size=1, max_size=24, unique=True)


@st.composite
def racked_cluster(draw: st.DrawFn) -> dict[int, str]:
    ids = draw(broker_ids)
    rack_names = draw(st.lists(st.text(min_size=0, max_size=3), min_size=1, max_size=6, unique=True))
    return {i: draw(st.sampled_from(rack_names)) for i in ids}


@settings(max_examples=300)
@given(ids=broker_ids, data=st.data())
def test_rack_unaware_equals_kafkas_loop(ids: list[int], data: st.DataObject) -> None:
    rf = data.draw(st.integers(1, len(ids)))
    n_partitions = data.draw(st.integers(1, 200))
    fixed = data.draw(st.integers(0, 100))
    start_id = data.draw(st.integers(-1, 500))
    brokers = [BrokerMetadata(i) for i in ids]
    assert assign_replicas_to_brokers(brokers, n_partitions, rf, fixed, start_id) == kafka_rack_unaware(
        ids, n_partitions, rf, fixed, start_id
    )


@settings(max_examples=300)
@given(racks=racked_cluster(), data=st.data())
def test_rack_aware_equals_kafkas_loop(racks: dict[int, str], data: st.DataObject) -> None:
    rf = data.draw(st.integers(1, len(racks)))
    n_partitions = data.draw(st.integers(1, 200))
    fixed = data.draw(st.integers(0, 100))
    start_id = data.draw(st.integers(-1, 500))
    brokers = [BrokerMetadata(i, r) for i, r in racks.items()]
    assert assign_replicas_to_brokers(brokers, n_partitions, rf, fixed, start_id) == kafka_rack_aware(
        racks, n_partitions, rf, fixed, start_id
    )


@given(ids=broker_ids, data=st.data())
def test_every_partition_has_rf_distinct_registered_brokers(ids: list[int], data: st.DataObject) -> None:
    rf = data.draw(st.integers(1, len(ids)))
    n_partitions = data.draw(st.integers(1, 100))
    seed = data.draw(st.integers(0, 2**32))
    racks = data.draw(st.none() | st.lists(st.sampled_from("abcd"), min_size=len(ids), max_size=len(ids)))
    brokers = [BrokerMetadata(i, None if racks is None else racks[n]) for n, i in enumerate(ids)]
    import random

    result = assign_replicas_to_brokers(brokers, n_partitions, rf, rng=random.Random(seed))
    assert sorted(result) == list(range(n_partitions))
    for replicas in result.values():
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        assert set(replicas) <= set(ids)


@given(ids=broker_ids, data=st.data())
def test_fixed_start_and_whole_rounds_balance_leaders_and_replicas(
    ids: list[int], data: st.DataObject
) -> None:
    n = len(ids)
    rf = data.draw(st.integers(1, n))
    rounds = data.draw(st.integers(1, 5))
    fixed = data.draw(st.integers(0, 3 * n))
    result = assign_replicas_to_brokers(
        [BrokerMetadata(i) for i in ids], rounds * n, rf, fixed_start_index=fixed
    )
    leaders = Counter(replicas[0] for replicas in result.values())
    holdings = Counter(b for replicas in result.values() for b in replicas)
    assert leaders == dict.fromkeys(ids, rounds)
    assert holdings == dict.fromkeys(ids, rounds * rf)


@given(racks=racked_cluster(), data=st.data())
def test_rack_aware_spans_min_of_rf_and_racks(racks: dict[int, str], data: st.DataObject) -> None:
    rf = data.draw(st.integers(1, len(racks)))
    n_partitions = data.draw(st.integers(1, 100))
    fixed = data.draw(st.integers(-1, 50))
    seed = data.draw(st.integers(0, 1000))
    import random

    brokers = [BrokerMetadata(i, r) for i, r in racks.items()]
    result = assign_replicas_to_brokers(brokers, n_partitions, rf, fixed, rng=random.Random(seed))
    num_racks = len(set(racks.values()))
    for replicas in result.values():
        assert len({racks[b] for b in replicas}) == min(rf, num_racks)


@given(ids=broker_ids, data=st.data())
def test_same_inputs_and_seed_give_the_same_assignment(ids: list[int], data: st.DataObject) -> None:
    import random

    rf = data.draw(st.integers(1, len(ids)))
    seed = data.draw(st.integers(0, 2**64))
    brokers = [BrokerMetadata(i) for i in ids]
    assert assign_replicas_to_brokers(brokers, 30, rf, rng=random.Random(seed)) == assign_replicas_to_brokers(
        brokers, 30, rf, rng=random.Random(seed)
    )


@given(ids=broker_ids, data=st.data())
def test_new_partitions_continue_ids_and_keep_rf(ids: list[int], data: st.DataObject) -> None:
    rf = data.draw(st.integers(1, len(ids)))
    old = data.draw(st.integers(1, 30))
    new = data.draw(st.integers(old + 1, old + 30))
    brokers = [BrokerMetadata(i) for i in ids]
    existing = assign_replicas_to_brokers(brokers, old, rf, fixed_start_index=data.draw(st.integers(0, 10)))
    added = assign_new_partitions(existing, brokers, new)
    assert sorted(added) == list(range(old, new))
    assert all(len(set(r)) == rf for r in added.values())
