"""``kto_event_loop_lag_seconds`` counts a hold-up of the event loop, and only one."""

from __future__ import annotations

import asyncio
import time

from topic_operator.k8s.process.loop_lag import watch_loop_lag
from topic_operator.k8s.process.metrics import Metrics


def _above(metrics: Metrics, bound: str) -> float:
    """Samples above ``bound`` seconds: the count less the bucket at the bound."""
    count = metrics.registry.get_sample_value("kto_event_loop_lag_seconds_count") or 0.0
    within = metrics.registry.get_sample_value("kto_event_loop_lag_seconds_bucket", {"le": bound}) or 0.0
    return count - within


def test_a_held_loop_is_one_sample_above_its_hold_up() -> None:
    metrics = Metrics()

    async def scenario() -> None:
        watcher = asyncio.create_task(watch_loop_lag(metrics.event_loop_lag, period=0.01))
        await asyncio.sleep(0.1)  # wake-ups on an idle loop
        time.sleep(0.7)  # the loop held: nothing else runs meanwhile
        await asyncio.sleep(0.05)
        watcher.cancel()

    asyncio.run(scenario())
    assert _above(metrics, "0.5") == 1  # the hold-up, seen once, from its start
    assert _above(metrics, "1.0") == 0
    assert (metrics.registry.get_sample_value("kto_event_loop_lag_seconds_count") or 0) >= 10
