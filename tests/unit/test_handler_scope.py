"""Work started by a kopf handler runs without the handler's cause in its context: the KafkaTopic reconciles
(``TopicWork``) and the Events (``SessionEvents``) outlive the watch event, and a cause held that long pinned
kopf's body of the event, in reference cycles, for as long as they waited. kopf's other variables (its Event
queue, settings and credentials) stay visible."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Mapping
from typing import Any

import pytest
from kopf._core.actions import execution
from kopf._core.engines import posting
from kopf._core.reactor import subhandling

from topic_operator.k8s.kafkatopics.topic_work import TopicWork
from topic_operator.k8s.process.handler_scope import handler_scoped, outside_handler, start_outside_handler
from topic_operator.k8s.process.kube_api import SessionEvents
from topic_operator.k8s.records import EventSpec, Verdict, is_paused
from topic_operator.k8s.status import same_status

pytestmark = pytest.mark.timeout(30)

KEPT: contextvars.ContextVar[str] = contextvars.ContextVar("kept_by_the_test")
CAUSE = object()
"""Stands for kopf's cause of one event (its body, patch and logger)."""


def in_a_handler(scenario: Any) -> Any:
    """Run ``scenario()`` as kopf runs a handler: with its cause and handler set, beside an operator-wide
    variable."""

    async def handler() -> Any:
        execution.cause_var.set(CAUSE)  # type: ignore[arg-type]
        execution.handler_var.set(CAUSE)  # type: ignore[arg-type]
        subhandling.subexecuted_var.set(True)
        KEPT.set("operator-wide")
        return await scenario()

    return asyncio.run(asyncio.wait_for(handler(), timeout=20))


def test_every_handler_scoped_variable_of_kopf_is_found() -> None:
    """A kopf release that renames them would leave them in every task again: this fails then."""
    assert handler_scoped() == {
        execution.cause_var,
        execution.handler_var,
        execution.subrefs_var,
        execution.sublifecycle_var,
        execution.subsettings_var,
        subhandling.subregistry_var,
        subhandling.subexecuted_var,
    }
    assert posting.event_queue_var not in handler_scoped()  # kopf.event needs it, outside handlers too


def test_a_task_started_outside_the_handler_sees_everything_but_the_handler() -> None:
    async def scenario() -> tuple[object, object, object]:
        async def look() -> tuple[object, object, object]:
            return execution.cause_var.get(None), subhandling.subexecuted_var.get(None), KEPT.get(None)

        return await start_outside_handler(look(), name="look")

    assert in_a_handler(scenario) == (None, None, "operator-wide")


def test_outside_a_handler_the_context_is_a_plain_copy() -> None:
    KEPT.set("here")
    context = outside_handler()
    assert context[KEPT] == "here"
    assert execution.cause_var not in context


def test_a_kafkatopic_reconcile_runs_without_the_watch_events_cause() -> None:
    seen: list[tuple[object, object]] = []

    async def reconcile(body: Mapping[str, Any]) -> Verdict:
        seen.append((execution.cause_var.get(None), KEPT.get(None)))
        return Verdict({"observedGeneration": 1}, "applied", (EventSpec("Normal", "Created", "m"),), None)

    async def write_status(namespace: str, name: str, status: Mapping[str, Any]) -> None:
        return None

    async def scenario() -> None:
        work = TopicWork(
            reconcile,
            write_status=write_status,
            post_events=lambda body, verdict: None,
            differs=lambda current, new: not same_status(current, new),
            is_paused=is_paused,
            retry_delay=0.05,
            concurrency=4,
        )
        body = {"kind": "KafkaTopic", "metadata": {"namespace": "ns", "name": "orders", "uid": "u", "generation": 1},
                "spec": {"cluster": "main", "partitions": 3}}  # fmt: skip
        assert work.offer(body, first_sight=True)
        await work.outcome("ns", "orders")

    in_a_handler(scenario)
    assert seen == [(None, "operator-wide")]


class _Probe(SessionEvents):
    """Posts nothing: records what the posting task's context holds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[tuple[object, object]] = []

    async def _send(self, session: Any, namespace: str, event: str) -> None:
        self.seen.append((execution.cause_var.get(None), KEPT.get(None)))


class _NoPoster:
    def post(self, body: Mapping[str, Any], *, type: str, reason: str, message: str) -> None:
        raise AssertionError("kopf's poster is for before a login only")


def test_an_event_is_posted_without_the_handlers_cause() -> None:
    events = _Probe(_NoPoster(), "kto", session_of=lambda: object())
    topic = {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": "orders", "namespace": "ns"},
    }

    async def scenario() -> None:
        events.post(topic, type="Normal", reason="Created", message="m")
        await events.close()

    in_a_handler(scenario)
    assert events.seen == [(None, "operator-wide")]
