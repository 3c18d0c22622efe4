"""How a cluster's KafkaTopics stand, counted from their Ready conditions: what the metrics ``kto_topics`` and
``kto_reassignment_start_time_seconds`` report, so that an alert can say "not Ready for 15 minutes, by reason"
and "a reassignment has run for six hours" without reading every KafkaTopic from the API server.

Pure: the drift timer hands over the statuses it already holds (its work list, and what it just wrote), and the
counts come back. Labels stay bounded: a reason the operator does not write (a status edited by hand) counts as
``Other``, a KafkaTopic the operator has not reported on yet as ``NoStatus``.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from topic_operator.k8s.bodies import mapping
from topic_operator.k8s.conditions import READY, Reason

__all__ = ["NO_STATUS", "OTHER_REASON", "CensusTally", "TopicCensus", "topic_census"]

NO_STATUS: Final = "NoStatus"
"""The reason label of a KafkaTopic without a Ready condition yet."""
OTHER_REASON: Final = "Other"
"""The reason label of a Ready condition whose reason the operator never writes."""

_READY_LABELS: Final = {"True": "true", "False": "false"}
_REASONS: Final = frozenset(reason.value for reason in Reason)


@dataclass(frozen=True, slots=True)
class TopicCensus:
    by_condition: Mapping[tuple[str, str], int] = field(default_factory=dict)
    """(ready, reason) -> KafkaTopics: ready is ``true``, ``false`` or ``unknown``."""
    reassigning_since: float | None = None
    """Unix time at which the longest-running reassignment began: the earliest ``lastTransitionTime`` of a Ready
    condition whose reason is ``Reassigning`` (the condition turns False when the reassignment starts and keeps
    that time while it runs). None when no KafkaTopic is being reassigned."""


def topic_census(statuses: Iterable[Mapping[str, Any] | None]) -> TopicCensus:
    """Count the KafkaTopics whose ``status`` objects are given (None: no status yet)."""
    tally = CensusTally()
    for status in statuses:
        tally.add(status)
    return tally.census()


class CensusTally:
    """A census counted one status at a time, so that a walk over 50,000 KafkaTopics need not hold every status
    at once to count them."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str]] = Counter()
        self._since: float | None = None

    def add(self, status: Mapping[str, Any] | None) -> None:
        ready = _ready_condition(status)
        if ready is None:
            self._counts["unknown", NO_STATUS] += 1
            return
        reason = str(ready.get("reason", ""))
        ready_label = _READY_LABELS.get(str(ready.get("status")), "unknown")
        self._counts[ready_label, reason if reason in _REASONS else OTHER_REASON] += 1
        if reason == Reason.REASSIGNING.value:
            began = _unix_time(ready.get("lastTransitionTime"))
            if began is not None and (self._since is None or began < self._since):
                self._since = began

    def census(self) -> TopicCensus:
        return TopicCensus(dict(self._counts), self._since)


def _ready_condition(status: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    conditions = mapping(status).get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == READY:
            return condition
    return None


def _unix_time(value: object) -> float | None:
    """An RFC 3339 time as the API server writes it, or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.timestamp() if parsed.tzinfo is not None else None
