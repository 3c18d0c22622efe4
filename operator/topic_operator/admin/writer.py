"""A plan's actions written through Kafka's Admin protocol: for a whole batch, one request of each kind, or as
few as a KRaft controller accepts (``request_sizes``).

- ``CreateTopic``: CreateTopics with the explicit assignment the port of Kafka's placement computed
  (``num_partitions`` and ``replication_factor`` -1, as the protocol asks), and the overrides. A KRaft
  controller's own placer would place the topic otherwise; this way one declaration on the same brokers is
  placed the same on either store.
- ``AddPartitions``: CreatePartitions with the new total and the new partitions' assignments.
- ``AlterConfig``: IncrementalAlterConfigs, SET for each key whose value changes and DELETE for each key that
  goes, from the override set read (``previous``): keys the plan does not change are not sent. Removing a
  finished reassignment's rates is a DELETE on those brokers' configs.
- ``Reassign``: the throttles first (the topic's throttled-replica lists, the rate on every broker a move
  involves), then AlterPartitionReassignments with each partition's target replicas, as
  ``kafka-reassign-partitions.sh --execute --throttle`` does.
- ``DeleteTopic``: DeleteTopics.

Each topic's answer is its outcome: no error is APPLIED; Kafka's refusal is REJECTED in the brokers' words
(``kafka.errors.error_for_code``); an answer that says someone else changed the topic meanwhile (it exists
already, its partition count moved) is a CONFLICT, re-read and planned again; NOT_CONTROLLER (a KRaft quorum not
ready, a migration not yet past its copy) is NOT_WRITTEN. A request kafka-python could not send (the broker it
forwards through is down) goes through another (``any_broker``); one whose answer never came is UNKNOWN for every
action in it: the next read finds out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import kafka.errors as kafka_errors
from kafka import TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient

from topic_operator.access.interface import Outcome, WriteResult
from topic_operator.admin.any_broker import through_any_broker
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.config_operations import config_operations
from topic_operator.admin.connection import reaching
from topic_operator.admin.errors import AdminClientError, WriteFencedError
from topic_operator.admin.request_sizes import records_of, within_records
from topic_operator.kafka.errors import KafkaError, error_for_code
from topic_operator.kafka.reassignment import BROKER_THROTTLE_RATES
from topic_operator.plan import Action, AddPartitions, AlterConfig, CreateTopic, DeleteTopic, Reassign

__all__ = ["AdminWriter", "config_operations"]

_TOPIC_EXISTS = 36
_INVALID_PARTITIONS = 37
_NOT_CONTROLLER = 41
_CONFLICTS = frozenset({_TOPIC_EXISTS})
_NOT_WRITTEN = frozenset({_NOT_CONTROLLER})
_ANSWER = re.compile(r"^\[Error (?P<code>-?\d+)\] (?P<name>\w+): ?(?P<message>.*)$", re.DOTALL)

METADATA_WAIT = 15.0
"""The most seconds a batch waits for the metadata to show what it created."""

_REQUESTS_IN_FLIGHT = 3
"""Requests of one kind sent together (``AdminWriter._batch``): enough that the controller always has the next
one queued, few enough that the brokers forwarding them keep room for everything else."""


class AdminWriter:
    """Writes actions through ``admin``; ``timeout`` is the seconds the brokers may take to carry out a request
    (CreateTopics' and CreatePartitions' own ``timeout_ms``). ``may_write`` is asked before each request (the
    operator's leader lease): once it says no, nothing more is sent and the rest is NOT_WRITTEN.
    ``confirm_writes``: wait, after creating and growing, until the metadata shows it (the operator re-reads
    what it wrote for the status; ``kto apply`` reports the brokers' answers, as ``kafka-topics.sh`` does)."""

    def __init__(
        self,
        admin: KafkaAdminClient,
        settings: AdminSettings,
        *,
        timeout: float,
        may_write: Callable[[], bool] | None = None,
        confirm_writes: bool = True,
    ) -> None:
        self._confirm_writes = confirm_writes
        self._admin = admin
        self._settings = settings
        self._timeout_ms = max(int(timeout * 1000), 1)
        self._timeout = timeout
        self._may_write = may_write

    def apply_all(self, actions: Sequence[Action]) -> list[WriteResult]:
        """Every action's outcome, in the order given."""
        results: dict[int, WriteResult] = {}
        creates = [(i, a) for i, a in enumerate(actions) if isinstance(a, CreateTopic)]
        grows = [(i, a) for i, a in enumerate(actions) if isinstance(a, AddPartitions)]
        alters = [(i, a) for i, a in enumerate(actions) if isinstance(a, AlterConfig)]
        moves = [(i, a) for i, a in enumerate(actions) if isinstance(a, Reassign)]
        deletes = [(i, a) for i, a in enumerate(actions) if isinstance(a, DeleteTopic)]
        self._batch(results, creates, self._create)
        self._batch(results, grows, self._grow)
        self._batch(results, alters, self._alter)
        self._batch(results, moves, self._reassign)
        self._batch(results, deletes, self._delete)
        expected = {a.topic: len(a.assignment) for i, a in creates if results[i].outcome is Outcome.APPLIED}
        expected |= {
            a.topic: len(a.existing) + len(a.new_partitions)
            for i, a in grows
            if results[i].outcome is Outcome.APPLIED
        }
        if self._confirm_writes:
            self._await_metadata(expected)
        return [results[i] for i in range(len(actions))]

    def validate_all(self, actions: Sequence[Action]) -> dict[str, KafkaError]:
        """The brokers' own verdict on the creates, partition additions and config changes (``validate_only``:
        nothing is written): each topic they refuse, with their refusal. Reassignments and deletions have no
        such mode in the protocol; a request that gets no answer adds no verdict."""
        creates = [a for a in actions if isinstance(a, CreateTopic)]
        grows = [a for a in actions if isinstance(a, AddPartitions)]
        alters = [a for a in actions if isinstance(a, AlterConfig)]
        asks: list[Callable[[], dict[str, WriteResult]]] = []
        asks += [
            partial(self._create, part, validate_only=True) for part in within_records(creates, records_of)
        ]
        asks += [partial(self._grow, part, validate_only=True) for part in within_records(grows, records_of)]
        asks += [
            partial(self._alter, part, validate_only=True) for part in within_records(alters, records_of)
        ]
        refused: dict[str, KafkaError] = {}
        for ask in asks:
            try:
                with reaching(self._settings, self._timeout):
                    answered = through_any_broker(self._admin, ask, deadline=self._timeout)
            except AdminClientError:
                continue
            for topic, result in answered.items():
                error = result.error
                if result.outcome is Outcome.REJECTED and isinstance(error, KafkaError):
                    refused.setdefault(topic, error)
        return refused

    def _await_metadata(self, partitions: Mapping[str, int]) -> None:
        """Until the brokers' metadata shows the topics created and grown with their partitions, each with a
        leader (it can lag the controller's answer, ``kraft.md`` §5.7), so that the read after a write sees them
        as a user will; at most ``METADATA_WAIT`` seconds, after which the next read catches up."""
        if not partitions:
            return
        give_up = time.monotonic() + min(self._timeout, METADATA_WAIT)
        pending = dict(partitions)
        pause = 0.005
        while pending and time.monotonic() < give_up:
            try:
                with reaching(self._settings, self._timeout):
                    described = self._admin.describe_topics(sorted(pending))
            except AdminClientError:
                return
            for topic in described:
                found = topic.get("partitions", ())
                if (
                    topic.get("error_code", 0) == 0
                    and len(found) >= pending.get(topic["name"], 0)
                    and all(p.get("leader_id", -1) >= 0 for p in found)
                ):
                    pending.pop(topic["name"], None)
            if pending:
                time.sleep(pause)
                pause = min(pause * 2, 0.1)

    def _batch(
        self,
        results: dict[int, WriteResult],
        batch: Sequence[tuple[int, Any]],
        send: Callable[[list[Any]], dict[str, WriteResult]],
    ) -> None:
        """``batch`` in as few requests as the controller accepts (``request_sizes``), each asked of
        ``may_write`` first; a request that gets no answer makes each of its actions UNKNOWN, and the others
        are still sent.

        The requests of one kind concern distinct topics, so they go out together, up to
        ``_REQUESTS_IN_FLIGHT`` at a time: the controller takes the next one from its queue as soon as it has
        committed the last, instead of waiting for its answer to travel back and the next request to be built
        and forwarded."""
        requests = list(within_records(batch, lambda indexed: records_of(indexed[1])))
        if len(requests) <= 1:
            for request in requests:
                self._request(results, request, send)
            return
        with ThreadPoolExecutor(
            max_workers=min(_REQUESTS_IN_FLIGHT, len(requests)), thread_name_prefix="kto-write"
        ) as pool:
            for done in [pool.submit(self._request, results, request, send) for request in requests]:
                done.result()

    def _request(
        self,
        results: dict[int, WriteResult],
        batch: Sequence[tuple[int, Any]],
        send: Callable[[list[Any]], dict[str, WriteResult]],
    ) -> None:
        actions = [action for _, action in batch]
        if self._may_write is not None and not self._may_write():
            fenced = WriteFencedError(
                "this replica may no longer write: it is not sure any more that it holds the operator's lease; "
                "nothing was sent"
            )
            for index, action in batch:
                results[index] = WriteResult(action, Outcome.NOT_WRITTEN, fenced)
            return
        try:
            with reaching(self._settings, self._timeout):
                answered = through_any_broker(self._admin, partial(send, actions), deadline=self._timeout)
        except AdminClientError as lost:
            answered = {a.topic: WriteResult(a, Outcome.UNKNOWN, lost) for a in actions}
        for index, action in batch:
            results[index] = answered.get(action.topic) or WriteResult(
                action,
                Outcome.UNKNOWN,
                AdminClientError(f"the brokers said nothing of topic '{action.topic}'"),
            )

    # -- each kind of request ---------------------------------------------------------------------------------

    def _create(self, actions: list[CreateTopic], *, validate_only: bool = False) -> dict[str, WriteResult]:
        request = {
            a.topic: {
                "num_partitions": -1,
                "replication_factor": -1,
                "assignments": {p: list(r) for p, r in sorted(a.assignment.items())},
                "configs": dict(a.config),
            }
            for a in actions
        }
        response = self._admin.create_topics(
            request, timeout_ms=self._timeout_ms, validate_only=validate_only, raise_errors=False
        )
        answers = {t["name"]: (int(t["error_code"]), t.get("error_message")) for t in response["topics"]}
        return _by_topic(actions, answers, field="topicName")

    def _grow(self, actions: list[AddPartitions], *, validate_only: bool = False) -> dict[str, WriteResult]:
        request = {
            a.topic: {
                "count": len(a.existing) + len(a.new_partitions),
                "assignments": [list(a.new_partitions[p]) for p in sorted(a.new_partitions)],
            }
            for a in actions
        }
        response = self._admin.create_partitions(
            request, timeout_ms=self._timeout_ms, validate_only=validate_only, raise_errors=False
        )
        answers = {r.name: (int(r.error_code), r.error_message) for r in response.results}
        return _by_topic(actions, answers, field="partitions", conflicts=_CONFLICTS | {_INVALID_PARTITIONS})

    def _alter(self, actions: list[AlterConfig], *, validate_only: bool = False) -> dict[str, WriteResult]:
        topics = [
            ConfigResource(ConfigResourceType.TOPIC, a.topic, configs=config_operations(a.previous, a.config))
            for a in actions
        ]
        brokers = [] if validate_only else sorted({b for a in actions for b in a.clear_broker_throttles})
        rates = [
            ConfigResource(
                ConfigResourceType.BROKER,
                str(b),
                configs=dict.fromkeys(BROKER_THROTTLE_RATES, (AlterConfigOp.DELETE, None)),
            )
            for b in brokers
        ]
        answered = self._alter_configs([r for r in topics if r.configs] + rates, validate_only=validate_only)
        broker_errors = [
            answered["broker"][str(b)] for b in brokers if answered["broker"].get(str(b)) != "OK"
        ]
        results: dict[str, WriteResult] = {}
        for action, resource in zip(actions, topics, strict=True):
            answer = answered["topic"].get(action.topic, "OK") if resource.configs else "OK"
            failed = [answer] if answer != "OK" else []
            if action.clear_broker_throttles:
                failed += broker_errors
            results[action.topic] = _from_answers(action, failed, field="config")
        return results

    def _reassign(self, actions: list[Reassign]) -> dict[str, WriteResult]:
        results: dict[str, WriteResult] = {}
        throttled = [a for a in actions if a.throttle_bytes_per_second is not None]
        if throttled:
            topics = [
                ConfigResource(
                    ConfigResourceType.TOPIC,
                    a.topic,
                    configs=config_operations(
                        a.previous_config, a.config if a.config is not None else a.previous_config
                    ),
                )
                for a in throttled
            ]
            rates: dict[int, int] = {}
            for a in throttled:
                for b in a.brokers:
                    rates[b] = max(rates.get(b, 0), a.throttle_bytes_per_second or 0)
            brokers = [
                ConfigResource(
                    ConfigResourceType.BROKER,
                    str(b),
                    configs={k: (AlterConfigOp.SET, str(rate)) for k in BROKER_THROTTLE_RATES},
                )
                for b, rate in sorted(rates.items())
            ]
            answered = self._alter_configs([r for r in topics if r.configs] + brokers)
            for action in throttled:
                failed = [
                    answer
                    for answer in (
                        answered["topic"].get(action.topic, "OK"),
                        *(answered["broker"].get(str(b), "OK") for b in action.brokers),
                    )
                    if answer != "OK"
                ]
                if failed:  # unthrottled moves are not started
                    results[action.topic] = _from_answers(action, failed, field="replicas")
        starting = [a for a in actions if a.topic not in results]
        if not starting:
            return results
        targets = {TopicPartition(a.topic, m.partition): list(m.target) for a in starting for m in a.moves}
        answered_moves: Mapping[TopicPartition, Any] = self._admin.alter_partition_reassignments(
            targets, timeout_ms=self._timeout_ms
        )
        for action in starting:
            failed = []
            for move in action.moves:
                error = answered_moves.get(TopicPartition(action.topic, move.partition))
                if error is not None:
                    failed.append(
                        f"[Error {error.errno}] {error.__name__}: partition {move.partition}: {error.description}"
                    )
            results[action.topic] = _from_answers(action, failed, field="replicas")
        return results

    def _delete(self, actions: list[DeleteTopic]) -> dict[str, WriteResult]:
        response = self._admin.delete_topics(
            [a.topic for a in actions], timeout_ms=self._timeout_ms, raise_errors=False
        )
        answers = {t["name"]: (int(t["error_code"]), t.get("error_message")) for t in response["topics"]}
        return _by_topic(actions, answers, field="topicName", conflicts=frozenset())

    def _alter_configs(
        self, resources: list[ConfigResource], *, validate_only: bool = False
    ) -> dict[str, dict[str, str]]:
        """One IncrementalAlterConfigs (kafka-python sends broker resources to their broker), answers by type."""
        if not resources:
            return {"topic": {}, "broker": {}}
        answered: Mapping[str, Mapping[str, str]] = self._admin.alter_configs(
            resources, validate_only=validate_only, raise_on_unknown=False, incremental=True
        )
        return {"topic": dict(answered.get("topic", {})), "broker": dict(answered.get("broker", {}))}


def _by_topic(
    actions: Sequence[Action],
    answers: Mapping[str, tuple[int, str | None]],
    *,
    field: str,
    conflicts: frozenset[int] = _CONFLICTS,
) -> dict[str, WriteResult]:
    results: dict[str, WriteResult] = {}
    for action in actions:
        if action.topic not in answers:
            continue
        code, message = answers[action.topic]
        if code == 0:
            results[action.topic] = WriteResult(action, Outcome.APPLIED)
            continue
        error = _refusal(code, message, field)
        outcome = (
            Outcome.CONFLICT
            if code in conflicts
            else Outcome.NOT_WRITTEN
            if code in _NOT_WRITTEN
            else Outcome.REJECTED
        )
        results[action.topic] = WriteResult(action, outcome, error)
    return results


def _from_answers(action: Action, failed: Sequence[str], *, field: str) -> WriteResult:
    """An action's result from the answers kafka-python formats (``OK`` or ``[Error N] Name: message``): every
    refusal in one error, of the first refusal's class."""
    if not failed:
        return WriteResult(action, Outcome.APPLIED)
    answers = [_parsed(text) for text in failed]
    code, name, _ = answers[0]
    message = "; ".join(text for _, _, text in answers)
    outcome = Outcome.NOT_WRITTEN if {c for c, _, _ in answers} <= _NOT_WRITTEN else Outcome.REJECTED
    return WriteResult(action, outcome, error_for_code(code, message, kafka_name=name, field=field))


def _parsed(text: str) -> tuple[int, str, str]:
    """(code, error name, message) of one of kafka-python's formatted answers."""
    match = _ANSWER.match(text)
    if match is None:
        return -1, "", text
    return int(match["code"]), match["name"], match["message"].strip() or match["name"]


def _refusal(code: int, message: str | None, field: str) -> KafkaError:
    error_class = kafka_errors.for_code(code)
    text = message or getattr(error_class, "description", None) or error_class.__name__
    return error_for_code(code, text, kafka_name=error_class.__name__, field=field)
