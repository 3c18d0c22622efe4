"""Read a whole Kafka cluster from ZooKeeper in three rounds of requests that are all in flight at once.

One round trip per znode would make 10,000 topics cost 20,000 sequential round trips. Instead each round is
issued before any answer is awaited: the listings, then every broker, topic and config znode (batched through
multiRead where the server has it, see ``pipelined.read_many``), then (only when asked) every partition state.

The read is bounded by a deadline (``bounded.Patience``): if the connection drops under it, the whole read starts
again once ZooKeeper is back (reads have no effects, and a snapshot must be of one moment), and if ZooKeeper
stays away past the deadline, ``ZooKeeperUnavailableError`` says so.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from kazoo.client import KazooClient

from topic_operator.model import Broker, ClusterState, PartitionState, TopicState
from topic_operator.zookeeper.bounded import (
    DEFAULT_DEADLINE,
    AnswerLostError,
    BoundedClient,
    Patience,
    client_gave_up,
)
from topic_operator.zookeeper.pipelined import read_children, read_data, read_many
from topic_operator.zookeeper.znodes import (
    BrokerIdsZNode,
    BrokerIdZNode,
    ClusterIdZNode,
    ControllerZNode,
    DeleteTopicsZNode,
    PartitionStateZNode,
    ReassignPartitionsZNode,
    TopicConfigsZNode,
    TopicConfigZNode,
    TopicsZNode,
    TopicZNode,
    ZnodeFormatError,
)

__all__ = ["READ_ATTEMPTS", "bounded", "decode_brokers", "decode_reassignment", "read_cluster", "topic_state"]

READ_ATTEMPTS = 5
"""Whole reads started before an ensemble that keeps dropping the connection (each time after answering again)
is reported unavailable: each attempt is bounded by the deadline, so the read as a whole is too."""


def bounded(client: KazooClient, deadline: float | Patience) -> BoundedClient:
    """``client`` behind a deadline: seconds, or a ``Patience`` shared with the other steps of one command."""
    return BoundedClient(client, deadline if isinstance(deadline, Patience) else Patience(deadline))


def read_cluster(
    client: KazooClient,
    *,
    partition_states: bool = False,
    topics: Collection[str] | None = None,
    deadline: float | Patience = DEFAULT_DEADLINE,
) -> ClusterState:
    """The cluster as ZooKeeper holds it now: brokers, controller, cluster id, and every topic (or only
    ``topics``) with assignment, ``topic_id``, config overrides, znode versions, deletion marks and
    reassignments; with ``partition_states``, each partition's leader and ISR too.

    ``client`` must be started and rooted at the cluster's chroot. ``deadline``: how long ZooKeeper may keep
    the read waiting (``ZooKeeperUnavailableError`` after that).
    """
    zk = bounded(client, deadline)
    attempt = 1
    while True:
        zk.patience.restart()
        try:
            return _read_once(zk, partition_states, topics)
        except AnswerLostError:
            if attempt >= READ_ATTEMPTS or zk.patience.expired or client_gave_up(client):
                raise zk.unavailable("reading the cluster") from None
            attempt += 1


def _read_once(zk: BoundedClient, partition_states: bool, topics: Collection[str] | None) -> ClusterState:
    listings = {
        "brokers": read_children(zk, BrokerIdsZNode.path),
        "topics": read_children(zk, TopicsZNode.path),
        "configs": read_children(zk, TopicConfigsZNode.path),
        "deleting": read_children(zk, DeleteTopicsZNode.path),
    }
    cluster_id = read_data(zk, ClusterIdZNode.path)
    controller = read_data(zk, ControllerZNode.path)
    reassignment = read_data(zk, ReassignPartitionsZNode.path)
    listed = {name: read.value() or [] for name, read in listings.items()}

    topic_names = sorted(listed["topics"] if topics is None else set(listed["topics"]) & set(topics))
    config_names = sorted(set(listed["configs"]) if topics is None else set(listed["configs"]) & set(topics))
    broker_ids = sorted(int(b) for b in listed["brokers"] if b.isdigit())
    answers = read_many(
        zk,
        [
            *(BrokerIdZNode.path(b) for b in broker_ids),
            *(TopicZNode.path(t) for t in topic_names),
            *(TopicConfigZNode.path(t) for t in config_names),
        ],
    )
    brokers = decode_brokers({b: answers[BrokerIdZNode.path(b)] for b in broker_ids})
    deleting = set(listed["deleting"])
    reassigning = decode_reassignment(reassignment.value())
    unreadable: dict[str, str] = {}
    states: dict[str, TopicState] = {}
    for topic in topic_names:
        answer = answers[TopicZNode.path(topic)]
        if answer is None:  # deleted between the listing and the read
            continue
        config_answer = answers.get(TopicConfigZNode.path(topic))
        try:
            states[topic] = topic_state(topic, answer, config_answer, topic in deleting, topic in reassigning)
        except ZnodeFormatError as error:
            unreadable[topic] = str(error)
    listed_topics = set(topic_names)
    orphans = {
        t: answer[1].version
        for t in config_names
        if t not in listed_topics and (answer := answers[TopicConfigZNode.path(t)]) is not None
    }
    if partition_states:
        states = _with_partition_states(zk, states)
    cluster_answer = cluster_id.value()
    controller_answer = controller.value()
    return ClusterState(
        cluster_id=ClusterIdZNode.decode(cluster_answer[0]) if cluster_answer else None,
        brokers=brokers,
        topics=states,
        controller=ControllerZNode.decode(controller_answer[0]).broker_id if controller_answer else None,
        orphan_configs=orphans,
        marked_for_deletion=frozenset(deleting),
        unreadable_topics=unreadable,
    )


def decode_brokers(answers: Mapping[int, tuple[bytes, Any] | None]) -> dict[int, Broker]:
    """A broker whose registration vanished between listing and read has gone away: skip it, as Kafka does."""
    brokers: dict[int, Broker] = {}
    for broker_id in sorted(answers):
        answer = answers[broker_id]
        if answer is None:
            continue
        registration = BrokerIdZNode.decode(broker_id, answer[0])
        brokers[broker_id] = Broker(broker_id, registration.rack, registration.endpoints, answer[1].czxid)
    return brokers


def decode_reassignment(answer: tuple[bytes, Any] | None) -> set[str]:
    if answer is None:
        return set()
    return set(ReassignPartitionsZNode.decode(answer[0]))


def topic_state(
    topic: str,
    answer: tuple[bytes, Any],
    config_answer: tuple[bytes, Any] | None,
    marked_for_deletion: bool,
    pending_reassignment: bool,
) -> TopicState:
    data = TopicZNode.decode(topic, answer[0])
    return TopicState(
        name=topic,
        partitions=data.partitions,
        topic_id=data.topic_id,
        adding_replicas=data.adding or {},
        removing_replicas=data.removing or {},
        config=TopicConfigZNode.decode(topic, config_answer[0]) if config_answer else {},
        topic_znode_version=answer[1].version,
        config_znode_version=config_answer[1].version if config_answer else None,
        marked_for_deletion=marked_for_deletion,
        pending_reassignment=pending_reassignment,
    )


def _with_partition_states(zk: BoundedClient, states: dict[str, TopicState]) -> dict[str, TopicState]:
    """The controller creates state znodes shortly after a topic (§13.5); a partition without one has none yet."""
    paths = {
        (topic, p): PartitionStateZNode.path(topic, p)
        for topic, state in states.items()
        for p in state.partitions
    }
    answers = read_many(zk, list(paths.values()))
    by_topic: dict[str, dict[int, PartitionState]] = {topic: {} for topic in states}
    for (topic, partition), path in paths.items():
        answer = answers[path]
        if answer is not None:
            by_topic[topic][partition] = PartitionStateZNode.decode(
                topic, partition, answer[0], answer[1].version
            )
    return {topic: replace(state, partition_states=by_topic[topic]) for topic, state in states.items()}
