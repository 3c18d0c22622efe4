"""KafkaTopic changes, handled beside kopf's watch instead of by kopf's per-object change handlers.

kopf watches the KafkaTopics and calls the operator's watch-event handler for every event (``handlers``). Before
this queue, kopf's create, update and resume handlers then ran each reconcile: for every change kopf detected the
cause from a diff-base, kept handler progress, ran the handler in a per-object worker, patched the status with its
records, and handled the echo of that patch the same way. On the real kube-apiserver that machinery alone cost
8.4 ms of CPU per change (``bench/operator_events.py --floor kopf``), above the 6 ms the whole operator may spend.

Here the watch event decides by itself whether there is work, and this queue does it:

- **Which events are work.** The status says which spec it describes (``observedGeneration``) and whether it
  was paused, so an event is work when the status does not describe the KafkaTopic as it is now, and this
  process has not already reconciled that very version (the echo of its own status patch, or a label change,
  arriving before that echo). The first sight of an object (kopf's first list, or its creation) is also work
  when its status is not settled (``settled_at_resume``), as kopf's resume was.
- **One reconcile per KafkaTopic at a time.** Events for a KafkaTopic whose reconcile is running wait as its
  newest body only, and run once after it.
- **The writes.** A verdict's status goes out as one merge patch of the status subresource through the
  operator's own client (bounded, kept-alive connections: ``login``), and its Events through kopf's poster,
  after the status landed. The reconciles themselves meet in their cluster's batch (``batching``).
- **Retries.** A verdict that asks to be retried (cluster unreachable, a full queue, a write conflict) runs
  again ``retry_delay`` seconds later with the KafkaTopic's newest body; a new version of the KafkaTopic
  cancels the wait and runs at once.

Deletion (``deletionPolicy: Delete``, the only KafkaTopics with a finalizer) stays kopf's on-delete handler:
deletions are few, and kopf's finalizer handling is what they need.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from topic_operator.k8s.bodies import mapping
from topic_operator.k8s.kafkatopics.topics import describes_current_spec, settled_at_resume
from topic_operator.k8s.process.handler_scope import start_outside_handler
from topic_operator.k8s.process.kube_api import status_code
from topic_operator.k8s.records import Verdict
from topic_operator.message_text import error_line

__all__ = ["TopicWork"]

logger = logging.getLogger(__name__)

ObjectKey = tuple[str, str]
"""(namespace, KafkaTopic name)."""

Version = tuple[object, object, bool]
"""What a reconcile answered for: (uid, generation, paused)."""

Reconcile = Callable[[Mapping[str, Any]], Awaitable[Verdict]]
WriteStatus = Callable[[str, str, Mapping[str, Any]], Awaitable[None]]
PostEvents = Callable[[Mapping[str, Any], Verdict], None]
Differs = Callable[[Mapping[str, Any] | None, Mapping[str, Any]], bool]

_NOT_FOUND: Final = 404


def object_key(body: Mapping[str, Any]) -> ObjectKey:
    metadata = mapping(body.get("metadata"))
    return str(metadata.get("namespace", "")), str(metadata.get("name", ""))


def version_of(body: Mapping[str, Any], paused: bool) -> Version:
    metadata = mapping(body.get("metadata"))
    return metadata.get("uid"), metadata.get("generation"), paused


class TopicWork:
    """The KafkaTopic reconciles of one operator: what to run, one at a time per KafkaTopic, with its retries.

    Free of kopf: ``reconcile`` turns a body into a ``Verdict``, ``write_status`` merge-patches a status,
    ``post_events`` posts a verdict's Events, ``differs`` tells a new status from the one a body has, and
    ``is_paused`` reads the pause annotation; the handlers give the operator's own."""

    def __init__(
        self,
        reconcile: Reconcile,
        *,
        write_status: WriteStatus,
        post_events: PostEvents,
        differs: Differs,
        is_paused: Callable[[Mapping[str, Any]], bool],
        retry_delay: float,
        concurrency: int,
        may_retry: Callable[[], bool] = lambda: True,
    ) -> None:
        self._reconcile = reconcile
        self._write_status = write_status
        self._post_events = post_events
        self._differs = differs
        self._is_paused = is_paused
        self._retry_delay = retry_delay
        self._may_retry = may_retry
        self._gate = asyncio.Semaphore(concurrency) if concurrency > 0 else None
        self._waiting: dict[ObjectKey, Mapping[str, Any]] = {}
        """The newest body of each KafkaTopic with work to run (taken by its runner)."""
        self._running: dict[ObjectKey, asyncio.Task[None]] = {}
        self._later: dict[ObjectKey, asyncio.TimerHandle] = {}
        self._retry_bodies: dict[ObjectKey, Mapping[str, Any]] = {}
        """The newest body of each KafkaTopic waiting for its retry."""
        self._answered: dict[ObjectKey, Version] = {}
        """The version of each KafkaTopic this process reconciled to a final verdict (no retry pending)."""
        self._outcomes: dict[ObjectKey, list[asyncio.Future[Verdict | None]]] = {}
        self._closed = False
        self.reconciles = 0
        """How many reconciles ran (for tests and the benchmark)."""

    # -- what the watch tells it ---------------------------------------------------------------------------------

    def offer(self, body: Mapping[str, Any], *, first_sight: bool) -> bool:
        """A watch event's body (``first_sight``: kopf's first list or the object's creation). Returns whether
        it is work (queued to run now)."""
        key = object_key(body)
        if key in self._later:
            self._retry_bodies[key] = body  # the retry runs with the newest body
        if self._closed:
            return False
        if mapping(body.get("metadata")).get("deletionTimestamp"):
            self._cancel_retry(key)  # being deleted: its delete handler (if any) is all that is left to run
            self._waiting.pop(key, None)
            return False
        paused = self._is_paused(body)
        version = version_of(body, paused)
        if self._answered.get(key) == version:
            return False  # answered already: the echo of its status, or a change that is no work
        # At first sight, an unsettled status is looked at again too (its KafkaCluster may have changed while
        # the operator was away); a status that does not describe the KafkaTopic is work at any time (a spec
        # changed, or a pause set or lifted, meanwhile).
        describes = describes_current_spec(body, paused=paused)
        wanted = not describes or (first_sight and not settled_at_resume(body))
        if wanted:
            self._queue(key, body)
        return wanted

    def forget(self, namespace: str, name: str) -> None:
        """The KafkaTopic is gone: nothing more runs for it (a reconcile already running finishes)."""
        key = (namespace, name)
        self._cancel_retry(key)
        self._waiting.pop(key, None)
        self._answered.pop(key, None)

    def retry_now(self, namespace: str, name: str) -> bool:
        """Run a pending retry at once (as if ``retry_delay`` had passed); False when none is pending."""
        key = (namespace, name)
        if key not in self._later:
            return False
        self._retry(key)
        return True

    def retry_pending(self, namespace: str, name: str) -> bool:
        return (namespace, name) in self._later

    def busy_with(self, namespace: str, name: str) -> bool:
        """Whether the KafkaTopic has a reconcile running or waiting to run."""
        return (namespace, name) in self._running or (namespace, name) in self._waiting

    @property
    def busy(self) -> int:
        """KafkaTopics with a reconcile running or waiting to run (retries not counted)."""
        return len(self._running.keys() | self._waiting.keys())

    async def outcome(self, namespace: str, name: str) -> Verdict | None:
        """The verdict of the KafkaTopic's work queued or running now (None when there is none)."""
        key = (namespace, name)
        if key not in self._running and key not in self._waiting:
            return None
        future: asyncio.Future[Verdict | None] = asyncio.get_running_loop().create_future()
        self._outcomes.setdefault(key, []).append(future)
        return await future

    async def close(self) -> None:
        """Stop: no retry is kept, nothing waiting runs, the running reconciles are cancelled."""
        self._closed = True
        for handle in self._later.values():
            handle.cancel()
        self._later.clear()
        self._retry_bodies.clear()
        self._waiting.clear()
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for futures in self._outcomes.values():
            for future in futures:
                if not future.done():
                    future.set_result(None)
        self._outcomes.clear()

    # -- internals ----------------------------------------------------------------------------------------------

    def _queue(self, key: ObjectKey, body: Mapping[str, Any]) -> None:
        self._cancel_retry(key)
        self._answered.pop(key, None)
        self._waiting[key] = body
        if key not in self._running:
            # Not in the watch handler's context: the reconcile outlives the event (see ``handler_scope``).
            self._running[key] = start_outside_handler(self._run(key), name=f"KafkaTopic {key[0]}/{key[1]}")

    def _cancel_retry(self, key: ObjectKey) -> None:
        handle = self._later.pop(key, None)
        if handle is not None:
            handle.cancel()
        self._retry_bodies.pop(key, None)

    def _retry(self, key: ObjectKey) -> None:
        self._later.pop(key, None)
        body = self._retry_bodies.pop(key, None)
        if body is not None and not self._closed:
            self._queue(key, body)

    async def _run(self, key: ObjectKey) -> None:
        verdict: Verdict | None = None
        body: Mapping[str, Any] | None = None
        # The generation and status this run last wrote: a body that arrived meanwhile (a label edited while the
        # reconcile ran) still carries the status from before it.
        written: tuple[object, Mapping[str, Any]] | None = None
        try:
            while (body := self._waiting.pop(key, None)) is not None:
                if self._answered.get(key) == version_of(body, self._is_paused(body)):
                    continue  # the version just answered, seen again with an older status
                generation = mapping(body.get("metadata")).get("generation")
                if written is not None and written[0] == generation:
                    body = {**body, "status": _merged(body.get("status"), written[1])}
                if self._gate is None:
                    verdict, status = await self._once(key, body)
                else:
                    async with self._gate:
                        verdict, status = await self._once(key, body)
                if status is not None:
                    written = (generation, status)
        except Exception:  # a defect of the reconcile: logged once, retried like any failure
            logger.exception("reconcile of KafkaTopic %s/%s failed", *key)
            self._later_with(key, body)
        finally:
            self._running.pop(key, None)
            for future in self._outcomes.pop(key, ()):
                if not future.done():
                    future.set_result(verdict)

    async def _once(
        self, key: ObjectKey, body: Mapping[str, Any]
    ) -> tuple[Verdict, Mapping[str, Any] | None]:
        """One reconcile and its writes: the verdict, and the status written (None: none was)."""
        self.reconciles += 1
        verdict = await self._reconcile(body)
        written = None
        if verdict.status and self._differs(body.get("status"), verdict.status):
            try:
                await self._write_status(key[0], key[1], verdict.status)
            except Exception as error:  # any refusal: said once, retried later
                if status_code(error) == _NOT_FOUND:
                    return verdict, None  # deleted meanwhile: its DELETED event follows
                logger.warning(
                    "status of KafkaTopic %s/%s not written (retrying): %s", *key, error_line(error)
                )
                self._later_with(key, body)
                return verdict, None
            written = verdict.status
            self._post_events(body, verdict)  # Events accompany a status change, once it landed
        if verdict.retry is not None:
            self._later_with(key, {**body, "status": _merged(body.get("status"), verdict.status)})
        else:
            self._answered[key] = version_of(body, self._is_paused(body))
        return verdict, written

    def _later_with(self, key: ObjectKey, body: Mapping[str, Any] | None) -> None:
        """Retry ``key`` after ``retry_delay``, with ``body`` unless a newer one arrives meanwhile."""
        if body is None or self._closed or not self._may_retry() or key in self._waiting:
            return  # stopping, or a newer version runs next anyway
        self._cancel_retry(key)
        self._retry_bodies[key] = body
        self._later[key] = asyncio.get_running_loop().call_later(self._retry_delay, self._retry, key)


def _merged(status: object, update: Mapping[str, Any]) -> dict[str, Any]:
    """The status after a merge patch of ``update`` (top-level keys; None removes), as the retry will see it."""
    merged = dict(mapping(status))
    for field, value in update.items():
        if value is None:
            merged.pop(field, None)
        else:
            merged[field] = value
    return merged
