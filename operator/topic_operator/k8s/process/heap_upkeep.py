"""Keep the operator's long-lived heap cheap to collect and give the memory it no longer uses back.

What the operator keeps per KafkaTopic (its claim, its validation, the watched view of its topic) lives as long
as the KafkaTopic: at 50,000 KafkaTopics, about 700,000 objects that Python's cycle collector walks whole every
time it collects its oldest generation, which held the event loop for 0.3-1.3 s. ``gc.freeze`` moves every
object alive at that moment out of the collector's sight: later collections walk only what was made since. So
whenever the unfrozen oldest generation has grown past ``FREEZE_ABOVE`` objects, the upkeep collects what is not
frozen (a walk of about that many objects: tens of milliseconds) and freezes what survived. A collection of the
oldest generation then stays short at any number of KafkaTopics.

The collection comes first because a freeze also takes the garbage that waits for a collection: kopf's handling
of one event leaves a reference cycle behind (a body and its views, a patch and its parts: about
``OBJECTS_PER_EVENT`` objects). A frozen object is still freed by its reference count, as nearly everything the
operator drops is; but a cycle alive at a freeze and dead later is never collected. The events kopf is handling
at a freeze (its per-object workers running) are such cycles: 10,000 unpaced updates left 88,000 objects frozen
for good, 40,000 at each freeze. So is anything that keeps kopf's cause of an event: work that outlives its
handler starts outside the handler's context (``handler_scope``), or each KafkaTopic reconcile waiting in a
burst is one more (50,000 unpaced creates and updates left 2.4 million objects frozen). So the upkeep counts
what each freeze may have caught, and once that reaches a tenth of what is frozen, it thaws the heap at the
first quiet look (no worker running), collects it whole once and freezes it clean; past a quarter, it does so at
once, quiet or not. That one collection walks everything, as each collection of the oldest generation did before,
but only once the leak is worth it: at 51 changes a second (about 25 workers at a freeze, one freeze per
``FREEZE_ABOVE`` objects kept), 50,000 creates catch about 25,000 objects, a thirtieth of what they froze.

glibc's malloc keeps what Python frees in its heap; ``malloc_trim`` hands the free pages back to the system
(``malloc_arenas`` caps the arenas it has to look at). It runs off the event loop: ctypes lets go of the GIL.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
from collections.abc import Callable
from typing import Final

__all__ = [
    "FREEZE_ABOVE",
    "OBJECTS_PER_EVENT",
    "THAW_ANYWAY",
    "THAW_QUIET",
    "UPKEEP_INTERVAL",
    "HeapUpkeep",
    "freeze_if_grown",
    "keep_heap",
    "kopf_workers",
    "trim_free_memory",
]

FREEZE_ABOVE: Final = 25_000
"""Unfrozen objects in the oldest generation past which the upkeep collects and freezes: the look walks about
that many objects three times (listing, collecting, listing the survivors), a few milliseconds on a quiet
machine, and several times that on one whose cores the API server and the clients keep busy."""

UPKEEP_INTERVAL: Final = 10.0
"""Seconds between two looks at the heap."""

OBJECTS_PER_EVENT: Final = 40
"""Objects of the reference cycle kopf's handling of one event leaves (measured: 37.6)."""

THAW_QUIET: Final = 0.10
THAW_ANYWAY: Final = 0.25
"""What frozen events in flight may hold, as a share of the frozen objects, before the upkeep thaws and collects
the whole heap at the next quiet look, and at the next look whatever it finds."""

KOPF_WORKER = "worker for "
"""How kopf names the task that handles one object's events (``kopf._core.reactor.queueing``)."""


def freeze_if_grown(above: int = FREEZE_ABOVE) -> int | None:
    """Once the unfrozen oldest generation holds ``above`` objects or more, collect the garbage among what is
    not frozen, then freeze what lives; how many objects that froze, or None when it did not look further.
    Counting lists only the unfrozen objects: a few milliseconds."""
    if len(gc.get_objects(generation=2)) < above:
        return None
    return _collect_and_freeze()


def _collect_and_freeze() -> int:
    """Collect what is not frozen, then freeze what lives; about how many objects that froze. A full collection
    leaves every survivor in the oldest generation, so listing it counts them (not what other threads make
    between the listing and the freeze, a few at most): ``gc.get_freeze_count`` would
    walk every frozen object instead, one cache miss each (at 50,000 KafkaTopics, 700,000 objects scattered
    over 400 MB: that walk held the event loop for over 100 ms at each look)."""
    gc.collect()
    survivors = len(gc.get_objects(generation=2))
    gc.freeze()
    return survivors


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim  # glibc only: musl has none
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def trim_free_memory() -> bool:
    """Give the C heap's free pages back to the system; whether there was a ``malloc_trim`` to call."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


def kopf_workers() -> int:
    """The objects kopf is handling events of now (its per-object worker tasks live until their object has been
    quiet for ``queueing.idle_timeout``)."""
    return sum(task.get_name().startswith(KOPF_WORKER) for task in asyncio.all_tasks())


class HeapUpkeep:
    """The freezing policy, one look at a time (``look``); its counts say what it did (the tests read them)."""

    def __init__(self, above: int = FREEZE_ABOVE) -> None:
        self.above = above
        self.caught = 0
        """Objects the freezes since the last clean one may have caught in flight (an estimate)."""
        self.frozen = 0
        """Objects this upkeep froze, counted when it froze them. Frozen objects that died since are still
        counted (only a walk of them all would tell), so a thaw comes later than a tenth of what lives after
        many KafkaTopics are deleted; each thaw counts anew."""
        self.freezes = 0
        self.thaws = 0

    def look(self, *, in_flight: int) -> None:
        """One look, with ``in_flight`` objects having their events handled (kopf's workers) right now."""
        if self.caught and self.caught >= (THAW_QUIET if not in_flight else THAW_ANYWAY) * self.frozen:
            gc.unfreeze()
            self.frozen = _collect_and_freeze()
            self.caught = 0
            self.thaws += 1
        elif (frozen := freeze_if_grown(self.above)) is not None:
            self.frozen += frozen
            self.freezes += 1
            self.caught += in_flight * OBJECTS_PER_EVENT


async def keep_heap(
    interval: float = UPKEEP_INTERVAL,
    upkeep: HeapUpkeep | None = None,
    in_flight: Callable[[], int] = kopf_workers,
) -> None:
    """Every ``interval`` seconds, until cancelled: one look of ``upkeep`` at the heap, then the C heap trimmed
    in a thread."""
    upkeep = upkeep or HeapUpkeep()
    while True:
        await asyncio.sleep(interval)
        upkeep.look(in_flight=in_flight())
        await asyncio.to_thread(trim_free_memory)
