"""The census behind ``kto_topics`` and ``kto_reassignment_start_time_seconds``: statuses as the operator writes
them (``merge_conditions``), counted with bounded labels."""

from __future__ import annotations

import datetime

from topic_operator.k8s.census import TopicCensus, topic_census
from topic_operator.k8s.conditions import READY, Condition, Reason, merge_conditions

EARLY = datetime.datetime(2025, 1, 1, 8, 0, tzinfo=datetime.UTC)
LATE = datetime.datetime(2025, 1, 1, 9, 30, tzinfo=datetime.UTC)


def status(ready: bool | None, reason: Reason, at: datetime.datetime = EARLY) -> dict[str, object]:
    return {"conditions": merge_conditions(None, Condition(READY, ready, reason, "..."), at)}


def test_the_earliest_running_reassignment_is_the_one_reported() -> None:
    census = topic_census(
        [
            status(False, Reason.REASSIGNING, LATE),
            status(False, Reason.REASSIGNING, EARLY),
            status(False, Reason.REASSIGNING, LATE),
            status(True, Reason.IN_SYNC, LATE),
        ]
    )
    assert census == TopicCensus({("false", "Reassigning"): 3, ("true", "InSync"): 1}, EARLY.timestamp())


def test_labels_stay_bounded_whatever_a_status_holds() -> None:
    hand_written = {"conditions": [{"type": "Ready", "status": "Maybe", "reason": "x" * 500}]}
    no_time = {"conditions": [{"type": "Ready", "status": "False", "reason": "Reassigning", "lastTransitionTime": "yesterday"}]}  # fmt: skip
    census = topic_census([None, {}, {"conditions": "not a list"}, hand_written, no_time])
    assert census == TopicCensus(
        {("unknown", "NoStatus"): 3, ("unknown", "Other"): 1, ("false", "Reassigning"): 1}
    )
