"""The watched view stays equal to a fresh read of the cluster while others change it, re-reading only what
changed, and re-reads everything after the connection (and with it every watch) was lost."""

import time
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot, close_client, drop_connection, expire_session, new_client
from topic_operator.model import ClusterState
from topic_operator.testing.simulated_brokers import register_broker
from topic_operator.zookeeper import watched as watched_module
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.watched import WatchedCluster
from topic_operator.zookeeper.znodes import ControllerZNode, ReassignPartitionsZNode


def topic_json(*replica_lists: list[int]) -> bytes:
    partitions = ",".join(f'"{p}":{replicas}' for p, replicas in enumerate(replica_lists)).replace(" ", "")
    return f'{{"version":3,"partitions":{{{partitions}}}}}'.encode()


@pytest.fixture
def view_client(kafka_zk: KazooClient, zk_chroot: ZkChroot) -> Iterator[KazooClient]:
    """The view's own session, separate from the one holding the brokers' registrations."""
    client = new_client(zk_chroot.connect_string)
    yield client
    close_client(client)


@pytest.fixture
def view(view_client: KazooClient) -> Iterator[WatchedCluster]:
    watched = WatchedCluster(view_client)
    watched.state()
    yield watched
    watched.close()


def settles_to(view: WatchedCluster, reference: KazooClient, timeout: float = 10.0) -> ClusterState:
    """Watches are asynchronous: wait until the view equals a fresh read, or fail with the difference."""
    deadline = time.monotonic() + timeout
    while True:
        seen, truth = view.state(), read_cluster(reference)
        if seen == truth or time.monotonic() > deadline:
            assert seen == truth
            return seen
        view.wait_for_change(0.2)


def test_initial_state_equals_a_fresh_read(kafka_zk: KazooClient, view: WatchedCluster) -> None:
    kafka_zk.create("/config/topics/a", b'{"version":1,"config":{"retention.ms":"1"}}')
    kafka_zk.create("/brokers/topics/a", topic_json([0, 1]))
    fresh = WatchedCluster(kafka_zk)
    assert fresh.state() == read_cluster(kafka_zk)
    assert fresh.state().topics["a"].config == {"retention.ms": "1"}
    fresh.close()


def test_nothing_changed_means_nothing_re_read(kafka_zk: KazooClient, view: WatchedCluster) -> None:
    kafka_zk.create("/brokers/topics/a", topic_json([0]))
    kafka_zk.create("/brokers/topics/b", topic_json([1]))
    first = settles_to(view, kafka_zk)
    assert view.state() is first
    assert not view.wait_for_change(0.2)
    kafka_zk.set("/brokers/topics/b", topic_json([1], [2]))
    second = settles_to(view, kafka_zk)
    assert second.topics["b"].partition_count == 2
    assert second.topics["a"] is first.topics["a"]  # an untouched topic is not decoded again


def test_topics_configs_and_deletions_made_by_others(kafka_zk: KazooClient, view: WatchedCluster) -> None:
    kafka_zk.create("/brokers/topics/t", topic_json([0, 1]))
    settles_to(view, kafka_zk)
    kafka_zk.create(
        "/config/topics/t", b'{"version":1,"config":{"retention.ms":"5"}}'
    )  # created after the topic
    assert settles_to(view, kafka_zk).topics["t"].config == {"retention.ms": "5"}
    kafka_zk.set("/config/topics/t", b'{"version":1,"config":{"retention.ms":"6"}}')
    assert settles_to(view, kafka_zk).topics["t"].config_znode_version == 1
    kafka_zk.create("/admin/delete_topics/t")
    assert settles_to(view, kafka_zk).topics["t"].marked_for_deletion
    kafka_zk.delete("/brokers/topics/t")
    gone = settles_to(view, kafka_zk)
    assert "t" not in gone.topics
    assert gone.orphan_configs == {"t": 1}  # the controller deletes the config after the topic
    kafka_zk.delete("/config/topics/t")
    assert settles_to(view, kafka_zk).orphan_configs == {}


def test_brokers_controller_and_reassignments(kafka_zk: KazooClient, view: WatchedCluster) -> None:
    kafka_zk.create("/brokers/topics/t", topic_json([0, 1]))
    register_broker(kafka_zk, 9, rack="rack-z")
    assert settles_to(view, kafka_zk).brokers[9].rack == "rack-z"
    kafka_zk.delete("/brokers/ids/9")
    assert 9 not in settles_to(view, kafka_zk).brokers
    kafka_zk.delete(ControllerZNode.path)
    assert settles_to(view, kafka_zk).controller is None
    kafka_zk.create(ControllerZNode.path, ControllerZNode.encode(4, 1), ephemeral=True)
    assert settles_to(view, kafka_zk).controller == 4
    kafka_zk.create(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode({"t": {0: [1, 2]}}))
    assert settles_to(view, kafka_zk).topics["t"].reassignment_in_progress
    kafka_zk.delete(ReassignPartitionsZNode.path)
    assert not settles_to(view, kafka_zk).topics["t"].reassignment_in_progress


def test_unreadable_topics_are_reported_and_recover(kafka_zk: KazooClient, view: WatchedCluster) -> None:
    kafka_zk.create("/brokers/topics/t", b"{broken")
    assert "t" in settles_to(view, kafka_zk).unreadable_topics
    kafka_zk.set("/brokers/topics/t", topic_json([0]))
    healed = settles_to(view, kafka_zk)
    assert healed.unreadable_topics == {}
    assert healed.topics["t"].partitions == {0: (0,)}


def test_changes_after_a_dropped_connection_are_seen(
    kafka_zk: KazooClient, view_client: KazooClient, view: WatchedCluster
) -> None:
    kafka_zk.create("/brokers/topics/t", topic_json([0]))
    settles_to(view, kafka_zk)
    drop_connection(view_client)  # the server forgets every watch of the old connection
    kafka_zk.set("/brokers/topics/t", topic_json([0], [1]))
    kafka_zk.create("/brokers/topics/u", topic_json([2]))
    seen = settles_to(view, kafka_zk)
    assert seen.topics["t"].partition_count == 2
    assert "u" in seen.topics


def test_changes_after_session_expiry_are_seen(
    kafka_zk: KazooClient, view_client: KazooClient, view: WatchedCluster, zk_chroot: ZkChroot
) -> None:
    kafka_zk.create("/brokers/topics/t", topic_json([0]))
    settles_to(view, kafka_zk)
    expire_session(view_client, zk_chroot.server_hosts)
    kafka_zk.set("/brokers/topics/t", topic_json([0], [1], [2]))
    assert settles_to(view, kafka_zk).topics["t"].partition_count == 3


def test_orphans_markers_and_reassignments_come_and_go_topic_by_topic(
    kafka_zk: KazooClient, view: WatchedCluster
) -> None:
    """The view updates these for the topics that changed only; each step must still equal a fresh read."""
    for name in ("a", "b", "c"):
        kafka_zk.create(f"/brokers/topics/{name}", topic_json([0, 1]))
    settles_to(view, kafka_zk)
    kafka_zk.create("/config/topics/u", b'{"version":1,"config":{}}')  # an interrupted create's config
    assert settles_to(view, kafka_zk).orphan_configs == {"u": 0}
    kafka_zk.create("/brokers/topics/u", topic_json([2]))
    assert settles_to(view, kafka_zk).orphan_configs == {}
    kafka_zk.create("/admin/delete_topics/b")
    marked = settles_to(view, kafka_zk)
    assert [t for t in "abcu" if marked.topics[t].marked_for_deletion] == ["b"]
    kafka_zk.delete("/admin/delete_topics/b")
    assert not settles_to(view, kafka_zk).topics["b"].marked_for_deletion
    kafka_zk.create(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode({"c": {0: [1, 2]}}))
    moving = settles_to(view, kafka_zk)
    assert [t for t in "abcu" if moving.topics[t].reassignment_in_progress] == ["c"]
    kafka_zk.set(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode({"a": {0: [1, 2]}}))
    moved = settles_to(view, kafka_zk)
    assert [t for t in "abcu" if moved.topics[t].reassignment_in_progress] == ["a"]


def test_a_full_read_holds_at_most_two_windows_of_answers(
    kafka_zk: KazooClient, view_client: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each answer kazoo holds weighs kilobytes: a first read of a large cluster must apply them window by window
    (the next in flight meanwhile), never hold them all, and still read every topic and config."""
    for n in range(25):
        kafka_zk.create(f"/brokers/topics/t{n}", topic_json([0]))
        kafka_zk.create(f"/config/topics/t{n}", b'{"version":1,"config":{"retention.ms":"1"}}')
    monkeypatch.setattr(watched_module, "READ_WINDOW", 4)
    held: set[int] = set()
    most_held = 0
    issue = watched_module.read_data

    def counted(zk: Any, path: str, watch: Any = None) -> Any:
        nonlocal most_held
        pending = issue(zk, path, watch)
        if not path.startswith(("/brokers/topics/", "/config/topics/")):
            return pending

        class Counted:
            def value(self) -> Any:
                held.discard(id(self))
                return pending.value()

        counting = Counted()
        held.add(id(counting))
        most_held = max(most_held, len(held))
        return counting

    monkeypatch.setattr(watched_module, "read_data", counted)
    watched = WatchedCluster(view_client)
    try:
        assert watched.state() == read_cluster(kafka_zk)
    finally:
        watched.close()
    assert held == set()
    assert most_held <= 2 * 4


def test_the_release_evidence_follows_topics_that_change_format_and_go(
    kafka_zk: KazooClient, view: WatchedCluster
) -> None:
    """The view counts znode formats and topic ids as topics change, not over all of them at each change: the
    counts must stay those of a fresh read through upgrades, unreadable znodes and deletions."""
    old = b'{"version":1,"partitions":{"0":[0]}}'
    with_id = b'{"version":3,"topic_id":"AAAAAAAAAAAAAAAAAAAAAA","partitions":{"0":[0]}}'
    kafka_zk.create("/brokers/topics/a", old)
    kafka_zk.create("/brokers/topics/b", old)
    kafka_zk.create("/brokers/topics/c", with_id)
    first = settles_to(view, kafka_zk).release_evidence
    assert first is not None
    assert first.topic_znode_versions == ((1, 2), (3, 1))
    assert first.topics_with_id == 1
    kafka_zk.set("/brokers/topics/a", with_id)  # rewritten by a newer controller
    kafka_zk.set("/brokers/topics/b", b"not json")
    upgraded = settles_to(view, kafka_zk).release_evidence
    assert upgraded is not None
    assert upgraded.topic_znode_versions == ((3, 2),)
    assert upgraded.topics_with_id == 2
    kafka_zk.set("/brokers/topics/b", old)
    kafka_zk.delete("/brokers/topics/c")
    settles_to(view, kafka_zk)
