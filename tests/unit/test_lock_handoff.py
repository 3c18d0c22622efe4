"""The operator's event loop gets Python's lock back within a millisecond from a thread that computes."""

from __future__ import annotations

import sys

from topic_operator.k8s.process.lock_handoff import LOOP_SWITCH_INTERVAL, hand_the_lock_back_sooner


def test_the_switch_interval_is_shortened_and_the_old_one_returned() -> None:
    original = sys.getswitchinterval()
    try:
        assert hand_the_lock_back_sooner() == original
        assert sys.getswitchinterval() == LOOP_SWITCH_INTERVAL
        assert original > LOOP_SWITCH_INTERVAL, "shorter than CPython's own"
    finally:
        sys.setswitchinterval(original)
