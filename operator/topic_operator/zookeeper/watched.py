"""A cluster snapshot kept fresh by ZooKeeper watches, so a reconcile does not re-read 10,000 topics.

Watches are on the broker and topic listings, every topic znode, every topic's config znode, the deletion
markers, the reassignment znode and the controller. A watch callback only records what changed (it runs on
kazoo's single callback thread, which must not block); ``state()`` re-reads exactly what changed, pipelined, on
the caller's thread, re-arming each watch with the read that consumes it.

ZooKeeper watches fire once and live on one connection, and kazoo does not re-register them after a reconnect
(it sends no SetWatches): when the connection is suspended it fires every pending watch with an event of type
NONE and forgets them. The view treats that event, and the connection coming back, as "everything is stale" and
re-reads (and re-arms) the whole cluster on the next ``state()``.

``state()`` is bounded by a deadline like every read (``bounded.Patience``): a refresh cut by a lost connection
is redone in full once ZooKeeper is back, and one that ZooKeeper leaves waiting past the deadline raises
``ZooKeeperUnavailableError`` and leaves the view marked stale for the next call.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kazoo.client import KazooClient
from kazoo.protocol.states import EventType, KazooState, WatchedEvent

from topic_operator.kafka.kraft_migration import choose_writer
from topic_operator.model import Broker, ClusterState, TopicState
from topic_operator.zookeeper.bounded import (
    DEFAULT_DEADLINE,
    AnswerLostError,
    BoundedClient,
    Patience,
    client_gave_up,
)
from topic_operator.zookeeper.pipelined import Pending, read_children, read_data, read_exists
from topic_operator.zookeeper.snapshot import (
    READ_ATTEMPTS,
    SINGLE_ZNODES,
    ClusterFacts,
    TopicTally,
    Unreadable,
    bounded,
    broker_ids_of,
    decode_brokers,
    decode_singles,
    migration_stage_of,
    release_evidence_from,
    stage_of,
    topic_state,
)
from topic_operator.zookeeper.znodes import (
    BrokerIdsZNode,
    BrokerIdZNode,
    ControllerZNode,
    DeleteTopicsZNode,
    MigrationZNode,
    ReassignPartitionsZNode,
    TopicConfigsZNode,
    TopicConfigZNode,
    TopicsZNode,
    TopicZNode,
    ZnodeFormatError,
)

__all__ = ["WatchedCluster"]

Answer = tuple[bytes, Any]

READ_WINDOW = 2_000
"""Topic and config reads in flight at once during a refresh (two windows at most): enough that ZooKeeper is
never left waiting for the next request, few enough that their unapplied answers stay a few megabytes."""


class _KeptStat(NamedTuple):
    """The two fields of a znode's stat a topic's state is built from (``snapshot.topic_state``): the view keeps
    an answer per topic and per config for as long as the topic exists, and kazoo's full stat is eleven fields,
    most of them integers too large to be shared."""

    version: int
    ctime: int


def _kept(answer: Answer) -> Answer:
    data, stat = answer
    return data, _KeptStat(stat.version, stat.ctime)


@dataclass
class _Stale:
    """What changed since the last ``state()``. ``everything`` after a reconnect or at start."""

    everything: bool = False
    brokers: bool = False
    topic_listing: bool = False
    config_listing: bool = False
    deletions: bool = False
    reassignment: bool = False
    controller: bool = False
    topics: set[str] = field(default_factory=set)
    configs: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        flags = (self.everything, self.brokers, self.topic_listing, self.config_listing, self.deletions)
        return any(flags) or self.reassignment or self.controller or bool(self.topics) or bool(self.configs)


class WatchedCluster:
    """The cluster behind ``client`` (started, rooted at the cluster's chroot), always as of the last ``state()``.

    ``state()`` is cheap when nothing changed. ``wait_for_change(timeout)`` lets a caller sleep until a watch
    fires. Call ``close()`` before stopping the client. ``deadline``: how long ZooKeeper may keep a ``state()``
    waiting, unless the call gives its own.
    """

    def __init__(self, client: KazooClient, *, deadline: float = DEFAULT_DEADLINE) -> None:
        self._client = client
        self._deadline = deadline
        self._marks_lock = threading.Lock()
        self._refresh_lock = threading.Lock()
        self._stale = _Stale(everything=True)
        self._changed = threading.Event()
        self._closed = False
        self._was_disconnected = False
        self._single_answers: dict[str, Answer | None] = {}
        self._facts = ClusterFacts(None, None, None, frozenset())
        self._unreadable_singles = Unreadable()
        self._brokers: dict[int, Broker] = {}
        self._unreadable_brokers = Unreadable()
        self._topic_answers: dict[str, Answer] = {}
        self._config_answers: dict[str, Answer] = {}
        self._config_names: set[str] = set()
        self._deleting: set[str] = set()
        self._topics: dict[str, TopicState] = {}
        self._tally = TopicTally()
        """The release evidence's counts over ``_topics``, changed with it (``_keep_topic``)."""
        self._unreadable: dict[str, str] = {}
        self._orphans: dict[str, int] = {}
        """Config znodes without a topic znode (name -> version), kept up to date topic by topic: a refresh
        after a write costs what the write touched, not what the cluster holds."""
        self._state: ClusterState | None = None
        client.add_listener(self._on_connection_state)

    # -- public -------------------------------------------------------------------------------------------------

    def state(self, *, deadline: float | Patience | None = None) -> ClusterState:
        """The current cluster: what changed since the last call is re-read first, within ``deadline``."""
        zk = bounded(self._client, deadline if deadline is not None else self._deadline)
        with self._refresh_lock:
            with self._marks_lock:
                stale, self._stale = self._stale, _Stale()
                self._changed.clear()
            attempt = 1
            while stale or self._state is None:
                zk.patience.restart()
                try:
                    self._refresh(zk, stale)
                    break
                except AnswerLostError:
                    # Half a refresh may be applied: only a whole re-read is sure to be right again.
                    stale = _Stale(everything=True)
                    self._state = None
                    if attempt >= READ_ATTEMPTS or zk.patience.expired or client_gave_up(self._client):
                        self._mark(everything=True)
                        raise zk.unavailable("reading the cluster") from None
                    attempt += 1
            assert self._state is not None
            return self._state

    def stage_may_have_moved(self) -> bool:
        """Without blocking: whether a watch saw ``/controller``, ``/migration`` or the registered brokers
        change (or the session come back) since the last ``state()``: what a migration's stage is read from."""
        with self._marks_lock:
            return self._stale.everything or self._stale.controller or self._stale.brokers

    def wait_for_change(self, timeout: float) -> bool:
        """Block until a watch reports a change (True) or ``timeout`` seconds pass (False)."""
        return self._changed.wait(timeout)

    def close(self) -> None:
        self._closed = True
        self._client.remove_listener(self._on_connection_state)

    # -- marking (kazoo's threads) ------------------------------------------------------------------------------

    def _mark(self, **changes: Any) -> None:
        if self._closed:
            return
        with self._marks_lock:
            for name, value in changes.items():
                if isinstance(value, str):
                    getattr(self._stale, name).add(value)
                else:
                    setattr(self._stale, name, True)
            self._changed.set()

    def _on_connection_state(self, state: str) -> bool | None:
        """Watches die with the connection: once it is back, everything must be re-read and re-armed."""
        if state in (KazooState.SUSPENDED, KazooState.LOST):
            self._was_disconnected = True
        elif state == KazooState.CONNECTED and self._was_disconnected:
            self._was_disconnected = False
            self._mark(everything=True)
        return None

    def _lost_watch(self, event: WatchedEvent) -> bool:
        """kazoo fires every pending watch with type NONE when the connection is suspended or the session reset."""
        if event.type == EventType.NONE or event.path is None:
            self._mark(everything=True)
            return True
        return False

    def _on_brokers(self, event: WatchedEvent) -> None:
        if not self._lost_watch(event):
            self._mark(brokers=True)

    def _on_topic_listing(self, event: WatchedEvent) -> None:
        if not self._lost_watch(event):
            self._mark(topic_listing=True)

    def _on_config_listing(self, event: WatchedEvent) -> None:
        if not self._lost_watch(event):
            self._mark(config_listing=True)

    def _on_topic(self, event: WatchedEvent) -> None:
        if not self._lost_watch(event):
            self._mark(topics=event.path.rsplit("/", 1)[-1])

    def _on_config(self, event: WatchedEvent) -> None:
        if not self._lost_watch(event):
            self._mark(configs=event.path.rsplit("/", 1)[-1])

    def _on_deletions(self, event: WatchedEvent) -> None:
        if not self._lost_watch(event):
            self._mark(deletions=True)

    def _on_reassignment(self, event: WatchedEvent) -> None:
        if not self._lost_watch(event):
            self._mark(reassignment=True)

    def _on_controller(self, event: WatchedEvent) -> None:
        if not self._lost_watch(event):
            self._mark(controller=True)

    # -- refreshing (the caller's thread) -----------------------------------------------------------------------

    def _refresh(self, client: BoundedClient, stale: _Stale) -> None:
        everything = stale.everything or self._state is None
        listings: dict[str, Pending[list[str]]] = {}
        if everything or stale.brokers:
            listings["brokers"] = read_children(client, BrokerIdsZNode.path, self._on_brokers)
        if everything or stale.topic_listing:
            listings["topics"] = read_children(client, TopicsZNode.path, self._on_topic_listing)
        if everything or stale.config_listing:
            listings["configs"] = read_children(client, TopicConfigsZNode.path, self._on_config_listing)
        if everything or stale.deletions:
            listings["deleting"] = read_children(client, DeleteTopicsZNode.path, self._on_deletions)
        singles = self._read_singles(client, everything, stale)
        listed = {name: pending.value() or [] for name, pending in listings.items()}

        topics_to_read, configs_to_read = self._what_to_read(everything, stale, listed)
        unreadable_brokers = Unreadable()
        broker_reads = {
            b: read_data(client, BrokerIdZNode.path(b))
            for b in broker_ids_of(listed.get("brokers", []), unreadable_brokers)
        }
        windows = self._read_in_windows(client, topics_to_read, configs_to_read)
        first_window = next(windows, None)

        if "brokers" in listed:
            answers = {b: read.value() for b, read in broker_reads.items()}
            self._brokers = decode_brokers(answers, unreadable_brokers)
            self._unreadable_brokers = unreadable_brokers
        deleting, reassigning = self._deleting, self._facts.reassigning
        if "deleting" in listed:
            self._deleting = set(listed["deleting"])
        self._apply_singles(singles)
        changed: set[str] = set()
        window = first_window
        while window is not None:
            topic_reads, config_reads = window
            window = next(windows, None)  # the next window is in flight while this one is applied
            changed |= self._apply_topic_reads(topic_reads) | self._apply_config_reads(client, config_reads)
        if everything:
            changed |= self._topic_answers.keys()
        else:  # only the topics whose marker or reassignment came or went: a deletion costs one topic, not all
            changed |= (deleting ^ self._deleting) | (reassigning ^ self._facts.reassigning)
        self._rebuild(changed)

    def _read_in_windows(
        self, client: BoundedClient, topics: set[str], configs: set[str]
    ) -> Iterator[tuple[dict[str, Pending[Answer]], dict[str, Pending[Answer]]]]:
        """The topic and config reads, issued ``READ_WINDOW`` at a time as the caller asks for the next window.

        kazoo's answer to a read weighs about 2 KB until it is applied, so a first read of 50,000 topics issued
        at once held 100,000 of them (near 200 MB) at the peak of a restart. The caller applies a window while
        the next one is in flight, so ZooKeeper always has reads to answer and at most two windows are held."""
        wanted = itertools.chain(((t, True) for t in topics), ((t, False) for t in configs))
        while window := list(itertools.islice(wanted, READ_WINDOW)):
            topic_reads: dict[str, Pending[Answer]] = {}
            config_reads: dict[str, Pending[Answer]] = {}
            for topic, is_topic in window:
                if is_topic:
                    topic_reads[topic] = read_data(client, TopicZNode.path(topic), self._on_topic)
                else:
                    config_reads[topic] = read_data(client, TopicConfigZNode.path(topic), self._on_config)
            yield topic_reads, config_reads

    def _read_singles(
        self, client: BoundedClient, everything: bool, stale: _Stale
    ) -> dict[str, tuple[Pending[Any] | None, Pending[Any]]]:
        """The cluster-wide znodes to re-read, each with an exists-watch (it also fires on creation) where a
        change matters: a reassignment, a new controller, a migration to KRaft starting."""
        watched = {
            ReassignPartitionsZNode.path: (everything or stale.reassignment, self._on_reassignment),
            ControllerZNode.path: (everything or stale.controller, self._on_controller),
            MigrationZNode.path: (everything or stale.controller, self._on_controller),
        }
        singles: dict[str, tuple[Pending[Any] | None, Pending[Any]]] = {}
        for path in SINGLE_ZNODES:
            wanted, watch = watched.get(path, (everything, None))
            if wanted:
                exists = read_exists(client, path, watch) if watch is not None else None
                singles[path] = (exists, read_data(client, path))
        return singles

    def _apply_singles(self, singles: dict[str, tuple[Pending[Any] | None, Pending[Any]]]) -> None:
        for path, (exists, data) in singles.items():
            if exists is not None:
                exists.value()  # arms the watch
            self._single_answers[path] = data.value()
        self._unreadable_singles = Unreadable()
        self._facts = decode_singles(self._single_answers, self._unreadable_singles)

    def _what_to_read(
        self, everything: bool, stale: _Stale, listed: dict[str, list[str]]
    ) -> tuple[set[str], set[str]]:
        """Topics and configs to (re-)read: all of them, the ones that changed, and the ones new in a listing."""
        if "topics" in listed:
            current = set(listed["topics"])
            for gone in self._topic_answers.keys() - current:
                self._forget_topic(gone)
            new_topics = current - self._topic_answers.keys()
        else:
            current, new_topics = None, set()
        new_configs: set[str] = set()
        if "configs" in listed:
            self._config_names = set(listed["configs"])
            new_configs = self._config_names - self._config_answers.keys()
        if everything:
            topics = current if current is not None else set(self._topic_answers)
        else:
            topics = stale.topics | new_topics
        configs = topics | stale.configs | new_configs
        if everything:
            configs |= self._config_names
        return topics, configs

    def _forget_topic(self, topic: str) -> None:
        """The topic is gone. Its config answer stays: a config left behind is an orphan until its own watch
        reports it deleted."""
        self._topic_answers.pop(topic, None)
        self._keep_topic(topic, None)
        self._unreadable.pop(topic, None)
        self._recheck_orphan(topic)

    def _recheck_orphan(self, topic: str) -> None:
        config = self._config_answers.get(topic)
        if config is not None and topic not in self._topic_answers:
            self._orphans[topic] = config[1].version
        else:
            self._orphans.pop(topic, None)

    def _apply_topic_reads(self, reads: dict[str, Pending[Answer]]) -> set[str]:
        for topic, pending in reads.items():
            answer = pending.value()
            if answer is None:
                self._forget_topic(topic)
            else:
                self._topic_answers[topic] = _kept(answer)
        return set(reads)

    def _apply_config_reads(self, client: BoundedClient, reads: dict[str, Pending[Answer]]) -> set[str]:
        """A get on a missing znode leaves no watch: watch its creation with exists instead."""
        missing: dict[str, Pending[Any]] = {}
        for topic, pending in reads.items():
            answer = pending.value()
            if answer is None:
                self._config_answers.pop(topic, None)
                missing[topic] = read_exists(client, TopicConfigZNode.path(topic), self._on_config)
            else:
                self._config_answers[topic] = _kept(answer)
        for topic, pending in missing.items():
            if pending.value() is not None:  # created meanwhile: its watch will make the next state() read it
                self._mark(configs=topic)
        return set(reads)

    def _keep_topic(self, topic: str, state: TopicState | None) -> None:
        """The topic's state from now on (None: gone or unreadable), counted in the tally."""
        before = self._topics.pop(topic, None)
        if before is not None:
            self._tally.count(before, -1)
        if state is not None:
            self._topics[topic] = state
            self._tally.count(state, 1)

    def _rebuild(self, changed: set[str]) -> None:
        for topic in changed:
            self._recheck_orphan(topic)
            answer = self._topic_answers.get(topic)
            if answer is None:
                continue
            try:
                state = topic_state(
                    topic,
                    answer,
                    self._config_answers.get(topic),
                    topic in self._deleting,
                    topic in self._facts.reassigning,
                    self._facts.requested.get(topic),
                )
                self._keep_topic(topic, state)
                self._unreadable.pop(topic, None)
            except ZnodeFormatError as error:
                self._keep_topic(topic, None)
                self._unreadable[topic] = str(error)
        registered = len(self._brokers) + len(self._unreadable_brokers)
        self._state = ClusterState(
            cluster_id=self._facts.cluster_id,
            brokers=dict(self._brokers),
            topics=dict(self._topics),
            controller=self._facts.controller,
            orphan_configs=dict(self._orphans),
            marked_for_deletion=frozenset(self._deleting),
            unreadable_topics=dict(self._unreadable),
            unreadable_znodes=dict(sorted({**self._unreadable_brokers, **self._unreadable_singles}.items())),
            kraft_migration=self._facts.kraft_migration,
            kraft_migration_stage=migration_stage_of(self._facts, registered),
            release_evidence=release_evidence_from(self._brokers, self._tally, self._facts),
            migration=(stage := stage_of(self._facts, registered)),
            writer=choose_writer(stage, zookeeper=True, brokers=False),
        )
