"""Keep the operator's long-lived heap cheap to collect and give the memory it no longer uses back.

What the operator keeps per KafkaTopic (its claim, its validation, the watched view of its topic) lives as long
as the KafkaTopic: at 50,000 KafkaTopics, about 700,000 objects that Python's cycle collector walks whole every
time it collects its oldest generation, which held the event loop for 0.3-1.3 s. ``gc.freeze`` moves every
object alive at that moment out of the collector's sight: later collections walk only what was made since. So
whenever the unfrozen oldest generation has grown past ``FREEZE_ABOVE`` objects, the upkeep collects what is not
frozen (a walk of about that many objects: tens of milliseconds) and freezes what survived. A collection of the
oldest generation then stays short at any number of KafkaTopics.

The collection comes first because a freeze also takes the garbage that waits for a collection: kopf's handling
of one event leaves a reference cycle behind (a body and its views, a patch and its parts). A frozen object is
still freed by its reference count, as nearly everything the operator drops is; but a cycle alive at a freeze and
dead later is never collected. While kopf handles events (its per-object workers run), the events in flight are
such cycles: 10,000 unpaced updates left 88,000 objects frozen for good, about 40,000 a freeze. So a freeze made
while workers ran is dirty, and at the first quiet look after one (no worker running), the upkeep thaws the heap,
collects it whole once (the one long collection, when no event waits on the event loop) and freezes it clean.
Under changes that never pause, it does so after ``THAW_AFTER`` dirty freezes anyway: the leak stays bounded, and
that one collection is what every collection of the oldest generation would cost without the upkeep.

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
    "THAW_AFTER",
    "UPKEEP_INTERVAL",
    "HeapUpkeep",
    "freeze_if_grown",
    "keep_heap",
    "kopf_workers_running",
    "trim_free_memory",
]

FREEZE_ABOVE: Final = 50_000
"""Unfrozen objects in the oldest generation past which the upkeep collects and freezes (a collection of that
many and of what arrived meanwhile takes 15-50 ms here)."""

UPKEEP_INTERVAL: Final = 10.0
"""Seconds between two looks at the heap."""

THAW_AFTER: Final = 8
"""Dirty freezes (made while kopf's workers ran) after which the upkeep thaws and collects the whole heap even
though workers run."""

KOPF_WORKER = "worker for "
"""How kopf names the task that handles one object's events (``kopf._core.reactor.queueing``)."""


def freeze_if_grown(above: int = FREEZE_ABOVE) -> bool:
    """Once the unfrozen oldest generation holds ``above`` objects or more, collect the garbage among what is
    not frozen, then freeze what lives; whether it did. (Counting them lists them: a few milliseconds, and only
    the unfrozen ones.)"""
    if len(gc.get_objects(generation=2)) < above:
        return False
    gc.collect()
    gc.freeze()
    return True


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


def kopf_workers_running() -> bool:
    """Whether kopf is handling some object's events now (its per-object worker tasks live until their object
    has been quiet for ``queueing.idle_timeout``)."""
    return any(task.get_name().startswith(KOPF_WORKER) for task in asyncio.all_tasks())


class HeapUpkeep:
    """The freezing policy, one look at a time (``look``); the counts say what it did, for the bench."""

    def __init__(self, above: int = FREEZE_ABOVE, thaw_after: int = THAW_AFTER) -> None:
        self.above = above
        self.thaw_after = thaw_after
        self.dirty = 0
        self.freezes = 0
        self.thaws = 0

    def look(self, *, quiet: bool) -> None:
        if self.dirty and (quiet or self.dirty >= self.thaw_after):
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.dirty = 0
            self.thaws += 1
        elif freeze_if_grown(self.above):
            self.freezes += 1
            if not quiet:
                self.dirty += 1


async def keep_heap(
    interval: float = UPKEEP_INTERVAL,
    upkeep: HeapUpkeep | None = None,
    quiet: Callable[[], bool] = lambda: not kopf_workers_running(),
) -> None:
    """Every ``interval`` seconds, until cancelled: one look of ``upkeep`` at the heap, then the C heap trimmed
    in a thread."""
    upkeep = upkeep or HeapUpkeep()
    while True:
        await asyncio.sleep(interval)
        upkeep.look(quiet=quiet())
        await asyncio.to_thread(trim_free_memory)
