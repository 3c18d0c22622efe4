"""The vocabulary of a drift finding: kinds, severities, actions, and the texts both implementations print.

A finding is one row of ``drift.parquet``. The rules (``rules``) and the job's one-pass reader of snapshot rows
(``cluster_drift``, which measures health and broker load while it reads) produce them from the texts here, so
that the two word every finding character for character; the printf-style templates are applied with ``%``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from topic_operator.model import quick_init

__all__ = [
    "FINDING_COLUMNS",
    "KIND_INFO",
    "LISTED_PARTITIONS",
    "SKEW_MIN_DIFFERENCE",
    "SKEW_TOLERANCE",
    "Action",
    "Finding",
    "Kind",
    "KindInfo",
    "Severity",
    "partition_list",
    "rejection_text",
    "shape",
    "skew_bounds",
]


class Kind(StrEnum):
    MISSING = "missing"
    UNMANAGED = "unmanaged"
    PARTITIONS_BEHIND = "partitions_behind"
    PARTITIONS_AHEAD = "partitions_ahead"
    REPLICATION_FACTOR_DIFFERS = "replication_factor_differs"
    CONFIG_DIFFERS = "config_differs"
    MARKED_FOR_DELETION = "marked_for_deletion"
    PLAN_REJECTED = "plan_rejected"
    UNDER_REPLICATED = "under_replicated"
    OFFLINE = "offline"
    RACK_VIOLATION = "rack_violation"
    REPLICA_SKEW = "replica_skew"
    LEADER_SKEW = "leader_skew"
    CLUSTER_UNOBSERVED = "cluster_unobserved"


class Severity(StrEnum):
    ERROR = "error"
    """Broken, or not fixable by kto: data at risk or a human decision needed."""
    WARNING = "warning"
    """Drift that the plan fixes, or cluster health that needs attention."""
    INFO = "info"
    """Worth knowing: topics nobody declared, uneven load."""

    @property
    def rank(self) -> int:
        """Sort order in the report: errors first."""
        return list(Severity).index(self)


class Action(StrEnum):
    """What happens about a finding. The first three are actions of ``plans/<cluster>.json``."""

    CREATE = "create"
    ADD_PARTITIONS = "add_partitions"
    ALTER_CONFIG = "alter_config"
    REJECTED = "rejected"
    """The plan refuses the topic (Kafka's or kto's rule, in ``message``): the declaration must change."""
    NONE = "none"
    """kto leaves it alone (a topic nobody declared, a deletion the controller is carrying out)."""
    MANUAL = "manual"
    """Needs an operator: broker recovery, partition reassignment, or a snapshot that was not taken."""


@dataclass(frozen=True, slots=True)
class KindInfo:
    title: str
    severity: Severity
    """The kind's severity (``marked_for_deletion`` is a warning when the topic is declared, else info)."""
    description: str


KIND_INFO: Final[dict[Kind, KindInfo]] = {
    Kind.MISSING: KindInfo("Missing", Severity.WARNING, "declared, but the cluster has no such topic"),
    Kind.UNMANAGED: KindInfo("Unmanaged", Severity.INFO, "in the cluster, but not declared for it"),
    Kind.PARTITIONS_BEHIND: KindInfo(
        "Partitions behind", Severity.WARNING, "fewer partitions than declared: the plan adds them"
    ),
    Kind.PARTITIONS_AHEAD: KindInfo(
        "Partitions ahead",
        Severity.ERROR,
        "more partitions than declared: Kafka cannot remove partitions, so the plan rejects the topic",
    ),
    Kind.REPLICATION_FACTOR_DIFFERS: KindInfo(
        "Replication factor differs",
        Severity.ERROR,
        "partition 0's replica count is not the declared one: only a partition reassignment changes it",
    ),
    Kind.CONFIG_DIFFERS: KindInfo(
        "Config differs",
        Severity.WARNING,
        "a config override differs from the declaration (compared as the planner compares them)",
    ),
    Kind.MARKED_FOR_DELETION: KindInfo(
        "Marked for deletion", Severity.WARNING, "the topic is queued in /admin/delete_topics"
    ),
    Kind.PLAN_REJECTED: KindInfo(
        "Plan rejected", Severity.ERROR, "the plan rejects the declaration for a reason no other kind names"
    ),
    Kind.UNDER_REPLICATED: KindInfo(
        "Under-replicated", Severity.WARNING, "partitions whose ISR is smaller than their replica list"
    ),
    Kind.OFFLINE: KindInfo("Offline", Severity.ERROR, "partitions without a leader on a live broker"),
    Kind.RACK_VIOLATION: KindInfo(
        "Rack violation", Severity.WARNING, "partitions on fewer racks than min(replication factor, racks)"
    ),
    Kind.REPLICA_SKEW: KindInfo(
        "Replica skew", Severity.INFO, "a broker holds a share of the replicas far from the cluster's mean"
    ),
    Kind.LEADER_SKEW: KindInfo(
        "Leader skew", Severity.INFO, "a broker leads a share of the partitions far from the cluster's mean"
    ),
    Kind.CLUSTER_UNOBSERVED: KindInfo(
        "Cluster not observed", Severity.ERROR, "topics are declared for a cluster without a snapshot"
    ),
}

FINDING_COLUMNS: Final = (
    "cluster",
    "topic",
    "kind",
    "field",
    "desired",
    "actual",
    "action",
    "severity",
    "message",
)
"""The columns of ``drift.parquet``, in order. ``topic`` is null for broker and cluster findings; ``desired``,
``actual`` and ``message`` may be null."""


@quick_init
@dataclass(frozen=True, slots=True)
class Finding:
    """One row of ``drift.parquet``. Values are strings: a finding compares numbers, configs and states alike."""

    cluster: str
    topic: str | None
    kind: str
    field: str
    desired: str | None
    actual: str | None
    action: str
    severity: str
    message: str | None

    def as_tuple(self) -> tuple[str | None, ...]:
        """The values in ``FINDING_COLUMNS``' order. Spelled out: ``dataclasses.astuple`` deep-copies each value,
        which for strings gives back the same string, some fifty times slower, and every task turns each of its
        findings into a row twice."""
        return (self.cluster, self.topic, self.kind, self.field, self.desired, self.actual, self.action,
                self.severity, self.message)  # fmt: skip

    def sort_key(self) -> tuple[str, str, str, str, str]:
        """Cluster, then topic (cluster-wide findings first), kind and field: the order of ``drift.parquet``."""
        return (self.cluster, self.topic or "", self.kind, self.field, self.desired or "")


# -- texts shared by both implementations -----------------------------------------------------------------------

SHAPE: Final = "partitions=%d replicas=%d"
"""A topic's shape, the ``desired`` of a missing topic and the ``actual`` of an unmanaged one."""

DECLARED_AT: Final = "declared at %s"
MARKED: Final = "marked for deletion"
PRESENT: Final = "present"

LISTED_PARTITIONS: Final = 10
"""How many partition ids a health finding's message lists before "and N more"."""
MORE: Final = " and %d more"
UNDER_REPLICATED_MESSAGE: Final = "partitions %s have fewer in-sync replicas than replicas"
OFFLINE_MESSAGE: Final = "partitions %s have no leader on a live broker"
RACK_MESSAGE: Final = "partitions %s span fewer racks than min(replicas, %d racks)"
SKEW_MESSAGE: Final = "%d %s over %d registered brokers"
SKEW_RANGE: Final = "%d..%d"
UNOBSERVED_DESIRED: Final = "%d declared topics"
NO_SNAPSHOT: Final = "no snapshot rows for this cluster"

SKEW_TOLERANCE: Final = 0.10
"""A broker is skewed when its count is further from the cluster's mean than 10 % of the mean..."""
SKEW_MIN_DIFFERENCE: Final = 1.0
"""...and further than one replica or leader, so that small clusters are not flagged for rounding."""


def shape(partitions: int, replicas: int) -> str:
    return SHAPE % (partitions, replicas)


def partition_list(partitions: list[int]) -> str:
    """Sorted ids, at most ``LISTED_PARTITIONS`` of them, then how many more."""
    ordered = sorted(partitions)
    text = ", ".join(map(str, ordered[:LISTED_PARTITIONS]))
    extra = len(ordered) - LISTED_PARTITIONS
    return text + (MORE % extra if extra > 0 else "")


def rejection_text(rejections: list[tuple[str, str]]) -> str:
    """``(kafka_class, message)`` pairs as ``InvalidPartitionsException: message; ...`` (Kafka's short names)."""
    return "; ".join(f"{kafka_class.rsplit('.', 1)[-1]}: {message}" for kafka_class, message in rejections)


def skew_bounds(total: int, brokers: int) -> tuple[int, int]:
    """The inclusive range of counts that is not skew. IEEE doubles in both implementations give the same
    bounds: mean and tolerance use only division, multiplication and subtraction, then floor and ceil."""
    mean = total / brokers
    tolerance = max(SKEW_MIN_DIFFERENCE, SKEW_TOLERANCE * mean)
    return math.ceil(mean - tolerance), math.floor(mean + tolerance)
