"""Python's cyclic garbage collector, tuned for a process that holds tens of thousands of objects for long.

CPython collects its youngest generation every 700 net allocations and promotes what survives two collections
to the oldest generation, which it collects whole once that has grown by a quarter. The operator allocates
thousands of objects per watch event (a KafkaTopic's JSON, kopf's per-event objects, the HTTP exchanges), and
at 700 allocations a collection, an object alive for a few milliseconds is already promoted. So the oldest
generation filled with objects that were about to die anyway, and was collected whole every few seconds: on the
real API server, 10,000 KafkaTopics created at 51 a second cost 34 full collections, a third of the operator's
CPU, and held the event loop for up to a second at a time (``bench/operator_events.py``, its garbage collection
figures). With the youngest generation collected every ``YOUNG_THRESHOLD`` allocations instead, a watch event's
objects are freed by their reference counts before any collection sees them, and the oldest generation grows
only with what the operator keeps.

The price is that garbage in reference cycles waits longer: at most ``YOUNG_THRESHOLD`` objects more.
"""

from __future__ import annotations

import gc
from typing import Final

__all__ = ["YOUNG_THRESHOLD", "tune_garbage_collection"]

YOUNG_THRESHOLD: Final = 50_000
"""Net allocations between two collections of the youngest generation (CPython's default: 700)."""


def tune_garbage_collection(young: int = YOUNG_THRESHOLD) -> tuple[int, int, int]:
    """Collect the youngest generation every ``young`` allocations; the older generations keep CPython's
    cadence relative to it. Returns the thresholds as they were, so a caller (a test) can put them back."""
    before = gc.get_threshold()
    gc.set_threshold(young, before[1], before[2])
    return before
