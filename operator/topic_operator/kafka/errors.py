"""Kafka's admin exceptions, one Python class each, carrying Kafka's class name, error code and message text.

Every rejection the project makes is one of these, so the operator's status, the CLI and the Spark report can all
say "Kafka would answer X" in Kafka's own words (3.4+ wording, see kafka-zk-semantics.md). ``str(error)`` is the
message exactly as Kafka builds it; ``kafka_class`` is the fully qualified Java/Scala class and ``error_code`` the
protocol error code the request layer maps it to (semantics §11).

Some checks are stricter than Kafka (Kafka accepts the input and leaves a broken topic behind). Those errors carry
``stricter_than_kafka=True`` so a reader can tell a Kafka rule from one of ours.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

__all__ = [
    "AdminOperationError",
    "BrokerNotAvailableError",
    "BrokerRefusalError",
    "ClusterMigratingToKraftError",
    "ConfigError",
    "InvalidConfigurationError",
    "InvalidPartitionsError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidRequestError",
    "InvalidTopicError",
    "KafkaError",
    "PolicyViolationError",
    "ReassignmentInProgressError",
    "TopicAlreadyMarkedForDeletionError",
    "TopicAuthorizationError",
    "TopicDeletionDisabledError",
    "TopicExistsError",
    "UnknownTopicOrPartitionError",
    "error_class_for",
    "error_for_code",
]

_ERRORS = "org.apache.kafka.common.errors."
_BY_KAFKA_CLASS: dict[str, type[KafkaError]] = {}

_E = TypeVar("_E", bound="type[KafkaError]")


def _kafka_exception(kafka_class: str, error_code: int) -> Callable[[_E], _E]:
    """Bind a Python class to the Kafka exception it stands for, and register it for look-up by Kafka's name."""

    def register(cls: _E) -> _E:
        if kafka_class in _BY_KAFKA_CLASS:
            raise RuntimeError(f"{kafka_class} is already bound to {_BY_KAFKA_CLASS[kafka_class].__name__}")
        cls.kafka_class = kafka_class
        cls.error_code = error_code
        _BY_KAFKA_CLASS[kafka_class] = cls
        return cls

    return register


def error_class_for(kafka_class: str) -> type[KafkaError]:
    """The Python class for a Kafka exception name, e.g. from a stored plan or a Kafka log line."""
    try:
        return _BY_KAFKA_CLASS[kafka_class]
    except KeyError:
        raise KeyError(f"no error class is bound to Kafka exception {kafka_class!r}") from None


class KafkaError(Exception):
    """Base of every rejection. ``field`` names the part of a topic spec the error is about, when known
    (``partitions``, ``replicas``, ``replicaAssignment``, ``topicName``, ``config.<key>``, ``brokers``)."""

    kafka_class: ClassVar[str] = ""
    error_code: ClassVar[int] = -1

    def __init__(self, message: str, *, field: str | None = None, stricter_than_kafka: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.stricter_than_kafka = stricter_than_kafka

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def __eq__(self, other: object) -> bool:
        """Equal when the same Kafka rule says the same thing: plans holding rejections compare by value."""
        if not isinstance(other, KafkaError):
            return NotImplemented
        return (type(self), self.message, self.field) == (type(other), other.message, other.field)

    def __hash__(self) -> int:
        return hash((type(self), self.message, self.field))


@_kafka_exception(_ERRORS + "InvalidTopicException", 17)
class InvalidTopicError(KafkaError):
    """A bad topic name, a name colliding with an existing topic, or a topic queued for deletion."""


@_kafka_exception(_ERRORS + "InvalidPartitionsException", 37)
class InvalidPartitionsError(KafkaError):
    """A partition count that is not positive or would not be an increase."""


@_kafka_exception(_ERRORS + "InvalidReplicationFactorException", 38)
class InvalidReplicationFactorError(KafkaError):
    """A replication factor that is not positive or exceeds the available brokers."""


@_kafka_exception(_ERRORS + "InvalidReplicaAssignmentException", 39)
class InvalidReplicaAssignmentError(KafkaError):
    """A manual replica assignment that breaks Kafka's (or our stricter) rules."""


@_kafka_exception(_ERRORS + "InvalidConfigurationException", 40)
class InvalidConfigurationError(KafkaError):
    """An unknown config name, a null value, or conflicting compaction lags."""


@_kafka_exception("org.apache.kafka.common.config.ConfigException", 40)
class ConfigError(InvalidConfigurationError):
    """A config value that does not parse or fails its validator.

    In Kafka ``ConfigException`` is not an ``ApiException``: AdminZkClient throws it as is and the request layer
    rethrows it as ``InvalidConfigurationException`` with the same message. It subclasses
    ``InvalidConfigurationError`` here so that one ``except`` catches every config rejection, while
    ``kafka_class`` still names the exact class Kafka throws.
    """


@_kafka_exception(_ERRORS + "InvalidRequestException", 42)
class InvalidRequestError(KafkaError):
    """A request that mixes incompatible options (e.g. a partition count together with a manual assignment)."""


@_kafka_exception(_ERRORS + "TopicExistsException", 36)
class TopicExistsError(KafkaError):
    """The topic already exists or is marked for deletion."""


@_kafka_exception(_ERRORS + "UnknownTopicOrPartitionException", 3)
class UnknownTopicOrPartitionError(KafkaError):
    """The topic does not exist."""


@_kafka_exception(_ERRORS + "BrokerNotAvailableException", 8)
class BrokerNotAvailableError(KafkaError):
    """A replica names a broker that is not registered."""


@_kafka_exception(_ERRORS + "ReassignmentInProgressException", 60)
class ReassignmentInProgressError(KafkaError):
    """The topic has a partition reassignment in progress, so its assignment must not be rewritten."""


@_kafka_exception(_ERRORS + "TopicDeletionDisabledException", 73)
class TopicDeletionDisabledError(KafkaError):
    """Deletion is not allowed (``delete.topic.enable=false`` in Kafka; ``allowDelete: false`` here)."""


@_kafka_exception("kafka.common.TopicAlreadyMarkedForDeletionException", -1)
class TopicAlreadyMarkedForDeletionError(KafkaError):
    """A delete marker already exists. Kafka's request layer treats this as success."""


@_kafka_exception("kafka.admin.AdminOperationException", -1)
class AdminOperationError(KafkaError):
    """Kafka's catch-all for admin failures (mixed rack information, a missing partition 0, ...).

    ``kafka.admin.AdminOperationException`` in 2.8-3.5; 3.6 moved it to
    ``org.apache.kafka.server.common.AdminOperationException``. A plain RuntimeException, hence error code -1.
    """


class ClusterMigratingToKraftError(AdminOperationError):
    """Not Kafka's: kafka-topic-operator refuses every write to a cluster migrating to KRaft (semantics §15). Kept
    apart from invalid input because the topic is not at fault: the operator reports it against the cluster and
    retries, rather than marking the declaration Invalid."""


@_kafka_exception(_ERRORS + "PolicyViolationException", 44)
class PolicyViolationError(KafkaError):
    """The brokers' ``create.topic.policy.class.name`` or ``alter.config.policy.class.name`` refused the request."""


@_kafka_exception(_ERRORS + "TopicAuthorizationException", 29)
class TopicAuthorizationError(KafkaError):
    """The principal may not touch the topic: Kafka's ACLs refused it, or a KafkaCluster does not grant the
    namespace that declared it (``tenants.rules``)."""


class BrokerRefusalError(KafkaError):
    """A refusal the brokers answered with an error code no class here stands for: ``kafka_name`` is the name the
    client gives the code (``ThrottlingQuotaExceededError``), kept with the brokers' message."""

    def __init__(self, message: str, *, code: int, kafka_name: str, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.code = code
        self.kafka_name = kafka_name


_PREFERRED_FOR_CODE = {40: InvalidConfigurationError}
"""Where several classes share a code, the one a broker's answer stands for (``ConfigError`` is the broker's
internal class; its answer on the wire is InvalidConfigurationException)."""


def error_for_code(code: int, message: str, *, kafka_name: str = "", field: str | None = None) -> KafkaError:
    """The rejection a broker answered with ``code`` and ``message`` (its own words), as the class bound to that
    code, or ``BrokerRefusalError`` naming ``kafka_name`` when none is."""
    cls = _PREFERRED_FOR_CODE.get(code) or next(
        (c for c in _BY_KAFKA_CLASS.values() if c.error_code == code and code > 0), None
    )
    if cls is None:
        return BrokerRefusalError(
            f"{kafka_name or 'error code ' + str(code)}: {message}",
            code=code,
            kafka_name=kafka_name,
            field=field,
        )
    return cls(message, field=field)
