"""Readiness, and the gate it keeps: kopf's first list of each kind has reached the operator's own handlers.

kopf raises its own ready flag right after the start-up handlers, before logging in and before listing anything:
an operator that was about to fail its login answered ready. Nor does kopf say when its first list is done for a
kind that has no ``kopf.index`` (and KafkaTopics have none: see ``claim_index``). So ``Readiness`` works it out:

1. kopf's start-up is done (``kopf_ready``, given to kopf as its ready flag);
2. a login handler gave kopf credentials (``logged_in``);
3. for each kind, a list through the operator's own API client succeeds (the credentials and RBAC work), and
   every object in it has been seen by the operator's handler for the kind's watch events (``seen``).

``run`` drives it, once, from start-up until ready: it lists each kind, then waits until the objects not yet
seen have been seen, each ``seen`` crossing one off in O(1). An object deleted before kopf listed it is never
seen, so a kind whose handlers have seen none of its missing objects for ``RELIST_AFTER`` seconds is listed
again (while kopf is still working through its own list, a new one would take CPU from it and tell nothing new);
a failed list is tried again after ``RETRY_AFTER_FAILURE`` seconds. ``listed(kind)`` is the gate: handlers that
decide which KafkaTopic owns a topic wait on it, as kopf held every handler until its indices were complete, so
that no KafkaTopic acts before an older one claiming the same topic has been seen. One event per kind, set once:
waiting costs nothing after.

Once reached, readiness is kept: a readiness probe failing while 10,000 KafkaTopics are being created would only
take the pod out of its Service. Pure but for asyncio: the list comes from the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Final

__all__ = ["RELIST_AFTER", "RETRY_AFTER_FAILURE", "ListUids", "Readiness"]

ListUids = Callable[[str], Awaitable[Collection[str]]]
"""Lists the uids of every object of a kind (its plural) in the watched namespaces."""


RELIST_AFTER: Final = 30.0
"""Seconds without progress (none of the missing objects newly seen) before a kind is listed again. Listing
10,000 KafkaTopics anew on every probe kept the operator so busy that kopf's own first list took minutes, and a
timer alone listed 50,000 again every 30 s of a restart still working through them, more often the busier the
machine; listing again once progress stops still notices objects deleted before kopf saw them (they would never
be seen)."""

RETRY_AFTER_FAILURE: Final = 10.0
"""Seconds before a failed list is tried again: a list that timed out on a loaded API server, retried at once,
only loads it more."""


class Readiness:
    def __init__(
        self,
        kinds: Iterable[str],
        *,
        relist_after: float = RELIST_AFTER,
        retry_after: float = RETRY_AFTER_FAILURE,
    ) -> None:
        self._kinds = tuple(kinds)
        self._relist_after = relist_after
        self._retry_after = retry_after
        self.kopf_ready = asyncio.Event()
        """kopf's own ready flag (``kopf.operator(ready_flag=...)``): its start-up handlers are done."""
        self._logged_in = asyncio.Event()
        self._listed = {kind: asyncio.Event() for kind in self._kinds}
        self._seen: dict[str, set[str]] = {kind: set() for kind in self._kinds}
        self._missing: dict[str, set[str]] = {}
        self._listed_count: dict[str, int] = {}
        self._failure: str | None = None

    # -- what the operator tells it -----------------------------------------------------------------------------

    def started(self) -> None:
        self.kopf_ready.set()

    def logged_in(self) -> None:
        self._logged_in.set()

    def seen(self, kind: str, uid: str | None) -> None:
        """A watch event of ``kind`` reached the operator's handler (every event of every object: O(1))."""
        if not uid or self._listed[kind].is_set():
            return
        self._seen[kind].add(uid)
        missing = self._missing.get(kind)
        if missing is not None:
            missing.discard(uid)
            if not missing:
                self._complete(kind)

    # -- what it answers ----------------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return (
            self.kopf_ready.is_set()
            and self._logged_in.is_set()
            and all(event.is_set() for event in self._listed.values())
        )

    @property
    def waiting_for(self) -> str:
        """What readiness waits for, for the probe's answer and the logs ('' once ready)."""
        if not self.kopf_ready.is_set():
            return "kopf's start-up"
        if not self._logged_in.is_set():
            return "a login (no login handler has given credentials yet)"
        for kind in self._kinds:
            if self._listed[kind].is_set():
                continue
            if self._failure is not None:
                return self._failure
            missing = self._missing.get(kind)
            if missing is None:
                return f"a list of {kind}"
            return f"kopf's first list of {kind} ({len(missing)} of {self._listed_count[kind]} not seen yet)"
        return ""

    async def listed(self, kind: str) -> None:
        """Return once kopf's first list of ``kind`` has been seen (at once ever after)."""
        event = self._listed[kind]
        if not event.is_set():
            await event.wait()

    # -- the driver ---------------------------------------------------------------------------------------------

    async def run(self, list_uids: ListUids) -> None:
        """From start-up until ready (a task of its own for the operator's life; cancelling it is safe)."""
        await self.kopf_ready.wait()
        await self._logged_in.wait()
        for kind in self._kinds:
            event = self._listed[kind]
            while not event.is_set():
                try:
                    uids = await list_uids(kind)
                except Exception as error:  # any API failure: not ready, and the probe says why
                    self._failure = f"a list of {kind} ({type(error).__name__}: {error})"
                    await asyncio.sleep(self._retry_after)
                    continue
                self._failure = None
                self._listed_count[kind] = len(uids)
                self._missing[kind] = set(uids) - self._seen[kind]
                if not self._missing[kind]:
                    self._complete(kind)
                    break
                await self._while_progressing(kind)

    async def _while_progressing(self, kind: str) -> None:
        """Return once ``kind`` is complete, or once its handlers have seen none of its missing objects for
        ``relist_after`` seconds (the caller then lists it again)."""
        event = self._listed[kind]
        while not event.is_set():
            before = len(self._missing.get(kind, ()))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), self._relist_after)
            if len(self._missing.get(kind, ())) >= before:
                return

    def _complete(self, kind: str) -> None:
        self._listed[kind].set()
        self._seen[kind] = set()  # no longer needed: free 10,000 uids
        self._missing.pop(kind, None)
