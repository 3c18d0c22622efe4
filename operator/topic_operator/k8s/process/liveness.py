"""``/healthz``: alive unless a cluster's batch has run past its deadline, or a cluster's session keeper stopped
going round (and the event loop answers at all).

Every batch is bounded by ``zk_deadline`` (the engine gives up on ZooKeeper by then and reports each topic's
outcome). A batch still running ``stuck_grace`` seconds later is a bug or a wait nothing bounds: its cluster's
KafkaTopics are already being retried, and only a restart frees its thread, so liveness fails and Kubernetes
restarts the pod. Each stuck cluster is logged once per episode, with how long it has run.

A disconnected cluster is not a reason to restart: its session keeper (``sessions``) replaces the session for
as long as it takes, and says so in the status. What the process cannot recover from by itself is a keeper that
no longer goes round (its heartbeat older than ``stuck_after``): then nothing would ever reconnect that cluster.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Liveness"]

logger = logging.getLogger(__name__)


class _Running(Protocol):
    def running_for(self, now: float | None = None) -> float: ...


class _Cluster(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def batcher(self) -> _Running: ...

    @property
    def alive(self) -> bool: ...


@dataclass
class Liveness:
    stuck_after: float
    """Seconds after which a running batch is stuck (``zk_deadline + stuck_grace``)."""
    _reported: set[str] = field(default_factory=set)

    def check(
        self,
        clusters: Iterable[_Cluster],
        heartbeats: Mapping[tuple[str, str], float] | None = None,
        now: float | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        """(alive, the body of the answer): each cluster's session, and the stuck ones with their seconds: a
        batch running past ``stuck_after``, or a session keeper whose last round (``heartbeats``) is older."""
        sessions: dict[str, bool] = {}
        stuck: dict[str, float] = {}
        for cluster in clusters:
            sessions[cluster.label] = cluster.alive
            running = cluster.batcher.running_for()
            if running > self.stuck_after:
                stuck[cluster.label] = round(running, 1)
        now = time.monotonic() if now is None else now
        for (namespace, name), beat in (heartbeats or {}).items():
            if now - beat > self.stuck_after:
                stuck.setdefault(f"{namespace}/{name}", round(now - beat, 1))
        for label in sorted(set(stuck) - self._reported):
            logger.error(
                "KafkaCluster %s: a batch (or its session keeper) stuck for %.0f s, past its deadline and grace "
                "(%g s); liveness fails so that the pod is restarted",
                label,
                stuck[label],
                self.stuck_after,
            )
        self._reported = set(stuck)
        return not stuck, {"clusters": sessions, "stuck": stuck}
