"""Make a ZooKeeper path look to the engine exactly as a running Kafka cluster would, without running Kafka.

For tests and ``kto demo``: the paths a broker creates at startup, ``/cluster/id``, broker registrations
written the way a 2.7+ broker writes them (ephemeral, version-5 JSON, so they vanish with the session that made
them), and, only when asked, what a controller does: the partition states it writes for new partitions
(``bring_partitions_online``) and the partition reassignments it carries out (``carry_out_reassignments``).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from topic_operator.kafka.releases import (
    BROKER_REGISTRATION_V5,
    CONTROLLER_ZNODE_V2,
    NEWEST_KAFKA,
    TOPIC_ID,
    KafkaVersion,
)
from topic_operator.model import ClusterState
from topic_operator.zookeeper.znodes import (
    BrokerIdsZNode,
    BrokerIdZNode,
    ClusterIdZNode,
    ControllerZNode,
    DeleteTopicZNode,
    PartitionStateZNode,
    ReassignPartitionsZNode,
    TopicsZNode,
    TopicZNode,
    TopicZNodeData,
    ZnodeFormatError,
)

__all__ = [
    "BROKER_STARTUP_PATHS",
    "bootstrap_cluster",
    "bring_partitions_online",
    "carry_out_reassignments",
    "new_topic_id",
    "register_broker",
    "register_brokers",
]

BROKER_STARTUP_PATHS: tuple[str, ...] = (
    "/consumers",
    "/brokers/ids",
    "/brokers/topics",
    "/brokers/seqid",
    "/config/changes",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/config/ips",
    "/admin/delete_topics",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
)
"""What every Kafka broker ensures at startup (semantics §5.9)."""

logger = logging.getLogger(__name__)

Replicas = tuple[int, ...]
TopicPartition = tuple[str, int]


def bootstrap_cluster(client: KazooClient, cluster_id: str) -> None:
    """Create the startup paths and ``/cluster/id`` (create-if-absent, as the first broker does)."""
    for path in BROKER_STARTUP_PATHS:
        client.ensure_path(path)
    with contextlib.suppress(NodeExistsError):
        client.create(ClusterIdZNode.path, ClusterIdZNode.encode(cluster_id), makepath=True)


def register_broker(
    client: KazooClient,
    broker_id: int,
    *,
    rack: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    ephemeral: bool = True,
    kafka_version: KafkaVersion = NEWEST_KAFKA,
) -> None:
    """Register as a broker of release line ``kafka_version`` does (its inter-broker protocol at its own release):
    an ephemeral ``/brokers/ids/<id>`` owned by ``client``'s session, version 5 from 2.7, 4 before. Fault tests
    that kill ZooKeeper for longer than a session lasts register persistent ones (``ephemeral=False``) instead,
    standing for brokers that register again after the outage."""
    payload = BrokerIdZNode.encode(
        broker_id,
        host,
        port if port is not None else 9092 + broker_id,
        rack=rack,
        timestamp_ms=int(time.time() * 1000),
        version=5 if kafka_version >= BROKER_REGISTRATION_V5 else 4,
    )
    client.create(BrokerIdZNode.path(broker_id), payload, ephemeral=ephemeral)


def register_brokers(
    client: KazooClient,
    racks: Sequence[str | None],
    *,
    controller: int | None = 0,
    ephemeral: bool = True,
    kafka_version: KafkaVersion = NEWEST_KAFKA,
) -> None:
    """Brokers ``0..len(racks)-1`` with the given racks, and (optionally) one of them as the controller, each
    registered as a broker of ``kafka_version`` registers (``/controller`` of version 2 from 3.4, 1 before)."""
    for broker_id, rack in enumerate(racks):
        register_broker(client, broker_id, rack=rack, ephemeral=ephemeral, kafka_version=kafka_version)
    if controller is not None:
        client.create(
            ControllerZNode.path,
            ControllerZNode.encode(
                controller, int(time.time() * 1000), version=2 if kafka_version >= CONTROLLER_ZNODE_V2 else 1
            ),
            ephemeral=ephemeral,
        )


def new_topic_id() -> str:
    """Kafka's ``Uuid.randomUuid``: 16 random bytes as URL-safe base64 without padding, never the zero uuid, the
    metadata topic's uuid, or a string starting with '-' (semantics §5.2)."""
    while True:
        raw = secrets.token_bytes(16)
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if int.from_bytes(raw, "big") > 1 and not text.startswith("-"):
            return text


def bring_partitions_online(
    client: KazooClient,
    state: ClusterState,
    controller_epoch: int = 1,
    *,
    kafka_version: KafkaVersion = NEWEST_KAFKA,
) -> int:
    """What the controller of release line ``kafka_version`` does for new topics: from 2.8 give a topic without
    ``topic_id`` one, rewriting its znode at the version read (§9), and write state for partitions without it
    (§5.3): leader = first live replica, ISR = the live replicas in assignment order, leader epoch 0. Returns how
    many partitions it brought online."""
    live = set(state.brokers)
    written = 0
    for topic in state.topics.values():
        if topic.topic_id is None and kafka_version >= TOPIC_ID:
            data = TopicZNodeData(
                topic.partitions, new_topic_id(), topic.adding_replicas, topic.removing_replicas
            )
            client.set(
                TopicZNode.path(topic.name), TopicZNode.encode(data), version=topic.topic_znode_version
            )
        for partition, replicas in topic.partitions.items():
            path = PartitionStateZNode.path(topic.name, partition)
            if client.exists(path) is not None:
                continue
            isr = [b for b in replicas if b in live]
            leader = isr[0] if isr else -1
            client.create(path, PartitionStateZNode.encode(leader, isr, 0, controller_epoch), makepath=True)
            written += 1
    return written


# ---------------------------------------------------------------------------------------------------------------
# Partition reassignment (semantics §14): what a 2.4+ controller (KIP-455) does with /admin/reassign_partitions.


@dataclass(slots=True)
class _TopicBeingMoved:
    """A topic znode as read, changed in memory and written back once per phase at the version read: every
    partition's replica list lives in this one znode, so a write per partition would only add versions."""

    name: str
    version: int
    topic_id: str | None
    partitions: dict[int, Replicas]
    adding: dict[int, Replicas] = field(default_factory=dict)
    removing: dict[int, Replicas] = field(default_factory=dict)
    changed: bool = False

    @classmethod
    def read(cls, client: KazooClient, name: str) -> _TopicBeingMoved | None:
        """None for a topic that is gone or that Kafka could not read: Kafka decodes an unparseable topic znode
        as having no partitions (§5.2), so every reassignment of it is of a partition that does not exist."""
        try:
            data, stat = client.get(TopicZNode.path(name))
            decoded = TopicZNode.decode(name, data)
        except (NoNodeError, ZnodeFormatError):
            return None
        return cls(
            name,
            int(stat.version),
            decoded.topic_id,
            dict(decoded.partitions),
            dict(decoded.adding or {}),
            dict(decoded.removing or {}),
        )

    def in_progress(self) -> set[int]:
        """Partitions being reassigned, whether by an earlier call, the Admin API or a request znode (§14)."""
        return {p for p in self.partitions if self.adding.get(p) or self.removing.get(p)}

    def set_partition(self, partition: int, replicas: Replicas, adding: Replicas, removing: Replicas) -> None:
        """Kafka keeps only partitions with a non-empty list in the adding/removing maps (§5.2)."""
        self.partitions[partition] = replicas
        for entries, value in ((self.adding, adding), (self.removing, removing)):
            if value:
                entries[partition] = value
            else:
                entries.pop(partition, None)
        self.changed = True

    def write(self, client: KazooClient) -> None:
        """Rewrite at the version read, keeping ``topic_id`` and every other partition as they were: a version
        conflict means someone else wrote the topic meanwhile, which a test must hear about, not have
        overwritten."""
        if not self.changed:
            return
        data = TopicZNodeData(self.partitions, self.topic_id, self.adding, self.removing)
        stat = client.set(TopicZNode.path(self.name), TopicZNode.encode(data), version=self.version)
        self.version = int(stat.version)
        self.changed = False


def _read_request(client: KazooClient) -> tuple[dict[str, dict[int, Replicas]], int | None]:
    """The request and its version, or nothing and None when there is none."""
    try:
        data, stat = client.get(ReassignPartitionsZNode.path)
    except NoNodeError:
        return {}, None
    return ReassignPartitionsZNode.decode(data), int(stat.version)


def _read_topics(client: KazooClient) -> dict[str, _TopicBeingMoved]:
    """Every topic, not only the requested ones: partitions left in progress (adding/removing maps) are finished
    too, as the controller resumes them from the topic znodes whether or not a request names them."""
    try:
        names: list[str] = client.get_children(TopicsZNode.path)
    except NoNodeError:
        return {}
    topics = (_TopicBeingMoved.read(client, name) for name in sorted(names))
    return {topic.name: topic for topic in topics if topic is not None}


def _live_brokers(client: KazooClient) -> set[int]:
    """Registered broker ids; a child that is not an id is no broker (brokers register under their id)."""
    try:
        children: list[str] = client.get_children(BrokerIdsZNode.path)
    except NoNodeError:
        return set()
    return {int(child) for child in children if child.isascii() and child.isdigit()}


def _refusal(
    client: KazooClient, topic: _TopicBeingMoved | None, partition: int, target: Replicas
) -> str | None:
    """Why the controller drops a requested partition from the request (None: it does not). Kafka's controller
    answers UNKNOWN_TOPIC_OR_PARTITION for a partition it does not know or of a topic queued for deletion, and
    refuses an empty or duplicated replica list; either way it logs and removes the entry."""
    if topic is None or partition not in topic.partitions:
        return "the partition does not exist"
    if client.exists(DeleteTopicZNode.path(topic.name)) is not None:
        return "the topic is being deleted"
    if not target:
        return "empty replica list"
    if len(set(target)) != len(target):
        return f"duplicate replica ids in the replica list {list(target)}"
    return None


def _start_move(topic: _TopicBeingMoved, partition: int, target: Replicas) -> bool:
    """Phase U of ``onPartitionReassignment``: the replicas become the target followed by the original replicas
    not in it, adding = target - original, removing = original - target. The original set is the replicas
    minus those being added, so a request replacing (or cancelling) one in progress starts from the partition's
    replicas before that one. Returns whether the partition changed."""
    current = topic.partitions[partition]
    adding_now = topic.adding.get(partition, ())
    original = tuple(r for r in current if r not in adding_now)
    replicas = target + tuple(r for r in original if r not in target)
    adding = tuple(r for r in target if r not in original)
    removing = tuple(r for r in original if r not in target)
    if (replicas, adding, removing) == (current, adding_now, topic.removing.get(partition, ())):
        return False
    topic.set_partition(partition, replicas, adding, removing)
    return True


def _elect_in_target(
    client: KazooClient, topic: str, partition: int, target: Replicas, live: set[int], controller_epoch: int
) -> None:
    """Phase B's state change once the new replicas have caught up (here: at once): the removed replicas leave
    the ISR, leaving the live target replicas; the leader stays if it is in the target and alive, else the first
    live target replica leads (-1: none is alive). A new leader or ISR is a new leader epoch, so followers fence
    the old one. Written at the version read, as the controller's conditional update does."""
    isr = tuple(r for r in target if r in live)
    path = PartitionStateZNode.path(topic, partition)
    try:
        data, stat = client.get(path)
    except NoNodeError:  # never brought online: the controller would create it as for a new partition
        client.create(
            path, PartitionStateZNode.encode(isr[0] if isr else -1, isr, 0, controller_epoch), makepath=True
        )
        return
    state = PartitionStateZNode.decode(topic, partition, data, int(stat.version))
    leader = state.leader if state.leader in isr else (isr[0] if isr else -1)
    epoch = state.leader_epoch + (1 if (leader, isr) != (state.leader, state.isr) else 0)
    payload = PartitionStateZNode.encode(
        leader, isr, epoch, controller_epoch, recovering=state.leader_recovery_state == 1
    )
    client.set(path, payload, version=stat.version)


def _remove_from_request(
    client: KazooClient,
    request: Mapping[str, Mapping[int, Replicas]],
    version: int,
    settled: set[TopicPartition],
) -> None:
    """``maybeRemoveFromZkReassignment``: take out the entries dropped or completed; rewrite the request at the
    version read, or delete it when nothing is left, which is what lets the next reassignment be submitted."""
    remaining: dict[str, dict[int, Replicas]] = {}
    for topic, targets in request.items():
        for partition, target in targets.items():
            if (topic, partition) not in settled:
                remaining.setdefault(topic, {})[partition] = target
    if remaining == request:
        return
    if remaining:
        client.set(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode(remaining), version=version)
    else:
        client.delete(ReassignPartitionsZNode.path, version=version)


def carry_out_reassignments(client: KazooClient, *, finish: bool = True, controller_epoch: int = 1) -> int:
    """What Kafka's controller (2.4+, KIP-455, ZooKeeper mode) does with ``/admin/reassign_partitions`` (§14),
    so that a reassignment can be tested end to end without Kafka.

    Phase 1 starts each requested move in the topic znode (full replica set, adding/removing maps); entries for
    partitions that do not exist or whose topic is being deleted, or with an empty or duplicated target, are
    dropped from the request as the controller drops them, and a target the partition already has is simply
    done. With ``finish`` False it
    stops there, leaving the request and the in-progress topic znodes for a test to look at; the next call
    finishes them. Phase 2 takes the new replicas to have caught up: it writes each moving partition's state
    (``_elect_in_target``), shrinks its replicas to the target with the maps cleared, and removes it from the
    request, deleting the request when none is left. Partitions already in progress (an earlier call, or the
    Admin API, which leaves no request) are finished too. Returns how many partitions moved a step: started,
    finished, or both."""
    request, request_version = _read_request(client)
    topics = _read_topics(client)
    moved: set[TopicPartition] = set()
    settled: set[TopicPartition] = set()  # request entries to take out: dropped, already there, or finished
    for name, targets in sorted(request.items()):
        topic = topics.get(name)
        for partition, target in sorted(targets.items()):
            refusal = _refusal(client, topic, partition, target)
            if refusal is not None or topic is None:
                logger.error("Dropping the reassignment of %s-%d to %s: %s", name, partition, target, refusal)
                settled.add((name, partition))
            elif _start_move(topic, partition, target):
                moved.add((name, partition))
            elif partition not in topic.in_progress():
                settled.add((name, partition))  # already where it is asked to be
    for topic in topics.values():
        topic.write(client)
    if finish:
        live = _live_brokers(client)
        for topic in topics.values():
            finishing = topic.in_progress() | {p for t, p in moved if t == topic.name}
            for partition in sorted(finishing):
                removing = topic.removing.get(partition, ())
                target = tuple(r for r in topic.partitions[partition] if r not in removing)
                _elect_in_target(client, topic.name, partition, target, live, controller_epoch)
                topic.set_partition(partition, target, (), ())
                settled.add((topic.name, partition))
                moved.add((topic.name, partition))
            topic.write(client)
    if request_version is not None:
        _remove_from_request(client, request, request_version, settled)
    return len(moved)
