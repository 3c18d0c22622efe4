"""``SessionEvents``: the Event a KafkaTopic change posts, and kopf's poster before a login. Posting over the
session itself is exercised against the real kube-apiserver (``tests/real``: every scenario's Events)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from topic_operator.k8s.process.kube_api import SessionEvents, event_body

TOPIC = {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic",
         "metadata": {"name": "orders", "namespace": "team-a", "uid": "u-1"}}  # fmt: skip


def test_an_event_names_its_object_and_a_long_message_is_cut_to_what_the_api_takes() -> None:
    event = event_body(TOPIC, type="Warning", reason="Invalid", message="x" * 5000, component="kto")
    assert event["involvedObject"] == {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "name": "orders",
                                       "uid": "u-1", "namespace": "team-a"}  # fmt: skip
    assert event["metadata"]["namespace"] == "team-a"
    assert (event["type"], event["reason"], event["source"]) == ("Warning", "Invalid", {"component": "kto"})
    assert len(event["message"]) <= 1024
    assert " ... " in event["message"]
    short = event_body(
        TOPIC, type="Normal", reason="Created", message="Created topic orders", component="kto"
    )
    assert short["message"] == "Created topic orders"


class Recorded:
    def __init__(self) -> None:
        self.posted: list[tuple[str, str]] = []

    def post(self, body: Mapping[str, Any], *, type: str, reason: str, message: str) -> None:
        self.posted.append((type, reason))


def test_before_a_login_kopfs_poster_posts() -> None:
    fallback = Recorded()
    events = SessionEvents(fallback, "kto")
    events.post(TOPIC, type="Normal", reason="Created", message="m")
    assert fallback.posted == [("Normal", "Created")]


def test_an_event_made_on_a_whole_second_keeps_its_microseconds() -> None:
    """The API server parses eventTime as a MicroTime ("2006-01-02T15:04:05.000000Z07:00") and refused, with
    400, an Event whose time had no fraction, which ``isoformat()`` writes on a whole second."""
    import datetime

    whole = datetime.datetime(2026, 11, 27, 17, 49, 43, tzinfo=datetime.UTC)
    event = event_body(TOPIC, type="Normal", reason="Created", message="m", component="kto", at=whole)
    assert event["eventTime"] == "2026-11-27T17:49:43.000000+00:00"
    assert event["firstTimestamp"] == event["lastTimestamp"] == event["eventTime"]
