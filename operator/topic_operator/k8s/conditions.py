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
    """Every reason a Ready condition of ours can carry (the CRDs' descriptions list the KafkaTopic ones).

    What each means, who carries it and what to do about it: ``condition_reasons.REASON_GUIDES``, one entry per
    member (the reference page and its test are generated from it), so the words are written once, there.
    """

    CREATED = "Created"
    UPDATED = "Updated"
    IN_SYNC = "InSync"
    ADOPTED = "Adopted"
    INVALID = "Invalid"
    NOT_SUPPORTED = "NotSupported"
    CONFLICT = "Conflict"
    CLUSTER_UNAVAILABLE = "ClusterUnavailable"
    PAUSED = "Paused"
    PLANNED = "Planned"
    REASSIGNING = "Reassigning"
    FORBIDDEN = "Forbidden"
    QUOTA_EXCEEDED = "QuotaExceeded"
    POLICY_VIOLATION = "PolicyViolation"
    CLUSTER_NOT_FOUND = "ClusterNotFound"
    CONNECTED = "Connected"
    AUTH_FAILED = "AuthFailed"
    CHROOT_MISSING = "ChrootMissing"
    NOT_A_KAFKA_CLUSTER = "NotAKafkaCluster"
    SECRET_MISSING = "SecretMissing"
    SECRET_FORBIDDEN = "SecretForbidden"
    KRAFT_MIGRATION = "KRaftMigration"
    CLUSTER_MISMATCH = "ClusterMismatch"
    WRITER_CHANGED = "WriterChanged"


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
