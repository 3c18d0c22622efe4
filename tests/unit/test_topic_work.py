"""``TopicWork``: which KafkaTopic watch events are work, one reconcile at a time per KafkaTopic, the status written
before its Events, and retries. The reconcile is a stand-in that answers from the body (the real one is exercised
by the tests of ``tests/k8s`` and the operator's on real servers); the scheduling under test is the production
code."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import Any

import pytest

from topic_operator.k8s.kafkatopics.topic_work import TopicWork
from topic_operator.k8s.records import PAUSED_ANNOTATION, EventSpec, Verdict, is_paused
from topic_operator.k8s.status import same_status

pytestmark = pytest.mark.timeout(30)

RETRY_DELAY = 0.05


def topic(name: str = "orders", generation: int = 1, **status: Any) -> dict[str, Any]:
    return {
        "kind": "KafkaTopic",
        "metadata": {"namespace": "ns", "name": name, "uid": f"uid-{name}", "generation": generation},
        "spec": {"cluster": "main", "partitions": 3},
        **({"status": status} if status else {}),
    }


def ready_status(generation: int, reason: str = "Created", ok: bool = True) -> dict[str, Any]:
    condition = {"type": "Ready", "status": "True" if ok else "False", "reason": reason, "message": reason}
    return {"observedGeneration": generation, "conditions": [condition]}


class HttpError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(f"HTTP {code}")
        self.response = type("Response", (), {"status_code": code})()


class Recorder:
    """The reconcile and the API as TopicWork sees them: what ran, what was written and posted."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, int, str | None]] = []
        self.written: list[tuple[str, dict[str, Any]]] = []
        self.posted: list[tuple[str, str]] = []
        self.answer: dict[str, tuple[str, bool]] = {}
        """Per KafkaTopic name: the Ready reason to answer, and whether to ask for a retry."""
        self.write_errors: list[Exception] = []
        self.gate: asyncio.Event | None = None
        self.fail_reconcile = 0

    async def reconcile(self, body: Mapping[str, Any]) -> Verdict:
        name, generation = body["metadata"]["name"], body["metadata"]["generation"]
        seen = (body.get("status") or {}).get("conditions", [{}])[0].get("reason")
        self.ran.append((name, generation, seen))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_reconcile:
            self.fail_reconcile -= 1
            raise RuntimeError("a defect")
        reason, retry = self.answer.get(name, ("Created", False))
        if is_paused(body):
            reason, retry = "Paused", False
        status = ready_status(generation, reason, ok=not retry)
        event = EventSpec("Warning" if retry else "Normal", reason, reason)
        return Verdict(status, "applied", (event,), reason if retry else None)

    async def write_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        if self.write_errors:
            raise self.write_errors.pop(0)
        self.written.append((name, dict(status)))

    def post_events(self, body: Mapping[str, Any], verdict: Verdict) -> None:
        self.posted.extend((body["metadata"]["name"], event.reason) for event in verdict.events)

    def work(self, concurrency: int = 0, retry_delay: float = RETRY_DELAY) -> TopicWork:
        return TopicWork(
            self.reconcile,
            write_status=self.write_status,
            post_events=self.post_events,
            differs=lambda current, new: not same_status(current, new),
            is_paused=is_paused,
            retry_delay=retry_delay,
            concurrency=concurrency,
        )


def echo(body: Mapping[str, Any], written: Mapping[str, Any]) -> dict[str, Any]:
    """The watch event of the status patch: the body with the status written."""
    return {**copy.deepcopy(dict(body)), "status": dict(written)}


async def settle(work: TopicWork, name: str = "orders") -> None:
    await work.outcome("ns", name)


def test_a_change_is_reconciled_once_and_its_echo_and_a_label_are_no_work() -> None:
    recorder = Recorder()

    async def scenario() -> None:
        work = recorder.work()
        created = topic()
        assert work.offer(created, first_sight=True)
        await settle(work)
        assert recorder.written == [("orders", ready_status(1))]
        assert recorder.posted == [("orders", "Created")]
        echoed = echo(created, recorder.written[-1][1])
        assert not work.offer(echoed, first_sight=False)  # the echo of its own status
        labelled = copy.deepcopy(echoed)
        labelled["metadata"]["labels"] = {"team": "a"}
        assert not work.offer(labelled, first_sight=False)  # a label: the spec is the one answered
        changed = copy.deepcopy(labelled)
        changed["metadata"]["generation"] = 2
        assert work.offer(changed, first_sight=False)
        await settle(work)
        assert [generation for _, generation, _ in recorder.ran] == [1, 2]
        assert len(recorder.written) == len(recorder.posted) == 2

    asyncio.run(scenario())


def test_events_of_a_running_kafkatopic_wait_and_run_once_with_the_newest_body() -> None:
    recorder = Recorder()

    async def scenario() -> None:
        work = recorder.work()
        recorder.gate = asyncio.Event()
        work.offer(topic(generation=1), first_sight=False)
        await asyncio.sleep(0)
        for generation in (2, 3, 4):
            work.offer(topic(generation=generation), first_sight=False)
        assert work.busy == 1
        recorder.gate.set()
        await settle(work)
        assert [generation for _, generation, _ in recorder.ran] == [1, 4]

    asyncio.run(scenario())


async def label_while_running(recorder: Recorder) -> None:
    """A KafkaTopic reconciled, and a label edited while the reconcile runs: its watch event carries the status
    from before the reconcile's. Returns once the KafkaTopic's work is done."""
    work = recorder.work()
    recorder.gate = asyncio.Event()
    body = topic()
    work.offer(body, first_sight=False)
    await asyncio.sleep(0)
    labelled = copy.deepcopy(body)
    labelled["metadata"]["labels"] = {"team": "a"}
    assert work.offer(labelled, first_sight=False)
    recorder.gate.set()
    await settle(work)


def test_a_label_edited_while_its_reconcile_runs_costs_nothing_more() -> None:
    recorder = Recorder()

    async def scenario() -> None:
        await label_while_running(recorder)
        assert len(recorder.ran) == 1
        assert recorder.posted == [("orders", "Created")]

    asyncio.run(scenario())


def test_a_retried_verdict_is_not_written_again_for_a_label_edited_meanwhile() -> None:
    recorder = Recorder()
    recorder.answer["orders"] = ("ClusterUnavailable", True)

    async def scenario() -> None:
        await label_while_running(recorder)
        assert len(recorder.ran) == 2  # the labelled body runs too: the verdict asked for a retry
        assert recorder.ran[1] == ("orders", 1, "ClusterUnavailable"), "with the status the first run wrote"
        assert len(recorder.written) == len(recorder.posted) == 1

    asyncio.run(scenario())


def test_at_first_sight_only_what_is_not_settled_at_its_spec_is_work() -> None:
    recorder = Recorder()

    async def scenario() -> None:
        work = recorder.work()
        assert not work.offer(topic("settled", 3, **ready_status(3)), first_sight=True)
        assert work.offer(topic("older", 3, **ready_status(2)), first_sight=True)
        assert work.offer(
            topic("waiting", 1, **ready_status(1, "ClusterUnavailable", ok=False)), first_sight=True
        )
        # Paused while the operator was away: its settled status no longer describes it.
        paused = topic("paused", 2, **ready_status(2))
        paused["metadata"]["annotations"] = {PAUSED_ANNOTATION: "true"}
        assert work.offer(paused, first_sight=True)
        # After the first sight, a status that describes its spec is no work, whatever it says.
        assert not work.offer(topic("refused", 1, **ready_status(1, "Invalid", ok=False)), first_sight=False)
        await asyncio.gather(settle(work, "older"), settle(work, "waiting"), settle(work, "paused"))
        assert sorted(name for name, _, _ in recorder.ran) == ["older", "paused", "waiting"]
        assert ("paused", "Paused") in recorder.posted

    asyncio.run(scenario())


def test_a_pause_or_its_end_is_work_though_the_generation_stays() -> None:
    recorder = Recorder()

    async def scenario() -> None:
        work = recorder.work()
        body = topic()
        work.offer(body, first_sight=False)
        await settle(work)
        paused = echo(body, recorder.written[-1][1])
        paused["metadata"]["annotations"] = {PAUSED_ANNOTATION: "true"}
        assert work.offer(paused, first_sight=False)
        await settle(work)
        assert recorder.posted[-1] == ("orders", "Paused")
        resumed = echo(paused, recorder.written[-1][1])
        resumed["metadata"]["annotations"] = {}
        assert work.offer(resumed, first_sight=False)
        await settle(work)
        assert recorder.posted == [("orders", "Created"), ("orders", "Paused"), ("orders", "Created")]

    asyncio.run(scenario())


def test_a_retry_runs_later_with_the_newest_body_and_a_new_spec_runs_at_once() -> None:
    recorder = Recorder()
    recorder.answer["orders"] = ("ClusterUnavailable", True)

    async def scenario() -> None:
        work = recorder.work()
        body = topic()
        work.offer(body, first_sight=False)
        await settle(work)
        assert work.retry_pending("ns", "orders")
        # The echo of the status it wrote arrives before the retry: no work now, but the retry's body.
        assert not work.offer(echo(body, recorder.written[-1][1]), first_sight=False)
        while len(recorder.ran) < 2:  # the retry, run by its timer
            await asyncio.sleep(RETRY_DELAY / 5)
        await settle(work)
        assert recorder.ran[1] == ("orders", 1, "ClusterUnavailable")
        assert len(recorder.written) == len(recorder.posted) == 1, "the same verdict again: nothing written"
        recorder.answer["orders"] = ("Created", False)
        assert work.offer(topic(generation=2), first_sight=False)  # a new spec: at once, the retry cancelled
        assert not work.retry_pending("ns", "orders")
        await settle(work)
        assert recorder.ran[-1][:2] == ("orders", 2)
        runs = len(recorder.ran)
        await asyncio.sleep(RETRY_DELAY * 3)
        assert len(recorder.ran) == runs, "nothing runs after a final verdict"

    asyncio.run(scenario())


def test_a_refused_status_write_posts_no_event_and_is_retried_and_a_gone_kafkatopic_is_not() -> None:
    recorder = Recorder()

    async def scenario() -> None:
        work = recorder.work()
        recorder.write_errors = [HttpError(500)]
        work.offer(topic(), first_sight=False)
        await settle(work)
        assert recorder.posted == []
        assert work.retry_pending("ns", "orders")
        assert work.retry_now("ns", "orders")
        await settle(work)
        assert recorder.posted == [("orders", "Created")]
        recorder.write_errors = [HttpError(404)]
        work.offer(topic("gone"), first_sight=False)
        await settle(work, "gone")
        assert not work.retry_pending("ns", "gone")
        assert ("gone", "Created") not in recorder.posted

    asyncio.run(scenario())


def test_a_failing_reconcile_is_retried_and_a_deleted_kafkatopic_is_forgotten() -> None:
    recorder = Recorder()
    recorder.fail_reconcile = 1

    async def scenario() -> None:
        work = recorder.work(concurrency=2)
        work.offer(topic(), first_sight=False)
        await settle(work)
        assert work.retry_pending("ns", "orders")
        work.forget("ns", "orders")
        assert not work.retry_pending("ns", "orders")
        await asyncio.sleep(RETRY_DELAY * 3)
        assert len(recorder.ran) == 1

    asyncio.run(scenario())


def test_being_deleted_is_no_work_and_close_stops_everything() -> None:
    recorder = Recorder()
    recorder.answer["orders"] = ("ClusterUnavailable", True)

    async def scenario() -> None:
        work = recorder.work()
        deleting = topic("leaving")
        deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        assert not work.offer(deleting, first_sight=False)
        work.offer(topic(), first_sight=False)
        await settle(work)
        assert work.retry_pending("ns", "orders")
        recorder.gate = asyncio.Event()
        work.offer(topic("slow"), first_sight=False)
        await asyncio.sleep(0)
        await work.close()
        assert not work.retry_pending("ns", "orders")
        assert work.busy == 0
        assert not work.offer(topic(generation=2), first_sight=False)
        assert [name for name, _, _ in recorder.ran] == ["orders", "slow"]

    asyncio.run(scenario())


def test_the_drift_round_leaves_a_kafkatopic_with_pending_work_to_topic_work() -> None:
    """A KafkaTopic waiting for its retry when its cluster's round comes (the cluster is back, or a migration's
    stage moved) is retried by TopicWork at once, not reconciled by the round as well: both would share one
    batch's result and each post its Event, one creation said twice."""
    from types import SimpleNamespace

    from topic_operator.k8s.kafkatopics.topics import _left_to_topic_work

    recorder = Recorder()
    recorder.answer["orders"] = ("ClusterUnavailable", True)
    retry_delay = 60.0  # never by its timer here: only the round's hand-over runs it

    async def scenario() -> None:
        work = recorder.work(retry_delay=retry_delay)
        ctx = SimpleNamespace(topic_work=work)
        body = topic()
        work.offer(body, first_sight=False)
        await settle(work)
        assert work.retry_pending("ns", "orders")
        recorder.answer["orders"] = ("Created", False)
        assert _left_to_topic_work(ctx, body)  # type: ignore[arg-type]
        assert not work.retry_pending("ns", "orders")
        await settle(work)
        assert [r[:2] for r in recorder.ran] == [("orders", 1), ("orders", 1)]
        assert recorder.posted == [("orders", "ClusterUnavailable"), ("orders", "Created")]
        assert not _left_to_topic_work(ctx, topic(name="settled"))  # nothing pending: the round's own
        assert not _left_to_topic_work(SimpleNamespace(topic_work=None), body)  # type: ignore[arg-type]

    asyncio.run(scenario())
