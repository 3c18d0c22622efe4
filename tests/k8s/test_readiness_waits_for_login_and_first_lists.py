"""``/readyz`` says ready only after kopf's start-up, a login, and kopf's first list of both kinds, driven by one
task that lists each kind; ``listed(kind)`` is the gate the ownership handlers wait on. Then it stays ready
without listing again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection

import pytest

from topic_operator.k8s.process.readiness import Readiness

pytestmark = pytest.mark.timeout(30)

KINDS = ("kafkatopics", "kafkaclusters")


class Lister:
    def __init__(self, uids: dict[str, set[str]]) -> None:
        self.uids = uids
        self.calls: list[str] = []
        self.fail: Exception | None = None

    async def __call__(self, plural: str) -> Collection[str]:
        self.calls.append(plural)
        if self.fail is not None:
            raise self.fail
        return set(self.uids[plural])


@pytest.fixture
def lister() -> Lister:
    return Lister({"kafkatopics": {"t1", "t2"}, "kafkaclusters": {"c1"}})


async def _until(condition: Callable[[], bool], limit: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not condition():
        assert loop.time() < deadline, "condition not reached"
        await asyncio.sleep(0.005)


async def _ready_with_everything_seen(lister: Lister) -> Readiness:
    """Every listed object seen (before the list returns), then started, logged in, and driven to ready."""
    readiness = Readiness(KINDS)
    for plural, uids in lister.uids.items():
        for uid in uids:
            readiness.seen(plural, uid)
    readiness.started()
    readiness.logged_in()
    await asyncio.wait_for(readiness.run(lister), 5)
    return readiness


def _run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_each_condition_is_needed_in_turn(lister: Lister) -> None:
    async def scenario() -> None:
        readiness = Readiness(KINDS)
        driver = asyncio.create_task(readiness.run(lister))
        await asyncio.sleep(0.05)
        assert (readiness.ready, readiness.waiting_for) == (False, "kopf's start-up")
        readiness.started()
        await asyncio.sleep(0.05)
        assert readiness.waiting_for.startswith("a login")
        assert lister.calls == []  # nothing is listed before a login gave credentials
        readiness.logged_in()
        await _until(lambda: "not seen" in readiness.waiting_for)
        assert readiness.waiting_for == "kopf's first list of kafkatopics (2 of 2 not seen yet)"
        readiness.seen("kafkatopics", "t1")
        assert readiness.waiting_for == "kopf's first list of kafkatopics (1 of 2 not seen yet)"
        readiness.seen("kafkatopics", "t2")
        await _until(lambda: "first list of kafkaclusters" in readiness.waiting_for)
        assert readiness.waiting_for == "kopf's first list of kafkaclusters (1 of 1 not seen yet)"
        assert not readiness.ready
        readiness.seen("kafkaclusters", "c1")
        await asyncio.wait_for(driver, 5)
        assert (readiness.ready, readiness.waiting_for) == (True, "")

    _run(scenario)


def test_objects_seen_before_the_list_count(lister: Lister) -> None:
    """kopf's first list may reach the handlers before the operator's own list returns."""

    async def scenario() -> None:
        readiness = await _ready_with_everything_seen(lister)
        assert readiness.ready
        assert lister.calls == ["kafkatopics", "kafkaclusters"]

    _run(scenario)


def test_the_gate_holds_handlers_until_kopfs_first_list_is_seen(lister: Lister) -> None:
    async def scenario() -> None:
        readiness = Readiness(KINDS)
        readiness.started()
        readiness.logged_in()
        driver = asyncio.create_task(readiness.run(lister))
        waiters = [asyncio.create_task(readiness.listed("kafkatopics")) for _ in range(100)]
        readiness.seen("kafkatopics", "t1")
        await asyncio.sleep(0.1)
        assert not any(w.done() for w in waiters)
        readiness.seen("kafkatopics", "t2")
        await asyncio.wait_for(asyncio.gather(*waiters), 5)
        assert not readiness.ready  # the gate is per kind: KafkaClusters are still being listed
        readiness.seen("kafkaclusters", "c1")
        await asyncio.wait_for(driver, 5)
        await asyncio.wait_for(readiness.listed("kafkatopics"), 0.01)  # at once, ever after

    _run(scenario)


def test_once_ready_it_stays_ready_without_listing(lister: Lister) -> None:
    async def scenario() -> None:
        readiness = await _ready_with_everything_seen(lister)
        calls = len(lister.calls)
        lister.uids["kafkatopics"].add("t3")  # created after: kopf will see it, readiness need not wait again
        lister.fail = RuntimeError("API down")
        await asyncio.wait_for(readiness.run(lister), 5)
        assert readiness.ready
        assert len(lister.calls) == calls

    _run(scenario)


def test_an_api_failure_is_not_ready_says_why_and_is_retried_later(lister: Lister) -> None:
    async def scenario() -> None:
        readiness = Readiness(KINDS, retry_after=0.3)
        readiness.started()
        readiness.logged_in()
        lister.fail = PermissionError("403 forbidden: list kafkatopics")
        driver = asyncio.create_task(readiness.run(lister))
        await _until(lambda: bool(lister.calls))
        assert not readiness.ready
        assert (
            readiness.waiting_for
            == "a list of kafkatopics (PermissionError: 403 forbidden: list kafkatopics)"
        )
        lister.fail = None
        await asyncio.sleep(0.1)
        assert len(lister.calls) == 1  # not listed again at once: a loaded API server is not loaded more
        await _until(lambda: "not seen" in readiness.waiting_for)
        assert len(lister.calls) == 2
        assert readiness.waiting_for == "kopf's first list of kafkatopics (2 of 2 not seen yet)"
        driver.cancel()

    _run(scenario)


def test_objects_gone_since_are_not_waited_for_ever(lister: Lister) -> None:
    """A kind still incomplete after ``relist_after`` is listed again: an object deleted before kopf listed it
    cannot block readiness (and the ownership handlers) for ever."""

    async def scenario() -> None:
        readiness = Readiness(KINDS, relist_after=0.5)
        readiness.started()
        readiness.logged_in()
        readiness.seen("kafkatopics", "t1")
        readiness.seen("kafkaclusters", "c1")
        driver = asyncio.create_task(readiness.run(lister))
        await _until(lambda: bool(lister.calls))
        lister.uids["kafkatopics"].discard("t2")
        await asyncio.sleep(0.2)
        assert not readiness.ready  # the list is recent: still waiting for t2
        assert lister.calls == ["kafkatopics"]  # and listed once while waiting, not over and over
        await asyncio.wait_for(driver, 5)
        assert readiness.ready
        assert lister.calls == ["kafkatopics", "kafkatopics", "kafkaclusters"]

    _run(scenario)


def test_seeing_is_constant_time_however_many_wait() -> None:
    """20,000 objects and a waiting handler for each: the first list completes at once (one wake-up per waiter).
    kopf's per-object toggles woke every waiter at each object, O(N²): minutes at 10,000."""
    count = 20_000
    uids = {f"u{i}" for i in range(count)}

    async def scenario() -> None:
        readiness = Readiness(KINDS)
        readiness.started()
        readiness.logged_in()

        async def list_uids(plural: str) -> Collection[str]:
            return uids if plural == "kafkatopics" else set()

        driver = asyncio.create_task(readiness.run(list_uids))
        await asyncio.sleep(0)

        async def object_worker(uid: str) -> None:  # as kopf's worker: see the event, then wait for the gate
            await asyncio.sleep(0)
            readiness.seen("kafkatopics", uid)
            await readiness.listed("kafkatopics")

        loop = asyncio.get_running_loop()
        started = loop.time()
        workers = []
        for uid in uids:  # as kopf's watcher starts them: one per listed object, while the others wait
            workers.append(asyncio.create_task(object_worker(uid)))
            await asyncio.sleep(0)
        await asyncio.wait_for(asyncio.gather(*workers), 20)
        await asyncio.wait_for(driver, 5)
        assert readiness.ready
        # About 0.3 s here. kopf's ToggleSet in this pattern took 2 s for 1,000 objects, 39 s for 4,000 and
        # 220 s for 8,000.
        assert loop.time() - started < 10

    _run(scenario)


def test_not_listed_again_while_kopf_is_still_working_through_its_list(lister: Lister) -> None:
    """A restart slower than ``relist_after`` (50,000 KafkaTopics on a busy machine) is not made slower still by
    lists that tell nothing new: while the handlers keep seeing missing objects, the kind is not listed again;
    once they stop, it is."""
    lister.uids["kafkatopics"] = {f"t{i}" for i in range(8)}

    async def scenario() -> None:
        readiness = Readiness(KINDS, relist_after=1.5)
        readiness.started()
        readiness.logged_in()
        readiness.seen("kafkaclusters", "c1")
        driver = asyncio.create_task(readiness.run(lister))
        await _until(lambda: bool(lister.calls))
        # 2.4 s in all, longer than relist_after, but one more seen every 0.4 s: never without progress for 1.5 s
        for i in range(6):
            await asyncio.sleep(0.4)
            readiness.seen("kafkatopics", f"t{i}")
        assert lister.calls == ["kafkatopics"]
        lister.uids["kafkatopics"].discard("t7")  # deleted before kopf saw it: then progress stops at t6
        readiness.seen("kafkatopics", "t6")
        await asyncio.wait_for(driver, 10)  # two windows of 1.5 s at most, then the lists
        assert readiness.ready
        assert lister.calls == ["kafkatopics", "kafkatopics", "kafkaclusters"]

    _run(scenario)
