"""Progress of a drift run, on stderr: each phase as it starts and ends, and Spark's task counts in between.

A fleet run takes minutes; a silent terminal for that long reads as a hang. Phases are the job's own steps
(read snapshots, plan, classify, write), timed for ``summary.json``; while a phase runs, a daemon thread polls
Spark's status tracker and prints the active stages' finished/total tasks whenever they change (at most every
``interval`` seconds). Spark's own console progress bar is turned off by ``session``: it redraws one line with
carriage returns, which a log file or CI output turns into noise.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """Phase lines and task counts written to ``stream`` (None: silent, timings only)."""

    def __init__(self, stream: TextIO | None, *, spark: Any = None, interval: float = 2.0) -> None:
        self._stream = stream
        self._context = spark.sparkContext if spark is not None else None
        self._interval = interval
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self.timings: dict[str, float] = {}
        """Seconds per phase, in the order the phases ran."""

    def say(self, text: str) -> None:
        if self._stream is None:
            return
        with self._lock:
            self._stream.write(f"[{time.monotonic() - self._started:7.1f}s] {text}\n")
            self._stream.flush()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a step, name Spark's jobs after it (the UI and the tracker show it) and report its tasks."""
        self.say(f"{name} ...")
        if self._context is not None:
            self._context.setJobDescription(f"kto drift: {name}")
        stop = threading.Event()
        watcher = None
        if self._stream is not None and self._context is not None:
            watcher = threading.Thread(
                target=self._watch, args=(stop,), name="kto-drift-progress", daemon=True
            )
            watcher.start()
        started = time.monotonic()
        try:
            yield
        finally:
            stop.set()
            if watcher is not None:
                watcher.join(timeout=5)
            elapsed = time.monotonic() - started
            self.timings[name] = self.timings.get(name, 0.0) + elapsed
            self.say(f"{name}: {elapsed:.1f} s")

    def _watch(self, stop: threading.Event) -> None:
        last = ""
        while not stop.wait(self._interval):
            line = self._stage_line()
            if line and line != last:
                self.say(f"  {line}")
                last = line

    def _stage_line(self) -> str:
        """``stage 4: 37/200 tasks, stage 5: 0/2 tasks`` for the stages running now."""
        assert self._context is not None
        try:
            tracker = self._context.statusTracker()
            parts = []
            for stage_id in sorted(tracker.getActiveStageIds()):
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    parts.append(f"stage {stage_id}: {info.numCompletedTasks}/{info.numTasks} tasks")
            return ", ".join(parts)
        except Exception:  # the session stopping under the watcher: progress is best-effort
            return ""
