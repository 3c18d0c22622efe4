"""A cluster read through the Admin protocol into the engine's ``ClusterState``, so the planner sees a KRaft
cluster as it sees a ZooKeeper one.

A whole read is DescribeCluster (the brokers and their racks; fenced brokers are left out, as a ZooKeeper-mode
controller leaves out brokers not registered), Metadata (every topic's id and replicas, with each partition's
leader and ISR), DescribeConfigs of the topics whose overrides are wanted, a few hundred topics a request spread
over every broker, and, sent beside those rounds rather than after them, ListPartitionReassignments and the
finalized features; once per connection, each broker's ApiVersions, for its release. Metadata and DescribeConfigs are answered as bytes and read for what a plan
needs (``metadata_answers``, ``config_answers``): kafka-python's own decoding into dicts cost twice the brokers'
time. When the caller names the topics whose overrides it wants, their DescribeConfigs go out with the Metadata,
so the read takes about as long as the slowest broker's answer.

A topic's config is its topic-level overrides only (``DYNAMIC_TOPIC_CONFIG``): a broker default or a static
broker setting is not the topic's, and never drift. A topic whose configs the brokers refuse to describe (an
authorization, say) or whose part of an answer cannot be read is unreadable, reported and not planned: an empty
override set read in its place would plan every override away.
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import kafka.errors as kafka_errors
from kafka import TopicPartition
from kafka.admin import KafkaAdminClient

from topic_operator.access.interface import DEFAULT_DEADLINE
from topic_operator.admin.answer_bytes import UndecodableAnswerError
from topic_operator.admin.any_broker import through_any_broker
from topic_operator.admin.config_answers import describe_configs_request, topic_configs_in
from topic_operator.admin.metadata_answers import (
    MetadataPartition,
    MetadataTopic,
    metadata_request,
    topics_in,
)
from topic_operator.admin.raw_answers import answers_as_bytes
from topic_operator.admin.release import broker_release, metadata_version
from topic_operator.kafka.kraft_migration import choose_writer
from topic_operator.model import Backend, Broker, ClusterState, PartitionState, TopicState

__all__ = ["TOPIC_OVERRIDE_SOURCE", "read_cluster"]

TOPIC_OVERRIDE_SOURCE = "DYNAMIC_TOPIC_CONFIG"
"""DescribeConfigs' source of a topic's own override (``ConfigSource`` 1)."""

_NO_ERROR = 0
_LEADER_NOT_AVAILABLE = 5
"""A topic just created may answer this while its partitions get leaders: it exists."""
_UNKNOWN_TOPIC = 3

_REQUESTS_PER_BROKER = 6
"""DescribeConfigs requests each broker gets for a whole read: while one answer is read, the next is on its way
(a broker answers a connection's requests one after another; ``raw_answers`` keeps at most a connection's
in-flight allowance outstanding). Over 10,000 topics on three 3.9 brokers, medians of five reads, 2 to 8 a broker
all took 0.96-1.02 s: within the machine's noise, so the split stays fine enough for answers to come early."""
_LEAST_PER_REQUEST = 100
_MOST_PER_REQUEST = 1000
"""Topics per DescribeConfigs request: few enough that answers come early, enough that requests stay few."""


def read_cluster(
    admin: KafkaAdminClient,
    *,
    partition_states: bool = False,
    topics: Collection[str] | None = None,
    configs_of: Collection[str] | None = None,
    deadline: float = DEFAULT_DEADLINE,
) -> ClusterState:
    """The cluster now: brokers, cluster id, and every topic (or only ``topics``) with its id, replicas,
    overrides and reassignment; with ``partition_states``, each partition's leader and ISR too.

    ``configs_of``: only these topics' overrides are described, the others' left empty (a batch plans only its
    own topics, ``kto plan`` only the declared ones); their requests then go out with the Metadata.
    ``deadline``: the seconds the brokers may go without answering any of the read's requests."""
    cluster: Mapping[str, Any] = through_any_broker(
        admin, admin.describe_cluster, deadline=deadline, reading=True
    )
    brokers = {
        int(b["broker_id"]): Broker(
            id=int(b["broker_id"]),
            rack=b.get("rack") or None,
            endpoints=(f"{b['host']}:{b['port']}",),
        )
        for b in cluster.get("brokers", ())
        if not b.get("is_fenced", False)
    }
    names = None if topics is None else sorted(set(topics))
    read = _Read(admin, sorted(brokers), deadline, partition_states)
    # The two small requests whose answers the main rounds do not need go out beside them, not after them: the
    # read then takes as long as its slowest round, not the sum of every request's round trip.
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="kto-read") as beside:
        finalized = beside.submit(metadata_version, admin, deadline)
        reassigning = beside.submit(_reassignments, admin, deadline)
        if configs_of is not None:
            wanted = set(configs_of) if names is None else set(configs_of) & set(names)
            read.run(names, sorted(wanted))
        else:
            read.run(names, None)
            read.run([], sorted(read.found))
        read.settle()
        moving = reassigning.result()
        version = finalized.result()
    states = {name: read.topic_state(name, moving.get(name)) for name in read.found}
    return ClusterState(
        cluster_id=cluster.get("cluster_id"),
        brokers=brokers,
        topics=states,
        # Not DescribeCluster's controller_id: with a KRaft controller it names a random live broker (KafkaApis
        # answers so; clients never see KRaft controllers), a different one at each read.
        controller=None,
        unreadable_topics=read.unreadable,
        backend=Backend.KRAFT,
        broker_release=broker_release(admin, sorted(brokers)),
        metadata_version=version,
        writer=choose_writer(None, zookeeper=False, brokers=True),
    )


class _Read:
    """The Metadata and DescribeConfigs answers of one read, gathered as they arrive."""

    def __init__(
        self, admin: KafkaAdminClient, brokers: list[int], deadline: float, partition_states: bool
    ) -> None:
        self._admin = admin
        self._brokers = brokers
        self._deadline = deadline
        self._partition_states = partition_states
        self.found: dict[str, _FoundTopic] = {}
        self.overrides: dict[str, dict[str, str]] = {}
        self.unreadable: dict[str, str] = {}
        self._unknown_configs: set[str] = set()

    def run(self, metadata_of: list[str] | None, configs_of: list[str] | None) -> None:
        """One round of requests sent together: Metadata of ``metadata_of`` (None: every topic; ``[]``: none)
        and DescribeConfigs of ``configs_of``."""
        requests: list[Any] = []
        parts: list[list[str]] = []
        if metadata_of != []:
            requests.append(metadata_request(metadata_of))
            parts.append([])
        for part in _parts(configs_of or [], len(self._brokers)):
            requests.append(describe_configs_request(part))
            parts.append(part)
        for answer in answers_as_bytes(self._admin, requests, self._brokers, deadline=self._deadline):
            if parts[answer.index]:
                self._configs(topic_configs_in(answer.payload, answer.version, parts[answer.index]))
            else:
                self._metadata(answer.payload, answer.version)

    def topic_state(self, name: str, moving: Mapping[int, Mapping[str, Any]] | None) -> TopicState:
        """The state of ``name``, a topic the Metadata found, with its overrides and ``moving``, its
        reassignment (partition -> replicas adding and removing) if one is in flight."""
        found = self.found[name]
        config = self.overrides.get(name)
        adding: dict[int, tuple[int, ...]] = {}
        removing: dict[int, tuple[int, ...]] = {}
        for partition, move in (moving or {}).items():
            if move["adding_replicas"]:
                adding[partition] = tuple(int(b) for b in move["adding_replicas"])
            if move["removing_replicas"]:
                removing[partition] = tuple(int(b) for b in move["removing_replicas"])
        return TopicState(
            name=name,
            partitions=found.partitions,
            topic_id=found.topic_id,
            adding_replicas=adding,
            removing_replicas=removing,
            config=dict(sorted(config.items())) if config else {},
            partition_states=found.states,
        )

    def settle(self) -> None:
        """Keep the configs of topics the Metadata found, and drop topics whose configs no broker knew
        (deleted between the two answers) or could not be read."""
        for name in self._unknown_configs | self.unreadable.keys():
            self.found.pop(name, None)
        self.overrides = {name: self.overrides[name] for name in self.found if name in self.overrides}

    def _metadata(self, payload: bytes, version: int) -> None:
        try:
            for topic in topics_in(payload, version):
                code = topic.error_code
                if code in (_NO_ERROR, _LEADER_NOT_AVAILABLE) and topic.partitions:
                    # Turned into the state's parts now, while the other answers are on their way, rather than
                    # after the last of them.
                    self.found[topic.name] = _found(topic, self._partition_states)
                elif code not in (_NO_ERROR, _UNKNOWN_TOPIC, _LEADER_NOT_AVAILABLE):
                    self.unreadable[topic.name] = _error_text(code, None, "describing it")
        except UndecodableAnswerError as error:
            raise kafka_errors.KafkaProtocolError(
                f"the brokers' Metadata answer (version {version}) could not be read: {error}"
            ) from None

    def _configs(self, answered: Iterable[Any]) -> None:
        for topic in answered:
            if topic.undecodable is not None:
                self.unreadable[topic.topic] = topic.undecodable
            elif topic.error_code == _UNKNOWN_TOPIC:
                self._unknown_configs.add(topic.topic)
            elif topic.error_code != _NO_ERROR:
                self.unreadable[topic.topic] = _error_text(
                    topic.error_code, topic.error_message, "describing its configs"
                )
            else:
                self.overrides[topic.topic] = topic.overrides


def _parts(names: list[str], brokers: int) -> list[list[str]]:
    """``names`` in DescribeConfigs requests: a few for each broker, each within the bounds."""
    if not names:
        return []
    size = max(
        _LEAST_PER_REQUEST, min(_MOST_PER_REQUEST, -(-len(names) // (_REQUESTS_PER_BROKER * max(brokers, 1))))
    )
    return [names[start : start + size] for start in range(0, len(names), size)]


def _reassignments(admin: KafkaAdminClient, deadline: float) -> dict[str, dict[int, Mapping[str, Any]]]:
    """The reassignments in flight (topic -> partition -> replicas, adding and removing). A request for the
    controller: through any broker that is up (``any_broker``)."""
    listed: Mapping[TopicPartition, Mapping[str, Any]] = through_any_broker(
        admin, admin.list_partition_reassignments, deadline=deadline, reading=True
    )
    found: dict[str, dict[int, Mapping[str, Any]]] = {}
    for partition, moving in listed.items():
        found.setdefault(partition.topic, {})[partition.partition] = moving
    return found


class _FoundTopic(NamedTuple):
    """A topic as the Metadata answer gave it, in the shapes ``TopicState`` holds."""

    partitions: dict[int, tuple[int, ...]]
    topic_id: str | None
    states: dict[int, PartitionState] | None


def _found(topic: MetadataTopic, partition_states: bool) -> _FoundTopic:
    partitions = {p.index: p.replicas for p in sorted(topic.partitions, key=_index)}
    states = None
    if partition_states:
        states = {
            p.index: PartitionState(
                leader=p.leader, isr=p.isr, leader_epoch=p.leader_epoch, controller_epoch=-1
            )
            for p in topic.partitions
        }
    return _FoundTopic(partitions, _topic_id(topic.topic_id), states)


def _index(partition: MetadataPartition) -> int:
    return partition.index


def _topic_id(raw: bytes) -> str | None:
    """The topic id as ZooKeeper's topic znode holds it (Kafka's ``Uuid.toString``: URL-safe base64 without
    padding), so one topic reads the same through either store; None for the zero id."""
    if not any(raw):
        return None
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _error_text(code: int, message: str | None, doing: str) -> str:
    error = kafka_errors.for_code(code)
    said = f": {message}" if message else ""
    return f"the brokers answered {error.__name__} (error code {code}) {doing}{said}"
