"""Write planned actions to ZooKeeper, each as one atomic transaction, as Kafka would write them but safer.

Kafka writes a topic's config and assignment in separate requests with no version checks (last writer wins,
semantics §8). Here each action is one ``multi``: create config + topic together (config first), rewrite the topic
znode at the version read, set config at the version read together with its change notification. A version that
moved is a ``WriteConflictError`` (nothing written; re-read and re-plan), never a silent overwrite.

After a connection loss or session expiry the outcome of a commit is unknown. Once ZooKeeper is back, the writer
re-reads the znodes those transactions would have changed and decides for each: committed (done, no second
notification), not committed (send it again), or changed by someone else (conflict). Many actions are pipelined:
every commit is in flight before the first answer is awaited, because one round trip per topic would make 10,000
topics cost 10,000 round trips.

Every wait is bounded by one deadline (``bounded.Patience``): if ZooKeeper stays away longer, the batch ends and
each action is reported as it stands, never guessed: APPLIED, NOT_WRITTEN (nothing of it landed: never sent, or
found not committed), or UNKNOWN (sent, and ZooKeeper did not come back in time to tell). Commits are only ever
issued while connected, so nothing is left queued in kazoo to land after the batch has reported.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from functools import partial
from typing import Any, Final

import kazoo.exceptions as kazoo_errors
from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, RolledBackError
from kazoo.security import ACL

from topic_operator.access.interface import Outcome, WriteResult
from topic_operator.kafka.errors import (
    AdminOperationError,
    BrokerNotAvailableError,
    KafkaError,
    ReassignmentInProgressError,
    TopicAlreadyMarkedForDeletionError,
    UnknownTopicOrPartitionError,
)
from topic_operator.kafka.reassignment import BROKER_THROTTLE_RATES, Health, check_partitions_healthy
from topic_operator.kafka.topic_names import is_internal
from topic_operator.kafka.znode_payloads import too_large
from topic_operator.plan import Action, AddPartitions, AlterConfig, CreateTopic, DeleteTopic, Reassign
from topic_operator.zookeeper.bounded import DEFAULT_DEADLINE, AnswerLostError, BoundedClient, Patience
from topic_operator.zookeeper.connection import KAFKA_SECURE_ACL
from topic_operator.zookeeper.errors import (
    FencedError,
    KraftMigrationError,
    NotAKafkaClusterError,
    WriteConflictError,
    WriteRefusedError,
    ZooKeeperUnavailableError,
)
from topic_operator.zookeeper.pipelined import read_many
from topic_operator.zookeeper.snapshot import Unreadable, bounded, decode_singles
from topic_operator.zookeeper.znodes import (
    AdminZNode,
    BrokerConfigsZNode,
    BrokerConfigZNode,
    BrokerIdsZNode,
    ClusterIdZNode,
    ConfigChangeZNode,
    ControllerZNode,
    DeleteTopicsZNode,
    DeleteTopicZNode,
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

__all__ = ["KAFKA_SECURE_ACL", "Outcome", "WriteResult", "ZooKeeperWriter", "kraft_migration_refusal"]

_OWNERSHIP = (ControllerZNode.path, MigrationZNode.path)
"""Read before every batch: a cluster migrating to KRaft gets no write (semantics §15)."""

CONTROLLER_EPOCH = "/controller_epoch"
"""Bumped by every controller that takes over, a KRaft controller starting a migration's copy included
(KafkaZkClient.tryRegisterKRaftControllerAsActiveController). Its version, read before ``/migration`` is, guards
every transaction of the batch: a transaction committed after a KRaft controller took over would be lost at its
next sync to ZooKeeper, so none commits once the version moved."""


def kraft_migration_refusal(where: str, migration: str) -> str:
    """The one line refusing every write to a cluster migrating to KRaft."""
    return (
        f"ZooKeeper path {where!r} holds a Kafka cluster migrating to KRaft ({migration}): znodes written now "
        "would not be seen by the KRaft metadata, so kafka-topic-operator writes nothing there; nothing was written"
    )


BrokerConfigs = dict[int, "tuple[dict[str, str], int] | str | None"]
"""Broker id -> its dynamic configs and znode version as read before a batch (None: no znode; a string: why it
cannot be read): what throttle rates are merged into, or removed from, at that version."""


class _Verdict(Enum):
    COMMITTED = 1
    NOT_COMMITTED = 2


class ZooKeeperWriter:
    """Applies actions through one started client rooted at a Kafka cluster's chroot.

    ``acl``: ACLs for every znode created (``KAFKA_SECURE_ACL`` for clusters run with ``zookeeper.set.acl=true``;
    default: the client's default, open). ``max_attempts``: commits of one action, the first included, while the
    connection keeps dropping under them. ``window``: commits sent before their answers are collected.
    ``deadline``: how long ZooKeeper may keep a batch waiting (seconds, unless ``apply_all`` is given its own).
    """

    def __init__(
        self,
        client: KazooClient,
        *,
        acl: Sequence[ACL] | None = None,
        max_attempts: int = 5,
        window: int = 1000,
        deadline: float = DEFAULT_DEADLINE,
        may_write: Callable[[], bool] | None = None,
    ) -> None:
        self._client = client
        self.may_write = may_write or (lambda: True)
        """Asked before each transaction is sent: False (this replica lost its leader lease) ends the batch, and
        what was not sent yet is not written."""
        self._acl = list(acl) if acl is not None else None
        self._max_attempts = max_attempts
        self._window = window
        self._deadline = deadline

    # -- public -------------------------------------------------------------------------------------------------

    def apply(self, action: Action, *, deadline: float | Patience | None = None) -> WriteResult:
        """Apply one action; raises the conflict, rejection or unavailability instead of returning it."""
        result = self.apply_all([action], deadline=deadline)[0]
        if result.error is not None and result.outcome is not Outcome.APPLIED:
            raise result.error
        return result

    def apply_all(
        self, actions: Sequence[Action], *, deadline: float | Patience | None = None
    ) -> list[WriteResult]:
        """Apply every action, pipelined, and report each one's outcome in order. One action's conflict or
        rejection never stops the others; an outage past the deadline ends the batch with each action's outcome.

        Raises ``NotAKafkaClusterError``, ``KraftMigrationError`` (or ``ZooKeeperUnavailableError``, if ZooKeeper
        is away past the deadline already) before anything is written.
        """
        zk = bounded(self._client, deadline if deadline is not None else self._deadline)
        zk.patience.restart()
        guard = self._require_kafka_cluster(zk, writing=True)
        self._ensure_parents(zk, actions)
        brokers = _read_broker_configs(zk, actions)
        return _Batch(self, zk, actions, brokers, guard).run(self._topics_being_reassigned(zk, actions))

    def require_kafka_cluster(
        self, *, writing: bool = False, deadline: float | Patience | None = None
    ) -> None:
        """Refuse a path where no Kafka cluster lives (wrong chroot) and, when ``writing``, a cluster migrating to
        KRaft (``KraftMigrationError``; ``apply_all`` always checks both)."""
        zk = bounded(self._client, deadline if deadline is not None else self._deadline)
        self._require_kafka_cluster(zk, writing=writing)

    def _require_kafka_cluster(self, zk: BoundedClient, *, writing: bool) -> int | None:
        """The checks, and the version of ``CONTROLLER_EPOCH`` read first (None when it does not exist: no
        controller ever ran), which the batch's transactions check."""
        doing = "checking the cluster"
        epoch = zk.submit(partial(zk.client.exists_async, CONTROLLER_EPOCH), doing)
        exists = {
            path: zk.submit(partial(zk.client.exists_async, path), doing)
            for path in (ClusterIdZNode.path, BrokerIdsZNode.path)
        }
        owners = {path: zk.submit(partial(zk.client.get_async, path), doing) for path in _OWNERSHIP}
        missing = [path for path, pending in exists.items() if zk.answer(pending, doing) is None]
        where = self._client.chroot or "/"
        if missing:
            raise NotAKafkaClusterError(
                f"ZooKeeper path {where!r} has no {' and no '.join(missing)}: it does not look like a Kafka "
                "cluster (check the chroot in the connect string); nothing was written"
            )
        answers: dict[str, tuple[bytes, Any] | None] = {}
        for path, pending in owners.items():
            try:
                answers[path] = zk.answer(pending, doing)
            except NoNodeError:
                answers[path] = None
        migration = decode_singles(answers, Unreadable()).kraft_migration
        if writing and migration is not None:
            raise KraftMigrationError(kraft_migration_refusal(where, migration))
        stat = zk.answer(epoch, doing)
        return None if stat is None else int(stat.version)

    # -- building transactions ----------------------------------------------------------------------------------

    def commit(self, action: Action, brokers: BrokerConfigs | None = None, guard: int | None = None) -> Any:
        """Send the action's transaction; kazoo's async result. ``brokers``: the broker configs read for the
        batch, which throttle rates are written at the version of; ``guard``: the version of
        ``CONTROLLER_EPOCH`` the transaction commits only at."""
        return self._transaction(action, brokers or {}, guard).commit_async()

    def transaction_paths(
        self, action: Action, brokers: BrokerConfigs | None = None, guard: int | None = None
    ) -> list[str]:
        """The znode of each operation of the action's transaction, in order (what an answer's index names)."""
        operations = self._transaction(action, brokers or {}, guard).operations
        return [str(self._client.unchroot(operation.path)) for operation in operations]

    def _transaction(self, action: Action, brokers: BrokerConfigs, guard: int | None = None) -> Any:
        txn = self._client.transaction()
        if guard is not None:
            txn.check(CONTROLLER_EPOCH, guard)
        match action:
            case CreateTopic():
                config = TopicConfigZNode.encode(action.config)
                if action.orphan_config_version is None:
                    txn.create(TopicConfigZNode.path(action.topic), config, acl=self._acl)
                else:
                    txn.set_data(
                        TopicConfigZNode.path(action.topic), config, version=action.orphan_config_version
                    )
                txn.create(TopicZNode.path(action.topic), _topic_payload_for_create(action), acl=self._acl)
            case AddPartitions():
                txn.set_data(
                    TopicZNode.path(action.topic),
                    _topic_payload_for_growth(action),
                    version=action.expected_version,
                )
            case AlterConfig():
                self._topic_config(txn, action.topic, action.config, action.expected_version)
                for broker in action.clear_broker_throttles:
                    self._broker_rates(txn, broker, brokers.get(broker), None)
            case DeleteTopic():
                txn.create(DeleteTopicZNode.path(action.topic), b"", acl=self._acl)
            case Reassign():
                txn.check(TopicZNode.path(action.topic), action.expected_version)
                if action.config is not None:
                    self._topic_config(txn, action.topic, action.config, action.config_expected_version)
                if action.throttle_bytes_per_second is not None:
                    for broker in action.brokers:
                        self._broker_rates(txn, broker, brokers.get(broker), action.throttle_bytes_per_second)
                txn.create(ReassignPartitionsZNode.path, _request_payload(action), acl=self._acl)
        return txn

    def _topic_config(self, txn: Any, topic: str, config: Mapping[str, str], version: int | None) -> None:
        """The topic's override set at ``version`` (None: create it) and its ``topics/<t>`` notification."""
        payload, notification = TopicConfigZNode.encode(config), ConfigChangeZNode.encode_topic_change(topic)
        self._config_znode(txn, TopicConfigZNode.path(topic), payload, version, notification)

    def _config_znode(
        self, txn: Any, path: str, payload: bytes, version: int | None, notification: bytes
    ) -> None:
        """A config znode written at ``version`` (None: created) and the change notification that makes brokers
        apply it: the two always go together, or a broker would not see the change until its next restart."""
        if version is None:
            txn.create(path, payload, acl=self._acl)
        else:
            txn.set_data(path, payload, version=version)
        txn.create(ConfigChangeZNode.prefix, notification, acl=self._acl, sequence=True)

    def _broker_rates(
        self, txn: Any, broker: int, read: tuple[dict[str, str], int] | str | None, rate: int | None
    ) -> None:
        """Set both throttle rates to ``rate`` (None: remove them) in the broker's dynamic configs as read,
        keeping every other config, with a ``brokers/<id>`` notification; nothing when they already are so."""
        config, version = read if isinstance(read, tuple) else ({}, None)
        wanted = {k: v for k, v in config.items() if k not in BROKER_THROTTLE_RATES}
        if rate is not None:
            wanted.update(dict.fromkeys(BROKER_THROTTLE_RATES, str(rate)))
        if wanted == config:
            return
        payload, notification = (
            BrokerConfigZNode.encode(wanted),
            ConfigChangeZNode.encode_broker_change(broker),
        )
        self._config_znode(txn, BrokerConfigZNode.path(broker), payload, version, notification)

    def _ensure_parents(self, zk: BoundedClient, actions: Sequence[Action]) -> None:
        """Brokers create these at startup; Kafka's own writes create missing parents too. Empty parents are
        harmless, so this is done once before the transactions, which cannot create parents themselves."""
        needed: set[str] = set()
        for action in actions:
            match action:
                case CreateTopic():
                    needed |= {TopicConfigsZNode.path, TopicsZNode.path}
                case AlterConfig():
                    needed |= {TopicConfigsZNode.path, ConfigChangeZNode.path}
                case DeleteTopic():
                    needed.add(DeleteTopicsZNode.path)
                case Reassign():
                    needed |= {
                        TopicConfigsZNode.path,
                        ConfigChangeZNode.path,
                        BrokerConfigsZNode.path,
                        AdminZNode.path,
                    }
            if isinstance(action, AlterConfig) and action.clear_broker_throttles:
                needed.add(BrokerConfigsZNode.path)
        for path in sorted(needed):
            if zk.call(partial(zk.client.exists_async, path), f"checking {path}") is not None:
                continue
            parts = path.strip("/").split("/")
            for depth in range(1, len(parts) + 1):
                parent = "/" + "/".join(parts[:depth])
                with contextlib.suppress(NodeExistsError):
                    zk.call(partial(zk.client.create_async, parent, b"", acl=self._acl), f"creating {parent}")

    def _topics_being_reassigned(self, zk: BoundedClient, actions: Sequence[Action]) -> set[str] | str:
        """The topics ``/admin/reassign_partitions`` names, or its problem when it cannot be read (then no topic
        can be known not to be under reassignment)."""
        if not any(isinstance(a, AddPartitions) for a in actions):
            return set()
        path = ReassignPartitionsZNode.path
        try:
            data, _ = zk.call(lambda: zk.client.get_async(path), f"reading {path}")
        except NoNodeError:
            return set()
        try:
            return set(ReassignPartitionsZNode.decode(data))
        except ZnodeFormatError as error:
            return str(error)

    def precheck(
        self,
        zk: BoundedClient,
        action: Action,
        reassigning: set[str] | str,
        brokers: BrokerConfigs | None = None,
    ) -> KafkaError | None:
        """Rules the writer keeps even if a caller skipped the planner: they guard against damage, not style. A
        request too large for ZooKeeper would make it drop the connection, again at every resend, cutting every
        other commit in flight: it is refused here too."""
        oversized = _too_large(action)
        if oversized is not None:
            return oversized
        match action:
            case AddPartitions():
                if isinstance(reassigning, str):
                    return AdminOperationError(
                        f"Partitions cannot be added to topic {action.topic}: whether a reassignment is in "
                        f"progress for it is unknown, {reassigning}.",
                        field="partitions",
                        stricter_than_kafka=True,
                    )
                if (
                    action.topic in reassigning
                    or any(action.adding_replicas.values())
                    or any(action.removing_replicas.values())
                ):
                    return ReassignmentInProgressError(
                        f"A partition reassignment is in progress for the topic '{action.topic}'.",
                        field="partitions",
                    )
            case DeleteTopic():
                if is_internal(action.topic):
                    return AdminOperationError(
                        f"Topic {action.topic} is a kafka internal topic and is not allowed to be marked for deletion.",
                        field="topicName",
                    )
                path = TopicZNode.path(action.topic)
                if zk.call(lambda: zk.client.exists_async(path), f"checking {path}") is None:
                    return UnknownTopicOrPartitionError(
                        f"Topic `{action.topic}` to delete does not exist", field="topicName"
                    )
            case Reassign():
                return _reassign_precheck(zk, action, brokers or {})
        involved = action.clear_broker_throttles if isinstance(action, AlterConfig) else ()
        return _unreadable_broker_config(action.topic, involved, brokers or {})

    @property
    def max_attempts(self) -> int:
        return self._max_attempts

    @property
    def window(self) -> int:
        return self._window


class _Batch:
    """One ``apply_all``: each action's commits, answers and, after a lost connection, verification.

    ``to_send`` holds the actions to commit (again); ``unknown`` the ones whose answer was lost. Rounds alternate:
    send and collect everything pending, then, once connected again, verify the unknown ones with one ``sync``
    and one batched read, and send again what did not land. The deadline (and the cap on commits per action, and
    on rounds) ends the loop; what is still pending then is NOT_WRITTEN or UNKNOWN.
    """

    def __init__(
        self,
        writer: ZooKeeperWriter,
        zk: BoundedClient,
        actions: Sequence[Action],
        brokers: BrokerConfigs | None = None,
        guard: int | None = None,
    ) -> None:
        self.writer = writer
        self.zk = zk
        self.actions = actions
        self.brokers = brokers or {}
        self.guard = guard
        self.results: list[WriteResult | None] = [None] * len(actions)
        self.sent = [0] * len(actions)
        self.to_send: deque[int] = deque()
        self.unknown: list[int] = []

    def run(self, reassigning: set[str] | str) -> list[WriteResult]:
        try:
            self._precheck_all(reassigning)
            rounds = 0
            while self.to_send or self.unknown:
                rounds += 1
                if rounds > 2 * self.writer.max_attempts:
                    raise self.zk.unavailable("writing: it kept dropping the connection")
                if self.unknown:
                    self._verify_unknown()
                self._send_pending()
        except ZooKeeperUnavailableError as gone:
            self._give_up(gone)
        return [r for r in self.results if r is not None]

    def _precheck_all(self, reassigning: set[str] | str) -> None:
        for index, action in enumerate(self.actions):
            rejection = self.writer.precheck(self.zk, action, reassigning, self.brokers)
            if rejection is not None:
                self.results[index] = WriteResult(action, Outcome.REJECTED, rejection)
            else:
                self.to_send.append(index)

    def _send_pending(self) -> None:
        """Commit every action waiting to be sent, collecting answers a window at a time. A commit is issued
        only while connected; ``ZooKeeperUnavailableError`` from ``submit`` means this one was not issued."""
        in_flight: list[tuple[int, Any]] = []
        try:
            while self.to_send:
                if self.zk.patience.expired:
                    raise self.zk.unavailable("writing")
                if not self.writer.may_write():
                    raise FencedError(
                        "this replica no longer holds the operator's leader lease: it writes nothing more"
                    )
                index = self.to_send[0]
                action = self.actions[index]
                pending = self.zk.submit(
                    partial(self.writer.commit, action, self.brokers, self.guard),
                    f"writing topic {action.topic}",
                )
                self.to_send.popleft()
                self.sent[index] += 1
                in_flight.append((index, pending))
                if len(in_flight) >= self.writer.window:
                    self._collect(in_flight)
        finally:
            self._collect(in_flight)

    def _collect(self, in_flight: list[tuple[int, Any]]) -> None:
        for index, pending in in_flight:
            action = self.actions[index]
            try:
                answers = self.zk.answer(pending, f"writing topic {action.topic}")
            except AnswerLostError:
                self.unknown.append(index)
            else:
                paths = self.writer.transaction_paths(action, self.brokers, self.guard)
                self.results[index] = _result_of(action, answers, paths=paths, retried=self.sent[index] - 1)
        in_flight.clear()

    def _verify_unknown(self) -> None:
        """Once connected again: which of the unknown commits landed? ``sync`` first makes the server we are on
        catch up with the leader, so the reads cannot miss a commit that did land."""
        self.zk.wait_connected("writing")
        actions = [self.actions[i] for i in self.unknown]
        self.zk.answer(self.zk.submit(lambda: self.zk.client.sync_async("/"), "syncing"), "syncing")
        answers = read_many(self.zk, [_changed_path(a) for a in actions])
        for index, action in zip(self.unknown, actions, strict=True):
            retried = self.sent[index] - 1
            try:
                verdict = _verdict(action, answers[_changed_path(action)])
            except WriteConflictError as conflict:
                self.results[index] = WriteResult(action, Outcome.CONFLICT, conflict, retried=retried)
                continue
            if verdict is _Verdict.COMMITTED:
                self.results[index] = WriteResult(action, Outcome.APPLIED, retried=retried)
            elif self.sent[index] < self.writer.max_attempts:
                self.to_send.append(index)
            else:
                why = self.zk.unavailable(f"writing topic {action.topic}: it kept dropping the connection")
                self.results[index] = WriteResult(action, Outcome.NOT_WRITTEN, why, retried=retried)
        self.unknown = []

    def _give_up(self, gone: ZooKeeperUnavailableError) -> None:
        """The deadline passed (or the client gave up): report every action still pending as it stands."""
        for index in self.to_send:
            action = self.actions[index]
            error = ZooKeeperUnavailableError(
                f"topic '{action.topic}': not written, nothing of it landed ({gone})"
            )
            error.__cause__ = gone
            self.results[index] = WriteResult(
                action, Outcome.NOT_WRITTEN, error, retried=max(self.sent[index] - 1, 0)
            )
        for index in self.unknown:
            action = self.actions[index]
            error = ZooKeeperUnavailableError(
                f"topic '{action.topic}': unknown whether the write landed: its answer was lost with the "
                f"connection ({gone}); re-read and re-plan once ZooKeeper is back"
            )
            error.__cause__ = gone
            self.results[index] = WriteResult(action, Outcome.UNKNOWN, error, retried=self.sent[index] - 1)
        self.to_send.clear()
        self.unknown = []


def _throttled_brokers(action: Action) -> tuple[int, ...]:
    """The brokers whose dynamic configs the action writes throttle rates to, or removes them from."""
    if isinstance(action, Reassign) and action.throttle_bytes_per_second is not None:
        return action.brokers
    if isinstance(action, AlterConfig):
        return action.clear_broker_throttles
    return ()


def _read_broker_configs(zk: BoundedClient, actions: Sequence[Action]) -> BrokerConfigs:
    """One batched read of every broker config the batch's throttle writes touch."""
    wanted = sorted({b for action in actions for b in _throttled_brokers(action)})
    answers = read_many(zk, [BrokerConfigZNode.path(b) for b in wanted])
    configs: BrokerConfigs = {}
    for broker in wanted:
        answer = answers[BrokerConfigZNode.path(broker)]
        if answer is None:
            configs[broker] = None
            continue
        try:
            configs[broker] = (BrokerConfigZNode.decode(broker, answer[0]), answer[1].version)
        except ZnodeFormatError as error:
            configs[broker] = str(error)
    return configs


def _unreadable_broker_config(
    topic: str, involved: Sequence[int], brokers: BrokerConfigs
) -> KafkaError | None:
    problems = [problem for b in involved if isinstance(problem := brokers.get(b), str)]
    if not problems:
        return None
    return AdminOperationError(
        f"Topic {topic}: the replication throttle cannot be written, a broker config is not in a format Kafka "
        f"writes ({'; '.join(problems)}).",
        field="replicas",
        stricter_than_kafka=True,
    )


def _reassign_precheck(zk: BoundedClient, action: Reassign, brokers: BrokerConfigs) -> KafkaError | None:
    """Read at write time, whatever the plan saw: no reassignment running, every target broker registered, and
    every moving partition online and fully in sync (``check_partitions_healthy``)."""
    if is_internal(action.topic):
        return AdminOperationError(
            f"Topic {action.topic} is a Kafka internal topic: kafka-topic-operator never reassigns it.",
            field="topicName",
            stricter_than_kafka=True,
        )
    request = ReassignPartitionsZNode.path
    if zk.call(lambda: zk.client.exists_async(request), f"checking {request}") is not None:
        return ReassignmentInProgressError(
            f"Topic {action.topic} cannot be reassigned: there is an existing assignment running "
            f"({request} exists); one reassignment at a time.",
            field="replicas",
        )
    ids = zk.call(lambda: zk.client.get_children_async(BrokerIdsZNode.path), "reading the brokers")
    live = {int(i) for i in ids if i.isdigit()}
    for move in action.moves:
        if not live.issuperset(move.target):
            return BrokerNotAvailableError(
                f"Topic {action.topic} partition {move.partition}: target replicas {list(move.target)} name "
                f"brokers that are not registered ({sorted(set(move.target) - live)}; registered: {sorted(live)}).",
                field="replicas",
                stricter_than_kafka=True,
            )
    paths = {m.partition: PartitionStateZNode.path(action.topic, m.partition) for m in action.moves}
    answers = read_many(zk, list(paths.values()))
    health: dict[int, Health | None] = {}
    for partition, path in paths.items():
        answer = answers[path]
        try:
            state = None if answer is None else PartitionStateZNode.decode(action.topic, partition, answer[0])
        except ZnodeFormatError:
            state = None
        health[partition] = None if state is None else Health(state.leader, state.isr)
    try:
        check_partitions_healthy(action.topic, action.moves, health, live)
    except KafkaError as unhealthy:
        return unhealthy
    return _unreadable_broker_config(action.topic, _throttled_brokers(action), brokers)


def _request_payload(action: Reassign) -> bytes:
    return ReassignPartitionsZNode.encode({action.topic: {m.partition: m.target for m in action.moves}})


def _topic_payload_for_create(action: CreateTopic) -> bytes:
    return TopicZNode.encode(TopicZNodeData(action.assignment), version=action.topic_znode_format)


def _topic_payload_for_growth(action: AddPartitions) -> bytes:
    return TopicZNode.encode(
        TopicZNodeData(
            {**action.existing, **action.new_partitions},
            action.topic_id,
            action.adding_replicas,
            action.removing_replicas,
        ),
        version=action.topic_znode_format,
    )


def _too_large(action: Action) -> KafkaError | None:
    """The action's request, if ZooKeeper would refuse it for its size. Most are small beyond doubt, which a
    bound over the replica lists and config entries tells without encoding anything."""
    match action:
        case CreateTopic():
            if _surely_fits([action.assignment], action.config):
                return None
            size = len(_topic_payload_for_create(action)) + len(TopicConfigZNode.encode(action.config))
            what = f"the request creating topic {action.topic}"
            return too_large(action.topic, what, size, exact=True, field="partitions")
        case AddPartitions():
            maps = [action.existing, action.new_partitions, action.adding_replicas, action.removing_replicas]
            if _surely_fits(maps, {}):
                return None
            size = len(_topic_payload_for_growth(action))
            return too_large(action.topic, "its assignment znode", size, exact=True, field="partitions")
        case Reassign():
            size = len(_request_payload(action))
            if action.config is not None:
                size += len(TopicConfigZNode.encode(action.config))
            what = f"the reassignment request of topic {action.topic}"
            return too_large(action.topic, what, size, exact=True, field="replicas")
        case AlterConfig():
            if _surely_fits([], action.config):
                return None
            notification = ConfigChangeZNode.encode_topic_change(action.topic)
            size = len(TopicConfigZNode.encode(action.config)) + len(notification)
            return too_large(action.topic, "its config znode", size, exact=True, field="config")
    return None


def _surely_fits(maps: Sequence[Mapping[int, Sequence[int]]], config: Mapping[str, str]) -> bool:
    """A bound of the request's payload: an entry ``"<p>":[<r>,...],`` takes at most 16 bytes plus 11 per
    replica (ids are Java ints), a config entry at most 8 bytes plus 6 per character (``\\uXXXX``)."""
    replicas = sum(16 + 11 * len(listed) for partitions in maps for listed in partitions.values())
    configs = sum(8 + 6 * (len(key) + len(value)) for key, value in config.items())
    return too_large("", "", 300 + replicas + configs, exact=True, field="partitions") is None


def _changed_path(action: Action) -> str:
    if isinstance(action, Reassign):
        return ReassignPartitionsZNode.path
    if isinstance(action, AlterConfig):
        return TopicConfigZNode.path(action.topic)
    if isinstance(action, DeleteTopic):
        return DeleteTopicZNode.path(action.topic)
    return TopicZNode.path(action.topic)


WRITE_REFUSALS: Final[Mapping[type[Exception], str]] = {
    kazoo_errors.RolledBackError: "rolled back with the rest of its transaction",
    kazoo_errors.SystemZookeeperError: "the server failed with a system error",
    kazoo_errors.RuntimeInconsistency: "the server found its own state inconsistent",
    kazoo_errors.DataInconsistency: "the server found its data inconsistent",
    kazoo_errors.ConnectionLoss: "the connection was lost before the answer came",
    kazoo_errors.MarshallingError: "the request could not be encoded or decoded",
    kazoo_errors.UnimplementedError: "the server does not implement this request (ZooKeeper older than 3.4)",
    kazoo_errors.OperationTimeoutError: "the server timed the operation out",
    kazoo_errors.BadArgumentsError: "the server refused the request's arguments",
    kazoo_errors.UnknownSessionError: "the server does not know this session",
    kazoo_errors.NewConfigNoQuorumError: "the ensemble is being reconfigured without a quorum",
    kazoo_errors.ReconfigInProcessError: "the ensemble is being reconfigured",
    kazoo_errors.APIError: "the server reported an API error",
    kazoo_errors.NoNodeError: "a znode it needs does not exist (deleted meanwhile, or its parent is missing)",
    kazoo_errors.NoAuthError: (
        "not authorized: the znode's ACL does not let this client's identity write it; give kto the credentials "
        "Kafka's brokers use (KafkaCluster spec.zookeeper.auth, or KTO_ZK_DIGEST_* / KTO_ZK_SASL_* for kto)"
    ),
    kazoo_errors.BadVersionError: "its version moved since it was read (another writer)",
    kazoo_errors.NoChildrenForEphemeralsError: "its parent is an ephemeral znode, which cannot have children",
    kazoo_errors.NodeExistsError: "it exists already",
    kazoo_errors.NotEmptyError: "it has children",
    kazoo_errors.SessionExpiredError: "the session expired before the answer came",
    kazoo_errors.InvalidCallbackError: "the server refused the request's callback",
    kazoo_errors.InvalidACLError: (
        "the ACL for the new znode is invalid (Kafka's zookeeper.set.acl ACLs need an authenticated identity)"
    ),
    kazoo_errors.AuthFailedError: "the server refused this client's credentials",
    kazoo_errors.SessionMovedError: "the session moved to another server meanwhile",
    kazoo_errors.NotReadOnlyCallError: "the server is read-only (cut off from its quorum) and takes no writes",
    kazoo_errors.EphemeralOnLocalSessionError: "an ephemeral znode cannot be created by a local session",
    kazoo_errors.NoWatcherError: "the server has no such watcher",
    kazoo_errors.RequestTimeoutError: "the server did not answer within its request timeout",
    kazoo_errors.ReconfigDisabledError: "ensemble reconfiguration is disabled on the server",
    kazoo_errors.SessionClosedRequireSaslError: "the server requires SASL authentication, which this client lacks",
    kazoo_errors.QuotaExceededError: "a ZooKeeper quota on this path is exceeded",
    kazoo_errors.ThrottledOpError: "the server throttled the request (too busy); it can be retried later",
}
"""What each error ZooKeeper can answer a write with means, for the message that reports it (every error code
kazoo knows has an entry: a test holds the two together)."""


def write_refusal(topic: str, path: str, failure: Exception) -> WriteRefusedError:
    """``failure`` (kazoo's answer to a write of ``path``) as one message naming the znode and the reason."""
    reason = WRITE_REFUSALS.get(type(failure)) or str(failure) or "no reason given"
    refusal = WriteRefusedError(topic, path, type(failure).__name__, reason)
    refusal.__cause__ = failure
    return refusal


def _result_of(
    action: Action, answers: Sequence[object], *, paths: Sequence[str] = (), retried: int = 0
) -> WriteResult:
    """kazoo reports a failed ``multi`` as exception instances in the answers (the failing one, and
    ``RolledBackError`` for the rest) rather than raising: map the first real one. ``paths``: the znode of each
    operation of the transaction, in order, to name the one refused."""
    failures = [
        (index, a)
        for index, a in enumerate(answers)
        if isinstance(a, Exception) and not isinstance(a, RolledBackError)
    ]
    if not failures:
        return WriteResult(action, Outcome.APPLIED, retried=retried)
    at, failure = failures[0]
    if at < len(paths) and paths[at] == CONTROLLER_EPOCH:
        moved = WriteConflictError(
            action.topic,
            CONTROLLER_EPOCH,
            "another controller took over since the batch began: a KRaft controller, if a migration started",
        )
        return WriteResult(action, Outcome.CONFLICT, moved, retried=retried)
    if isinstance(action, DeleteTopic) and isinstance(failure, NodeExistsError):
        marked = TopicAlreadyMarkedForDeletionError(f"topic {action.topic} is already marked for deletion")
        return WriteResult(action, Outcome.APPLIED, marked, retried=retried)
    if (
        isinstance(action, Reassign)
        and isinstance(failure, NodeExistsError)
        and answers[-1] is failure  # the request, the transaction's last operation
    ):
        running = ReassignmentInProgressError(
            f"Topic {action.topic} cannot be reassigned: there is an existing assignment running "
            f"({ReassignPartitionsZNode.path} was created meanwhile); one reassignment at a time.",
            field="replicas",
        )
        return WriteResult(action, Outcome.REJECTED, running, retried=retried)
    if isinstance(failure, (BadVersionError, NodeExistsError, NoNodeError)):
        detail = {
            BadVersionError: "its version moved",
            NodeExistsError: "it was created meanwhile",
            NoNodeError: "it was deleted meanwhile",
        }[type(failure)]
        conflict = WriteConflictError(action.topic, _changed_path(action), detail)
        return WriteResult(action, Outcome.CONFLICT, conflict, retried=retried)
    path = paths[at] if at < len(paths) else _changed_path(action)
    return WriteResult(action, Outcome.REJECTED, write_refusal(action.topic, path, failure), retried=retried)


def _verdict(action: Action, answer: tuple[bytes, Any] | None) -> _Verdict:
    """Did this action's transaction commit? Decided from the znode it would have changed, read after a
    ``sync`` (``answer``: its data and stat, None when it does not exist); raises ``WriteConflictError`` when the
    znode shows neither our write nor the state we wrote over."""
    path = _changed_path(action)
    match action:
        case CreateTopic():
            if answer is None:
                return _Verdict.NOT_COMMITTED
            if TopicZNode.decode(action.topic, answer[0]).partitions == dict(action.assignment):
                return _Verdict.COMMITTED
            raise WriteConflictError(action.topic, path, "another writer created it")
        case AddPartitions():
            if answer is None:
                raise WriteConflictError(action.topic, path, "it was deleted meanwhile")
            data, stat = answer
            if stat.version == action.expected_version:
                return _Verdict.NOT_COMMITTED
            wanted = {**action.existing, **action.new_partitions}
            if (
                stat.version == action.expected_version + 1
                and TopicZNode.decode(action.topic, data).partitions == wanted
            ):
                return _Verdict.COMMITTED
            raise WriteConflictError(action.topic, path, "its version moved")
        case AlterConfig():
            if answer is None:
                if action.expected_version is None:
                    return _Verdict.NOT_COMMITTED
                raise WriteConflictError(action.topic, path, "it was deleted meanwhile")
            data, stat = answer
            if stat.version == action.expected_version:
                return _Verdict.NOT_COMMITTED
            landed_version = 0 if action.expected_version is None else action.expected_version + 1
            if stat.version == landed_version and TopicConfigZNode.decode(action.topic, data) == dict(
                action.config
            ):
                return _Verdict.COMMITTED
            raise WriteConflictError(action.topic, path, "its version moved")
        case DeleteTopic():
            return _Verdict.COMMITTED if answer is not None else _Verdict.NOT_COMMITTED
        case Reassign():
            if answer is None:
                return _Verdict.NOT_COMMITTED
            requested = ReassignPartitionsZNode.decode(answer[0]).get(action.topic, {})
            if requested == {m.partition: m.target for m in action.moves}:
                return _Verdict.COMMITTED
            raise WriteConflictError(action.topic, path, "another reassignment was requested meanwhile")
