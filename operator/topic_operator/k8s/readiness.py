"""When ``/readyz`` may answer 200: the operator has logged in, and kopf has received its first list of each kind.

kopf raises its own ready flag right after the start-up handlers, before logging in and before listing anything:
an operator that was about to fail its login answered ready. kopf exposes no hook for the end of its first
listing, but it calls the index handlers for every object of it before any other handler runs. So readiness is:

1. kopf's start-up is done (its ready flag);
2. a login handler gave kopf credentials;
3. for each kind, a list through the operator's own API client succeeds (the credentials and RBAC work), and
   every object in it has been seen by kopf's index handlers (kopf's first list has arrived). The list is taken
   again only once it is ``RELIST_AFTER`` seconds old, not on every probe.

Once reached, readiness is kept: a readiness probe that failed while 10,000 KafkaTopics are being created (the
index catching up with the API) would only take the pod out of its Service. Pure: the list comes from the caller.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Final

__all__ = ["RELIST_AFTER", "RETRY_AFTER_FAILURE", "Readiness"]

ListUids = Callable[[str], Awaitable[Collection[str]]]
"""Lists the uids of every object of a kind (its plural) in the watched namespaces."""


RELIST_AFTER: Final = 30.0
"""Seconds a kind's list is compared against before it is listed again. Each probe listing 10,000 KafkaTopics
anew kept the operator so busy that kopf's own first list took minutes to index; listing again now and then
still notices objects deleted before kopf saw them (they would never be seen)."""

RETRY_AFTER_FAILURE: Final = 10.0
"""Seconds before a failed list is tried again: a list that timed out on a loaded API server, retried at once by
every probe, only loads it more."""


class Readiness:
    def __init__(self, kinds: Iterable[str], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._kinds = tuple(kinds)
        self._clock = clock
        self._listed: dict[str, tuple[float, frozenset[str]]] = {}
        self._failed_at: dict[str, float] = {}
        self._seen: dict[str, set[str]] = {kind: set() for kind in self._kinds}
        self._started = False
        self._logged_in = False
        self._ready = False
        self._checking: asyncio.Task[bool] | None = None
        self.waiting_for = "kopf's start-up"
        """What readiness waits for, for the probe's answer and the logs."""

    def started(self) -> None:
        self._started = True

    def logged_in(self) -> None:
        self._logged_in = True

    def indexed(self, kind: str, uid: str | None) -> None:
        """kopf's index handler saw an object (called for every object of every event, so it must be cheap)."""
        if not self._ready and uid:
            self._seen[kind].add(uid)

    @property
    def ready(self) -> bool:
        return self._ready

    async def probe(self, list_uids: ListUids, *, answer_within: float = 1.0) -> bool:
        """For ``/readyz``: start a ``check`` unless one runs, and answer with it if it ends within
        ``answer_within`` seconds, else with what is known. Listing 10,000 objects can take longer than a
        readiness probe's timeout: the probe must never wait for it."""
        if self._ready:
            return True
        if self._checking is None or self._checking.done():
            self._checking = asyncio.ensure_future(self.check(list_uids))
        await asyncio.wait({self._checking}, timeout=answer_within)
        return self._ready

    async def check(self, list_uids: ListUids) -> bool:
        """Ready now? Lists each kind (until ready: afterwards the answer is kept and nothing is listed)."""
        if self._ready:
            return True
        if not self._started:
            self.waiting_for = "kopf's start-up"
            return False
        if not self._logged_in:
            self.waiting_for = "a login (no login handler has given credentials yet)"
            return False
        for kind in self._kinds:
            at, listed = self._listed.get(kind, (float("-inf"), frozenset()))
            if self._clock() - at >= RELIST_AFTER:
                if self._clock() - self._failed_at.get(kind, float("-inf")) < RETRY_AFTER_FAILURE:
                    return False  # still the failure's answer, in waiting_for
                try:
                    listed = frozenset(await list_uids(kind))
                except Exception as error:  # any API failure: not ready, and the probe says why
                    self._failed_at[kind] = self._clock()
                    self.waiting_for = f"a list of {kind} ({type(error).__name__}: {error})"
                    return False
                self._failed_at.pop(kind, None)
                self._listed[kind] = (self._clock(), listed)
            missing = listed - self._seen[kind]
            if missing:
                self.waiting_for = (
                    f"kopf's first list of {kind} ({len(missing)} of {len(listed)} not seen yet)"
                )
                return False
        self._ready = True
        self._seen = {kind: set() for kind in self._kinds}  # no longer needed
        self._listed = {}
        self.waiting_for = ""
        return True
