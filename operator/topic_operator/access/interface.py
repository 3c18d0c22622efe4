"""What the engine needs of a cluster's store, whichever protocol reaches it: ZooKeeper's znodes or Kafka's Admin
protocol. One interface, so that the planner, the rules and the placement are one piece of code for both.

A store reads the cluster into a ``ClusterState`` and writes a plan's actions, each action's outcome reported as
it stands (``WriteResult``), never guessed. Every wait is bounded by a ``Patience``: how long the cluster may keep
a step waiting before the step ends with ``ClusterUnavailableError`` (or, for writes, each action's outcome).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, TypedDict, Unpack

from topic_operator.kafka.errors import KafkaError
from topic_operator.model import Backend, ClusterState
from topic_operator.plan import Action

__all__ = [
    "DEFAULT_DEADLINE",
    "Backend",
    "ClusterMismatchError",
    "ClusterStore",
    "ClusterUnavailableError",
    "Outcome",
    "Patience",
    "ReadRequest",
    "WriteResult",
    "read_deadline",
]

DEFAULT_DEADLINE = 60.0
"""Seconds a cluster may keep a command (or one operator batch) waiting before it gives up: long enough to ride
out a leader election or a restarted server, short enough that a lost cluster is reported within a minute."""


class ClusterAccessError(Exception):
    """Base of every failure to reach a cluster, through either store: its ZooKeeper (``zookeeper.errors``) or its
    brokers (``admin.errors``). A face that reports such failures catches this one class."""


class ClusterUnavailableError(ClusterAccessError):
    """The cluster could not be reached (or stayed unreachable) within the deadline: its ZooKeeper ensemble or
    its brokers. Nothing was planned on a guess; the caller reports it and tries again later."""


class ClusterMismatchError(Exception):
    """A cluster declared with both its ZooKeeper and its brokers, whose two addresses reach two different Kafka
    clusters (their cluster ids differ). Nothing is read on as if they were one, and nothing is written."""


class Patience:
    """How long a cluster (its ZooKeeper or its brokers) may keep us waiting, counted from the last sign of life.

    ``restart()`` starts the clock afresh: at each step of a command (a read, a batch of writes) and on
    reconnecting, so time spent planning between steps never counts; ``heard(at)`` restarts it from the time an
    answer came, so a long run that keeps getting answers never runs out. ``clock`` is injectable for tests.
    """

    def __init__(
        self, seconds: float = DEFAULT_DEADLINE, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not seconds > 0:
            raise ValueError(f"a deadline must be positive, not {seconds!r}")
        self.seconds = seconds
        self._clock = clock
        self._since = clock()

    def restart(self) -> None:
        self._since = self._clock()

    def heard(self, at: float) -> None:
        """A sign of life that came at ``at`` (a ``clock()`` time) or later: the clock restarts from then, never
        from an earlier time than it already has."""
        self._since = max(self._since, at)

    def now(self) -> float:
        return self._clock()

    def remaining(self) -> float:
        return self._since + self.seconds - self._clock()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


class Outcome(Enum):
    APPLIED = "applied"
    CONFLICT = "conflict"
    REJECTED = "rejected"
    NOT_WRITTEN = "not_written"
    """Nothing of the action landed: the cluster went away before it was sent, or it was found not committed and
    could not be sent again within the deadline."""
    UNKNOWN = "unknown"
    """Sent, but its answer was lost with the connection and the cluster did not come back within the deadline to
    tell whether it landed: re-read before relying on either."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What happened to one action. ``error`` explains a conflict, rejection, or why it was not written or is
    unknown; ``retried`` counts commits sent again after their outcome was lost with the connection."""

    action: Action
    outcome: Outcome
    error: Exception | None = None
    retried: int = 0


class ReadRequest(TypedDict, total=False):
    """What one read of a cluster asks for, the keywords of every store's ``read_cluster``: written once here, so
    that a store (or a store over stores, which hands them on) cannot take them differently."""

    partition_states: bool
    """Partition leaders and ISRs too (default: no)."""
    topics: Collection[str] | None
    """Only these topics (default: every topic)."""
    deadline: float | Patience
    """How long the cluster may keep the read waiting (default ``DEFAULT_DEADLINE``: ``read_deadline``)."""
    configs_of: Collection[str] | None
    """The topics whose overrides the caller needs, where describing the others costs (the Admin protocol); a
    store may read every topic's anyway (ZooKeeper's). Default: every topic's."""


def read_deadline(request: ReadRequest) -> float | Patience:
    """The request's deadline, or the default one."""
    return request.get("deadline", DEFAULT_DEADLINE)


class ClusterStore(Protocol):
    """One cluster, read and written through one protocol."""

    @property
    def backend(self) -> Backend:
        """The protocol this store speaks."""
        ...

    def read_cluster(self, **request: Unpack[ReadRequest]) -> ClusterState:
        """The cluster now, as ``request`` asks (``ReadRequest``): brokers, cluster id and every topic (or only
        those asked for), with partition leaders and ISRs when asked. Raises ``ClusterUnavailableError`` past the
        deadline."""
        ...

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        """Write ``actions`` (at most one per topic and kind), returning one result per action in their order."""
        ...

    def validate(self, actions: Sequence[Action]) -> dict[str, KafkaError]:
        """What the cluster would refuse of ``actions``, by topic, without writing (``validate_only`` where the
        protocol has it; nothing where it has not)."""
        ...
