"""How the operator holds a Kafka cluster for as long as its KafkaCluster lives: a link, opened here
(``open_link``) as every face's way in is. A kazoo session with its watched view (ZooKeeper), an Admin client on
the brokers (a KRaft cluster), or both for a cluster migrating to KRaft (``MigratingLink``: the stage decides which
one is written, ``access.staged``). Each gives the operator's handle of the cluster the engine's store, the
cluster's state, a targeted read, whether the link is up, and when it must be replaced; everything else about a
cluster (its thread, batches, policy, status) is the handle's and the same for all.

All methods but ``alive`` block: the handle calls them in the cluster's own thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from typing import Protocol

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from topic_operator.access.interface import ClusterStore, ClusterUnavailableError
from topic_operator.access.staged import StagedStore, staged_writer
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.errors import AdminClientError
from topic_operator.admin.store import AdminStore, open_store
from topic_operator.kafka.kraft_migration import Writer, WriterChoice
from topic_operator.model import ClusterState
from topic_operator.zookeeper.bounded import client_gave_up
from topic_operator.zookeeper.connection import close_client, open_client
from topic_operator.zookeeper.settings import ZooKeeperSettings
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.store import ZooKeeperStore
from topic_operator.zookeeper.watched import WatchedCluster
from topic_operator.zookeeper.writer import ZooKeeperWriter

__all__ = [
    "PRESENT_WAIT",
    "AdminLink",
    "ClusterLink",
    "MigratingLink",
    "ZooKeeperLink",
    "open_admin_link",
    "open_link",
]

PRESENT_WAIT = 5.0
"""The most seconds a read after a write waits for the brokers' metadata to show what was written."""


class ClusterLink(Protocol):
    store: ClusterStore
    address: str
    """What messages name the cluster by: its connect string, or its bootstrap servers."""

    @property
    def alive(self) -> bool: ...

    @property
    def connection(self) -> str:
        """The connection ``alive`` is about, for messages: what is lost when it is False."""
        ...

    def needs_new_session(self, now: float, busy: bool) -> str | None: ...

    def check(self) -> ClusterState: ...

    def state(self) -> ClusterState: ...

    def state_for(self, topics: Collection[str]) -> ClusterState: ...

    def read(self, topics: Collection[str], *, present: Collection[str] = ()) -> ClusterState: ...

    @property
    def polled(self) -> bool:
        """Whether only a read tells of a change made behind the operator's back (the writes go through the
        brokers, whose Admin protocol has no watch): the cluster's drift check then runs every
        ``kraft_poll_interval``."""
        ...

    def stage_may_have_moved(self) -> bool:
        """Without blocking: whether what tells the migration's stage may have changed since the last state."""
        ...

    def writer_now(self) -> WriterChoice | None:
        """The path changes would take now, from what tells the stage alone (None: no stage to tell)."""
        ...

    def stop_listening(self) -> None: ...

    def close(self) -> None: ...


class ZooKeeperLink:
    """A kazoo session, the watched view of the cluster, and the writer that asks ``may_write`` first."""

    def __init__(
        self,
        client: KazooClient,
        address: str,
        *,
        deadline: float,
        session_timeout: float,
        may_write: Callable[[], bool] | None,
    ) -> None:
        self.client = client
        self.address = address
        self.deadline = deadline
        self.session_timeout = session_timeout
        self.watched = WatchedCluster(client, deadline=deadline)
        writer = ZooKeeperWriter(client, deadline=deadline, may_write=may_write)
        self.store: ClusterStore = ZooKeeperStore(client, writer)
        self.disconnected_since: float | None = None
        """When kazoo last reported the connection SUSPENDED or LOST (monotonic), None while connected. Written
        by kazoo's listener thread, read by the event loop: one float, replaced whole."""
        client.add_listener(self._on_connection_state)

    connection = "ZooKeeper connection"

    @property
    def alive(self) -> bool:
        """A ZooKeeper session is held right now (kazoo reconnects by itself during short outages, but never once
        its connection thread has given up: such a handle is replaced by the cluster's session keeper)."""
        return bool(self.client.connected) and not client_gave_up(self.client)

    def _on_connection_state(self, state: str) -> None:
        if state == KazooState.CONNECTED:
            self.disconnected_since = None
        elif self.disconnected_since is None:
            self.disconnected_since = time.monotonic()

    def needs_new_session(self, now: float, busy: bool) -> str | None:
        """kazoo will never reconnect once its connection thread has given up (retry policy spent, authentication
        refused). And a client disconnected for longer than its session timeout has lost its session anyway
        (the servers expired it), yet may never get back: a server restarted on a fresh data directory refuses
        every client that has seen a later zxid than its own, and kazoo keeps offering the old one. A batch in
        flight (``busy``) keeps its session until it ends: it rides out outages up to its deadline."""
        if client_gave_up(self.client):
            return f"kazoo gave up reconnecting ({self.client.client_state})"
        since = self.disconnected_since
        if since is None or self.client.connected:
            return None
        down = now - since
        if down > self.session_timeout and not busy:
            return (
                f"disconnected for {down:.0f} s, longer than the session timeout ({self.session_timeout:g} s)"
            )
        return None

    def check(self) -> ClusterState:
        """Refuse a path that is not a Kafka cluster, then read (and watch) the whole cluster."""
        ZooKeeperWriter(self.client, deadline=self.deadline).require_kafka_cluster()
        return self.watched.state()

    def state(self) -> ClusterState:
        """The cluster as the watches last saw it; re-reads only what changed."""
        return self.watched.state()

    def state_for(self, topics: Collection[str]) -> ClusterState:
        """The watched view: every topic is in it at no cost."""
        return self.watched.state()

    def read(self, topics: Collection[str], *, present: Collection[str] = ()) -> ClusterState:
        """Just these topics, read now: a view whose watches may lag must not decide what was written. A znode
        written is there to read at once: ``present`` needs no wait."""
        return read_cluster(self.client, topics=topics, deadline=self.deadline)

    polled = False

    def stage_may_have_moved(self) -> bool:
        return self.watched.stage_may_have_moved()

    def writer_now(self) -> WriterChoice | None:
        return self.watched.state().writer

    def stop_listening(self) -> None:
        self.client.remove_listener(self._on_connection_state)
        self.watched.close()

    def close(self) -> None:
        close_client(self.client)


class AdminLink:
    """An Admin client on the brokers. No watch exists in the Admin protocol, so each state is read whole (four
    requests, whatever the number of topics). kafka-python reconnects to brokers by itself; a link whose reads
    keep failing is replaced (a new bootstrap, with the Secrets read again) as soon as no batch is running."""

    def __init__(self, store: AdminStore) -> None:
        self.store: ClusterStore = store
        self._admin_store = store
        self.address = store.settings.servers_text
        self._failing_since: float | None = None
        self._why = ""
        self._lock = threading.Lock()

    connection = "connection to the brokers"

    @property
    def alive(self) -> bool:
        return self._failing_since is None

    def needs_new_session(self, now: float, busy: bool) -> str | None:
        since = self._failing_since
        if since is None or busy:
            return None
        return f"the brokers have not answered for {now - since:.0f} s ({self._why})"

    def check(self) -> ClusterState:
        return self.state()

    def state(self) -> ClusterState:
        return self._reading(lambda: self.store.read_cluster())

    def state_for(self, topics: Collection[str]) -> ClusterState:
        """The whole cluster with only ``topics``' overrides described: a batch plans only its own topics, and
        describing every topic's configs is most of a whole read."""
        return self._reading(lambda: self.store.read_cluster(configs_of=topics))

    def read(self, topics: Collection[str], *, present: Collection[str] = ()) -> ClusterState:
        """Just these topics, read now. The broker answering may not have the metadata of a topic just written
        yet (each broker applies the controller's records at its own pace), so while one of ``present`` is
        missing or has no id the read is asked again, for at most ``PRESENT_WAIT`` seconds."""
        give_up = time.monotonic() + PRESENT_WAIT
        pause = 0.01
        while True:
            state = self._reading(lambda: self.store.read_cluster(topics=topics))
            missing = [t for t in present if t not in state.topics or state.topics[t].topic_id is None]
            if not missing or time.monotonic() >= give_up:
                return state
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def _reading(self, read: _Read) -> ClusterState:
        try:
            state = read()
        except (ClusterUnavailableError, AdminClientError) as error:
            with self._lock:
                if self._failing_since is None:
                    self._failing_since = time.monotonic()
                self._why = str(error)
            raise
        with self._lock:
            self._failing_since = None
        return state

    polled = True

    def stage_may_have_moved(self) -> bool:
        return False  # reached through its brokers alone: always KRaft

    def writer_now(self) -> WriterChoice | None:
        return None

    def stop_listening(self) -> None:
        return None

    def close(self) -> None:
        self._admin_store.close()


class MigratingLink:
    """Both links of a cluster declared with its ZooKeeper and its brokers. Each state is ZooKeeper's watched
    view while ZooKeeper writes (or nothing does), and the brokers' once they write, told the stage from that
    view; the store (``StagedStore``) checks the stage again before each write."""

    def __init__(self, zookeeper: ZooKeeperLink, brokers: AdminLink) -> None:
        self.zookeeper = zookeeper
        self.brokers = brokers
        self.staged = StagedStore(
            zookeeper.store,
            brokers.store,
            zookeeper_address=zookeeper.address,
            brokers_address=brokers.address,
        )
        self.store: ClusterStore = self.staged
        self.address = f"{zookeeper.address} (brokers {brokers.address})"

    @property
    def connection(self) -> str:
        return self.zookeeper.connection if not self.zookeeper.alive else self.brokers.connection

    @property
    def alive(self) -> bool:
        """ZooKeeper is always read; the brokers count while they are the writer."""
        choice = self.staged.choice
        writing_through_brokers = choice is not None and choice.writer is Writer.ADMIN_PROTOCOL
        return self.zookeeper.alive and (self.brokers.alive or not writing_through_brokers)

    def needs_new_session(self, now: float, busy: bool) -> str | None:
        why = self.zookeeper.needs_new_session(now, busy)
        return why if why is not None else self.brokers.needs_new_session(now, busy)

    def check(self) -> ClusterState:
        """ZooKeeper's checks, then that both reach the same cluster, then the state."""
        zookeeper = self.zookeeper.check()
        self.staged.check_same_cluster(zookeeper)
        return self._staged(zookeeper, self.brokers.state)

    def state(self) -> ClusterState:
        return self._staged(self.zookeeper.state(), self.brokers.state)

    def state_for(self, topics: Collection[str]) -> ClusterState:
        return self._staged(self.zookeeper.state(), lambda: self.brokers.state_for(topics))

    def read(self, topics: Collection[str], *, present: Collection[str] = ()) -> ClusterState:
        zookeeper = self.zookeeper.read(topics)
        return self._staged(zookeeper, lambda: self.brokers.read(topics, present=present))

    def _staged(self, zookeeper: ClusterState, brokers: _Read) -> ClusterState:
        self.staged.check_same_cluster(zookeeper)
        if self.staged.planned(zookeeper).writer is not Writer.ADMIN_PROTOCOL:
            return self.staged.staged(zookeeper)
        try:
            state = brokers()
        except (ClusterUnavailableError, AdminClientError) as error:
            raise self.staged.brokers_failed(error) from error
        return self.staged.on_the_brokers(state, zookeeper)

    @property
    def polled(self) -> bool:
        choice = self.staged.choice
        return choice is not None and choice.writer is Writer.ADMIN_PROTOCOL

    def stage_may_have_moved(self) -> bool:
        return self.zookeeper.stage_may_have_moved()

    def writer_now(self) -> WriterChoice | None:
        """From ZooKeeper's watched view alone, leaving the writer plans are made for as it is."""
        return staged_writer(self.zookeeper.watched.state())

    def stop_listening(self) -> None:
        self.zookeeper.stop_listening()
        self.brokers.stop_listening()

    def close(self) -> None:
        try:
            self.zookeeper.close()
        finally:
            self.brokers.close()


class _Read(Protocol):
    def __call__(self) -> ClusterState: ...


def open_admin_link(
    settings: AdminSettings,
    *,
    deadline: float,
    bootstrap_timeout: float,
    may_write: Callable[[], bool] | None,
    stopping: Callable[[], bool],
) -> AdminLink:
    """An ``AdminLink`` whose bootstrap succeeded. kafka-python's bootstrap cannot be interrupted and tries for its
    whole time-out even when every connection is refused, so it runs in a daemon thread of its own: the cluster's
    thread waits for it and gives up as soon as the operator is ``stopping``, which then exits at once, not after
    the bootstrap's time-out (a client that still comes up after that is closed by the same thread)."""
    opened: list[AdminStore] = []
    failed: list[BaseException] = []
    done = threading.Event()

    def bootstrap() -> None:
        try:
            store = open_store(
                settings, deadline=deadline, bootstrap_timeout=bootstrap_timeout, may_write=may_write
            )
        except BaseException as error:  # handed to the waiting thread, which raises it
            failed.append(error)
        else:
            if stopping():
                store.close()
            else:
                opened.append(store)
        finally:
            done.set()

    threading.Thread(target=bootstrap, name=f"kto-bootstrap-{settings.client_id}", daemon=True).start()
    while not done.wait(0.2):
        if stopping():
            raise ClusterUnavailableError("the operator is stopping: no new session is opened")
    if failed:
        raise failed[0]
    if not opened:
        raise ClusterUnavailableError("the operator is stopping: no new session is opened")
    return AdminLink(opened[0])


def open_link(
    settings: ZooKeeperSettings | AdminSettings,
    brokers: AdminSettings | None,
    *,
    zookeeper_address: str,
    deadline: float,
    bootstrap_timeout: float,
    may_write: Callable[[], bool] | None,
    stopping: Callable[[], bool],
) -> ClusterLink:
    """Blocking. A new link to a cluster: an Admin client whose bootstrap succeeded for ``AdminSettings``; a kazoo
    session for ``ZooKeeperSettings`` (``zookeeper_address`` names it), with an Admin client beside it when the
    cluster also declares its ``brokers`` (a ``MigratingLink``). ``deadline`` bounds every request, ``may_write``
    is asked before each write (the leader Lease held), and ``stopping`` says the operator is stopping, which ends
    a bootstrap under way."""

    def admin_link(on: AdminSettings) -> AdminLink:
        return open_admin_link(
            on, deadline=deadline, bootstrap_timeout=bootstrap_timeout, may_write=may_write, stopping=stopping
        )

    if isinstance(settings, AdminSettings):
        return admin_link(settings)
    zookeeper = ZooKeeperLink(
        open_client(settings),
        zookeeper_address,
        deadline=deadline,
        session_timeout=settings.session_timeout,
        may_write=may_write,
    )
    if brokers is None:
        return zookeeper
    try:
        return MigratingLink(zookeeper, admin_link(brokers))
    except BaseException:
        zookeeper.stop_listening()
        zookeeper.close()
        raise
