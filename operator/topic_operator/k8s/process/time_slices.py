"""Long loops on the event loop, cut into slices so that the loop serves everything else in between.

The operator does all its Kubernetes work on one asyncio loop: kopf's watch streams, each KafkaTopic's reconcile,
the status patches, the probes. A drift check walks every KafkaTopic of its cluster (50,000 of them take a few
seconds of Python), and done in one stretch it would hold up all of that: a KafkaTopic created meanwhile would
wait for the whole check, and the probes would stop answering. Every ``SLICE`` seconds a walk yields once, and the
loop runs whatever became ready meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from typing import Final, TypeVar

__all__ = ["SLICE", "TimeSlices", "in_slices"]

T = TypeVar("T")

SLICE: Final = 0.02
"""Seconds of work between two yields: a fifth of the 100 ms the loop may be held up at most, which leaves room
for the thread of a cluster holding Python's lock meanwhile."""


class TimeSlices:
    """``await slices.next()`` in each round of a long loop: it yields to the event loop once the current slice
    has lasted ``budget`` seconds, and costs a clock read otherwise."""

    def __init__(self, budget: float = SLICE) -> None:
        self._budget = budget
        self._since = time.monotonic()
        self.yields = 0
        """How many times the walk gave the loop back (for tests)."""

    async def next(self) -> None:
        if time.monotonic() - self._since >= self._budget:
            await asyncio.sleep(0)
            self.yields += 1
            self._since = time.monotonic()


async def in_slices(items: Iterable[T], slices: TimeSlices | None = None) -> AsyncIterator[T]:
    """``items``, handing the event loop back between slices of the caller's work on them."""
    slices = slices if slices is not None else TimeSlices()
    for item in items:
        yield item
        await slices.next()
