"""Declared topics -> KafkaTopic documents (kto.dev or Strimzi), with valid and unique Kubernetes object names.

Used by ``kto convert``, which turns manifests of any format kto reads (Strimzi KafkaTopics of every version,
topicctl topic files, kto.dev KafkaTopics) into one format, so that a team migrates once and keeps one.

Kafka topic names allow what object names do not (upper case, ``_``, up to 249 characters that may start with
``.``), so the object name is derived: lower case, ``_`` and other characters as ``-``, trimmed to valid ends, and
followed by a short hash of the real name whenever it had to change or would collide, so that two topics never
share a name and the same topic always gets the same one. The real name is kept in ``spec.topicName`` whenever it
differs from the object name.

Pure: specs in, plain documents out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Set
from dataclasses import dataclass
from typing import Any, Final

from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.manifests.schema import API_VERSION
from topic_operator.model import ApplyMode, DeletionPolicy, TopicSpec

__all__ = ["FORMATS", "Converted", "is_object_name", "object_name", "object_names", "topic_documents"]

FORMATS: Final = ("kto", "strimzi")
STRIMZI_API_VERSION: Final = "kafka.strimzi.io/v1beta2"
STRIMZI_CLUSTER_LABEL: Final = "strimzi.io/cluster"
_MAX_NAME: Final = 253
_HASH_LENGTH: Final = 8
_VALID: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
"""An RFC 1123 subdomain, as the API server checks ``metadata.name``."""
_NOT_ALLOWED: Final = re.compile(r"[^a-z0-9.-]")


@dataclass(frozen=True, slots=True)
class Converted:
    """The documents, and one line per topic that the target format cannot express (then nothing is written)."""

    documents: tuple[dict[str, Any], ...]
    problems: tuple[str, ...]


def _hash(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:_HASH_LENGTH]


def is_object_name(name: str) -> bool:
    return len(name) <= _MAX_NAME and _VALID.fullmatch(name) is not None


def object_names(topics: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(cluster, topic) -> a valid (RFC 1123 subdomain), unique, deterministic object name. A topic name declared
    for several clusters is named after its cluster too (``orders`` of ``eu`` -> ``eu.orders``), since the
    documents may all go to one namespace."""
    pairs = sorted(set(topics))
    clusters_of: dict[str, int] = {}
    for _, topic in pairs:
        clusters_of[topic] = clusters_of.get(topic, 0) + 1
    wanted = {pair: pair[1] if clusters_of[pair[1]] == 1 else f"{pair[0]}.{pair[1]}" for pair in pairs}
    named = _unique_names(set(wanted.values()))
    return {pair: named[wanted[pair]] for pair in pairs}


def object_name(text: str) -> str:
    """``text`` if it is a valid object name, else a valid name derived from it (also a safe file name)."""
    return _unique_names({text})[text]


def _unique_names(wanted: Set[str]) -> dict[str, str]:
    """Each wanted name -> itself when valid, else a valid derivation with a hash of it, never one taken."""
    names: dict[str, str] = {}
    valid_as_is = {t for t in wanted if is_object_name(t)}
    for topic in sorted(wanted):
        if topic in valid_as_is:
            names[topic] = topic
            continue
        base = _NOT_ALLOWED.sub("-", topic.lower().replace("_", "-"))
        base = re.sub(r"-*\.[-.]*", ".", base).strip("-.")[: _MAX_NAME - _HASH_LENGTH - 1].rstrip("-.")
        candidate = f"{base}-{_hash(topic)}" if base else f"topic-{_hash(topic)}"
        while (
            candidate in valid_as_is or candidate in names.values()
        ):  # a hash clash: rehash, deterministically
            candidate = f"{base or 'topic'}-{_hash(candidate)}"
        names[topic] = candidate
    return names


def topic_documents(specs: Iterable[TopicSpec], target: str) -> Converted:
    """One KafkaTopic document per spec, in ``target`` (``kto`` or ``strimzi``), sorted by cluster and topic."""
    ordered = sorted(specs, key=lambda s: (s.cluster, s.name))
    names = object_names((s.cluster, s.name) for s in ordered)
    documents: list[dict[str, Any]] = []
    problems: list[str] = []
    for spec in ordered:
        if target == "strimzi":
            unexpressed = _not_in_strimzi(spec)
            if unexpressed:
                where = f" ({spec.source})" if spec.source else ""
                problems.append(
                    f"topic {spec.name} of cluster {spec.cluster}{where}: a Strimzi KafkaTopic has no "
                    f"{', '.join(unexpressed)}; convert it --to kto"
                )
                continue
            documents.append(_strimzi_document(spec, names[spec.cluster, spec.name]))
        else:
            documents.append(_kto_document(spec, names[spec.cluster, spec.name]))
    return Converted(tuple(documents), tuple(problems))


def _shared_fields(spec: TopicSpec, name: str) -> dict[str, Any]:
    """What both formats say alike: the topic name (when the object name is not it), counts and config."""
    body: dict[str, Any] = {}
    if spec.name != name:
        body["topicName"] = spec.name
    body["partitions"] = spec.partitions
    body["replicas"] = spec.replicas
    if spec.config:
        body["config"] = dict(sorted(spec.config.items()))
    return body


def _kto_only_fields(spec: TopicSpec) -> dict[str, Any]:
    """What only a kto.dev KafkaTopic can say, where it differs from the default."""
    body: dict[str, Any] = {}
    if spec.replica_assignment is not None:
        body["replicaAssignment"] = [
            list(spec.replica_assignment[p]) for p in sorted(spec.replica_assignment)
        ]
    if spec.rack_aware_mode is not RackAwareMode.ENFORCED:
        body["rackAwareMode"] = spec.rack_aware_mode.value
    if spec.deletion_policy is not DeletionPolicy.RETAIN:
        body["deletionPolicy"] = spec.deletion_policy.value
    if spec.mode is not ApplyMode.APPLY:
        body["mode"] = spec.mode.value
    return body


def _kto_document(spec: TopicSpec, name: str) -> dict[str, Any]:
    body = {"cluster": spec.cluster, **_shared_fields(spec, name), **_kto_only_fields(spec)}
    return {"apiVersion": API_VERSION, "kind": "KafkaTopic", "metadata": {"name": name}, "spec": body}


def _not_in_strimzi(spec: TopicSpec) -> list[str]:
    """What a Strimzi KafkaTopic (topicName, partitions, replicas, config) cannot say of ``spec``."""
    return list(_kto_only_fields(spec))


def _strimzi_document(spec: TopicSpec, name: str) -> dict[str, Any]:
    body = _shared_fields(spec, name)
    return {
        "apiVersion": STRIMZI_API_VERSION,
        "kind": "KafkaTopic",
        "metadata": {"name": name, "labels": {STRIMZI_CLUSTER_LABEL: spec.cluster}},
        "spec": body,
    }
