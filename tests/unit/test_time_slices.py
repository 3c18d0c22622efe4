"""A long walk on the event loop gives it back every slice: a task waiting meanwhile runs within a slice or so,
not after the whole walk."""

from __future__ import annotations

import asyncio
import time

from topic_operator.k8s.process.time_slices import TimeSlices, in_slices

ITEMS = 200
WORK = 0.002
"""Seconds of work per item: the walk lasts 0.4 s, twenty 20 ms slices."""


def _busy(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


async def _longest_wait_of_a_neighbour(walk: object) -> float:
    """The longest a task that wakes every millisecond waited for the loop while ``walk`` ran."""
    longest = 0.0
    done = asyncio.Event()

    async def neighbour() -> None:
        nonlocal longest
        while not done.is_set():
            asked = time.perf_counter()
            await asyncio.sleep(0.001)
            longest = max(longest, time.perf_counter() - asked - 0.001)

    watcher = asyncio.create_task(neighbour())
    await asyncio.sleep(0.01)
    await walk  # type: ignore[misc]
    done.set()
    await watcher
    return longest


def test_a_walk_in_slices_lets_the_loop_serve_others_between_slices() -> None:
    slices = TimeSlices()

    async def walk() -> None:
        async for _ in in_slices(range(ITEMS), slices):
            _busy(WORK)

    longest = asyncio.run(_longest_wait_of_a_neighbour(walk()))
    assert slices.yields >= 10
    assert longest < 0.2, f"a neighbour waited {longest * 1000:.0f} ms for a walk of {ITEMS * WORK:.1f} s"


def test_the_same_walk_in_one_stretch_holds_the_loop_for_all_of_it() -> None:
    """The check above can fail: without slices, the neighbour waits for the whole walk."""

    async def walk() -> None:
        for _ in range(ITEMS):
            _busy(WORK)

    assert asyncio.run(_longest_wait_of_a_neighbour(walk())) >= ITEMS * WORK * 0.9


def test_a_short_walk_costs_no_yield() -> None:
    slices = TimeSlices(budget=60.0)

    async def walk() -> list[int]:
        return [item async for item in in_slices(range(1000), slices)]

    assert asyncio.run(walk()) == list(range(1000))
    assert slices.yields == 0
