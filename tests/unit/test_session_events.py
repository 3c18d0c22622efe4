"""``SessionEvents``: the Event a KafkaTopic change posts, and kopf's poster before a login. Posting over the
session itself is exercised against the real kube-apiserver (``tests/real``: every scenario's Events)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from topic_operator.k8s.process.kube_api import SessionEvents, event_body
from topic_operator.message_text import error_line

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


class _TimingOut:
    """A session whose every request times out, as aiohttp's do on an API server too busy to answer: the error
    (``TimeoutError()``) has no text."""

    server = "https://127.0.0.1:1"

    class aiohttp_session:  # noqa: N801 (kopf's attribute name)
        @staticmethod
        def request(*args: Any, **kwargs: Any) -> Any:
            raise TimeoutError()


def test_an_event_lost_to_an_error_without_text_is_logged_with_the_errors_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def post_one() -> None:
        events = SessionEvents(Recorded(), "kto")
        events.session_of = lambda: _TimingOut()
        events.post(TOPIC, type="Normal", reason="Created", message="m")
        await events.close()

    with caplog.at_level(logging.WARNING):
        asyncio.run(asyncio.wait_for(post_one(), timeout=30))
    assert [r.getMessage() for r in caplog.records] == [
        "Event Created about team-a/orders not posted: TimeoutError"
    ]


def test_error_line_is_the_first_line_of_the_text_or_the_type() -> None:
    assert error_line(TimeoutError()) == "TimeoutError"
    assert error_line(ValueError("  \n ")) == "ValueError"
    assert error_line(RuntimeError("refused\nat line 2")) == "refused"
    assert "\x1b" not in error_line(RuntimeError("a\x1b[31m red"))


class _Gated(SessionEvents):
    """Sends nothing: each send waits for ``gate``, and the most sends under way at once are counted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = asyncio.Event()
        self.started: list[str] = []
        self.sent: list[str] = []
        self.under_way = self.most_at_once = 0

    async def _send(self, session: Any, namespace: str, event: str) -> None:
        name = json.loads(event)["involvedObject"]["name"]
        self.started.append(name)
        self.under_way += 1
        self.most_at_once = max(self.most_at_once, self.under_way)
        await self.gate.wait()
        self.under_way -= 1
        self.sent.append(name)


def _topic(name: str) -> dict[str, Any]:
    return {**TOPIC, "metadata": {**TOPIC["metadata"], "name": name}}  # type: ignore[dict-item]


def test_a_burst_of_events_is_posted_by_a_few_posters_in_order() -> None:
    """A burst of changes must not start a post per Event: they waited together for the session's connections,
    ahead of the status patches, until the API server's timeout lost them."""
    events = _Gated(Recorded(), "kto", session_of=lambda: object(), posters=3)

    async def burst() -> None:
        for i in range(50):
            events.post(_topic(f"t{i}"), type="Normal", reason="Created", message="m")
        await asyncio.sleep(0.01)
        assert events.most_at_once == 3
        assert events.waiting == 47
        events.gate.set()
        await events.close()

    asyncio.run(asyncio.wait_for(burst(), timeout=20))
    assert events.started == [f"t{i}" for i in range(50)]  # taken in the order they came
    assert sorted(events.sent) == sorted(events.started)
    assert events.dropped == 0


def test_events_beyond_the_queue_are_dropped_counted_and_said_once_per_thousand(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = _Gated(Recorded(), "kto", session_of=lambda: object(), posters=1, waiting=10)

    async def burst() -> None:
        for i in range(1_012):
            events.post(_topic(f"t{i}"), type="Normal", reason="Created", message="m")
        await asyncio.sleep(0)
        events.gate.set()
        await events.close()

    with caplog.at_level(logging.WARNING):
        asyncio.run(asyncio.wait_for(burst(), timeout=20))
    assert events.dropped == 1_002  # the poster starts on the loop's next turn: 10 wait, 1,002 do not fit
    assert events.sent == [f"t{i}" for i in range(10)]
    assert [r.getMessage() for r in caplog.records] == [
        "Event Created about team-a/t10 dropped: 10 Events already wait to be posted (1 dropped so far)",
        "Event Created about team-a/t1010 dropped: 10 Events already wait to be posted (1001 dropped so far)",
    ]


def test_an_event_posted_as_the_last_poster_ends_is_still_posted() -> None:
    """The poster returns when it finds the queue empty; its done-callback leaves the set of posters a turn later.
    An Event posted in between must start a poster of its own, or it waits for the next Event."""
    events = _Gated(Recorded(), "kto", session_of=lambda: object(), posters=1)
    events.gate.set()

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        events.post(_topic("first"), type="Normal", reason="Created", message="m")
        # Runs after the poster's first step (queued before it), before its done-callback (queued during it).
        loop.call_soon(lambda: events.post(_topic("second"), type="Normal", reason="Created", message="m"))
        deadline = loop.time() + 5
        while len(events.sent) < 2 and loop.time() < deadline:
            await asyncio.sleep(0.01)
        await events.close()

    asyncio.run(asyncio.wait_for(scenario(), timeout=20))
    assert events.sent == ["first", "second"]
