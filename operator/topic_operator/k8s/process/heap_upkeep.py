"""Keep the operator's long-lived heap out of the cycle collector's walk, and give the memory it no longer uses back.

What the operator keeps per KafkaTopic (its claim, its validation, the watched view of its topic) lives as long
as the KafkaTopic: at 50,000 KafkaTopics, about 700,000 objects that Python's cycle collector would walk whole
every time it collects its oldest generation, which held the event loop for 0.3-1.3 s. ``gc.freeze`` moves every
object alive at that moment out of the collector's sight: later collections walk only what was made since.

The freezes ride on the collector's own work: right after each collection of the middle generation (a
``gc.callbacks`` hook), the young generations are empty and everything not frozen has just survived two
collections, so freezing then takes no walk of its own (``gc.freeze`` splices lists) and nothing dead that a
collection could have found. Each collection walks at most the objects made since the last middle one
(``garbage_collection``'s thresholds bound how many). An upkeep that collected and froze on a timer instead had to
walk the young generations again before each freeze, on top of the collector's own walks: 145 ms at a time beside
50,000 KafkaTopics.

A frozen object is still freed by its reference count, as nearly everything the operator drops is; but a
reference cycle alive at a freeze and dead later is never collected. The events kopf is handling at a freeze (its
per-object workers running) are such cycles: kopf's handling of one event leaves one behind (a body and its views,
a patch and its parts: about ``OBJECTS_PER_EVENT`` objects). So is anything that keeps kopf's cause of an event:
work that outlives its handler starts outside the handler's context (``handler_scope``), or each KafkaTopic
reconcile waiting in a burst is one more. So every ``UPKEEP_INTERVAL`` the upkeep counts what the freezes since
its last look may have caught (the workers running, times ``OBJECTS_PER_EVENT``), and once that reaches a tenth of
what is frozen, it thaws the heap at the first quiet look (no worker running), collects it whole once and freezes
it clean; past a quarter, it does so at once, quiet or not. That one collection walks everything, but only once
the leak is worth it.

glibc's malloc keeps what Python frees in its heap; ``malloc_trim`` hands the free pages back to the system
(``malloc_arenas`` caps the arenas it has to look at). It runs off the event loop: ctypes lets go of the GIL.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
from collections.abc import Callable, Iterator, Mapping
from typing import Final

__all__ = [
    "OBJECTS_PER_EVENT",
    "THAW_ANYWAY",
    "THAW_QUIET",
    "UPKEEP_INTERVAL",
    "HeapUpkeep",
    "keep_heap",
    "kopf_workers",
    "trim_free_memory",
]

UPKEEP_INTERVAL: Final = 10.0
"""Seconds between two looks at what the freezes may have caught."""

OBJECTS_PER_EVENT: Final = 40
"""Objects of the reference cycle kopf's handling of one event leaves (measured: 37.6)."""

THAW_QUIET: Final = 0.10
THAW_ANYWAY: Final = 0.25
"""What frozen events in flight may hold, as a share of the frozen objects, before the upkeep thaws and collects
the whole heap at the next quiet look, and at the next look whatever it finds."""

KOPF_WORKER = "worker for "
"""How kopf names the task that handles one object's events (``kopf._core.reactor.queueing``)."""

OLDEST = 2
"""The generation survivors of a middle collection land in, and all that is not frozen right after one."""


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
    """The freezing policy: ``after_collection`` freezes (installed in ``gc.callbacks`` by ``installed``),
    ``look`` thaws when the freezes may have caught too much; its counts say what it did (the tests read them)."""

    def __init__(self) -> None:
        self.caught = 0
        """Objects the freezes since the last clean one may have caught in flight (an estimate)."""
        self.frozen = 0
        """Objects this upkeep froze, counted when it froze them: ``gc.get_freeze_count`` would walk every
        frozen object, one cache miss each (at 50,000 KafkaTopics, 700,000 objects scattered over 400 MB: over
        100 ms). Frozen objects that died since are still counted (only such a walk would tell), so a thaw comes
        later than a tenth of what lives after many KafkaTopics are deleted; each thaw counts anew."""
        self.freezes = 0
        self.thaws = 0
        self._freezes_looked_at = 0

    def after_collection(self, phase: str, info: Mapping[str, int]) -> None:
        """A ``gc.callbacks`` hook: at the end of a collection of the middle or the oldest generation, freeze what
        survived it (the only objects not frozen then). Listing them to count them costs a walk of what the
        collection has just walked, no more. Runs on whichever thread the collection happened, holding the GIL."""
        if phase == "stop" and info["generation"] >= 1:
            self._freeze_survivors()

    def _freeze_survivors(self) -> None:
        self.frozen += len(gc.get_objects(generation=OLDEST))
        gc.freeze()
        self.freezes += 1

    def look(self, *, in_flight: int) -> None:
        """One look, with ``in_flight`` objects having their events handled (kopf's workers) right now. The
        workers running now stand for those at all the freezes since the last look, counted once: a worker
        lingers after its event is handled and its cycle gone, so the count is already an upper bound, and
        counted again at each freeze (one every few seconds under load) it would thaw the heap for nothing. At
        50,000 paced changes it still stays above what the freezes really caught (0.2 dead objects per
        KafkaTopic among the frozen at the end), and no thaw came."""
        if self.freezes != self._freezes_looked_at:
            self._freezes_looked_at = self.freezes
            self.caught += in_flight * OBJECTS_PER_EVENT
        if self.caught and self.caught >= (THAW_QUIET if not in_flight else THAW_ANYWAY) * self.frozen:
            self.thaw()

    def thaw(self) -> None:
        """Thaw the heap, collect it whole, and freeze what lives (the hook has done so if it is installed)."""
        gc.unfreeze()
        self.frozen = 0
        gc.collect()
        self._freeze_survivors()
        self._freezes_looked_at = self.freezes
        self.caught = 0
        self.thaws += 1

    @contextlib.contextmanager
    def installed(self) -> Iterator[HeapUpkeep]:
        """With ``after_collection`` in ``gc.callbacks``, and out of it afterwards."""
        hook = self.after_collection
        gc.callbacks.append(hook)
        try:
            yield self
        finally:
            gc.callbacks.remove(hook)


async def keep_heap(
    interval: float = UPKEEP_INTERVAL,
    upkeep: HeapUpkeep | None = None,
    in_flight: Callable[[], int] = kopf_workers,
) -> None:
    """Until cancelled: the freezes after each young collection, and every ``interval`` seconds one look of
    ``upkeep`` at what they caught, then the C heap trimmed in a thread."""
    upkeep = upkeep or HeapUpkeep()
    with upkeep.installed():
        while True:
            await asyncio.sleep(interval)
            upkeep.look(in_flight=in_flight())
            await asyncio.to_thread(trim_free_memory)
