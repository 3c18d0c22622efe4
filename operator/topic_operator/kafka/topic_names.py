"""Topic names as Kafka's ``org.apache.kafka.common.internals.Topic`` judges them (semantics §6), in the words of
each release line (they changed in 3.0 and 3.3; the rules did not).

The collision helpers matter because Kafka's metric names replace '.' with '_': ``to.pic`` and ``to_pic`` would
report into the same metrics, so Kafka refuses to create one while the other exists.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Final

from topic_operator.kafka.errors import InvalidTopicError, TopicExistsError
from topic_operator.kafka.releases import (
    DEFAULT_KAFKA_VERSION,
    OLDEST_KAFKA,
    TOPIC_NAME_WORDING_3_0,
    TOPIC_NAME_WORDING_3_3,
    KafkaVersion,
)

__all__ = [
    "INTERNAL_TOPICS",
    "MAX_NAME_LENGTH",
    "TopicNameIndex",
    "colliding_topics",
    "has_collision",
    "has_collision_chars",
    "is_internal",
    "is_valid_topic_name",
    "undeclared_topics",
    "unify_collision_chars",
    "validate_no_collision",
    "validate_topic_name",
]

MAX_NAME_LENGTH = 249
"""Kafka's limit, counted in Java ``String.length()`` units (UTF-16 code units), not Python characters."""

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
"""The names ``Topic.isInternal`` accepts; ``__cluster_metadata`` is not among them (semantics §6). 3.9 added
``__share_group_state``, where share groups (KIP-932, 4.x) keep their state (3.9:clients/src/main/java/org/
apache/kafka/common/internals/Topic.java:29,39-40). It is refused on every line: on an older cluster a topic of
that name would turn into Kafka's own at its upgrade."""

_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")


def _java_length(name: str) -> int:
    """Java counts UTF-16 code units, so a character outside the BMP counts twice."""
    return len(name.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class _Words:
    """How one era of ``Topic.validate`` words each rule (``{name}``, ``{dot}``, ``{limit}`` filled in)."""

    empty: str
    dot: str
    too_long: str
    bad_chars: str


_BAD_CHARS_2_0: Final = "Topic name \"{name}\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
_WORDS: Final[tuple[tuple[KafkaVersion, _Words], ...]] = (
    (  # 2.0.1:clients/src/main/java/org/apache/kafka/common/internals/Topic.java:36-47
        OLDEST_KAFKA,
        _Words(
            "Topic name is illegal, it can't be empty",
            'Topic name cannot be "." or ".."',
            "Topic name is illegal, it can't be longer than {limit} characters, topic name: {name}",
            _BAD_CHARS_2_0,
        ),
    ),
    (  # 3.0.2:...:43-54: the message's prefix repeated, capitalised
        TOPIC_NAME_WORDING_3_0,
        _Words(
            "Topic name is illegal, it can't be empty",
            'Topic name cannot be "." or ".."',
            "Topic name is illegal, it can't be longer than {limit} characters, Topic name: {name}",
            _BAD_CHARS_2_0,
        ),
    ),
    (  # 3.3.2:...:49-74
        TOPIC_NAME_WORDING_3_3,
        _Words(
            "Topic name is invalid: the empty string is not allowed",
            "Topic name is invalid: '{dot}' is not allowed",
            "Topic name is invalid: the length of '{name}' is longer than the max allowed length {limit}",
            "Topic name is invalid: '{name}' contains one or more characters other than ASCII alphanumerics, "
            "'.', '_' and '-'",
        ),
    ),
)
"""The words of each era, oldest first: the rules never changed, the words did, in 3.0 and 3.3
(kafka-versions.md c.6)."""


def _name_problem(name: str, kafka_version: KafkaVersion = DEFAULT_KAFKA_VERSION) -> str | None:
    """Kafka's message for the first rule ``name`` breaks, in Kafka's order (empty, '.', '..', length, chars), in
    the words of release line ``kafka_version``."""
    if len(name) <= MAX_NAME_LENGTH and name not in (".", "..") and _LEGAL_NAME.fullmatch(name) is not None:
        return None  # breaks no rule: legal characters are ASCII, so its Java length is its length
    words = next(w for since, w in reversed(_WORDS) if kafka_version >= since)
    if name == "":
        return words.empty
    if name in (".", ".."):
        return words.dot.format(dot=name)
    if _java_length(name) > MAX_NAME_LENGTH:
        return words.too_long.format(name=name, limit=MAX_NAME_LENGTH)
    if _LEGAL_NAME.fullmatch(name) is None:
        return words.bad_chars.format(name=name)
    return None


def validate_topic_name(name: str, *, kafka_version: KafkaVersion = DEFAULT_KAFKA_VERSION) -> None:
    """Raise ``InvalidTopicError`` with the message of release line ``kafka_version`` when ``name`` is not a legal
    topic name."""
    problem = _name_problem(name, kafka_version)
    if problem is not None:
        raise InvalidTopicError(problem, field="topicName")


def is_valid_topic_name(name: str) -> bool:
    """``Topic.isValid``: the same verdict as ``validate_topic_name`` without raising."""
    return _name_problem(name) is None


def names_own_znode(name: str) -> bool:
    """Whether ``name``, appended to ``/brokers/topics/`` or ``/config/topics/``, can only name that topic's own
    znode: Kafka's legal characters (no '/'), and neither '.' nor '..'. No length limit: Kafka before 0.10.1 allowed
    255 characters, and topics so named still exist."""
    return name not in (".", "..") and _LEGAL_NAME.fullmatch(name) is not None


def has_collision_chars(name: str) -> bool:
    """Only names containing '.' or '_' can collide with another name."""
    return "." in name or "_" in name


def unify_collision_chars(name: str) -> str:
    """The form under which colliding names become equal: every '.' replaced with '_'."""
    return name.replace(".", "_")


def has_collision(a: str, b: str) -> bool:
    """True when the two names would share metric names; a name always collides with itself."""
    return unify_collision_chars(a) == unify_collision_chars(b)


def is_internal(name: str) -> bool:
    """Kafka's own topics, which a topic operator must never create, change or delete."""
    return name in INTERNAL_TOPICS


def undeclared_topics(existing: Iterable[str], declared: Collection[str]) -> list[str]:
    """The cluster's topics that no declaration names, sorted: the unmanaged inventory. Kafka's own topics are
    not in it: no declaration could ever take them over."""
    return sorted(name for name in existing if name not in declared and name not in INTERNAL_TOPICS)


class TopicNameIndex:
    """Existing topic names, asked about collisions in time independent of how many there are.

    A name collides only with names of the same length that differ at most where it has '.' or '_', and there
    have '.' or '_' too. So for a name with ``k`` such characters the 2**k spellings are looked up directly,
    which costs nothing on a large cluster: the operator plans one topic at a time against 10,000, and building
    a unified index of all of them per plan was most of its planning time. A name with more than
    ``_MAX_SPELLED`` such characters falls back to that index, built once, on first need. The planner adds each
    topic it plans to create, so two new topics that collide are caught too. ``names`` is kept, not copied:
    pass a collection that does not change while the index is in use (a ClusterState's topics).
    """

    _MAX_SPELLED = 10

    def __init__(self, names: Collection[str] | Iterable[str] = ()) -> None:
        self._names: Collection[str] = names if isinstance(names, Collection) else set(names)
        self._added: set[str] = set()
        self._by_unified: dict[str, set[str]] | None = None

    def add(self, name: str) -> None:
        self._added.add(name)
        if self._by_unified is not None:
            self._by_unified.setdefault(unify_collision_chars(name), set()).add(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._names or name in self._added)

    def colliding(self, name: str) -> list[str]:
        """The indexed names other than ``name`` that collide with it, sorted.

        Kafka lists them in the unspecified iteration order of a hash set; sorting keeps our messages stable.
        """
        if not has_collision_chars(name):
            return []
        if name.count(".") + name.count("_") <= self._MAX_SPELLED:
            return sorted(other for other in _spellings(name) if other != name and other in self)
        return sorted(t for t in self._unified().get(unify_collision_chars(name), ()) if t != name)

    def _unified(self) -> dict[str, set[str]]:
        if self._by_unified is None:
            self._by_unified = {}
            for existing in (*self._names, *self._added):
                self._by_unified.setdefault(unify_collision_chars(existing), set()).add(existing)
        return self._by_unified


def _spellings(name: str) -> list[str]:
    """Every name that unifies with ``name``: each '.' or '_' of it spelled either way."""
    parts = re.split(r"[._]", name)
    spelled = [parts[0]]
    for part in parts[1:]:
        spelled = [f"{prefix}{sep}{part}" for prefix in spelled for sep in "._"]
    return spelled


def colliding_topics(name: str, existing: TopicNameIndex | Iterable[str]) -> list[str]:
    """The names in ``existing``, other than ``name`` itself, that collide with ``name``, sorted."""
    index = existing if isinstance(existing, TopicNameIndex) else TopicNameIndex(existing)
    return index.colliding(name)


def validate_no_collision(name: str, existing: TopicNameIndex | Iterable[str]) -> None:
    """Steps 3-4 of ``validateTopicCreate`` over a known topic list (semantics §3.3).

    ``TopicExistsError`` when ``name`` itself exists, ``InvalidTopicError`` when it collides with other topics.
    Pass a ``TopicNameIndex`` when checking many names against the same topics.
    """
    index = existing if isinstance(existing, TopicNameIndex) else TopicNameIndex(existing)
    if name in index:
        raise TopicExistsError(f"Topic '{name}' already exists.", field="topicName")
    collisions = index.colliding(name)
    if collisions:
        raise InvalidTopicError(
            f"Topic '{name}' collides with existing topics: {', '.join(collisions)}", field="topicName"
        )
