"""Conditions as Kubernetes conventions want them: one per type, ``lastTransitionTime`` moving only on a change.

Pure: the caller passes the previous conditions and the time, so the same inputs give the same list and a resync
that finds nothing new writes nothing new (no flapping timestamps, no needless PATCH).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["READY", "Condition", "Reason", "merge_conditions", "timestamp"]

READY = "Ready"


class Reason(StrEnum):
    """Every reason a Ready condition of ours can carry (the CRDs' descriptions list the KafkaTopic ones)."""

    CREATED = "Created"
    """The topic was created by this reconcile."""
    UPDATED = "Updated"
    """Partitions were added or configs changed by this reconcile."""
    IN_SYNC = "InSync"
    """Kafka already matched the declaration."""
    ADOPTED = "Adopted"
    """The topic existed before this KafkaTopic declared it, and is now managed by it (changed or not)."""
    INVALID = "Invalid"
    """The declaration breaks a CRD or Kafka rule (Kafka's own message is the condition's)."""
    NOT_SUPPORTED = "NotSupported"
    """Valid, but not something kafka-topic-operator does (replication factor change, moving replicas)."""
    CONFLICT = "Conflict"
    """Another KafkaTopic owns this topic, or other writers kept changing it."""
    CLUSTER_UNAVAILABLE = "ClusterUnavailable"
    """The KafkaCluster is missing, not connected, or failed mid-reconcile; retried later."""
    PAUSED = "Paused"
    """Annotation ``kto.dev/paused: "true"``: reconciliation stopped."""
    PLANNED = "Planned"
    """``mode: Plan``: changes are pending in status.plan and were not applied."""
    REASSIGNING = "Reassigning"
    """Kafka's controller is moving the topic's replicas (a partition reassignment); Ready once it is done."""
    FORBIDDEN = "Forbidden"
    """The KafkaCluster does not grant the KafkaTopic's namespace, or the topic name is outside its prefixes
    (``spec.tenants``); nothing is written."""
    QUOTA_EXCEEDED = "QuotaExceeded"
    """The creation or partition increase would take the namespace over its quota on the KafkaCluster; retried
    at each drift check, so it lands once the namespace has room."""
    POLICY_VIOLATION = "PolicyViolation"
    """The topic, or the change, breaks the per-topic limits the KafkaCluster sets for the namespace."""
    CLUSTER_NOT_FOUND = "ClusterNotFound"
    """No KafkaCluster of that name exists in the namespace ``spec.cluster`` names; reconciled when it appears."""
    CONNECTED = "Connected"
    """KafkaCluster: a ZooKeeper session is held and the path looks like a Kafka cluster."""
    AUTH_FAILED = "AuthFailed"
    CHROOT_MISSING = "ChrootMissing"
    NOT_A_KAFKA_CLUSTER = "NotAKafkaCluster"
    SECRET_MISSING = "SecretMissing"
    KRAFT_MIGRATION = "KRaftMigration"
    """KafkaCluster: reachable, but at a stage of a migration to KRaft where nothing may be written (semantics
    §15); its changes wait. A KafkaTopic: its change waits for that stage to pass."""
    CLUSTER_MISMATCH = "ClusterMismatch"
    """KafkaCluster: spec.zookeeper and spec.bootstrapServers reach two different Kafka clusters."""
    WRITER_CHANGED = "WriterChanged"
    """KafkaCluster (an Event): the migration to KRaft moved to a stage written through another path."""


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: bool | None
    """True, False, or None for Unknown."""
    reason: Reason
    message: str = ""

    @property
    def status_text(self) -> str:
        return "Unknown" if self.status is None else str(self.status)


def timestamp(now: datetime.datetime) -> str:
    """RFC 3339 in UTC with second precision, as the API server writes times."""
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def merge_conditions(
    previous: Sequence[Mapping[str, Any]] | None, new: Condition, now: datetime.datetime
) -> list[dict[str, Any]]:
    """``previous`` with ``new`` in place of its type. The transition time is kept while the status is unchanged
    (a new reason or message alone is not a transition), and set to ``now`` otherwise."""
    kept: list[dict[str, Any]] = []
    before: Mapping[str, Any] | None = None
    for condition in previous or ():
        if condition.get("type") == new.type:
            before = condition
        else:
            kept.append(dict(condition))
    since = timestamp(now)
    if before is not None and before.get("status") == new.status_text and before.get("lastTransitionTime"):
        since = str(before["lastTransitionTime"])
    entry = {
        "type": new.type,
        "status": new.status_text,
        "reason": new.reason.value,
        "message": new.message,
        "lastTransitionTime": since,
    }
    return sorted([*kept, entry], key=lambda c: str(c.get("type")))
