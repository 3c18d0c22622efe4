"""The operator's heap upkeep: once many objects have lived long, they are frozen out of the cycle collector's
walk (so a collection of the oldest generation stays short at any number of KafkaTopics), and they are still
freed when they are dropped."""

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
def unfrozen_afterwards() -> Iterator[None]:
    """The test process's heap is not left frozen (what the next tests make would be collected as usual
    anyway, but what this test froze would never be)."""
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_a_grown_heap_is_frozen_and_the_collector_walks_only_what_came_after() -> None:
    gc.collect()
    kept = [_Kept(n) for n in range(60_000)]  # 120,000 tracked objects
    gc.collect()  # now in the oldest generation, as a KafkaTopic's objects are after a while
    assert len(gc.get_objects(generation=2)) >= 120_000
    assert heap_upkeep.freeze_if_grown(above=100_000)
    assert gc.get_freeze_count() >= 120_000
    assert len(gc.get_objects(generation=2)) < 1_000, "the collector would still walk the frozen objects"
    assert heap_upkeep.freeze_if_grown(above=100_000) is None, "froze again with nothing new"
    assert kept


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_a_frozen_object_is_still_freed_when_dropped() -> None:
    kept = [_Kept(n) for n in range(1_000)]
    gone = weakref.ref(kept[0])
    gc.freeze()
    del kept
    assert gone() is None


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_the_upkeep_freezes_on_its_own_and_stops_when_cancelled() -> None:
    async def one_look() -> int:
        upkeep = asyncio.create_task(heap_upkeep.keep_heap(0.01, heap_upkeep.HeapUpkeep(above=1)))
        while gc.get_freeze_count() == 0:
            await asyncio.sleep(0.01)
        upkeep.cancel()
        with pytest.raises(asyncio.CancelledError):
            await upkeep
        return gc.get_freeze_count()

    gc.unfreeze()
    assert asyncio.run(asyncio.wait_for(one_look(), timeout=30)) > 0


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_cycles_caught_in_flight_are_collected_once_they_are_worth_it_and_kopf_is_quiet() -> None:
    upkeep = heap_upkeep.HeapUpkeep(above=0)
    in_flight = [_Cycle() for _ in range(100)]  # alive at the freeze, as the events kopf is handling
    gone = weakref.ref(in_flight[0])
    frozen_then = gc.get_freeze_count()
    upkeep.look(in_flight=1)  # one event in flight: far from a tenth of the heap
    del in_flight
    gc.collect()
    assert gone() is not None, "frozen: the collector does not see it"
    upkeep.look(in_flight=0)
    assert gone() is not None, "thawed the whole heap for one event's worth of cycles"
    caught = int(heap_upkeep.THAW_QUIET * upkeep.frozen / heap_upkeep.OBJECTS_PER_EVENT) + 1
    upkeep.look(in_flight=caught)  # a freeze while many events were in flight
    assert gone() is not None, "thawed while events were in flight, below a quarter"
    upkeep.look(in_flight=0)
    assert gone() is None, "a dead cycle caught in flight was never collected"
    assert upkeep.thaws == 1
    assert upkeep.caught == 0
    assert gc.get_freeze_count() > frozen_then


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_under_changes_that_never_pause_the_heap_is_thawed_past_a_quarter() -> None:
    upkeep = heap_upkeep.HeapUpkeep(above=0)
    in_flight = [_Cycle() for _ in range(100)]
    gone = weakref.ref(in_flight[0])
    many = int(heap_upkeep.THAW_ANYWAY * 2 * len(gc.get_objects()) / heap_upkeep.OBJECTS_PER_EVENT) + 1
    upkeep.look(in_flight=many)
    del in_flight
    upkeep.look(in_flight=many)
    assert gone() is None, "what freezes caught in flight piled up without bound while events never stopped"
    assert upkeep.thaws == 1


COUNT_SLACK = 1_000
"""Objects other threads may make between the upkeep's collection and its freeze (frozen, not counted)."""


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_the_upkeep_counts_what_it_froze_without_walking_the_frozen_objects() -> None:
    """The thaw's ratio is taken of the upkeep's own count (``gc.get_freeze_count`` walks every frozen object):
    the count must be what is frozen, through freezes and a thaw, give or take what other threads of the test
    process allocate between a collection and its freeze (``COUNT_SLACK``: far below the 20,000 objects freed
    below, which a count that is not renewed at the thaw is off by)."""
    gc.unfreeze()
    upkeep = heap_upkeep.HeapUpkeep(above=10_000)
    kept = [_Kept(n) for n in range(20_000)]
    gc.collect()
    upkeep.look(in_flight=0)
    assert upkeep.freezes == 1
    assert abs(upkeep.frozen - gc.get_freeze_count()) <= COUNT_SLACK
    more = [_Kept(n) for n in range(10_000)]
    gc.collect()
    upkeep.look(in_flight=1_000_000)  # a freeze that may have caught a great deal in flight
    assert upkeep.freezes == 2
    assert abs(upkeep.frozen - gc.get_freeze_count()) <= COUNT_SLACK
    del more  # frozen objects freed by their reference counts: still counted, until a thaw counts anew
    assert upkeep.frozen > gc.get_freeze_count() + COUNT_SLACK
    upkeep.look(in_flight=0)  # the freeze before may have caught a great deal: this quiet look thaws
    assert upkeep.thaws == 1
    assert abs(upkeep.frozen - gc.get_freeze_count()) <= COUNT_SLACK
    assert kept


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


@pytest.mark.usefixtures("unfrozen_afterwards")
def test_garbage_waiting_for_a_collection_is_not_frozen_with_what_lives() -> None:
    gc.collect()
    gc.disable()  # the garbage waits, as it does between two collections of the youngest generation
    try:
        kept = [_Kept(n) for n in range(30_000)]
        gone = [weakref.ref(_Cycle()) for _ in range(1_000)]
        assert heap_upkeep.freeze_if_grown(above=0)
    finally:
        gc.enable()
    gc.unfreeze()
    assert not [ref for ref in gone if ref() is not None], (
        "dead cycles were frozen: they would never be freed"
    )
    assert kept
