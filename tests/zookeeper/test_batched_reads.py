"""``read_many`` answers exactly what single reads answer, through multiRead where the server has it (3.6+) and
through pipelined single reads where it does not."""

import gc
import sys
import types

import pytest
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot, close_client, new_client
from topic_operator.zookeeper import pipelined
from topic_operator.zookeeper.pipelined import read_many as read_many_bounded
from topic_operator.zookeeper.snapshot import bounded

PATHS = [f"/t/n{i}" for i in range(450)] + ["/t/missing", "/", "/t"]  # more than two batches


@pytest.fixture
def populated(zk: KazooClient) -> KazooClient:
    zk.ensure_path("/t")
    pending = [zk.create_async(f"/t/n{i}", f'{{"n":{i}}}'.encode()) for i in range(450)]
    for request in pending:
        request.get()
    zk.set("/t/n7", b'{"n":"seven"}')
    return zk


def read_many(client: KazooClient, paths: list[str]) -> dict[str, object]:
    return read_many_bounded(bounded(client, 30.0), paths)  # type: ignore[return-value]


def single_reads(client: KazooClient) -> dict[str, object]:
    answers: dict[str, object] = {}
    for path in PATHS:
        try:
            answers[path] = client.get(path)
        except Exception:
            answers[path] = None
    return answers


def test_multi_read_is_used_on_this_server_and_matches_single_reads(populated: KazooClient) -> None:
    answers = read_many(populated, PATHS)
    assert pipelined._multi_read_support[populated] is True
    assert answers == single_reads(populated)
    assert answers["/t/missing"] is None
    assert answers["/t/n7"][0] == b'{"n":"seven"}'  # type: ignore[index]
    assert answers["/t/n7"][1].version == 1  # type: ignore[index]


def test_the_fallback_gives_the_same_answers(populated: KazooClient, zk_chroot: ZkChroot) -> None:
    other = new_client(zk_chroot.connect_string)
    try:
        pipelined._multi_read_support[other] = False  # as on a ZooKeeper older than 3.6
        assert read_many(other, PATHS) == read_many(populated, PATHS)
    finally:
        close_client(other)


def test_chroot_is_applied(populated: KazooClient, zk_chroot: ZkChroot) -> None:
    # The client is rooted at the test's chroot: "/t" must not be read from the server's root.
    assert read_many(populated, ["/t"])["/t"] is not None
    assert populated.chroot
    unrooted = new_client(zk_chroot.server_hosts)
    try:
        assert read_many(unrooted, ["/t"])["/t"] is None
    finally:
        close_client(unrooted)


def _in_a_reference_cycle(target: object, limit: int = 100_000) -> bool:
    """Whether ``target`` reaches itself through what it references. Module globals are not followed: everything
    reaches them, and what they hold lives on anyway; a cycle through them is not one the collector must break."""
    globals_ = {id(vars(module)) for module in list(sys.modules.values()) if module is not None}
    seen: set[int] = set()
    frontier = list(gc.get_referents(target))
    while frontier and len(seen) < limit:
        found = frontier.pop()
        if found is target:
            return True
        if id(found) in seen or id(found) in globals_ or isinstance(found, types.ModuleType | type):
            continue
        seen.add(id(found))
        frontier.extend(gc.get_referents(found))
    return False


def test_a_missing_znode_leaves_no_reference_cycle_behind(populated: KazooClient) -> None:
    """A read's answers are freed by their reference counts once the read is done, not by the cycle collector
    (at 50,000 topics that waits for a rare collection of the oldest generation): a missing znode's error raised
    as kazoo keeps it would tie the answer, the error's traceback and the reader's frames into a cycle."""
    zk = bounded(populated, 30.0)
    reads = [pipelined.read_data(zk, path) for path in ("/t/n1", "/t/missing", "/t/n2")]
    assert [read.value() is None for read in reads] == [False, True, False]
    assert not [read.path for read in reads if _in_a_reference_cycle(read.request)]
