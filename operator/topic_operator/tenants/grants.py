"""A KafkaCluster's grants to other namespaces (``spec.tenants``), read into plain data.

A platform team keeps a KafkaCluster, and its credentials, in a namespace of its own; application teams declare
KafkaTopics in theirs and name the cluster as ``<namespace>/<name>``. Each entry of ``spec.tenants`` says which
namespaces it grants (by name, by a label selector, or both), which topic names they may use, their quota, and
the limits every topic of theirs must keep. The first entry that matches a namespace is the one that applies, so
a reader of the KafkaCluster can tell which rules hold for a namespace from the list alone. The KafkaCluster's
own namespace is always granted, without limits: every set-up made before tenants existed keeps working.

The CRD refuses most malformed grants at ``kubectl apply``; what reaches the operator anyway (an older CRD, a
manifest read by ``kto`` without the API server) is read here defensively: a grant that cannot be read grants
nothing and is reported, naming the field, the value and the rule. Never does a bad grant grant everything.

Pure: no I/O. ``tenants.rules`` judges declarations and plans against these grants.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "UNLIMITED_WHEN_NEGATIVE",
    "Grant",
    "NamespaceSelector",
    "Quota",
    "Requirement",
    "Tenancy",
    "TopicLimits",
    "cluster_reference",
    "read_tenancy",
]

_LABEL_NAME: Final = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_LABEL_KEY: Final = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?" + _LABEL_NAME + "$"
)
_LABEL_VALUE: Final = re.compile(r"^(" + _LABEL_NAME + ")?$")
_NAMESPACE: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_TOPIC_CHARS: Final = re.compile(r"^[a-zA-Z0-9._-]+$")
_LIMIT_NAME: Final = re.compile(r"^[a-z0-9.]+$")
_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")

UNLIMITED_WHEN_NEGATIVE: Final = frozenset({"retention.ms", "retention.bytes"})
"""Configs whose -1 means "no limit" to Kafka: above any ``max``, and never below a ``min``."""


def cluster_reference(namespace: str, cluster: str) -> tuple[str, str]:
    """(namespace, name) of the KafkaCluster a KafkaTopic of ``namespace`` names as ``cluster``: a bare name is
    in the KafkaTopic's own namespace, ``<namespace>/<name>`` in that one."""
    home, slash, name = cluster.partition("/")
    return (home, name) if slash else (namespace, cluster)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``matchExpressions`` entry of a label selector, with Kubernetes' meaning."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        match self.operator:
            case "In":
                return self.key in labels and labels[self.key] in self.values
            case "NotIn":
                return self.key not in labels or labels[self.key] not in self.values
            case "Exists":
                return self.key in labels
            case _:
                return self.key not in labels


@dataclass(frozen=True, slots=True)
class NamespaceSelector:
    """A label selector over namespaces: every ``matchLabels`` pair and every requirement must hold."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            r.matches(labels) for r in self.match_expressions
        )


@dataclass(frozen=True, slots=True)
class Quota:
    """At most ``topics`` topics and ``partitions`` partitions in all (None: no limit), for each namespace."""

    topics: int | None = None
    partitions: int | None = None

    @property
    def limited(self) -> bool:
        return self.topics is not None or self.partitions is not None


@dataclass(frozen=True, slots=True)
class TopicLimits:
    """What every topic of a grant must keep, in the shape of a LimitRange: ``minimum`` and ``maximum`` by name
    (``partitions``, ``replicas`` or a config key), and the config keys a topic may set (None: any)."""

    minimum: Mapping[str, int] = field(default_factory=dict)
    maximum: Mapping[str, int] = field(default_factory=dict)
    allowed_configs: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Grant:
    """One entry of ``spec.tenants``: the namespaces it grants and what they may do."""

    index: int
    """Its place in ``spec.tenants`` (-1: the KafkaCluster's own namespace), for messages that name the rule."""
    namespaces: frozenset[str] = frozenset()
    selector: NamespaceSelector | None = None
    topic_prefixes: tuple[str, ...] = ()
    """The names its topics must start with (empty: any name)."""
    quota: Quota = field(default_factory=Quota)
    limits: TopicLimits = field(default_factory=TopicLimits)
    allow_delete: bool = False

    @property
    def path(self) -> str:
        return f"spec.tenants[{self.index}]"

    @property
    def unlimited(self) -> bool:
        return self.index < 0

    def matches(self, namespace: str, labels: Mapping[str, str] | None) -> bool:
        """Whether it grants ``namespace``; with unknown ``labels`` (None), only a listed name matches."""
        if namespace in self.namespaces:
            return True
        return self.selector is not None and labels is not None and self.selector.matches(labels)

    def allows_name(self, topic: str) -> bool:
        return not self.topic_prefixes or topic.startswith(self.topic_prefixes)


@dataclass(frozen=True, slots=True)
class Tenancy:
    """A KafkaCluster's grants: its own namespace, then ``spec.tenants`` in order, and the entries that could not
    be read (each grants nothing)."""

    home: str
    """The KafkaCluster's namespace: always granted, without limits."""
    grants: tuple[Grant, ...] = ()
    problems: tuple[str, ...] = ()

    def grant_for(self, namespace: str, labels: Mapping[str, str] | None) -> Grant | None:
        """The grant that applies to ``namespace`` (its labels, if known), or None: the namespace is not granted."""
        if namespace == self.home:
            return Grant(-1, frozenset({namespace}), allow_delete=True)
        return next((g for g in self.grants if g.matches(namespace, labels)), None)


class _UnreadableGrantError(Exception):
    """A grant's field that cannot be used: the message names the field, the value and the rule."""


def read_tenancy(home: str, tenants: object) -> Tenancy:
    """The grants of a KafkaCluster of namespace ``home`` whose ``spec.tenants`` is ``tenants`` (None: none)."""
    if tenants is None:
        return Tenancy(home)
    if not isinstance(tenants, Sequence) or isinstance(tenants, str):
        return Tenancy(home, problems=(f"spec.tenants: {_shown(tenants)}: must be a list of grants",))
    grants: list[Grant] = []
    problems: list[str] = []
    for index, entry in enumerate(tenants):
        try:
            grants.append(_grant(index, entry))
        except _UnreadableGrantError as unreadable:
            problems.append(f"spec.tenants[{index}]{unreadable}; this grant grants nothing")
    return Tenancy(home, tuple(grants), tuple(problems))


def _grant(index: int, entry: object) -> Grant:
    if not isinstance(entry, Mapping):
        raise _UnreadableGrantError(f": {_shown(entry)}: must be an object")
    known = {"namespaces", "namespaceSelector", "topicPrefixes", "quota", "limits", "allowDelete"}
    unknown = sorted(str(k) for k in entry if k not in known)
    if unknown:
        raise _UnreadableGrantError(f".{unknown[0]}: unknown field (known: {', '.join(sorted(known))})")
    namespaces = _strings(
        entry,
        "namespaces",
        _NAMESPACE,
        "a namespace name (DNS-1123 label, at most 63 characters)",
        longest=63,
    )
    selector = _selector(entry.get("namespaceSelector"))
    if not namespaces and selector is None:
        raise _UnreadableGrantError(": a tenant grant names namespaces, a namespaceSelector or both")
    prefixes = _strings(
        entry, "topicPrefixes", _TOPIC_CHARS, "a non-empty topic-name prefix of [a-zA-Z0-9._-]"
    )
    if "topicPrefixes" in entry and not prefixes:
        raise _UnreadableGrantError(
            ".topicPrefixes: []: must list at least one prefix (leave it out to allow any name)"
        )
    allow_delete = entry.get("allowDelete", False)
    if not isinstance(allow_delete, bool):
        raise _UnreadableGrantError(f".allowDelete: {_shown(allow_delete)}: must be true or false")
    return Grant(
        index,
        frozenset(namespaces),
        selector,
        tuple(prefixes),
        _quota(entry.get("quota")),
        _limits(entry.get("limits")),
        allow_delete,
    )


def _strings(
    entry: Mapping[object, object],
    key: str,
    pattern: re.Pattern[str],
    what: str,
    *,
    at: str = "",
    longest: int = 253,
) -> list[str]:
    """The list of strings at ``key``, each whole of ``pattern`` and at most ``longest`` long; ``at`` is the path
    of ``entry`` within the grant, for messages."""
    value = entry.get(key)
    if value is None:
        return []
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise _UnreadableGrantError(f"{at}.{key}: {_shown(value)}: must be a list")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not pattern.fullmatch(item) or len(item) > longest:
            raise _UnreadableGrantError(f"{at}.{key}[{i}]: {_shown(item)}: must be {what}")
    return [str(item) for item in value]


def _selector(value: object) -> NamespaceSelector | None:
    if value is None:
        return None
    path = ".namespaceSelector"
    if not isinstance(value, Mapping):
        raise _UnreadableGrantError(
            f"{path}: {_shown(value)}: must be a label selector (matchLabels, matchExpressions)"
        )
    unknown = sorted(str(k) for k in value if k not in ("matchLabels", "matchExpressions"))
    if unknown:
        raise _UnreadableGrantError(
            f"{path}.{unknown[0]}: unknown field (known: matchExpressions, matchLabels)"
        )
    labels = value.get("matchLabels") or {}
    expressions = value.get("matchExpressions") or []
    if not isinstance(labels, Mapping):
        raise _UnreadableGrantError(
            f"{path}.matchLabels: {_shown(labels)}: must be a map of label keys to values"
        )
    pairs: list[tuple[str, str]] = []
    for key, label in labels.items():
        _label_key(f"{path}.matchLabels", key)
        if not isinstance(label, str) or not _LABEL_VALUE.fullmatch(label) or len(label) > 63:
            raise _UnreadableGrantError(f"{path}.matchLabels.{key}: {_shown(label)}: must be a label value")
        pairs.append((str(key), label))
    if not isinstance(expressions, Sequence) or isinstance(expressions, str):
        raise _UnreadableGrantError(f"{path}.matchExpressions: {_shown(expressions)}: must be a list")
    requirements = [_requirement(f"{path}.matchExpressions[{i}]", e) for i, e in enumerate(expressions)]
    if not pairs and not requirements:
        raise _UnreadableGrantError(
            f"{path}: {{}}: an empty namespaceSelector would grant every namespace: give matchLabels or "
            "matchExpressions, or list the namespaces"
        )
    return NamespaceSelector(tuple(sorted(pairs)), tuple(requirements))


def _label_key(path: str, key: object) -> None:
    if not isinstance(key, str) or not _LABEL_KEY.fullmatch(key) or len(key.rpartition("/")[2]) > 63:
        raise _UnreadableGrantError(
            f"{path}: {_shown(key)}: must be a label key ([prefix/]name, name at most 63 characters)"
        )


def _requirement(path: str, value: object) -> Requirement:
    if not isinstance(value, Mapping):
        raise _UnreadableGrantError(
            f"{path}: {_shown(value)}: must be an object with key, operator and values"
        )
    key, operator, values = value.get("key"), value.get("operator"), value.get("values") or []
    _label_key(f"{path}.key", key)
    if operator not in _OPERATORS:
        raise _UnreadableGrantError(
            f"{path}.operator: {_shown(operator)}: must be one of {', '.join(_OPERATORS)}"
        )
    if (
        not isinstance(values, Sequence)
        or isinstance(values, str)
        or not all(isinstance(v, str) for v in values)
    ):
        raise _UnreadableGrantError(f"{path}.values: {_shown(values)}: must be a list of label values")
    if operator in ("In", "NotIn") and not values:
        raise _UnreadableGrantError(f"{path}.values: []: operator {operator} needs at least one value")
    if operator in ("Exists", "DoesNotExist") and values:
        raise _UnreadableGrantError(f"{path}.values: {_shown(values)}: operator {operator} takes no values")
    return Requirement(str(key), str(operator), frozenset(str(v) for v in values))


def _count(value: object, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _UnreadableGrantError(f"{path}: {_shown(value)}: must be a whole number, 0 or more")
    return value


def _quota(value: object) -> Quota:
    if value is None:
        return Quota()
    if not isinstance(value, Mapping):
        raise _UnreadableGrantError(
            f".quota: {_shown(value)}: must be an object with topics and/or partitions"
        )
    unknown = sorted(str(k) for k in value if k not in ("topics", "partitions"))
    if unknown:
        raise _UnreadableGrantError(f".quota.{unknown[0]}: unknown field (known: partitions, topics)")
    return Quota(
        _count(value.get("topics"), ".quota.topics"), _count(value.get("partitions"), ".quota.partitions")
    )


def _bounds(value: object, path: str) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _UnreadableGrantError(
            f"{path}: {_shown(value)}: must be a map of partitions, replicas or config keys to numbers"
        )
    bounds: dict[str, int] = {}
    for key, bound in value.items():
        if not isinstance(key, str) or not _LIMIT_NAME.fullmatch(key) or len(key) > 249:
            raise _UnreadableGrantError(
                f"{path}: {_shown(key)}: must be partitions, replicas or a topic config key"
            )
        if isinstance(bound, bool) or not isinstance(bound, int):
            raise _UnreadableGrantError(f"{path}.{key}: {_shown(bound)}: must be a whole number")
        bounds[key] = bound
    return bounds


def _limits(value: object) -> TopicLimits:
    if value is None:
        return TopicLimits()
    if not isinstance(value, Mapping):
        raise _UnreadableGrantError(
            f".limits: {_shown(value)}: must be an object with min, max and/or allowedConfigs"
        )
    unknown = sorted(str(k) for k in value if k not in ("min", "max", "allowedConfigs"))
    if unknown:
        raise _UnreadableGrantError(f".limits.{unknown[0]}: unknown field (known: allowedConfigs, max, min)")
    minimum, maximum = _bounds(value.get("min"), ".limits.min"), _bounds(value.get("max"), ".limits.max")
    for key in sorted(minimum.keys() & maximum.keys()):
        if minimum[key] > maximum[key]:
            raise _UnreadableGrantError(
                f".limits.min.{key}: {minimum[key]}: must not be above limits.max.{key} ({maximum[key]})"
            )
    allowed = None
    if "allowedConfigs" in value:
        allowed = frozenset(
            _strings(value, "allowedConfigs", _LIMIT_NAME, "a topic config key", at=".limits", longest=249)
        )
    return TopicLimits(minimum, maximum, allowed)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
