"""The leader Lease on its own (``leadership``): taking it, holding it, losing it, handing it over, and never two
holders at once, on a Lease kept in memory with client-go's optimistic concurrency (resourceVersion) and clocks
the tests move. The real API server's Lease is exercised by tests/real (standby takeover)."""

from __future__ import annotations

import asyncio
import copy
import datetime
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topic_operator.k8s.process.leadership import (
    ACCESS_GRACE,
    LeaderElector,
    LeaseAccessError,
    LeaseConflictError,
    LeaseKeeper,
    LeaseTimings,
)

TIMINGS = LeaseTimings(duration=10.0, renew_deadline=7.0, retry_period=2.0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> datetime.datetime:
        return datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=self.now)


class MemoryLeases:
    """One Lease, as the API server keeps it: a resourceVersion per write, 409 on a stale or duplicate write."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0
        self.down: set[str] = set()
        """Identities whose requests fail (their API server is unreachable)."""
        self.caller = ""
        self.refusals = 0
        """How many requests to refuse with 403 from now (an API server whose authorizer is not ready yet)."""
        self.on_request: Callable[[], None] = lambda: None

    def _check(self) -> None:
        self.on_request()
        if self.caller in self.down:
            raise ConnectionError("the API server is unreachable")
        if self.refusals:
            self.refusals -= 1
            raise LeaseAccessError('leases.coordination.k8s.io "kto" is forbidden')

    async def get_lease(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        self._check()
        return copy.deepcopy(self.lease)

    async def create_lease(self, namespace: str, name: str, spec: Mapping[str, Any]) -> None:
        self._check()
        if self.lease is not None:
            raise LeaseConflictError("exists")
        self.version += 1
        self.lease = {"metadata": {"resourceVersion": str(self.version)}, "spec": dict(spec)}

    async def replace_lease(
        self, namespace: str, name: str, resource_version: str, spec: Mapping[str, Any]
    ) -> None:
        self._check()
        if self.lease is None or self.lease["metadata"]["resourceVersion"] != resource_version:
            raise LeaseConflictError("modified")
        self.version += 1
        self.lease = {"metadata": {"resourceVersion": str(self.version)}, "spec": dict(spec)}


class Replica:
    def __init__(self, identity: str, leases: MemoryLeases, clock: Clock) -> None:
        self.identity, self.leases = identity, leases
        self.elector = LeaderElector(
            leases, "ops", "kto", identity, TIMINGS, monotonic=clock, wall=clock.wall
        )

    def attempt(self) -> bool:
        self.leases.caller = self.identity

        async def once() -> bool:
            try:
                return await self.elector.try_acquire_or_renew()
            except ConnectionError:
                return False

        return asyncio.run(once())


def _pair() -> tuple[Clock, MemoryLeases, Replica, Replica]:
    clock, leases = Clock(), MemoryLeases()
    return clock, leases, Replica("a", leases, clock), Replica("b", leases, clock)


def test_the_first_takes_it_and_the_other_waits_while_it_is_renewed() -> None:
    clock, leases, a, b = _pair()
    assert a.attempt()
    assert a.elector.holds()
    for _ in range(20):  # 40 s of renewals every 2 s: b never gets it
        clock.now += 2
        assert a.attempt()
        assert not b.attempt()
        assert (a.elector.holds(), b.elector.holds()) == (True, False)
    assert b.elector.holder == "a"
    assert leases.lease is not None
    assert leases.lease["spec"]["leaseTransitions"] == 0


def test_a_dead_holder_is_replaced_once_nothing_changed_for_the_duration_by_the_standbys_clock() -> None:
    clock, leases, a, b = _pair()
    assert a.attempt()
    assert not b.attempt()  # b sees a's record now
    clock.now += 9.9
    assert not b.attempt()
    clock.now += 0.2  # 10.1 s since b saw the record change
    assert b.attempt()
    assert b.elector.holds()
    assert not a.elector.holds()  # a stopped holding 7 s after its last renewal, before b could take over
    assert leases.lease is not None
    assert (leases.lease["spec"]["holderIdentity"], leases.lease["spec"]["leaseTransitions"]) == ("b", 1)


def test_a_standby_that_starts_late_still_waits_a_whole_duration() -> None:
    """The renewTime in the Lease is never compared with the standby's clock: clocks may differ."""
    clock, _leases, a, b = _pair()
    assert a.attempt()
    clock.now += 600  # a died long ago; b starts only now
    assert not b.attempt()
    clock.now += 10.1
    assert b.attempt()


def test_the_holder_that_cannot_renew_stops_holding_after_the_renew_deadline() -> None:
    clock, leases, a, _b = _pair()
    assert a.attempt()
    leases.down.add("a")
    clock.now += 6.9
    assert not a.attempt()
    assert a.elector.holds()
    clock.now += 0.2
    assert not a.elector.holds()


def test_keep_returns_when_renewals_fail_for_the_renew_deadline() -> None:
    leases = MemoryLeases()
    timings = LeaseTimings(duration=0.5, renew_deadline=0.3, retry_period=0.05)
    elector = LeaderElector(leases, "ops", "kto", "a", timings)

    async def scenario() -> float:
        leases.caller = "a"
        await elector.acquire()
        keeping = asyncio.create_task(elector.keep())
        await asyncio.sleep(0.2)
        assert not keeping.done()  # renewing
        leases.down.add("a")
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(keeping, 2)
        return asyncio.get_running_loop().time() - started

    took = asyncio.run(scenario())
    assert 0.1 < took < 1.0
    assert not elector.holds()


QUICK = LeaseTimings(duration=15.0, renew_deadline=10.0, retry_period=0.02)
"""Real sleeps of 10 ms; the clock the elector reads moves with each request."""


def _acquire_with_refusals(refusals: int, *, granted_before: bool, seconds_per_request: float) -> float:
    """``acquire`` against an API server refusing the first ``refusals`` requests; each request moves the
    elector's clock by ``seconds_per_request``. The seconds of that clock it took."""
    clock, leases = Clock(), MemoryLeases()
    leases.caller, leases.refusals = "a", refusals

    def tick() -> None:
        clock.now += seconds_per_request

    leases.on_request = tick
    elector = LeaderElector(leases, "ops", "kto", "a", QUICK, monotonic=clock, granted_before=granted_before)
    started = clock.now
    asyncio.run(asyncio.wait_for(elector.acquire(), 10))
    assert elector.holds()
    return clock.now - started


def test_a_replica_refused_the_lease_from_its_start_gives_up_at_once() -> None:
    with pytest.raises(LeaseAccessError, match="forbidden"):
        _acquire_with_refusals(1, granted_before=False, seconds_per_request=1.0)


def test_a_replica_that_held_the_lease_retries_refusals_of_an_api_server_still_starting() -> None:
    took = _acquire_with_refusals(5, granted_before=True, seconds_per_request=1.0)
    assert took >= 5


def test_a_replica_that_held_the_lease_gives_up_when_refusals_last_the_grace() -> None:
    with pytest.raises(LeaseAccessError, match="forbidden"):
        _acquire_with_refusals(10_000, granted_before=True, seconds_per_request=ACCESS_GRACE / 10)


def test_release_hands_over_at_once() -> None:
    _clock, leases, a, b = _pair()
    assert a.attempt()
    assert not b.attempt()
    asyncio.run(a.elector.release())
    assert not a.elector.holds()
    assert b.attempt()  # no waiting for the duration: the Lease was given up
    assert leases.lease is not None
    assert leases.lease["spec"]["holderIdentity"] == "b"


def test_a_write_on_a_stale_version_loses() -> None:
    """Two standbys seeing the same expired Lease: the first write wins, the other's is refused (409)."""
    clock, leases, a, b = _pair()
    c = Replica("c", leases, clock)
    assert a.attempt()
    assert not b.attempt()
    assert not c.attempt()
    clock.now += 11
    leases.caller = "b"
    seen_by_c = asyncio.run(leases.get_lease("ops", "kto"))
    assert b.attempt()
    assert seen_by_c is not None
    leases.caller = "c"
    try:
        asyncio.run(leases.replace_lease("ops", "kto", seen_by_c["metadata"]["resourceVersion"], {}))
    except LeaseConflictError:
        pass
    else:
        raise AssertionError("a write on a stale resourceVersion was taken")
    assert not c.attempt()  # c now sees b's fresh record: it waits a whole duration again


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.floats(0.0, 4.0), st.booleans()),
        min_size=1,
        max_size=80,
    )
)
def test_never_two_holders(steps: list[tuple[str, float, bool]]) -> None:
    """Whatever the order of attempts, the pauses and which replica's API calls fail, at most one replica
    believes it holds the Lease at any moment."""
    clock, leases = Clock(), MemoryLeases()
    replicas = {name: Replica(name, leases, clock) for name in "abc"}
    for name, pause, reachable in steps:
        clock.now += pause
        leases.down = set() if reachable else {name}
        replicas[name].attempt()
        holders = [r for r in replicas.values() if r.elector.holds()]
        assert len(holders) <= 1, [r.identity for r in holders]


def test_the_keeper_renews_from_its_own_thread_while_the_event_loop_is_busy() -> None:
    """A burst keeps kopf's event loop busy for seconds: renewals must not wait behind it."""
    leases = MemoryLeases()
    timings = LeaseTimings(duration=1.0, renew_deadline=0.6, retry_period=0.1)
    elector = LeaderElector(leases, "ops", "kto", "a", timings)
    lost: list[bool] = []

    async def scenario() -> None:
        leases.caller = "a"
        await elector.acquire()
        keeper = LeaseKeeper(elector, lambda: leases, lambda: lost.append(True))
        keeper.start()
        before = leases.version
        time.sleep(1.5)  # the event loop blocked, as by a burst: no await for 1.5 s, past the renew deadline
        assert elector.holds()
        assert leases.version > before + 5  # renewed all along
        keeper.stop()
        assert leases.lease is not None
        assert leases.lease["spec"]["holderIdentity"] == ""  # released on a clean stop

    asyncio.run(scenario())
    assert lost == []
