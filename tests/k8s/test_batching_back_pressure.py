"""The per-cluster batcher on its own: requests within the linger share one call, a key is coalesced, a full
queue pushes back and then refuses with QueueFullError (never crashes), and a failing batch fails only its own
requests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence

import pytest

from topic_operator.k8s.kafkaclusters.batching import Batcher, BatcherClosedError, QueueFullError


class Recorder:
    def __init__(self, gate: threading.Event | None = None, fail: bool = False) -> None:
        self.calls: list[list[tuple[str, int]]] = []
        self.gate = gate
        self.fail = fail

    def __call__(self, items: Sequence[tuple[str, int]]) -> Mapping[str, int]:
        self.calls.append(list(items))
        if self.gate is not None:
            self.gate.wait(5)
        if self.fail:
            raise RuntimeError("ZooKeeper went away")
        return {key: value * 10 for key, value in items}


def batcher(run: Recorder, **options: float) -> Batcher[str, int, int]:
    settings = {"linger": 0.05, "max_batch": 100, "max_pending": 100, "offer_timeout": 0.1, **options}
    return Batcher(run, linger=settings["linger"], max_batch=int(settings["max_batch"]),
                   max_pending=int(settings["max_pending"]), offer_timeout=settings["offer_timeout"])  # fmt: skip


def test_requests_within_the_linger_share_one_batch_and_a_key_is_coalesced() -> None:
    run = Recorder()

    async def scenario() -> list[int]:
        b = batcher(run)
        results = await asyncio.gather(*(b.submit(f"t{i}", i) for i in range(10)), b.submit("t3", 33))
        await b.close()
        return results

    results = asyncio.run(scenario())
    assert len(run.calls) == 1
    assert len(run.calls[0]) == 10
    assert dict(run.calls[0])["t3"] == 33  # the newest payload of a key wins
    assert results[3] == results[10] == 330


def test_max_batch_splits_the_work() -> None:
    run = Recorder()

    async def scenario() -> None:
        b = batcher(run, max_batch=4)
        await asyncio.gather(*(b.submit(f"t{i}", i) for i in range(10)))
        await b.close()

    asyncio.run(scenario())
    assert [len(call) for call in run.calls] == [4, 4, 2]


def test_a_full_queue_applies_back_pressure_then_refuses() -> None:
    gate = threading.Event()
    run = Recorder(gate)

    async def scenario() -> None:
        b = batcher(run, max_pending=2, linger=0.01, offer_timeout=0.2)
        first = asyncio.ensure_future(b.submit("running", 1))
        await asyncio.sleep(0.1)  # taken by the worker, which now blocks in its thread
        waiting = [asyncio.ensure_future(b.submit(f"w{i}", i)) for i in range(2)]
        await asyncio.sleep(0)
        assert b.depth == 2
        with pytest.raises(QueueFullError, match="2 topics already waiting"):
            await b.submit("overflow", 9)
        gate.set()
        assert await first == 10
        assert sorted(await asyncio.gather(*waiting)) == [0, 10]
        assert await b.submit("later", 5) == 50  # room again: accepted
        await b.close()

    asyncio.run(scenario())


def test_a_failing_batch_fails_its_requests_and_the_next_batch_runs() -> None:
    run = Recorder(fail=True)

    async def scenario() -> None:
        b = batcher(run)
        with pytest.raises(RuntimeError, match="ZooKeeper went away"):
            await b.submit("a", 1)
        run.fail = False
        assert await b.submit("b", 2) == 20
        await b.close()
        with pytest.raises(BatcherClosedError):
            await b.submit("c", 3)

    asyncio.run(scenario())
