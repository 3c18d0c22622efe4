"""When a KafkaTopic's finalizer is released: the rules of deletion, as pure functions.

- ``deletionPolicy: Retain`` (the default) adds no finalizer at all: deleting the KafkaTopic never touches Kafka.
- ``Delete`` adds kopf's finalizer (the delete handler is filtered on the policy, so switching back to Retain
  removes it again). The topic is deleted only if the KafkaCluster sets ``allowDelete``; otherwise, or when the
  KafkaTopic is paused, does not own the topic or is in Plan mode, the finalizer is released and the topic kept,
  with an Event saying so.
- If the cluster is gone or unreachable, the handler is retried until ``deletion_timeout`` has passed since the
  deletion was requested; then the finalizer is released with a warning Event, so a namespace never wedges on a
  cluster that will not come back.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

__all__ = ["deletion_requested_at", "release_overdue"]


def deletion_requested_at(body: Mapping[str, Any]) -> datetime.datetime | None:
    """``metadata.deletionTimestamp`` as a time, or None when the object is not being deleted."""
    value = (body.get("metadata") or {}).get("deletionTimestamp")
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def release_overdue(body: Mapping[str, Any], now: datetime.datetime, timeout: float) -> bool:
    """Whether the deletion has waited for the cluster longer than ``timeout`` seconds (an unparsable or absent
    deletionTimestamp counts as overdue: without a start time there is no deadline to honour)."""
    requested = deletion_requested_at(body)
    if requested is None:
        return True
    return (now - requested).total_seconds() >= timeout
