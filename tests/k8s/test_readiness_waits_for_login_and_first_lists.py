"""``/readyz`` says ready only after kopf's start-up, a login, and kopf's first list of both kinds; then it stays
ready without listing again."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

import pytest

from topic_operator.k8s.readiness import RELIST_AFTER, RETRY_AFTER_FAILURE, Readiness


class Lister:
    def __init__(self, uids: dict[str, set[str]]) -> None:
        self.uids = uids
        self.calls = 0
        self.fail: Exception | None = None

    async def __call__(self, plural: str) -> Collection[str]:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        return self.uids[plural]


def _check(readiness: Readiness, lister: Lister) -> bool:
    return asyncio.run(readiness.check(lister))


@pytest.fixture
def lister() -> Lister:
    return Lister({"kafkatopics": {"t1", "t2"}, "kafkaclusters": {"c1"}})


def test_each_condition_is_needed_in_turn(lister: Lister) -> None:
    readiness = Readiness(("kafkatopics", "kafkaclusters"))
    assert not _check(readiness, lister)
    assert readiness.waiting_for == "kopf's start-up"
    readiness.started()
    assert not _check(readiness, lister)
    assert readiness.waiting_for.startswith("a login")
    readiness.logged_in()
    assert not _check(readiness, lister)
    assert readiness.waiting_for == "kopf's first list of kafkatopics (2 of 2 not seen yet)"
    readiness.indexed("kafkatopics", "t1")
    readiness.indexed("kafkatopics", "t2")
    assert not _check(readiness, lister)
    assert readiness.waiting_for == "kopf's first list of kafkaclusters (1 of 1 not seen yet)"
    readiness.indexed("kafkaclusters", "c1")
    assert _check(readiness, lister)
    assert readiness.ready
    assert readiness.waiting_for == ""


def test_once_ready_it_stays_ready_without_listing(lister: Lister) -> None:
    readiness = Readiness(("kafkatopics", "kafkaclusters"))
    readiness.started()
    readiness.logged_in()
    for plural, uids in lister.uids.items():
        for uid in uids:
            readiness.indexed(plural, uid)
    assert _check(readiness, lister)
    calls = lister.calls
    lister.uids["kafkatopics"].add("t3")  # created after: kopf will see it, readiness need not wait again
    lister.fail = RuntimeError("API down")
    assert _check(readiness, lister)
    assert lister.calls == calls


def test_an_api_failure_is_not_ready_and_says_why(lister: Lister) -> None:
    now = [0.0]
    readiness = Readiness(("kafkatopics", "kafkaclusters"), clock=lambda: now[0])
    readiness.started()
    readiness.logged_in()
    lister.fail = PermissionError("403 forbidden: list kafkatopics")
    assert not _check(readiness, lister)
    assert readiness.waiting_for == "a list of kafkatopics (PermissionError: 403 forbidden: list kafkatopics)"
    lister.fail = None
    assert not _check(readiness, lister)  # not listed again at once: a loaded API server is not loaded more
    assert lister.calls == 1
    now[0] += RETRY_AFTER_FAILURE
    assert not _check(readiness, lister)
    assert lister.calls == 2
    assert readiness.waiting_for == "kopf's first list of kafkatopics (2 of 2 not seen yet)"


def test_objects_gone_since_are_not_waited_for(lister: Lister) -> None:
    """Readiness lists again once its list is RELIST_AFTER old: an object deleted before kopf listed it cannot
    block it for ever."""
    now = [0.0]
    readiness = Readiness(("kafkatopics", "kafkaclusters"), clock=lambda: now[0])
    readiness.started()
    readiness.logged_in()
    readiness.indexed("kafkatopics", "t1")
    readiness.indexed("kafkaclusters", "c1")
    assert not _check(readiness, lister)
    lister.uids["kafkatopics"].discard("t2")
    assert not _check(readiness, lister)  # the list is recent: still waiting for t2
    now[0] += RELIST_AFTER
    assert _check(readiness, lister)


def test_probes_while_kopf_catches_up_list_each_kind_once(lister: Lister) -> None:
    """Listing every object on every probe kept a 10,000-object operator too busy to index kopf's first list."""
    readiness = Readiness(("kafkatopics", "kafkaclusters"), clock=lambda: 0.0)
    readiness.started()
    readiness.logged_in()
    for _ in range(5):
        assert not _check(readiness, lister)
    assert lister.calls == 1  # kafkatopics: it stops at the first kind with objects not yet seen
    readiness.indexed("kafkatopics", "t1")
    readiness.indexed("kafkatopics", "t2")
    for _ in range(5):
        assert not _check(readiness, lister)
    assert lister.calls == 2  # and kafkaclusters, once
    readiness.indexed("kafkaclusters", "c1")
    assert _check(readiness, lister)
    assert lister.calls == 2


def test_a_slow_list_never_holds_the_probe(lister: Lister) -> None:
    """The probe answers within its bound while a long list goes on, and the list's outcome counts later."""
    readiness = Readiness(("kafkatopics", "kafkaclusters"))
    readiness.started()
    readiness.logged_in()
    for plural, uids in lister.uids.items():
        for uid in uids:
            readiness.indexed(plural, uid)
    release = asyncio.Event()

    async def slow(plural: str) -> Collection[str]:
        await release.wait()
        return lister.uids[plural]

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert not await readiness.probe(slow, answer_within=0.2)
        assert loop.time() - started < 1.0
        assert not await readiness.probe(slow, answer_within=0.2)  # the same check still runs: none started
        release.set()
        assert await readiness.probe(slow, answer_within=1.0)

    asyncio.run(scenario())
