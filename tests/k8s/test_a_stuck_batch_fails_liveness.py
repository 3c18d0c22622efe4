"""A batch that runs past its deadline and grace fails ``/healthz`` (once logged), and only its own cluster waits:
each cluster's batches run in a thread of its own."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import aiohttp
import pytest

from topic_operator.k8s.kafkaclusters.batching import Batcher
from topic_operator.k8s.process.liveness import Liveness
from topic_operator.k8s.process.serving import serve_health


@dataclass
class Cluster:
    label: str
    batcher: Batcher[str, str, str]
    alive: bool = True


def _batcher(name: str, release: threading.Event) -> Batcher[str, str, str]:
    def run(items: Sequence[tuple[str, str]]) -> Mapping[str, str]:
        release.wait(10)
        return {key: f"done {payload}" for key, payload in items}

    return Batcher(
        run,
        linger=0.0,
        max_batch=10,
        max_pending=10,
        offer_timeout=1.0,
        name=name,
        executor=ThreadPoolExecutor(max_workers=1, thread_name_prefix=name),
    )


@pytest.mark.timeout(30)
def test_a_stuck_cluster_fails_liveness_while_the_others_carry_on(caplog: pytest.LogCaptureFixture) -> None:
    stuck_release, other_release = threading.Event(), threading.Event()
    other_release.set()
    stuck = Cluster("team-a/stuck", _batcher("stuck", stuck_release))
    other = Cluster("team-a/other", _batcher("other", other_release))
    liveness = Liveness(stuck_after=0.3)

    async def scenario() -> None:
        waiting = asyncio.ensure_future(stuck.batcher.submit("t1", "create"))
        await asyncio.sleep(0.1)
        assert liveness.check([stuck, other]) == (
            True,
            {"clusters": {"team-a/stuck": True, "team-a/other": True}, "stuck": {}},
        )
        # The other cluster's batches run while the stuck one holds its own thread.
        assert await asyncio.wait_for(other.batcher.submit("t2", "grow"), 5) == "done grow"
        await asyncio.sleep(0.4)
        with caplog.at_level(logging.ERROR, logger="topic_operator.k8s.process.liveness"):
            alive, details = liveness.check([stuck, other])
            liveness.check([stuck, other])
        assert not alive
        assert list(details["stuck"]) == ["team-a/stuck"]
        assert details["stuck"]["team-a/stuck"] > 0.3
        (record,) = caplog.records  # said once per episode, not at every probe
        assert "team-a/stuck" in record.getMessage()
        assert "past its deadline" in record.getMessage()
        stuck_release.set()
        assert await asyncio.wait_for(waiting, 5) == "done create"
        assert liveness.check([stuck, other])[0]
        await stuck.batcher.close()
        await other.batcher.close()

    asyncio.run(scenario())


def test_a_session_keeper_that_stopped_going_round_fails_liveness() -> None:
    """A disconnected cluster is no reason to restart; a keeper that no longer reconnects it is: nothing else
    would. The heartbeats are the keepers' rounds (``OperatorContext.session_heartbeats``)."""
    liveness = Liveness(stuck_after=75.0)
    idle = Cluster("team-a/idle", _batcher("idle", threading.Event()), alive=False)
    now = 1000.0
    beats = {("team-a", "idle"): now - 1.0, ("team-b", "gone-quiet"): now - 80.0}
    alive, details = liveness.check([idle], beats, now=now)
    assert not alive
    assert details == {"clusters": {"team-a/idle": False}, "stuck": {"team-b/gone-quiet": 80.0}}
    beats[("team-b", "gone-quiet")] = now - 2.0
    assert liveness.check([idle], beats, now=now) == (
        True,
        {"clusters": {"team-a/idle": False}, "stuck": {}},
    )


@pytest.mark.timeout(30)
def test_healthz_answers_503_with_the_stuck_clusters() -> None:
    state = {"alive": True}

    def alive() -> tuple[bool, dict[str, object]]:
        return state["alive"], {"stuck": {} if state["alive"] else {"team-a/x": 99.0}}

    async def scenario() -> None:
        runner = await serve_health(alive, host="127.0.0.1", port=0)
        port = runner.addresses[0][1]
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                    assert response.status == 200
                state["alive"] = False
                started = time.monotonic()
                async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                    assert response.status == 503
                    assert await response.json() == {"stuck": {"team-a/x": 99.0}}
                assert time.monotonic() - started < 2
        finally:
            await runner.cleanup()

    asyncio.run(scenario())
