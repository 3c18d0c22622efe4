"""Python's cyclic garbage collector, tuned for a process that holds tens of thousands of objects for long.

CPython collects its youngest generation every 700 net allocations and promotes what survives two collections
to the oldest generation, which it collects whole once that has grown by a quarter. The operator allocates
thousands of objects per watch event (a KafkaTopic's JSON, kopf's per-event objects, the HTTP exchanges), and
at 700 allocations a collection, an object alive for a few milliseconds is already promoted. So the oldest
generation filled with objects that were about to die anyway, and was collected whole every few seconds: on the
real API server, 10,000 KafkaTopics created at 51 a second cost 34 full collections, a third of the operator's
CPU, and held the event loop for up to a second at a time (``bench/operator_events.py``, its garbage collection
figures). With the youngest generation collected every ``YOUNG_THRESHOLD`` net allocations instead, a watch event's
objects are freed by their reference counts before any collection sees them, and the oldest generation grows
only with what the operator keeps.

How long one collection holds the event loop grows with how many objects it walks, and on a machine whose cores
the API server and etcd keep busy, each object costs a microsecond or more (its references into the rest of the
heap miss the caches). At 50,000 net allocations a young collection and ten young collections per middle one
(CPython's ratio), the operator's young collections walked 40,000-60,000 objects and its middle ones over
100,000: 55-90 ms each beside 20,000 KafkaTopics, up to 150 ms beside 50,000. So the youngest generation is
collected every 10,000 net allocations (a watch event's objects are still long gone by then), and the middle one
every ``MIDDLE_THRESHOLD`` young collections: a middle collection walks at most a few young collections'
survivors, and the heap upkeep (``heap_upkeep``) freezes what survives it, so the oldest generation stays empty
of anything to walk.

The price is that garbage in reference cycles waits longer: at most ``YOUNG_THRESHOLD`` objects more.
"""

from __future__ import annotations

import gc
from typing import Final

__all__ = ["MIDDLE_THRESHOLD", "YOUNG_THRESHOLD", "tune_garbage_collection"]

YOUNG_THRESHOLD: Final = 10_000
"""Net allocations between two collections of the youngest generation (CPython's default: 700)."""

MIDDLE_THRESHOLD: Final = 2
"""Collections of the youngest generation between two of the middle one (CPython's default: 10)."""


def tune_garbage_collection(
    young: int = YOUNG_THRESHOLD, middle: int = MIDDLE_THRESHOLD
) -> tuple[int, int, int]:
    """Collect the youngest generation every ``young`` net allocations and the middle one every ``middle``
    young collections; the oldest keeps CPython's cadence relative to the middle one. Returns the thresholds as
    they were, so a caller (a test) can put them back."""
    before = gc.get_threshold()
    gc.set_threshold(young, middle, before[2])
    return before
