"""The operator's heap upkeep: what survives a collection of the middle generation is frozen out of the cycle
collector's walk (so a collection stays short at any number of KafkaTopics), it is still freed when it is dropped,
and what the freezes caught in flight is collected once it is worth a walk of the whole heap."""

from __future__ import annotations

import asyncio
import gc
import inspect
import platform
import weakref
from collections.abc import Iterator

import pytest

from topic_operator.k8s.process import heap_upkeep


class _Kept:
    """Something the operator holds per KafkaTopic: a tracked object with a reference to another."""

    def __init__(self, n: int) -> None:
        self.partitions = [n, n + 1]


@pytest.fixture
def upkeep() -> Iterator[heap_upkeep.HeapUpkeep]:
    """An upkeep whose hook is in ``gc.callbacks`` for the test, the heap unfrozen before and after."""
    gc.unfreeze()
    try:
        with heap_upkeep.HeapUpkeep().installed() as installed:
            yield installed
    finally:
        gc.unfreeze()


@pytest.fixture
def unfrozen_afterwards() -> Iterator[None]:
    """The test process's heap is not left frozen (what the next tests make would be collected as usual
    anyway, but what this test froze would never be)."""
    try:
        yield
    finally:
        gc.unfreeze()


def test_what_survives_a_middle_collection_is_frozen_and_the_collector_walks_only_what_came_after(
    upkeep: heap_upkeep.HeapUpkeep,
) -> None:
    kept = [_Kept(n) for n in range(60_000)]  # 120,000 tracked objects, as a KafkaTopic's objects are
    gc.collect(1)
    assert upkeep.freezes >= 1
    assert gc.get_freeze_count() >= 120_000
    assert len(gc.get_objects(generation=2)) < 1_000, "the collector would still walk the survivors"
    assert kept


def test_a_young_collection_freezes_nothing(upkeep: heap_upkeep.HeapUpkeep) -> None:
    """Survivors of one young collection include what is merely in use at that moment."""
    kept = [_Kept(n) for n in range(1_000)]
    gc.collect(0)
    assert upkeep.freezes == 0
    assert gc.get_freeze_count() == 0
    assert kept


def test_the_collectors_own_middle_collections_freeze(upkeep: heap_upkeep.HeapUpkeep) -> None:
    """Not only an explicit ``gc.collect``: the collections CPython starts as objects are made freeze too."""
    thresholds = gc.get_threshold()
    gc.set_threshold(1_000, 2, 10)
    try:
        kept = [_Kept(n) for n in range(20_000)]
    finally:
        gc.set_threshold(*thresholds)
    assert upkeep.freezes > 0
    assert gc.get_freeze_count() >= 30_000, "most of what was kept should be frozen by now"
    assert kept


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_a_frozen_object_is_still_freed_when_dropped() -> None:
    kept = [_Kept(n) for n in range(1_000)]
    gone = weakref.ref(kept[0])
    gc.freeze()
    del kept
    assert gone() is None


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_the_upkeep_freezes_while_it_runs_and_leaves_the_collector_alone_once_cancelled() -> None:
    async def run_a_while() -> tuple[int, list[object]]:
        running = asyncio.create_task(heap_upkeep.keep_heap(0.01, heap_upkeep.HeapUpkeep(), in_flight=int))
        await asyncio.sleep(0.05)
        kept = [_Kept(n) for n in range(1_000)]
        gc.collect(1)
        frozen = gc.get_freeze_count()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        return frozen, kept

    gc.unfreeze()
    hooks = list(gc.callbacks)
    frozen, kept = asyncio.run(asyncio.wait_for(run_a_while(), timeout=30))
    assert frozen >= 2_000
    assert gc.callbacks == hooks, "the hook stayed in gc.callbacks after the upkeep stopped"
    gc.unfreeze()
    gc.collect(1)
    assert gc.get_freeze_count() == 0
    assert kept


def test_cycles_caught_in_flight_are_collected_once_they_are_worth_it_and_kopf_is_quiet(
    upkeep: heap_upkeep.HeapUpkeep,
) -> None:
    kept = [_Kept(n) for n in range(10_000)]
    in_flight = [_Cycle() for _ in range(100)]  # alive at the freeze, as the events kopf is handling
    gone = weakref.ref(in_flight[0])
    gc.collect(1)
    upkeep.look(in_flight=1)  # one event in flight: far from a tenth of the heap
    del in_flight
    gc.collect()
    assert gone() is not None, "frozen: the collector does not see it"
    upkeep.look(in_flight=0)
    assert gone() is not None, "thawed the whole heap for one event's worth of cycles"
    gc.collect(1)
    caught = int(heap_upkeep.THAW_QUIET * upkeep.frozen / heap_upkeep.OBJECTS_PER_EVENT) + 1
    upkeep.look(in_flight=caught)  # freezes while many events were in flight
    assert gone() is not None, "thawed while events were in flight, below a quarter"
    upkeep.look(in_flight=0)
    assert gone() is None, "a dead cycle caught in flight was never collected"
    assert upkeep.thaws == 1
    assert upkeep.caught == 0
    assert gc.get_freeze_count() >= 20_000, "the thaw did not freeze what lives again"
    assert kept


def test_workers_in_flight_count_once_per_look_however_many_freezes_there_were(
    upkeep: heap_upkeep.HeapUpkeep,
) -> None:
    """kopf's workers outlive their events by seconds: counted at every freeze, the same idle workers would
    count many times over; and a look with no freeze since the last one counts nothing."""
    for _ in range(5):
        gc.collect(1)
    upkeep.look(in_flight=3)
    assert upkeep.caught == 3 * heap_upkeep.OBJECTS_PER_EVENT
    upkeep.look(in_flight=3)
    assert upkeep.caught == 3 * heap_upkeep.OBJECTS_PER_EVENT, "counted workers again with no freeze since"


def test_under_changes_that_never_pause_the_heap_is_thawed_past_a_quarter(
    upkeep: heap_upkeep.HeapUpkeep,
) -> None:
    in_flight = [_Cycle() for _ in range(100)]
    gone = weakref.ref(in_flight[0])
    gc.collect(1)
    many = int(heap_upkeep.THAW_ANYWAY * 2 * upkeep.frozen / heap_upkeep.OBJECTS_PER_EVENT) + 1
    upkeep.look(in_flight=many)
    assert upkeep.thaws == 1
    del in_flight
    gc.collect(1)
    upkeep.look(in_flight=many)
    assert gone() is None, "what freezes caught in flight piled up without bound while events never stopped"
    assert upkeep.thaws == 2


COUNT_SLACK = 1_000
"""Objects other threads may make between a collection and its freeze (frozen, not counted)."""


def test_the_upkeep_counts_what_it_froze_without_walking_the_frozen_objects(
    upkeep: heap_upkeep.HeapUpkeep,
) -> None:
    """The thaw's ratio is taken of the upkeep's own count (``gc.get_freeze_count`` walks every frozen object):
    the count must be what is frozen, through freezes and a thaw, give or take what other threads of the test
    process allocate between a collection and its freeze (``COUNT_SLACK``: far below the 20,000 objects freed
    below, which a count that is not renewed at the thaw is off by)."""
    kept = [_Kept(n) for n in range(20_000)]
    gc.collect(1)
    assert abs(upkeep.frozen - gc.get_freeze_count()) <= COUNT_SLACK
    more = [_Kept(n) for n in range(10_000)]
    gc.collect(1)
    assert abs(upkeep.frozen - gc.get_freeze_count()) <= COUNT_SLACK
    del more  # frozen objects freed by their reference counts: still counted, until a thaw counts anew
    assert upkeep.frozen > gc.get_freeze_count() + COUNT_SLACK
    upkeep.thaw()
    assert upkeep.thaws == 1
    assert abs(upkeep.frozen - gc.get_freeze_count()) <= COUNT_SLACK
    assert kept


def test_a_thaw_freezes_again_without_the_hook() -> None:
    gc.unfreeze()
    try:
        upkeep = heap_upkeep.HeapUpkeep()
        kept = [_Kept(n) for n in range(5_000)]
        upkeep.thaw()
        assert gc.get_freeze_count() >= 10_000
        assert abs(upkeep.frozen - gc.get_freeze_count()) <= COUNT_SLACK
        assert kept
    finally:
        gc.unfreeze()


def test_kopf_still_names_its_per_object_workers_as_the_upkeep_expects() -> None:
    """The upkeep tells kopf's handling of events by its task names; a kopf that renamed them would look quiet
    at every look."""
    from kopf._core.reactor import queueing

    assert f"name=f'{heap_upkeep.KOPF_WORKER}{{key}}'" in inspect.getsource(queueing)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_free_memory_is_handed_back_on_glibc() -> None:
    assert heap_upkeep.trim_free_memory()


class _Cycle:
    """Garbage as kopf's handling of an event leaves it: objects that reference each other."""

    def __init__(self) -> None:
        self.me = self


def test_garbage_waiting_for_a_collection_is_not_frozen_with_what_lives(
    upkeep: heap_upkeep.HeapUpkeep,
) -> None:
    gc.collect()
    gc.disable()  # the garbage waits, as it does between two collections of the youngest generation
    try:
        kept = [_Kept(n) for n in range(30_000)]
        gone = [weakref.ref(_Cycle()) for _ in range(1_000)]
        freezes = upkeep.freezes
        gc.collect(1)  # the freeze comes at its end
    finally:
        gc.enable()
    assert upkeep.freezes == freezes + 1
    gc.unfreeze()
    assert not [ref for ref in gone if ref() is not None], (
        "dead cycles were frozen: they would never be freed"
    )
    assert kept
