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


def test_forgetting_a_cluster_keeps_the_process_wide_lag_and_drops_the_cluster_s_series() -> None:
    metrics = Metrics()
    metrics.event_loop_lag.observe(0.2)
    metrics.connected.labels("ns/gone").set(1)
    metrics.connected.labels("ns/kept").set(1)
    metrics.forget_cluster("ns/gone")
    assert metrics.registry.get_sample_value("kto_cluster_connected", {"cluster": "ns/gone"}) is None
    assert metrics.registry.get_sample_value("kto_cluster_connected", {"cluster": "ns/kept"}) == 1
    assert metrics.registry.get_sample_value("kto_event_loop_lag_seconds_count") == 1
