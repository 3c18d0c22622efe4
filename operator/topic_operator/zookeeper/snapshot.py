"""Read a whole Kafka cluster from ZooKeeper in three rounds of requests that are all in flight at once.

One round trip per znode would make 10,000 topics cost 20,000 sequential round trips. Instead each round is
issued before any answer is awaited: the listings, then every broker, topic and config znode (batched through
multiRead where the server has it, see ``pipelined.read_many``), then (only when asked) every partition state.

The read is bounded by a deadline (``bounded.Patience``): if the connection drops under it, the whole read starts
again once ZooKeeper is back (reads have no effects, and a snapshot must be of one moment), and if ZooKeeper
stays away past the deadline, ``ZooKeeperUnavailableError`` says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Final, TypeVar

import orjson
from kazoo.client import KazooClient

from topic_operator.kafka.cluster_release import ReleaseEvidence
from topic_operator.kafka.kraft_migration import (
    MigrationFacts,
    MigrationStage,
    choose_writer,
    migration_stage,
    stage_text,
)
from topic_operator.kafka.topic_names import names_own_znode
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
    ControllerInfo,
    ControllerZNode,
    DeleteTopicsZNode,
    FeatureZNode,
    MigrationState,
    MigrationZNode,
    PartitionStateZNode,
    ReassignPartitionsZNode,
    TopicConfigsZNode,
    TopicConfigZNode,
    TopicsZNode,
    TopicZNode,
    TopicZNodeData,
    ZnodeFormatError,
)
from topic_operator.zookeeper.znodes import _shared as shared_replicas

__all__ = [
    "READ_ATTEMPTS",
    "SINGLE_ZNODES",
    "ClusterFacts",
    "TopicTally",
    "Unreadable",
    "bounded",
    "broker_ids_of",
    "decode_brokers",
    "decode_singles",
    "decode_topic",
    "decode_topic_config",
    "kraft_migration",
    "migration_stage_of",
    "read_cluster",
    "release_evidence_from",
    "release_evidence_of",
    "stage_of",
    "topic_state",
]

T = TypeVar("T")

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

    ``topics`` are read by name, without listing every topic, so that re-reading the few topics a batch wrote
    costs the same in a cluster of 10,000 topics as in one of 10. A name that could point at another znode
    (``names_own_znode``) was never a topic, and is not read.

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
        "deleting": read_children(zk, DeleteTopicsZNode.path),
    }
    if topics is None:
        listings["topics"] = read_children(zk, TopicsZNode.path)
        listings["configs"] = read_children(zk, TopicConfigsZNode.path)
    singles = {path: read_data(zk, path) for path in SINGLE_ZNODES}
    listed = {name: read.value() or [] for name, read in listings.items()}
    unreadable = Unreadable()

    if topics is None:
        topic_names, config_names = sorted(listed["topics"]), sorted(listed["configs"])
    else:  # read by name: listing every topic of a large cluster costs more than the few topics asked for
        topic_names = config_names = sorted({t for t in topics if names_own_znode(t)})
    broker_ids = broker_ids_of(listed["brokers"], unreadable)
    # Each path built once: at 50,000 topics, building them again for every look-up cost a tenth of the read.
    topic_paths = [TopicZNode.path(t) for t in topic_names]
    config_paths = {t: TopicConfigZNode.path(t) for t in config_names}
    answers = read_many(
        zk, [*(BrokerIdZNode.path(b) for b in broker_ids), *topic_paths, *config_paths.values()]
    )
    brokers = decode_brokers({b: answers[BrokerIdZNode.path(b)] for b in broker_ids}, unreadable)
    facts = decode_singles({path: read.value() for path, read in singles.items()}, unreadable)
    deleting = set(listed["deleting"])
    reassigning, requested = facts.reassigning, facts.requested
    unreadable_topics: dict[str, str] = {}
    states: dict[str, TopicState] = {}
    listed_topics: set[str] = set()
    for topic, path in zip(topic_names, topic_paths, strict=True):
        answer = answers[path]
        if answer is None:  # deleted between the listing and the read
            continue
        listed_topics.add(topic)
        config_path = config_paths.get(topic)
        config_answer = answers.get(config_path) if config_path is not None else None
        try:
            states[topic] = topic_state(
                topic,
                answer,
                config_answer,
                topic in deleting,
                topic in reassigning,
                requested.get(topic),
            )
        except ZnodeFormatError as error:
            unreadable_topics[topic] = str(error)
    orphans = {
        t: answer[1].version
        for t, path in config_paths.items()
        if t not in listed_topics and (answer := answers[path]) is not None
    }
    if partition_states:
        states = _with_partition_states(zk, states, unreadable)
    return ClusterState(
        cluster_id=facts.cluster_id,
        brokers=brokers,
        topics=states,
        controller=facts.controller,
        orphan_configs=orphans,
        marked_for_deletion=frozenset(deleting),
        unreadable_topics=unreadable_topics,
        unreadable_znodes=dict(sorted(unreadable.items())),
        kraft_migration=facts.kraft_migration,
        kraft_migration_stage=migration_stage_of(facts, len(broker_ids)),
        release_evidence=release_evidence_of(brokers, states, facts),
        migration=(stage := stage_of(facts, len(broker_ids))),
        writer=choose_writer(stage, zookeeper=True, brokers=False),
    )


class Unreadable(dict[str, str]):
    """Znodes found not in a format Kafka writes while decoding one read: path -> problem."""

    def decode(self, decoder: Callable[[], T]) -> T | None:
        """``decoder()``, or None with the znode and its problem recorded when it raises ``ZnodeFormatError``."""
        try:
            return decoder()
        except ZnodeFormatError as error:
            self[error.path] = error.problem
            return None


SINGLE_ZNODES = (
    ClusterIdZNode.path,
    ControllerZNode.path,
    MigrationZNode.path,
    ReassignPartitionsZNode.path,
    FeatureZNode.path,
)
"""The cluster-wide znodes read with every snapshot, each of which may be absent."""


@dataclass(frozen=True, slots=True)
class ClusterFacts:
    """What the cluster-wide znodes say (``decode_singles``)."""

    cluster_id: str | None
    controller: int | None
    kraft_migration: str | None
    reassigning: frozenset[str]
    requested: Mapping[str, Mapping[int, tuple[int, ...]]] = field(default_factory=dict)
    """The target replicas ``/admin/reassign_partitions`` asks for, by topic and partition."""
    controller_version: int | None = None
    kraft_controller_epoch: int | None = None
    feature_version: int | None = None
    migration_present: bool = False
    migration: MigrationFacts = field(default_factory=MigrationFacts)
    """``/migration`` and ``/controller`` as the migration's stage is read from (brokers not counted yet)."""


def decode_singles(answers: Mapping[str, tuple[bytes, Any] | None], unreadable: Unreadable) -> ClusterFacts:
    """``SINGLE_ZNODES``' answers (None: absent) decoded, each unreadable one recorded in ``unreadable``."""

    def decoded(path: str, decoder: Callable[[bytes], T]) -> T | None:
        answer = answers.get(path)
        return None if answer is None else unreadable.decode(partial(decoder, answer[0]))

    controller = decoded(ControllerZNode.path, ControllerZNode.decode)
    requested = decoded(ReassignPartitionsZNode.path, ReassignPartitionsZNode.decode) or {}
    migration = decoded(MigrationZNode.path, MigrationZNode.decode)
    return ClusterFacts(
        migration=MigrationFacts(
            migration_present=answers.get(MigrationZNode.path) is not None,
            kraft_controller_id=migration.kraft_controller_id if migration else None,
            kraft_controller_epoch=migration.kraft_controller_epoch if migration else None,
            kraft_metadata_offset=migration.kraft_metadata_offset if migration else None,
            kraft_metadata_epoch=migration.kraft_metadata_epoch if migration else None,
            controller_broker=controller.broker_id if controller is not None else None,
            controller_kraft_epoch=controller.kraft_controller_epoch if controller is not None else None,
        ),
        controller_version=controller.version if controller is not None else None,
        kraft_controller_epoch=controller.kraft_controller_epoch if controller is not None else None,
        feature_version=decoded(FeatureZNode.path, FeatureZNode.decode_version),
        migration_present=answers.get(MigrationZNode.path) is not None,
        cluster_id=decoded(ClusterIdZNode.path, ClusterIdZNode.decode),
        controller=controller.broker_id if controller is not None else None,
        kraft_migration=kraft_migration(answers.get(MigrationZNode.path), migration, controller, unreadable),
        reassigning=frozenset(requested),
        requested=requested,
    )


def kraft_migration(
    migration_answer: object,
    migration: MigrationState | None,
    controller: ControllerInfo | None,
    unreadable: Mapping[str, str],
) -> str | None:
    """Why the cluster is (or may be) migrating to KRaft (semantics §15), or None. ``/migration`` exists from the
    start of a migration; a KRaft controller writes ``/controller`` with its ``kraftControllerEpoch`` (ZooKeeper
    controllers write -1). An unreadable ``/migration`` counts: it exists, and only a migration writes it."""
    if migration is not None:
        if migration.kraft_controller_id is None or migration.kraft_controller_id < 0:
            return f"{MigrationZNode.path} exists (no KRaft controller recorded in it yet)"
        return (
            f"{MigrationZNode.path} exists (KRaft controller {migration.kraft_controller_id}, epoch "
            f"{migration.kraft_controller_epoch})"
        )
    if migration_answer is not None:
        return f"{MigrationZNode.path} exists, though unreadable ({unreadable.get(MigrationZNode.path)})"
    if (
        controller is not None
        and controller.kraft_controller_epoch is not None
        and controller.kraft_controller_epoch >= 0
    ):
        return (
            f"{ControllerZNode.path} is held by KRaft controller {controller.broker_id} "
            f"(kraftControllerEpoch {controller.kraft_controller_epoch})"
        )
    return None


def migration_stage_of(facts: ClusterFacts, registered_brokers: int) -> str | None:
    """The migration's stage in words (``kafka.kraft_migration``), None when no migration is under way."""
    migration = replace(facts.migration, registered_brokers=registered_brokers)
    stage = migration_stage(migration)
    return None if stage is None else stage_text(stage, migration)


def stage_of(facts: ClusterFacts, registered_brokers: int) -> MigrationStage | None:
    """The migration's stage, None when no migration is under way."""
    return migration_stage(replace(facts.migration, registered_brokers=registered_brokers))


def release_evidence_of(
    brokers: Mapping[int, Broker], topics: Mapping[str, TopicState], facts: ClusterFacts
) -> ReleaseEvidence:
    """The release-telling facts of one read (``kafka.cluster_release``): topic znode formats and topic ids,
    broker registration versions and features, ``/controller``, ``/feature`` and ``/migration``."""
    tally = TopicTally()
    for topic in topics.values():
        tally.count(topic, 1)
    return release_evidence_from(brokers, tally, facts)


class TopicTally:
    """What the release evidence counts over the topics (each znode format, the topics with an id), kept as
    topics come, change and go, so a view that keeps 50,000 topics does not count them all again at each
    change."""

    def __init__(self) -> None:
        self.formats: Counter[int] = Counter()
        self.with_id = 0

    def count(self, topic: TopicState, sign: int) -> None:
        """Count ``topic`` in (``sign`` 1) or out (-1)."""
        version = topic.format_version or 0
        self.formats[version] += sign
        if not self.formats[version]:
            del self.formats[version]
        if topic.topic_id is not None:
            self.with_id += sign


def release_evidence_from(
    brokers: Mapping[int, Broker], tally: TopicTally, facts: ClusterFacts
) -> ReleaseEvidence:
    """``release_evidence_of`` with the topics already counted."""
    registrations = Counter(
        b.registration_version for b in brokers.values() if b.registration_version is not None
    )
    return ReleaseEvidence(
        topic_znode_versions=tuple(sorted(tally.formats.items())),
        topics_with_id=tally.with_id,
        broker_registration_versions=tuple(sorted(registrations.items())),
        broker_features=tuple(sorted({name for b in brokers.values() for name in b.features})),
        controller_znode_version=facts.controller_version,
        kraft_controller_epoch=facts.kraft_controller_epoch,
        feature_znode_version=facts.feature_version,
        migration_znode=facts.migration_present,
    )


def broker_ids_of(children: Collection[str], unreadable: Unreadable) -> list[int]:
    """Registered broker ids, sorted; a child that is not an id is recorded (Kafka names registrations by id)."""
    ids = []
    for child in children:
        if child.isascii() and child.isdigit():
            ids.append(int(child))
        else:
            unreadable[f"{BrokerIdsZNode.path}/{child}"] = (
                "not a broker id: brokers register under their integer id"
            )
    return sorted(ids)


def decode_brokers(
    answers: Mapping[int, tuple[bytes, Any] | None], unreadable: Unreadable
) -> dict[int, Broker]:
    """A broker whose registration vanished between listing and read has gone away: skip it, as Kafka does. One
    whose registration cannot be read is left out too, and recorded in ``unreadable``: its rack is unknown."""
    brokers: dict[int, Broker] = {}
    for broker_id in sorted(answers):
        answer = answers[broker_id]
        if answer is None:
            continue
        registration = unreadable.decode(partial(BrokerIdZNode.decode, broker_id, answer[0]))
        if registration is not None:
            brokers[broker_id] = Broker(
                broker_id,
                registration.rack,
                registration.endpoints,
                answer[1].czxid,
                registration.version,
                tuple(sorted(registration.features or ())),
            )
    return brokers


def topic_state(
    topic: str,
    answer: tuple[bytes, Any],
    config_answer: tuple[bytes, Any] | None,
    marked_for_deletion: bool,
    pending_reassignment: bool,
    requested: Mapping[int, tuple[int, ...]] | None = None,
) -> TopicState:
    data = decode_topic(topic, answer[0])
    return TopicState(
        name=topic,
        partitions=data.partitions,
        topic_id=data.topic_id,
        adding_replicas=data.adding or {},
        removing_replicas=data.removing or {},
        config=decode_topic_config(topic, config_answer[0]) if config_answer else {},
        topic_znode_version=answer[1].version,
        config_znode_version=config_answer[1].version if config_answer else None,
        marked_for_deletion=marked_for_deletion,
        pending_reassignment=pending_reassignment,
        format_version=data.read_version,
        requested_replicas=requested or {},
        created_ms=answer[1].ctime,
    )


def _with_partition_states(
    zk: BoundedClient, states: dict[str, TopicState], unreadable: Unreadable
) -> dict[str, TopicState]:
    """The controller creates state znodes shortly after a topic (§13.5); a partition without one has none yet.
    An unreadable one is recorded in ``unreadable`` and in its topic's ``unreadable_partition_states``."""
    paths = {
        (topic, p): PartitionStateZNode.path(topic, p)
        for topic, state in states.items()
        for p in state.partitions
    }
    answers = read_many(zk, list(paths.values()))
    by_topic: dict[str, dict[int, PartitionState]] = {topic: {} for topic in states}
    problems: dict[str, dict[int, str]] = {topic: {} for topic in states}
    for (topic, partition), path in paths.items():
        answer = answers[path]
        if answer is None:
            continue
        decoded = unreadable.decode(
            partial(PartitionStateZNode.decode, topic, partition, answer[0], answer[1].version)
        )
        if decoded is not None:
            by_topic[topic][partition] = decoded
        else:
            problems[topic][partition] = unreadable[path]
    return {
        topic: replace(state, partition_states=by_topic[topic], unreadable_partition_states=problems[topic])
        for topic, state in states.items()
    }


# ---------------------------------------------------------------------------------------------------------------
# Decoding a whole cluster's topics fast.
#
# ``TopicZNode.decode`` and ``TopicConfigZNode.decode`` check every field of every znode with Python's json module
# and a function call per partition: for 50,000 topics that is most of a read. The two functions below give the
# same values faster, and leave anything unusual to those decoders, so that every problem is still found and
# worded by them.

_CONFIGS_KEPT: Final = 4096
"""Distinct config payloads remembered within one process (clusters repeat a few override sets many times)."""

_decoded_configs: dict[bytes, dict[str, str]] = {}


def decode_topic_config(topic: str, data: bytes) -> dict[str, str]:
    """``TopicConfigZNode.decode``, remembered by payload: the decoded overrides depend on the bytes alone (only
    a problem's message names the topic, and a payload with a problem is never remembered). A new dict each
    call, as the decoder gives."""
    known = _decoded_configs.get(data)
    if known is None:
        known = TopicConfigZNode.decode(topic, data)
        if len(_decoded_configs) < _CONFIGS_KEPT:
            _decoded_configs[data] = dict(known)
        return known
    return dict(known)


def decode_topic(topic: str, data: bytes) -> TopicZNodeData:
    """``TopicZNode.decode`` for the payload every Kafka release writes when no reassignment is under way (a
    JSON object with ``partitions`` of replica lists, no adding or removing replicas, an optional string
    ``topic_id`` and integer ``version``), parsed with orjson; any other payload, or any value orjson reads
    otherwise than json would (beyond 64-bit integers become floats there), goes to ``TopicZNode.decode``."""
    try:
        payload = orjson.loads(data)
    except orjson.JSONDecodeError:
        return TopicZNode.decode(topic, data)
    if type(payload) is not dict:
        return TopicZNode.decode(topic, data)
    partitions = payload.get("partitions")
    topic_id = payload.get("topic_id")
    version = payload.get("version")
    if (
        type(partitions) is not dict
        or not (topic_id is None or type(topic_id) is str)
        or not (version is None or type(version) is int)
        or payload.get("adding_replicas") not in _NO_REPLICAS
        or payload.get("removing_replicas") not in _NO_REPLICAS
    ):
        return TopicZNode.decode(topic, data)
    decoded: dict[int, tuple[int, ...]] = {}
    for key, replicas in partitions.items():
        if type(replicas) is not list or not (key.isascii() and key.isdigit()):
            return TopicZNode.decode(topic, data)
        if not _ONLY_INT.issuperset(map(type, replicas)):  # exactly int: true and 1.0 are not replica ids
            return TopicZNode.decode(topic, data)
        decoded[int(key)] = shared_replicas(tuple(replicas))
    return TopicZNodeData(partitions=decoded, topic_id=topic_id, adding={}, removing={}, read_version=version)


_ONLY_INT: Final = frozenset({int})
_NO_REPLICAS: Final[tuple[None, dict[str, Any]]] = (None, {})
"""``adding_replicas``/``removing_replicas`` as written when no reassignment is under way: absent, null or
``{}`` (compared by equality, so that a value of any other type or content is not taken for one)."""
