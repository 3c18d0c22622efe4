"""Write planned actions to ZooKeeper, each as one atomic transaction, as Kafka would write them but safer.

Kafka writes a topic's config and assignment in separate requests with no version checks (last writer wins,
semantics §8). Here each action is one ``multi``: create config + topic together (config first), rewrite the topic
znode at the version read, set config at the version read together with its change notification. A version that
moved is a ``WriteConflictError`` (nothing written; re-read and re-plan), never a silent overwrite.

After a connection loss or session expiry the outcome of a commit is unknown. The writer then re-reads the
znodes the transaction would have changed and decides: committed (done, no second notification), not committed
(send it again), or changed by someone else (conflict). Many actions are pipelined: up to ``window`` commits are
in flight at once, because one round trip per topic would make 10,000 topics cost 10,000 round trips.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    ConnectionLoss,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    RolledBackError,
    SessionExpiredError,
)
from kazoo.retry import KazooRetry, RetryFailedError
from kazoo.security import ACL

from topic_operator.kafka.errors import (
    AdminOperationError,
    KafkaError,
    ReassignmentInProgressError,
    TopicAlreadyMarkedForDeletionError,
    UnknownTopicOrPartitionError,
)
from topic_operator.kafka.topic_names import is_internal
from topic_operator.plan import Action, AddPartitions, AlterConfig, CreateTopic, DeleteTopic
from topic_operator.zookeeper.connection import KAFKA_SECURE_ACL
from topic_operator.zookeeper.errors import (
    NotAKafkaClusterError,
    WriteConflictError,
    ZooKeeperUnavailableError,
)
from topic_operator.zookeeper.znodes import (
    BrokerIdsZNode,
    ClusterIdZNode,
    ConfigChangeZNode,
    DeleteTopicsZNode,
    DeleteTopicZNode,
    ReassignPartitionsZNode,
    TopicConfigsZNode,
    TopicConfigZNode,
    TopicsZNode,
    TopicZNode,
    TopicZNodeData,
)

__all__ = ["KAFKA_SECURE_ACL", "Outcome", "WriteResult", "ZooKeeperWriter"]

_UNKNOWN_OUTCOME = (ConnectionLoss, SessionExpiredError, OperationTimeoutError)


class Outcome(Enum):
    APPLIED = "applied"
    CONFLICT = "conflict"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What happened to one action. ``error`` explains a conflict or rejection; ``retried`` counts commits sent
    again after their outcome was lost with the connection."""

    action: Action
    outcome: Outcome
    error: Exception | None = None
    retried: int = 0


class _Verdict(Enum):
    COMMITTED = 1
    NOT_COMMITTED = 2


class ZooKeeperWriter:
    """Applies actions through one started client rooted at a Kafka cluster's chroot.

    ``acl``: ACLs for every znode created (``KAFKA_SECURE_ACL`` for clusters run with ``zookeeper.set.acl=true``;
    default: the client's default, open). ``retry_deadline``: how long to wait for ZooKeeper to come back before
    reporting an action's outcome as unknown. ``sleep`` is injectable so tests of the retry path need not wait.
    """

    def __init__(
        self,
        client: KazooClient,
        *,
        acl: Sequence[ACL] | None = None,
        max_attempts: int = 5,
        window: int = 1000,
        retry_deadline: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self._acl = list(acl) if acl is not None else None
        self._max_attempts = max_attempts
        self._window = window
        self._retry = KazooRetry(max_tries=-1, deadline=retry_deadline, ignore_expire=True, sleep_func=sleep)
        self._wait = retry_deadline
        self._ensemble_away = False
        self._checked_cluster = False

    # -- public -------------------------------------------------------------------------------------------------

    def apply(self, action: Action) -> WriteResult:
        """Apply one action; raises the conflict or rejection instead of returning it."""
        result = self.apply_all([action])[0]
        if result.error is not None:
            raise result.error
        return result

    def apply_all(self, actions: Sequence[Action]) -> list[WriteResult]:
        """Apply every action, pipelined, and report each one's outcome in order. One action's conflict or
        rejection never stops the others."""
        self.require_kafka_cluster()
        self._ensure_parents(actions)
        reassigning = self._topics_being_reassigned(actions)
        self._ensemble_away = False
        results: list[WriteResult | None] = [None] * len(actions)
        in_flight: list[tuple[int, Any]] = []
        for index, action in enumerate(actions):
            rejection = self._precheck(action, reassigning)
            if rejection is not None:
                results[index] = WriteResult(action, Outcome.REJECTED, rejection)
                continue
            in_flight.append((index, self._transaction(action).commit_async()))
            if len(in_flight) >= self._window:
                self._collect(actions, in_flight, results)
        self._collect(actions, in_flight, results)
        return [r for r in results if r is not None]

    def require_kafka_cluster(self) -> None:
        """Refuse to write where no Kafka cluster lives (wrong chroot): checked once per writer."""
        if self._checked_cluster:
            return
        missing = [
            p
            for p in (ClusterIdZNode.path, BrokerIdsZNode.path)
            if self._retry(self._client.exists, p) is None
        ]
        if missing:
            where = self._client.chroot or "/"
            raise NotAKafkaClusterError(
                f"ZooKeeper path {where!r} has no {' and no '.join(missing)}: it does not look like a Kafka "
                "cluster (check the chroot in the connect string); nothing was written"
            )
        self._checked_cluster = True

    # -- building transactions ----------------------------------------------------------------------------------

    def _transaction(self, action: Action) -> Any:
        txn = self._client.transaction()
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
                config = TopicConfigZNode.encode(action.config)
                if action.expected_version is None:
                    txn.create(TopicConfigZNode.path(action.topic), config, acl=self._acl)
                else:
                    txn.set_data(TopicConfigZNode.path(action.topic), config, version=action.expected_version)
                txn.create(
                    ConfigChangeZNode.prefix,
                    ConfigChangeZNode.encode_topic_change(action.topic),
                    acl=self._acl,
                    sequence=True,
                )
            case DeleteTopic():
                txn.create(DeleteTopicZNode.path(action.topic), b"", acl=self._acl)
        return txn

    def _ensure_parents(self, actions: Sequence[Action]) -> None:
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
        for path in sorted(needed):
            if self._retry(self._client.exists, path) is None:
                self._retry(self._client.ensure_path, path, acl=self._acl)

    def _topics_being_reassigned(self, actions: Sequence[Action]) -> set[str]:
        if not any(isinstance(a, AddPartitions) for a in actions):
            return set()
        try:
            data, _ = self._retry(self._client.get, ReassignPartitionsZNode.path)
        except NoNodeError:
            return set()
        return set(ReassignPartitionsZNode.decode(data))

    def _precheck(self, action: Action, reassigning: set[str]) -> KafkaError | None:
        """Rules the writer keeps even if a caller skipped the planner: they guard against damage, not style."""
        match action:
            case AddPartitions():
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
                if self._retry(self._client.exists, TopicZNode.path(action.topic)) is None:
                    return UnknownTopicOrPartitionError(
                        f"Topic `{action.topic}` to delete does not exist", field="topicName"
                    )
        return None

    # -- collecting results -------------------------------------------------------------------------------------

    def _collect(
        self, actions: Sequence[Action], in_flight: list[tuple[int, Any]], results: list[WriteResult | None]
    ) -> None:
        """Every wait is bounded: kazoo keeps unsent requests queued while disconnected, so an unbounded wait
        would block for as long as the ensemble is away."""
        lost = (*_UNKNOWN_OUTCOME, self._client.handler.timeout_exception)
        for index, pending in in_flight:
            action = actions[index]
            try:
                answers = pending.get(timeout=0 if self._ensemble_away else self._wait)
            except lost:
                results[index] = self._recover(action)
            else:
                results[index] = _result_of(action, answers)
        in_flight.clear()

    def _recover(self, action: Action) -> WriteResult:
        """The commit's fate was lost with the connection: find out, and send it again only if it did not land.
        Once the ensemble has stayed away past the retry deadline, the rest of the batch is reported at once."""
        lost = (*_UNKNOWN_OUTCOME, self._client.handler.timeout_exception)
        attempt = 0
        while not self._ensemble_away and attempt < self._max_attempts:
            attempt += 1
            try:
                verdict = self._retry(_verify, self._client, action, self._wait)
            except WriteConflictError as conflict:
                return WriteResult(action, Outcome.CONFLICT, conflict, retried=attempt - 1)
            except (RetryFailedError, self._client.handler.timeout_exception):
                self._ensemble_away = True
                break
            if verdict is _Verdict.COMMITTED:
                return WriteResult(action, Outcome.APPLIED, retried=attempt - 1)
            try:
                answers = self._transaction(action).commit_async().get(timeout=self._wait)
            except lost:
                continue
            result = _result_of(action, answers)
            return WriteResult(result.action, result.outcome, result.error, retried=attempt)
        unavailable = ZooKeeperUnavailableError(
            f"topic '{action.topic}': ZooKeeper kept dropping the connection or stayed away; it could not be "
            "told whether the write landed (re-read and re-plan once it is back)"
        )
        return WriteResult(action, Outcome.CONFLICT, unavailable, retried=attempt)


def _topic_payload_for_create(action: CreateTopic) -> bytes:
    return TopicZNode.encode(TopicZNodeData(action.assignment))


def _topic_payload_for_growth(action: AddPartitions) -> bytes:
    return TopicZNode.encode(
        TopicZNodeData(
            {**action.existing, **action.new_partitions},
            action.topic_id,
            action.adding_replicas,
            action.removing_replicas,
        )
    )


def _changed_path(action: Action) -> str:
    if isinstance(action, AlterConfig):
        return TopicConfigZNode.path(action.topic)
    if isinstance(action, DeleteTopic):
        return DeleteTopicZNode.path(action.topic)
    return TopicZNode.path(action.topic)


def _result_of(action: Action, answers: Sequence[object]) -> WriteResult:
    """kazoo reports a failed ``multi`` as exception instances in the answers (the failing one, and
    ``RolledBackError`` for the rest) rather than raising: map the first real one."""
    failures = [a for a in answers if isinstance(a, Exception) and not isinstance(a, RolledBackError)]
    if not failures:
        return WriteResult(action, Outcome.APPLIED)
    failure = failures[0]
    if isinstance(action, DeleteTopic) and isinstance(failure, NodeExistsError):
        marked = TopicAlreadyMarkedForDeletionError(f"topic {action.topic} is already marked for deletion")
        return WriteResult(action, Outcome.APPLIED, marked)
    if isinstance(failure, (BadVersionError, NodeExistsError, NoNodeError)):
        detail = {
            BadVersionError: "its version moved",
            NodeExistsError: "it was created meanwhile",
            NoNodeError: "it was deleted meanwhile",
        }[type(failure)]
        return WriteResult(
            action, Outcome.CONFLICT, WriteConflictError(action.topic, _changed_path(action), detail)
        )
    return WriteResult(action, Outcome.REJECTED, failure)


def _verify(client: KazooClient, action: Action, timeout: float) -> _Verdict:
    """Did this action's transaction commit? Decided from what it would have changed; raises
    ``WriteConflictError`` when the znode shows neither our write nor the state we wrote over.

    After a reconnect the client may be on a follower that has not yet applied our commit: ``sync`` first makes
    that server catch up with the leader, so the read cannot miss a write that did land."""
    client.sync_async(_changed_path(action)).get(timeout=timeout)
    match action:
        case CreateTopic():
            try:
                data, _ = client.get_async(TopicZNode.path(action.topic)).get(timeout=timeout)
            except NoNodeError:
                return _Verdict.NOT_COMMITTED
            if TopicZNode.decode(action.topic, data).partitions == dict(action.assignment):
                return _Verdict.COMMITTED
            raise WriteConflictError(action.topic, TopicZNode.path(action.topic), "another writer created it")
        case AddPartitions():
            data, stat = client.get_async(TopicZNode.path(action.topic)).get(timeout=timeout)
            if stat.version == action.expected_version:
                return _Verdict.NOT_COMMITTED
            wanted = {**action.existing, **action.new_partitions}
            if (
                stat.version == action.expected_version + 1
                and TopicZNode.decode(action.topic, data).partitions == wanted
            ):
                return _Verdict.COMMITTED
            raise WriteConflictError(action.topic, TopicZNode.path(action.topic), "its version moved")
        case AlterConfig():
            path = TopicConfigZNode.path(action.topic)
            try:
                data, stat = client.get_async(path).get(timeout=timeout)
            except NoNodeError:
                if action.expected_version is None:
                    return _Verdict.NOT_COMMITTED
                raise WriteConflictError(action.topic, path, "it was deleted meanwhile") from None
            if stat.version == action.expected_version:
                return _Verdict.NOT_COMMITTED
            landed_version = 0 if action.expected_version is None else action.expected_version + 1
            if stat.version == landed_version and TopicConfigZNode.decode(action.topic, data) == dict(
                action.config
            ):
                return _Verdict.COMMITTED
            raise WriteConflictError(action.topic, path, "its version moved")
        case DeleteTopic():
            exists = client.exists_async(DeleteTopicZNode.path(action.topic)).get(timeout=timeout) is not None
            return _Verdict.COMMITTED if exists else _Verdict.NOT_COMMITTED
