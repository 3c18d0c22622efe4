"""Calls to ZooKeeper that never wait longer than a deadline, whatever the ensemble does.

kazoo's synchronous calls wait without a bound, and its request path can block for good: ``_call`` wakes the
connection thread by writing a byte to a socket pair that only that thread drains, and only while connected. A
few hundred requests issued during an outage fill the pair's buffer (278 one-byte writes on Linux's default
socket buffer), and the next request blocks in ``write_sock.send`` until the connection is back; if kazoo's
connection retry policy gives up meanwhile, for ever. A ``kto apply`` caught by an outage then hung.

So every request of the engine goes through :class:`BoundedClient`, which

- issues a request only while the client is connected (and fails at once if kazoo's connection thread has
  given up: it will never connect again);
- keeps at most :data:`MAX_UNANSWERED` requests of a client unanswered (about: it looks by polling), far below
  what fills the socket pair, so issuing a request never blocks;
- waits for answers, and for the connection to come back, only while its :class:`Patience` lasts.

``Patience`` is that deadline: how long ZooKeeper may keep us waiting, counted from the last answer
that arrived (or from the start of the current step, or a reconnection). Normal work never runs into it, a shorter outage is ridden out, and a
longer one ends the wait ``seconds`` after ZooKeeper stopped answering, however the outage looks from here
(refused connections, a frozen server, a session expiry, a client that gave up).
"""

from __future__ import annotations

import copy
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, SessionExpiredError
from kazoo.protocol.states import KeeperState

from topic_operator.access.interface import DEFAULT_DEADLINE, Patience
from topic_operator.zookeeper.errors import ZooKeeperUnavailableError

__all__ = [
    "DEFAULT_DEADLINE",
    "MAX_UNANSWERED",
    "AnswerLostError",
    "BoundedClient",
    "Patience",
    "client_gave_up",
]

MAX_UNANSWERED = 128
"""Requests of one client in flight at once. Each holds one wake-up byte in kazoo's socket pair until the
connection thread sends it; 128 bytes stay far below the 278 a default Linux socket buffer takes, so issuing a
request can never block, connected or not, and 128 in flight keep a loopback connection busy."""

_SLICE = 0.05
"""How often a wait looks again at the connection (gave up, reconnected): short, so a change is seen at once."""

_LOST = (ConnectionLoss, SessionExpiredError, ConnectionClosedError)
"""kazoo's ways of saying that the answer went down with the connection: the request may or may not have run."""

_in_flight: weakref.WeakKeyDictionary[KazooClient, _InFlight] = weakref.WeakKeyDictionary()
_in_flight_lock = threading.Lock()


class AnswerLostError(ZooKeeperUnavailableError):
    """The connection went away (or the deadline passed) while a request was unanswered: it may have run."""


def client_gave_up(client: KazooClient) -> bool:
    """True once kazoo will never connect again by itself: its connection thread ended (retry policy spent,
    authentication refused) or the client was stopped.

    ``client_state`` reads CLOSED or AUTH_FAILED then; the thread check is the one look inside kazoo (no public
    flag tells a thread that is still retrying from one that is gone).
    """
    if client.client_state in (KeeperState.CLOSED, KeeperState.AUTH_FAILED):
        return True
    routine = getattr(getattr(client, "_connection", None), "_connection_routine", None)
    return isinstance(routine, threading.Thread) and not routine.is_alive()


class _InFlight:
    """The requests of one kazoo client not yet known to be answered, oldest first, shared by every
    ``BoundedClient`` of that client. Looked at by polling, not through kazoo's callbacks: a callback per answer
    goes through kazoo's completion thread and costs a third of a pipelined batch's time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: deque[Any] = deque()

    def forget_answered(self) -> tuple[int, float | None]:
        """Drop the answered requests at the head; how many are left, and when the latest one that got a real
        answer (not a lost connection) was issued. Answers behind an unanswered request wait their turn: the
        count errs high."""
        issued: float | None = None
        with self.lock:
            while self.requests and self.requests[0].ready():
                request = self.requests.popleft()
                if not isinstance(request.exception, _LOST):
                    issued = request.kto_issued_at
            return len(self.requests), issued

    def oldest(self) -> Any | None:
        with self.lock:
            return self.requests[0] if self.requests else None

    def add(self, request: Any) -> None:
        with self.lock:
            self.requests.append(request)


def _in_flight_of(client: KazooClient) -> _InFlight:
    with _in_flight_lock:
        found = _in_flight.get(client)
        if found is None:
            found = _in_flight[client] = _InFlight()
        return found


class BoundedClient:
    """One started kazoo client, used only through requests whose every wait is bounded by ``patience``.

    ``where`` names the ensemble (connect string or chroot) in messages. Several ``BoundedClient`` may share a
    kazoo client (the operator's batch and its drift timer): the limit on unanswered requests is the client's.
    """

    def __init__(self, client: KazooClient, patience: Patience, *, where: str | None = None) -> None:
        self.client = client
        self.patience = patience
        self.where = where or (client.chroot or "/")
        self._in_flight = _in_flight_of(client)

    # -- waiting ----------------------------------------------------------------------------------------------

    def unavailable(
        self, doing: str, error: type[ZooKeeperUnavailableError] = ZooKeeperUnavailableError
    ) -> Any:
        """The error that ends a wait: one line naming the ensemble, what we were doing and the deadline."""
        if client_gave_up(self.client):
            why = "its client gave up reconnecting (the connection retry policy is spent)"
        else:
            why = f"it did not answer for {self.patience.seconds:g} s (the deadline)"
        return error(f"ZooKeeper at {self.where} is unavailable while {doing}: {why}")

    def wait_connected(self, doing: str) -> None:
        """Return once the client is connected; raise ``ZooKeeperUnavailableError`` when the patience runs out
        first, or at once when kazoo has given up reconnecting."""
        if self.client.connected:
            return
        while not self.client.connected:
            if client_gave_up(self.client) or self.patience.expired:
                raise self.unavailable(doing)
            time.sleep(self._slice())
        # Reconnected: a sign of life, so what follows gets the whole deadline again.
        self.patience.restart()

    # -- requests ---------------------------------------------------------------------------------------------

    def submit(self, start: Callable[[], Any], doing: str) -> Any:
        """Issue one request (``start`` calls one of kazoo's ``*_async`` methods) once connected and fewer than
        ``MAX_UNANSWERED`` are in flight; returns kazoo's async result. Raises ``ZooKeeperUnavailableError`` if
        that takes past the deadline: then nothing was issued."""
        while True:
            self.wait_connected(doing)
            if len(self._in_flight.requests) < MAX_UNANSWERED or self._poll() < MAX_UNANSWERED:
                break
            if self.patience.expired:
                raise self.unavailable(doing)
            oldest = self._in_flight.oldest()
            if oldest is not None:
                oldest.wait(self._slice())
        issued_at = self.patience.now()
        pending = start()
        pending.kto_issued_at = issued_at  # when it was issued: its answer came later (for the clock)
        self._in_flight.add(pending)
        return pending

    def _poll(self) -> int:
        """Requests still in flight; an answer found restarts the clock from when its request was issued (the
        answer came later: a safe lower bound, however late it is looked at)."""
        count, issued = self._in_flight.forget_answered()
        if issued is not None:
            self.patience.heard(issued)
        return count

    def _slice(self) -> float:
        return min(_SLICE, max(self.patience.remaining(), 0.001))

    def answer(self, pending: Any, doing: str) -> Any:
        """The answer to a submitted request. Raises ``AnswerLostError`` when the connection dropped under it or
        the deadline passed first (the request may still have run), and ZooKeeper's own errors (``NoNodeError``
        ...) as kazoo does. An answer restarts the clock: from now if it came while this waited, else from when
        its request was issued.

        An error is raised as a copy of the one kazoo keeps in its result, never that one itself: raising gives an
        exception its traceback, the traceback holds the frames that awaited the answer, and those frames hold the
        result, which holds the exception. That cycle kept every answer of a whole read (a restart's 50,000
        topics) alive until Python's rare collection of its oldest generation, for one missing znode."""
        if pending.ready() and not isinstance(pending.exception, _LOST):
            self.patience.heard(pending.kto_issued_at)
        while not pending.ready():
            if self.patience.expired:
                raise self.unavailable(doing, AnswerLostError)
            pending.wait(self._slice())
            if pending.ready():
                if not isinstance(pending.exception, _LOST):
                    self.patience.restart()
            elif client_gave_up(self.client):
                raise self.unavailable(doing, AnswerLostError)
        failure = pending.exception
        if failure is None:
            return pending.value
        if isinstance(failure, _LOST):
            lost = f"ZooKeeper at {self.where}: connection lost while {doing}"
            raise AnswerLostError(lost) from copy.copy(failure)
        raise copy.copy(failure)

    def call(self, start: Callable[[], Any], doing: str) -> Any:
        """Submit and answer an idempotent request (a read, an ``exists``), trying again after a lost answer
        until the deadline."""
        while True:
            try:
                return self.answer(self.submit(start, doing), doing)
            except AnswerLostError:
                if self.patience.expired or client_gave_up(self.client):
                    raise
