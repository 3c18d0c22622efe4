"""How long the event loop was held up: a task that asks to wake every ``PERIOD`` seconds and records how late it
woke, in ``kto_event_loop_lag_seconds``.

kopf's watches, every handler, the probes and the status writes share the one loop, so whatever holds it (a long
pass over every topic, a collection of the oldest generation) delays all of them at once. The histogram shows it
from outside the process, as an operator's users run it: its count of samples above 0.1 s is the number of times
the loop was held longer than that (less one period, at most: a hold-up that begins just before a wake-up is
seen from its start, one that begins just after it is seen short by up to the period).
"""

from __future__ import annotations

import asyncio
import time

from prometheus_client import Histogram

__all__ = ["PERIOD", "watch_loop_lag"]

PERIOD = 0.02
"""Seconds between two wake-ups: fifty a second, a few microseconds of CPU each."""


async def watch_loop_lag(lag: Histogram, *, period: float = PERIOD) -> None:
    """Record each wake-up's lateness in ``lag`` until cancelled."""
    while True:
        asked = time.monotonic()
        await asyncio.sleep(period)
        lag.observe(max(time.monotonic() - asked - period, 0.0))
