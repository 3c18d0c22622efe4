"""How soon the event loop gets Python's lock back from the operator's threads that compute.

The event loop shares the GIL with threads that run Python for long stretches: each cluster's thread (a plan over
every topic of the cluster, ZooKeeper's answers decoded) and kazoo's connection threads. The loop lets the lock go
at every system call (each socket read and write, each wait for events), and to go on it must wait until the
thread that took the lock lets it go, which a computing thread does only once every switch interval
(``sys.setswitchinterval``; 5 ms by default). A turn of the loop that makes a few dozen system calls behind such a
thread waits that long for each: on the real API server at 50,000 KafkaTopics, the loop was held 190-250 ms while
it sat in socket reads and writes and the other threads used the CPU. With a 1 ms interval, the same wait is a
fifth as long; a computing thread pays a lock hand-over per millisecond, a few microseconds each.
``bench/lock_handoff.py`` measures both on one loop and one computing thread.
"""

from __future__ import annotations

import sys
from typing import Final

__all__ = ["LOOP_SWITCH_INTERVAL", "hand_the_lock_back_sooner"]

LOOP_SWITCH_INTERVAL: Final = 0.001
"""Seconds a thread that computes may hold Python's lock while another thread waits for it (CPython: 0.005)."""


def hand_the_lock_back_sooner(interval: float = LOOP_SWITCH_INTERVAL) -> float:
    """Set the interpreter's switch interval to ``interval``; returns the one it replaced, so a caller (a test,
    the benchmark) can put it back."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    return before
