"""The operator's garbage-collection thresholds: objects that live for the length of a watch event are freed by
their reference counts and never reach the oldest generation, so a process holding many objects for long is not
collected whole every few seconds."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections import deque
from pathlib import Path

from topic_operator.k8s.process.garbage_collection import (
    MIDDLE_THRESHOLD,
    YOUNG_THRESHOLD,
    tune_garbage_collection,
)

BODY = json.dumps({
    "metadata": {"name": "orders", "labels": {f"l{i}": "v" for i in range(10)},
                 "managedFields": [{"manager": "kubectl", "fieldsV1": {f"f:{i}": {} for i in range(20)}}]},
    "spec": {"partitions": 4, "config": {f"k{i}": str(i) for i in range(10)}},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
})  # fmt: skip


def _full_collections_over_a_stream_of_events(events: int = 100_000) -> int:
    """Full collections while ``events`` bodies are decoded, each kept alive for the next 500 events (in
    flight), and one in ten kept for good (what the operator holds per object)."""
    in_flight: deque[object] = deque(maxlen=500)
    kept: list[object] = []
    before = gc.get_stats()[2]["collections"]
    for n in range(events):
        body = json.loads(BODY)
        in_flight.append(body)
        if n % 10 == 0:
            kept.append(body)
    return int(gc.get_stats()[2]["collections"] - before)


def test_the_young_and_middle_generations_are_collected_at_the_operators_thresholds() -> None:
    original = gc.get_threshold()
    try:
        assert tune_garbage_collection() == original
        assert gc.get_threshold() == (YOUNG_THRESHOLD, MIDDLE_THRESHOLD, original[2])
    finally:
        gc.set_threshold(*original)


def _in_a_fresh_process(tuned: bool) -> int:
    """The full collections of the workload in a process of its own: how often CPython collects whole depends
    on how many objects the process holds, which in the test process depends on the tests run before."""
    program = (
        "import gc, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_garbage_collection_is_tuned import _full_collections_over_a_stream_of_events as run\n"
        "from topic_operator.k8s.process.garbage_collection import tune_garbage_collection\n"
        f"gc.set_threshold(700, 10, 10)\n{'tune_garbage_collection()' if tuned else ''}\n"
        "gc.collect()\nprint(run())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    return int(done.stdout.strip())


def test_short_lived_objects_no_longer_trigger_full_collections() -> None:
    untuned, tuned = _in_a_fresh_process(tuned=False), _in_a_fresh_process(tuned=True)
    assert untuned >= 2, f"the workload did not make CPython collect whole ({untuned} full collections)"
    assert tuned * 4 <= untuned, f"{tuned} full collections tuned, {untuned} with CPython's defaults"
