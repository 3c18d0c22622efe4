"""Requests sent through kafka-python's own connections whose answers come back as the bytes the broker sent, spread
over the brokers, each handed to the caller as it arrives.

kafka-python turns every answer into objects on its I/O thread, field by field, and its Admin calls then into
dicts: for a DescribeConfigs of 10,000 topics that is 360,000 config entries, twice as long as the brokers take
to answer, when a plan needs the few overrides among them. Here the request is kafka-python's own (its schema,
its version negotiated with the broker, its connection with SASL and TLS), but the answer is left as bytes, to be
read by a decoder that takes only what the caller needs (``config_answers``). The requests go to every broker at
once, a few each, so the brokers work in parallel and the caller reads one answer while the others are on
their way.

A request whose broker fails (the connection drops, the broker stops) is sent again to another broker until the
deadline; past it, ``reaching`` turns the failure into ``admin.errors``.

This leans on two things of kafka-python 3.0 that its documentation does not promise: ``KafkaAdminClient._manager``
(its connection manager: ``send``, ``call_soon``, ``cluster``) and a request's ``header_class``, which says how
its answer is decoded. The version is pinned below 3.1, and the real-broker tests hold both.
"""

from __future__ import annotations

import collections
import queue
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import kafka.errors as kafka_errors
from kafka.admin import KafkaAdminClient
from kafka.protocol.api_header import RequestHeader
from kafka.util import classproperty

__all__ = ["Answer", "RawAnswerRequest", "answers_as_bytes", "in_flight_per_broker", "live_broker_ids"]


class _Answer:
    """What kafka-python's parser gets in place of a decoded response: the correlation id it checks, and the
    bytes after it (the rest of the response header, then the body)."""

    __slots__ = ("correlation_id", "payload", "throttle_time_ms")

    def __init__(self, correlation_id: int) -> None:
        self.correlation_id = correlation_id
        self.payload = b""
        self.throttle_time_ms = 0


class _AnswerAsBytes:
    """Stands for a response class in kafka-python's parser: ``parse_header`` reads the correlation id, ``decode``
    keeps the rest as bytes. One per request, so the two calls share the answer between them."""

    def __init__(self) -> None:
        self._answer: _Answer | None = None

    def parse_header(self, buffer: Any) -> _Answer:
        self._answer = _Answer(int.from_bytes(buffer.read(4), "big", signed=True))
        return self._answer

    def decode(self, buffer: Any) -> _Answer:
        assert self._answer is not None
        self._answer.payload = buffer.read()
        return self._answer


class _BytesAnswerHeader(RequestHeader, init=False):  # type: ignore[misc,call-arg]  # kafka-python is untyped
    """A request header whose answer kafka-python leaves as bytes."""

    def get_response_class(self) -> _AnswerAsBytes:
        return _AnswerAsBytes()


def RawAnswerRequest(request_class: Any) -> Any:  # noqa: N802  # a class factory, named as the class it makes
    """A subclass of kafka-python's ``request_class`` (``DescribeConfigsRequest``) whose answers are bytes."""
    return type(
        f"Raw{request_class.__name__}",
        (request_class,),
        {"header_class": classproperty(lambda cls: _BytesAnswerHeader), "__slots__": ()},
        init=False,
    )


@dataclass(frozen=True, slots=True)
class Answer:
    """One request's answer: ``payload`` starts with the rest of the response header (its tagged fields, in a
    flexible version) and ``version`` is the one kafka-python negotiated for it."""

    index: int
    payload: bytes
    version: int


def live_broker_ids(admin: KafkaAdminClient) -> list[int]:
    """The brokers kafka-python's metadata knows, sorted."""
    return sorted(int(b.node_id) for b in admin._manager.cluster.brokers())


def answers_as_bytes(
    admin: KafkaAdminClient,
    requests: Sequence[Any],
    brokers: Sequence[int],
    *,
    deadline: float,
) -> Iterator[Answer]:
    """Send every request of ``requests`` (``RawAnswerRequest`` instances), the i-th to broker
    ``brokers[i % len(brokers)]``, and yield each answer as it arrives. A request that fails is sent again, to
    the next broker, until ``deadline`` seconds have passed without an answer; then the last failure is raised
    (kafka-python's own errors: ``connection.reaching`` turns them into the product's).

    Each broker has at most ``in_flight_per_broker(admin)`` of these requests outstanding at a time; the rest
    wait here and go out as its answers come back. kafka-python refuses a request on a connection that has its
    ``max_in_flight_requests_per_connection`` outstanding (the connection is paused, ``NodeNotReadyError``) rather
    than queueing it, so sending them all at once would turn the surplus into failures, retries and back-off."""
    if not requests:
        return
    if not brokers:
        raise kafka_errors.NoBrokersAvailable("no broker is known to send the requests to")
    manager = admin._manager
    arrived: queue.Queue[tuple[int, int, object, BaseException | None]] = queue.Queue()
    limit = in_flight_per_broker(admin)
    waiting_for: list[collections.deque[int]] = [collections.deque() for _ in brokers]
    outstanding = [0] * len(brokers)

    def send(index: int, broker: int) -> Callable[[], None]:
        def on_io_thread() -> None:
            try:
                future = manager.send(requests[index], node_id=brokers[broker])
            except kafka_errors.KafkaError as error:  # a broker no longer in the metadata: raised, not failed
                arrived.put((index, broker, None, error))
                return
            future.add_callback(lambda answer: arrived.put((index, broker, answer, None)))
            future.add_errback(lambda error: arrived.put((index, broker, None, error)))

        return on_io_thread

    def pump(broker: int) -> None:
        while waiting_for[broker] and outstanding[broker] < limit:
            outstanding[broker] += 1
            manager.call_soon(send(waiting_for[broker].popleft(), broker))

    for index in range(len(requests)):
        waiting_for[index % len(brokers)].append(index)
    for broker in range(len(brokers)):
        pump(broker)
    attempts = [0] * len(requests)
    waiting = len(requests)
    give_up = time.monotonic() + deadline
    while waiting:
        try:
            index, broker, answer, error = arrived.get(timeout=max(give_up - time.monotonic(), 0.0))
        except queue.Empty:
            raise kafka_errors.KafkaTimeoutError(
                f"{waiting} of {len(requests)} requests got no answer within {deadline:g} s"
            ) from None
        outstanding[broker] -= 1
        if error is not None:
            attempts[index] += 1
            if time.monotonic() >= give_up:
                raise error
            time.sleep(min(0.05 * attempts[index], 0.5))  # a broker going away: give the others a moment
            again = (index + attempts[index]) % len(brokers)
            waiting_for[again].appendleft(index)
            pump(again)
            pump(broker)
            continue
        pump(broker)
        waiting -= 1
        give_up = time.monotonic() + deadline  # an answer is a sign of life
        assert isinstance(answer, _Answer)
        yield Answer(index, answer.payload, int(requests[index].API_VERSION))


def in_flight_per_broker(admin: KafkaAdminClient) -> int:
    """How many of one read's requests a broker's connection may carry at once: kafka-python's
    ``max_in_flight_requests_per_connection`` less one, so that the Admin calls sent beside the read (the
    reassignments, the finalized features) find room on the same connection."""
    allowed = int(admin.config.get("max_in_flight_requests_per_connection", 5))
    return max(allowed - 1, 1)
