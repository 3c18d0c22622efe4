"""KafkaTopic / KafkaCluster documents -> ``TopicSpec`` / ``ClusterSpec``, with every problem reported at once.

What comes in is hand-written YAML in a Git repository, a ``kubectl get kafkatopics -A -o json`` export, or
Strimzi ``KafkaTopic`` manifests being migrated, so the loader's job is as much to explain as to convert: each
document is checked against the CRD's own schema (what ``kubectl apply`` would refuse), then against Kafka's rules
(what the brokers would refuse), and every failure becomes one ``ManifestError`` naming the file, the document,
the field path, the value and the rule. All errors are collected, never only the first, so one CI run shows them
all; a topic with an error is left out of the result and never blocks the others.

The CRDs are read from the package's copy (``topic_operator/crd/``, package data), which a test keeps
byte-identical to the repository's ``crds/``: the schema applied here is the one installed in the cluster, in a
checkout and in an installed wheel alike. How schema failures are worded lives in ``manifests.schema``.

Input is treated as hostile (``kto validate`` runs on pull requests from anyone): files are read within the limits
of ``manifests.limits`` (regular files only, bounded bytes; YAML bounded in depth, aliases, scalars and documents
while it is parsed, see ``manifests.bounded_yaml``), API objects given already parsed are held to the same depth, size and
string limits, and every message is one bounded, escaped line (``message_text``).

Pure apart from reading files: no ZooKeeper, no Kubernetes API.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from enum import Enum
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeGuard

from topic_operator.connect_string import connect_string_problem
from topic_operator.crd.cel_equivalents import FastCelRules
from topic_operator.kafka.assignment import RackAwareMode, validate_replica_assignment
from topic_operator.kafka.broker_settings import BrokerSettings, broker_setting_problem
from topic_operator.kafka.errors import InvalidConfigurationError, KafkaError, TopicAuthorizationError
from topic_operator.kafka.java_lang import LONG_MAX
from topic_operator.kafka.releases import (
    ALL_KAFKA_VERSIONS,
    DEFAULT_KAFKA_VERSION,
    KRAFT_ONLY_VERSIONS,
    KafkaVersion,
    format_version,
)
from topic_operator.kafka.topic_configs import TOPIC_CONFIGS, checked_by_some_line, checked_topic_config
from topic_operator.kafka.topic_names import is_internal, unify_collision_chars, validate_topic_name
from topic_operator.manifests.bounded_yaml import LoadBudget, YamlReadError, yaml_documents
from topic_operator.manifests.files import (
    MANIFEST_SUFFIXES,
    STDIN,
    FileReadError,
    display_name,
    find_manifest_files,
    read_manifest_text,
)
from topic_operator.manifests.limits import ManifestLimits, limits_from_environment, object_problem
from topic_operator.manifests.schema import API_VERSION, CRD_FILES, MISSING, crd_schema, schema_problems
from topic_operator.manifests.topicctl import (
    TOPICCTL_KIND,
    field_names,
    is_topicctl_topic,
    read_topicctl_topic,
)
from topic_operator.message_text import NAME_LIMIT, PATH_LIMIT, one_line, shortened, shown
from topic_operator.model import (
    ALL_CONFIG_MANAGED,
    ApplyMode,
    ClusterSpec,
    ConfigJudgement,
    DeletionPolicy,
    ManagedConfig,
    ReassignmentPolicy,
    TopicSpec,
)
from topic_operator.plan import unowned_key_problem
from topic_operator.tenants.grants import Tenancy, read_tenancy
from topic_operator.tenants.rules import Declared, Tenant, Usage, grant_admitting, limit_violation, over_quota

__all__ = [
    "MISSING",
    "STRIMZI_API_VERSIONS",
    "STRIMZI_CLUSTER_LABEL",
    "ManifestError",
    "ManifestWarning",
    "Manifests",
    "TenantRules",
    "load_manifests",
    "load_objects",
]

GROUP: Final = API_VERSION.split("/")[0]
STRIMZI_GROUP: Final = "kafka.strimzi.io"
STRIMZI_API_VERSIONS: Final = (
    "kafka.strimzi.io/v1alpha1",
    "kafka.strimzi.io/v1beta1",
    "kafka.strimzi.io/v1beta2",
    "kafka.strimzi.io/v1",
)
"""Every version Strimzi served KafkaTopic in. The ZooKeeper-era v1alpha1 and v1beta1 have the same four spec fields
as v1beta2 (and required partitions and replicas, as this reader does), so a team's older manifests read as is."""
STRIMZI_CLUSTER_LABEL: Final = "strimzi.io/cluster"
_STRIMZI_SPEC_FIELDS: Final = ("topicName", "partitions", "replicas", "config")
_DNS_SUBDOMAIN: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LISTED_PARTITIONS_LIMIT: Final = 10


class TenantRules(Enum):
    """How much of a KafkaCluster's grants (``spec.tenants``) the loader applies to the KafkaTopics of other
    namespaces among the documents."""

    NONE = "none"
    """None: the operator judges grants itself, with the namespaces' labels and Kafka's state."""
    NAMES = "names"
    """Which namespaces and topic names are granted (Forbidden): ``kto plan`` and ``kto apply``, which judge the
    limits and quotas against the cluster, where a change is judged on what it changes."""
    ALL = "all"
    """Names, every per-topic limit on the whole declaration, and each namespace's quota over the documents:
    ``kto validate``, which has no cluster to compare with."""


# ---------------------------------------------------------------------------------------------------------------
# Results.


@dataclass(frozen=True, slots=True)
class ManifestError:
    """One invalid document, field or value.

    ``document_index`` counts the YAML documents of ``file`` from 1 (0: the file as a whole). ``field_path`` is
    the path inside the document (``spec.config.retention.ms``; ``items[3].spec.partitions`` inside a List);
    ``value`` is ``MISSING`` for an absent field. ``name`` is ``namespace/name`` when the document has a
    namespace. ``rule`` says what is wrong, in Kafka's own words where the rule is Kafka's.

    Every text field holds what came from input already shortened and escaped (``error_at`` builds them), so a
    consumer that prints ``field_path`` and ``rule`` itself gets bounded, single-line text too; ``value`` is the
    value as read, shown bounded by ``str``.
    """

    file: str
    document_index: int
    kind: str
    name: str
    field_path: str
    value: object
    rule: str
    stricter_than_kafka: bool = False
    """The rule is the product's own, stricter than Kafka's (a value Kafka takes but its brokers then fail on,
    say): Kafka itself would accept the value."""

    def __str__(self) -> str:
        where = _location(self.file, self.document_index, self.kind, self.name)
        if not self.field_path:
            return one_line(f"{where}: {self.rule}")
        if self.value is MISSING:
            return one_line(f"{where}: {self.field_path}: {self.rule}")
        return one_line(f"{where}: {self.field_path} = {shown(self.value)}: {self.rule}")


def error_at(
    file: str,
    document_index: int,
    kind: object,
    name: object,
    field_path: str,
    value: object,
    rule: str,
    *,
    stricter_than_kafka: bool = False,
) -> ManifestError:
    """A ``ManifestError`` whose text fields are bounded and escaped."""
    return ManifestError(
        shortened(file, PATH_LIMIT),
        document_index,
        _bounded_text(kind, NAME_LIMIT),
        _bounded_text(name, NAME_LIMIT),
        shortened(field_path, PATH_LIMIT),
        value,
        one_line(rule),
        stricter_than_kafka,
    )


def _bounded_text(value: object, limit: int) -> str:
    return shortened(value, limit) if isinstance(value, str) else (shown(value, limit) if value else "")


@dataclass(frozen=True, slots=True)
class ManifestWarning:
    """A document that was ignored, or checked with less information than it could have been."""

    file: str
    document_index: int
    kind: str
    name: str
    message: str

    def __str__(self) -> str:
        return one_line(f"{_location(self.file, self.document_index, self.kind, self.name)}: {self.message}")


def warning_at(file: str, document_index: int, kind: object, name: object, message: str) -> ManifestWarning:
    """A ``ManifestWarning`` whose text fields are bounded and escaped."""
    return ManifestWarning(
        shortened(file, PATH_LIMIT),
        document_index,
        _bounded_text(kind, NAME_LIMIT),
        _bounded_text(name, NAME_LIMIT),
        one_line(message),
    )


@dataclass(frozen=True, slots=True)
class Manifests:
    """What a set of files declares: the valid topics and clusters, and why the rest is not valid."""

    topics: tuple[TopicSpec, ...]
    clusters: tuple[ClusterSpec, ...]
    errors: tuple[ManifestError, ...]
    warnings: tuple[ManifestWarning, ...]
    files: int = 0
    documents: int = 0
    tenants: Mapping[tuple[str, str], Tenant] = field(default_factory=dict)
    """(cluster, topic) -> the namespace that declares the topic, for the valid topics a KafkaCluster among the
    documents grants to another namespace than its own: what ``tenancy.judge_plan`` needs for their plans."""

    def tenants_of(self, cluster: str) -> dict[str, Tenant]:
        """The granted topics of ``cluster`` by name, in document order."""
        return {topic: tenant for (name, topic), tenant in self.tenants.items() if name == cluster}

    @property
    def ok(self) -> bool:
        return not self.errors

    def cluster(self, name: str) -> ClusterSpec | None:
        return next((c for c in self.clusters if c.name == name), None)

    def topics_of(self, cluster: str) -> tuple[TopicSpec, ...]:
        return tuple(t for t in self.topics if t.cluster == cluster)

    def summary(self) -> str:
        """One line for the end of a report: what was read, what is valid, what is wrong."""
        read = f"{_count(self.files, 'file')}, {_count(self.documents, 'document')}"
        valid = f"{_count(len(self.clusters), 'cluster')} and {_count(len(self.topics), 'topic')} valid"
        warned = f", {_count(len(self.warnings), 'warning')}" if self.warnings else ""
        if self.ok:
            return f"OK: {read}: {valid}{warned}"
        return f"FAILED: {_count(len(self.errors), 'error')} in {read} ({valid}{warned})"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _location(file: str, document_index: int, kind: str, name: str) -> str:
    place = f"{file}#{document_index}" if document_index else file
    what = " ".join(part for part in (kind, name) if part)
    return f"{place} {what}" if what else place


# ---------------------------------------------------------------------------------------------------------------
# Reading files.


@dataclass(slots=True)
class _Document:
    """One Kubernetes object: where it is, what it says, and what is wrong with it."""

    file: str
    index: int
    prefix: str
    """``items[3].`` for an item of a List, else empty: field paths are relative to the YAML document."""
    body: Mapping[str, Any]
    max_errors: int
    errors: list[ManifestError] = field(default_factory=list)
    unlisted_errors: int = 0
    blocked_cel: bool = False
    """The schema check found a failure after which the API server does not evaluate the CEL rules."""
    refused: bool = False
    """The YAML document it comes from has a problem of its own (a key given twice): reported once, for the
    whole YAML document, and nothing of it is used."""
    dialect: str = ""
    """Set for a document of another tool's format, read by conversion (``TOPICCTL_KIND``): messages name it so."""
    field_names: Mapping[str, str] = field(default_factory=dict)
    """Converted field -> the field of the original document, for messages about the converted body."""

    _pruned: Mapping[str, Any] | None = None

    @property
    def pruned_body(self) -> Mapping[str, Any]:
        """The body as the API server validates it: null spec fields pruned (computed once)."""
        if self._pruned is None:
            self._pruned = _without_null_spec_fields(self.body)
        return self._pruned

    @property
    def usable(self) -> bool:
        return not self.errors and not self.unlisted_errors and not self.refused

    @property
    def kind(self) -> str:
        if self.dialect:
            return self.dialect
        kind = self.body.get("kind", "")
        return kind if isinstance(kind, str) else ""

    @property
    def metadata(self) -> Mapping[str, Any]:
        metadata = self.body.get("metadata")
        # ``type() is dict`` first: the ABC's isinstance costs more than the rest of this, 250,000 times a load
        return metadata if type(metadata) is dict or isinstance(metadata, Mapping) else {}

    @property
    def name(self) -> str:
        if self.dialect == TOPICCTL_KIND:
            meta = self.body.get("meta")
            name = meta.get("name") if isinstance(meta, Mapping) else None
            return name if isinstance(name, str) else ""
        name, namespace = self.metadata.get("name"), self.metadata.get("namespace")
        if not isinstance(name, str):
            return ""
        return f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name

    @property
    def source(self) -> str:
        """Where the declaration is, for messages and ``TopicSpec.source``: ``file#2``, ``file#1/items[3]``."""
        item = f"/{self.prefix.rstrip('.')}" if self.prefix else ""
        return f"{self.file}#{self.index}{item}"

    def error(self, path: str, value: object, rule: str, *, stricter_than_kafka: bool = False) -> None:
        if len(self.errors) >= self.max_errors:
            self.unlisted_errors += 1
            return
        path = self._original_field(path)
        full = f"{self.prefix}{path}" if path else self.prefix.rstrip(".")
        self.errors.append(
            error_at(
                self.file,
                self.index,
                self.kind,
                self.name,
                full,
                value,
                rule,
                stricter_than_kafka=stricter_than_kafka,
            )
        )

    def _original_field(self, path: str) -> str:
        """``path`` of a converted body as the field of the document it came from (the longest match)."""
        for converted in sorted(self.field_names, key=len, reverse=True):
            if path == converted or path.startswith(f"{converted}."):
                return self.field_names[converted] + path[len(converted) :]
        return path

    def warning(self, message: str) -> ManifestWarning:
        return warning_at(self.file, self.index, self.kind, self.name, message)

    def listed_errors(self) -> list[ManifestError]:
        """The first error of each field, and one line for the problems past the per-document limit."""
        errors = _one_per_field(self.errors)
        if self.unlisted_errors:
            rule = (
                f"further problems of this document are not listed (at most {self.max_errors} are: "
                "KTO_MANIFEST_MAX_ERRORS_PER_DOCUMENT raises the limit)"
            )
            errors.append(
                error_at(self.file, self.index, self.kind, self.name, self.prefix.rstrip("."), MISSING, rule)
            )
        return errors


class _Collector:
    """Everything read so far, in reading order, within the limits of one load."""

    def __init__(self, limits: ManifestLimits) -> None:
        self.limits = limits
        self.budget = LoadBudget(limits)
        self.documents: list[_Document] = []
        self.file_errors: list[ManifestError] = []
        self.warnings: list[ManifestWarning] = []
        self.files: list[str] = []
        """Every file opened, in reading order (also those whose text could not be used)."""
        self.yaml_documents = 0

    def file_error(self, file: str, index: int, rule: str) -> None:
        self.file_errors.append(error_at(file, index, "", "", "", MISSING, rule))

    def add_object(
        self, body: object, file: str, index: int, prefix: str = "", *, refused: bool = False
    ) -> None:
        kind = body.get("kind") if isinstance(body, Mapping) else None
        api_version = body.get("apiVersion") if isinstance(body, Mapping) else None
        if is_topicctl_topic(body) and not prefix:
            assert isinstance(body, Mapping)
            max_errors = self.limits.max_errors_per_document
            document = _Document(
                file, index, prefix, body, max_errors, refused=refused, dialect=TOPICCTL_KIND
            )
            self.documents.append(document)
            return
        if not (isinstance(kind, str) and kind and isinstance(api_version, str) and api_version):
            where = f"{prefix.rstrip('.')}: " if prefix else ""
            message = (
                f"{where}not a Kubernetes object (no apiVersion or kind) nor a topicctl topic file: ignored"
            )
            self.warnings.append(warning_at(file, index, kind if isinstance(kind, str) else "", "", message))
            return
        assert isinstance(body, Mapping)
        items = body.get("items")
        if kind.endswith("List") and isinstance(items, list):
            for number, entry in enumerate(items):
                self.add_object(entry, file, index, f"{prefix}items[{number}].", refused=refused)
            return
        document = _Document(file, index, prefix, body, self.limits.max_errors_per_document, refused=refused)
        self.documents.append(document)

    def read_path(self, given: str, seen: set[str], stdin: BinaryIO | None) -> None:
        """A path as given: a file, a directory of manifests, or ``-`` for standard input."""
        found = find_manifest_files(given, self.budget)
        for path, why in found.skipped:
            self.warnings.append(warning_at(path, 0, "", "", why))
        if found.error is not None:
            self.file_error(given, 0, found.error)
        if not found.files and found.error is None:
            suffixes = " or ".join(f"*{suffix}" for suffix in MANIFEST_SUFFIXES)
            self.warnings.append(warning_at(given, 0, "", "", f"no {suffixes} files in this directory"))
        for path in found.files:
            identity = path if path == STDIN else str(Path(path).resolve())
            if identity not in seen:
                seen.add(identity)
                self.read_file(path, stdin)

    def read_file(self, path: str, stdin: BinaryIO | None = None) -> None:
        file = display_name(path)
        opened = self.budget.files
        try:
            text = read_manifest_text(path, self.budget, stdin)
        except FileReadError as error:
            if self.budget.files > opened:
                self.files.append(file)
            self.file_error(file, 0, str(error))
            return
        self.files.append(file)
        try:
            for document in yaml_documents(text, self.budget):
                for problem in document.problems:
                    self.file_error(file, document.index, problem)
                if document.value is not None:
                    self.yaml_documents += 1
                    self.add_object(document.value, file, document.index, refused=bool(document.problems))
        except YamlReadError as error:
            self.file_error(file, error.index, error.message)

    def add_api_objects(self, objects: Iterable[object], origin: str) -> None:
        """Objects already parsed (API bodies): each held to the depth, string and size limits before it is read,
        since no YAML parser bounded them."""
        self.files.append(origin)
        for index, body in enumerate(objects, start=1):
            self.budget.documents += 1
            if self.budget.documents > self.limits.max_documents:
                rule = (
                    f"more than {self.limits.max_documents:,} objects: the rest is not read "
                    "(KTO_MANIFEST_MAX_DOCUMENTS raises the limit)"
                )
                self.file_error(origin, index, rule)
                return
            self.yaml_documents += 1
            problem = object_problem(body, self.limits)
            if problem is not None:
                self.file_error(origin, index, problem)
                continue
            self.add_object(body, origin, index)


# ---------------------------------------------------------------------------------------------------------------
# Entry points.


def load_manifests(
    paths: Iterable[str | Path],
    *,
    check_cel: bool = False,
    limits: ManifestLimits | None = None,
    stdin: BinaryIO | None = None,
    kafka_version: KafkaVersion | None = DEFAULT_KAFKA_VERSION,
    tenant_rules: TenantRules = TenantRules.NONE,
) -> Manifests:
    """Read files and directories of manifests, and ``-`` for standard input, into specs and errors.

    A directory stands for its ``*.yaml``/``*.yml`` files, recursively, sorted, hidden entries skipped; a file
    given by name may have any extension (a kubectl JSON export). ``limits`` defaults to the environment's
    (``manifests.limits``); ``stdin`` to the process's standard input.

    ``check_cel`` also evaluates the CRDs' CEL rules on each kto.dev document (without an old object), as the
    API server does on a create. ``kto validate`` asks for it; plan and apply need not, since the Kafka-rule
    checks cover the same ground with more precise messages.

    ``kafka_version``: the release line a topic's config is checked against when no KafkaCluster among the
    documents declares its cluster (``kto --kafka-version``); None for brokers that will say their own (``kto
    --bootstrap-server`` without ``--kafka-version``): every line they could run is tried, and the plan judges by
    theirs.

    ``tenant_rules``: how much of the KafkaClusters' grants to hold the KafkaTopics of other namespaces to. A
    ``v1`` Namespace among the documents gives its labels to the grants that select namespaces by label; a
    namespace without one matches only the grants that list it by name.
    """
    collector = _Collector(limits if limits is not None else limits_from_environment())
    seen: set[str] = set()
    for given in paths:
        collector.read_path(str(given), seen, stdin)
    return _convert(collector, check_cel, kafka_version, tenant_rules)


def load_objects(
    objects: Iterable[Mapping[str, Any]],
    *,
    origin: str = "objects",
    check_cel: bool = False,
    limits: ManifestLimits | None = None,
) -> Manifests:
    """Objects already parsed (Kubernetes API bodies, JSON), each reported as document ``origin#n``.

    Each object is first held to ``limits`` (default: the environment's) for nesting depth, string length and
    size; one that exceeds them is an error of its own and is not read further.
    """
    collector = _Collector(limits if limits is not None else limits_from_environment())
    collector.add_api_objects(objects, origin)
    return _convert(collector, check_cel, DEFAULT_KAFKA_VERSION, TenantRules.NONE)


def _convert(
    collector: _Collector, check_cel: bool, fallback: KafkaVersion | None, tenant_rules: TenantRules
) -> Manifests:
    """Read each document, then the checks that need other documents (clusters for configs, duplicates), then
    CEL last: where two checks fail on one field, the first reported is kept (``_one_per_field``)."""
    topics: list[_Topic] = []
    clusters: list[_Cluster] = []
    warnings = list(collector.warnings)
    labels: dict[str, Mapping[str, str]] = {}
    for document in collector.documents:
        declared = _read_document(document, warnings, labels)
        if isinstance(declared, _Topic):
            topics.append(declared)
        elif isinstance(declared, _Cluster):
            clusters.append(declared)
    by_name = _unique_clusters(clusters)
    cluster_names = {c.document.metadata.get("name") for c in clusters}
    warnings += _check_topics_against_clusters(topics, by_name, cluster_names, fallback)
    tenants = _check_tenancy(topics, by_name, labels, tenant_rules)
    _check_conflicts(topics)
    if check_cel:
        for document in collector.documents:
            if document.body.get("apiVersion") == API_VERSION and document.kind in CRD_FILES:
                _check_cel(document)
    order = {shortened(file, PATH_LIMIT): number for number, file in enumerate(collector.files)}
    errors = [*collector.file_errors, *(e for d in collector.documents for e in d.listed_errors())]
    errors.sort(key=lambda e: (order.get(e.file, -1), e.document_index))
    warnings.sort(key=lambda w: (order.get(w.file, -1), w.document_index))
    return Manifests(
        topics=tuple(t.spec for t in topics if t.spec is not None and t.document.usable),
        clusters=tuple(c.spec for c in by_name.values() if c.spec is not None and c.document.usable),
        errors=tuple(errors),
        warnings=tuple(warnings),
        files=len(collector.files),
        documents=collector.yaml_documents,
        tenants={key: tenant for key, (topic, tenant) in tenants.items() if topic.document.usable},
    )


def _one_per_field(errors: list[ManifestError]) -> list[ManifestError]:
    """The first error of each field, in field order. The name checks run before the schema check, so a bad
    topic name is explained in Kafka's words rather than as a failed pattern; CEL runs last, so its failures
    show only where nothing else has explained the field (they say the same, less precisely)."""
    by_path: dict[str, ManifestError] = {}
    for error in errors:
        by_path.setdefault(error.field_path, error)
    return sorted(by_path.values(), key=lambda e: e.field_path)


# ---------------------------------------------------------------------------------------------------------------
# One document.


@dataclass(slots=True)
class _Topic:
    document: _Document
    cluster: str | None
    name: str | None
    name_path: str
    """Where the name comes from: ``spec.topicName`` or ``metadata.name``."""
    fields: Mapping[str, Any]
    spec: TopicSpec | None = None
    cluster_namespace: str | None = None
    """The namespace ``spec.cluster`` names (``<namespace>/<name>``), or None: the KafkaTopic's own."""

    @property
    def namespace(self) -> str | None:
        """The namespace the document declares itself in (None: not said, the one it is applied to)."""
        namespace = self.document.metadata.get("namespace")
        return namespace if isinstance(namespace, str) and namespace else None


@dataclass(slots=True)
class _Cluster:
    document: _Document
    spec: ClusterSpec | None


def _read_document(
    document: _Document, warnings: list[ManifestWarning], labels: dict[str, Mapping[str, str]]
) -> _Topic | _Cluster | None:
    """Which declaration a document is, by its group, kind and version, each judged on its own: a wrong kind is
    not blamed on the version. A Namespace gives its labels (``labels``) to the grants that select by them."""
    if document.dialect == TOPICCTL_KIND:
        return _read_topicctl_topic(document, warnings)
    api_version, kind = str(document.body["apiVersion"]), document.kind
    if api_version == "v1" and kind == "Namespace":
        name, found = document.metadata.get("name"), document.metadata.get("labels")
        if isinstance(name, str):
            labels[name] = {str(k): str(v) for k, v in found.items()} if isinstance(found, Mapping) else {}
        return None
    group = _api_group(api_version)
    if group == GROUP:
        kinds = " and ".join(CRD_FILES)
        if kind not in CRD_FILES:
            document.error("kind", kind, f"{GROUP} serves the kinds {kinds} only (kinds are case-sensitive)")
            return None
        if api_version != API_VERSION:
            document.error("apiVersion", api_version, f"{GROUP} serves {kinds} in {API_VERSION}")
            return None
        body = document.pruned_body
        _check_object_name(document)
        declared = (
            _read_cluster(document, body, warnings) if kind == "KafkaCluster" else _read_topic(document, body)
        )
        _add_schema_errors(document, kind, body)
        return declared
    if group == STRIMZI_GROUP and kind == "KafkaTopic":
        if api_version in STRIMZI_API_VERSIONS:
            return _read_strimzi_topic(document)
        versions = ", ".join(STRIMZI_API_VERSIONS[:-1]) + " and " + STRIMZI_API_VERSIONS[-1]
        document.error("apiVersion", api_version, f"Strimzi KafkaTopics are read in {versions} only")
        return None
    warnings.append(document.warning(f"ignored: {api_version} {kind} is not a topic or cluster declaration"))
    return None


def _api_group(api_version: str) -> str:
    """The API group of an ``apiVersion``: before the ``/``; a dotted name without one is a group missing its
    version (``kto.dev``); anything else is the core group (``v1``)."""
    if "/" in api_version:
        return api_version.split("/", 1)[0]
    return api_version if "." in api_version else ""


def _without_null_spec_fields(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The API server prunes null fields (``config:`` left empty) before validating; so do we."""
    spec = body.get("spec")
    if not isinstance(spec, Mapping):
        return body
    return {**body, "spec": {k: v for k, v in spec.items() if v is not None}}


def _read_strimzi_topic(document: _Document) -> _Topic:
    """A Strimzi KafkaTopic is our KafkaTopic with the cluster named by a label and four spec fields."""
    _check_object_name(document)
    body = _without_null_spec_fields(document.body)
    spec = _mapping(body.get("spec"))
    for unknown in sorted(set(spec) - set(_STRIMZI_SPEC_FIELDS)):
        known = ", ".join(_STRIMZI_SPEC_FIELDS)
        document.error(
            f"spec.{unknown}", spec[unknown], f"unknown field of a Strimzi KafkaTopic (known: {known})"
        )
    labels = document.metadata.get("labels")
    cluster = labels.get(STRIMZI_CLUSTER_LABEL) if isinstance(labels, Mapping) else None
    label_path = f"metadata.labels.{STRIMZI_CLUSTER_LABEL}"
    if cluster is None:
        rule = f"a Strimzi KafkaTopic names its Kafka cluster with the {STRIMZI_CLUSTER_LABEL} label"
        document.error(label_path, MISSING, rule)
    converted_spec = {k: v for k, v in spec.items() if k in _STRIMZI_SPEC_FIELDS}
    if cluster is not None:
        converted_spec["cluster"] = cluster
    converted = {**body, "apiVersion": API_VERSION, "spec": converted_spec}
    topic = _read_topic(document, converted)
    _add_schema_errors(document, "KafkaTopic", converted, renamed={"spec.cluster": label_path}, strimzi=True)
    return topic


def _read_topicctl_topic(document: _Document, warnings: list[ManifestWarning]) -> _Topic | None:
    """A topicctl topic file, converted (``manifests.topicctl``), then read as a KafkaTopic: every message names
    topicctl's fields."""
    converted = read_topicctl_topic(document.body)
    for path, value, rule in converted.problems:
        document.error(path, value, rule)
    warnings += [document.warning(note) for note in converted.notes]
    if converted.body is None:
        return None
    document.field_names = field_names(retention_from_minutes=converted.retention_from_minutes)
    spec = converted.body["spec"]
    cluster, name = spec.get("cluster"), spec.get("topicName")
    topic = _named_topic(document, cluster, name, "spec.topicName", spec)
    _add_schema_errors(document, "KafkaTopic", converted.body)
    return topic


def _read_topic(document: _Document, body: Mapping[str, Any]) -> _Topic:
    """The fields of a topic and the checks that need no cluster (the name); the rest runs once the clusters
    are known (``_check_topics_against_clusters``)."""
    spec = _mapping(body.get("spec"))
    cluster = spec.get("cluster")
    if "topicName" in spec:
        name, name_path = spec["topicName"], "spec.topicName"
    else:
        name, name_path = document.metadata.get("name"), "metadata.name"
    return _named_topic(document, cluster, name, name_path, spec)


def _named_topic(
    document: _Document, cluster: object, name: object, name_path: str, spec: Mapping[str, Any]
) -> _Topic:
    """A topic and the checks of its name (Kafka's rules, not an internal topic). A cluster named
    ``<namespace>/<name>`` is the KafkaCluster ``name``: kto names clusters by name alone."""
    namespace = None
    if isinstance(cluster, str) and cluster.count("/") == 1:
        namespace, cluster = cluster.split("/")
    topic = _Topic(
        document,
        cluster if isinstance(cluster, str) else None,
        name if isinstance(name, str) else None,
        name_path,
        spec,
        cluster_namespace=namespace,
    )
    if topic.name is None:
        return topic
    try:
        validate_topic_name(topic.name)
    except KafkaError as error:
        document.error(name_path, topic.name, str(error))
    if is_internal(topic.name):
        rule = f"Topic {topic.name} is a Kafka internal topic: kafka-topic-operator never creates, changes or deletes it."
        document.error(name_path, topic.name, rule)
    return topic


def _read_cluster(document: _Document, body: Mapping[str, Any], warnings: list[ManifestWarning]) -> _Cluster:
    spec = _mapping(body.get("spec"))
    name = document.metadata.get("name")
    zookeeper = spec.get("zookeeper")
    connect = _mapping(zookeeper).get("connect") if zookeeper is not None else ""
    bootstrap = spec.get("bootstrapServers")
    prefixes = spec.get("allowedTopicPrefixes", [])
    version = spec.get("kafkaVersion", format_version(DEFAULT_KAFKA_VERSION))
    version_declared = "kafkaVersion" in spec
    allow_delete = spec.get("allowDelete", False)
    reassignment = _reassignment(spec.get("reassignment", {}))
    broker_settings = _broker_settings(document, spec.get("brokerConfig", {}))
    managed_config = _managed_config(document, spec.get("managedTopicConfig"))
    known = {format_version(v): v for v in ALL_KAFKA_VERSIONS}
    if (
        not isinstance(name, str)
        or not isinstance(connect, str)
        or not isinstance(bootstrap, str | None)
        or (not connect and not bootstrap)
        or not isinstance(prefixes, list)
        or not all(isinstance(p, str) for p in prefixes)
        or not isinstance(version, str)
        or version not in known
        or not isinstance(allow_delete, bool)
        or reassignment is None
        or broker_settings is None
        or managed_config is None
    ):
        return _Cluster(document, None)  # the schema check explains what is wrong
    if connect and (connect_problem := connect_string_problem(connect)) is not None:
        document.error("spec.zookeeper.connect", connect, connect_problem)
    if known[version] in KRAFT_ONLY_VERSIONS and connect:
        document.error(
            "spec.kafkaVersion",
            version,
            f"Kafka {version} runs only in KRaft mode and has no ZooKeeper: reach it through bootstrapServers, "
            "without zookeeper",
        )
    settings = ClusterSpec(
        name=name,
        zookeeper_connect=connect,
        bootstrap_servers=bootstrap,
        allow_delete=allow_delete,
        allowed_topic_prefixes=tuple(prefixes),
        kafka_version=known[version],
        source=document.source,
        reassignment=reassignment,
        broker_settings=broker_settings,
        tenancy=_tenancy(document, spec.get("tenants"), warnings),
        managed_config=managed_config,
        kafka_version_declared=version_declared,
    )
    return _Cluster(document, settings)


def _managed_config(document: _Document, value: object) -> ManagedConfig | None:
    """``spec.managedTopicConfig``: absent, every key; ``only`` or ``allBut`` a list of topic config keys, each
    one some Kafka release line defines (a misspelt key would silently hand the intended one to the
    declarations, or take it from them). None when the shape is wrong (the schema check explains it)."""
    if value is None:
        return ALL_CONFIG_MANAGED
    if not isinstance(value, Mapping):
        return None
    if ("only" in value) == ("allBut" in value):  # the CRD's rule, for documents read without it
        document.error(
            "spec.managedTopicConfig", value, "managedTopicConfig takes exactly one of only and allBut"
        )
        return None
    field_name = "only" if "only" in value else "allBut"
    keys = _config_keys(document, f"spec.managedTopicConfig.{field_name}", value[field_name])
    if keys is None:
        return None
    return ManagedConfig(only=keys) if field_name == "only" else ManagedConfig(all_but=keys)


def _config_keys(document: _Document, path: str, value: object) -> frozenset[str] | None:
    """A list of topic config keys, each one that some release line from 2.0 to 4.1 defines (one error per key
    that none does); None when it is not a list of strings (the schema check explains it)."""
    if not isinstance(value, list) or not all(isinstance(key, str) for key in value):
        return None
    for index, key in enumerate(value):
        if key not in TOPIC_CONFIGS:
            document.error(
                f"{path}[{index}]",
                key,
                f"Unknown topic config name: {key} (no Kafka release from 2.0 to 4.1 defines it)",
            )
    return frozenset(value)


def _tenancy(document: _Document, tenants: object, warnings: list[ManifestWarning]) -> Tenancy:
    """The KafkaCluster's grants. One that cannot be read grants nothing, with a warning: the CRD's schema refuses
    most of them as errors, and a bad grant must not take the cluster, and its own namespace's topics, down."""
    namespace = document.metadata.get("namespace")
    tenancy = read_tenancy(namespace if isinstance(namespace, str) else "", tenants)
    warnings += [document.warning(problem) for problem in tenancy.problems]
    return tenancy


def _broker_settings(document: _Document, value: object) -> BrokerSettings | None:
    """``spec.brokerConfig``: each setting one kto reads, with a value of its type (one error per bad one);
    None when it is not a map of strings (the schema check explains) or a setting is refused."""
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        return None
    refused = False
    for key, setting in sorted(value.items()):
        problem = broker_setting_problem(key, setting)
        if problem is not None and isinstance(setting, str):
            document.error(f"spec.brokerConfig.{key}", setting, problem)
            refused = True
        elif problem is not None:
            refused = True  # not a string: the schema check explains
    return None if refused else BrokerSettings.of(value)


def _reassignment(value: object) -> ReassignmentPolicy | None:
    """``spec.reassignment`` (absent: off, no throttle); None when a field has the wrong type or is out of range,
    which the schema check explains (``spec.reassignment.throttleBytesPerSecond = 0: must be at least 1``)."""
    if not isinstance(value, Mapping):
        return None
    enabled = value.get("enabled", False)
    throttle = value.get("throttleBytesPerSecond")
    if not isinstance(enabled, bool):
        return None
    if throttle is not None and (
        isinstance(throttle, bool) or not isinstance(throttle, int) or not 1 <= throttle <= LONG_MAX
    ):
        return None
    return ReassignmentPolicy(enabled=enabled, throttle_bytes_per_second=throttle)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def _check_object_name(document: _Document) -> None:
    """metadata.name as the API server checks it: a Kafka name that is not a valid object name goes in
    spec.topicName."""
    name = document.metadata.get("name")
    if name is None:
        document.error("metadata.name", MISSING, "required field is missing")
    elif not isinstance(name, str) or len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        document.error(
            "metadata.name",
            name,
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
            "must start and end with an alphanumeric character (at most 253 characters); a Kafka topic name "
            "that is not one goes in spec.topicName",
        )


def _add_schema_errors(
    document: _Document,
    kind: str,
    body: Mapping[str, Any],
    *,
    renamed: Mapping[str, str] | None = None,
    strimzi: bool = False,
) -> None:
    """The CRD schema's verdict. A converted Strimzi document's cluster errors point at the label it came from."""
    for problem in schema_problems(kind, body, strimzi=strimzi, limit=document.max_errors + 1):
        path = (renamed or {}).get(problem.path, problem.path)
        document.error(path, problem.value, problem.rule)
        document.blocked_cel = document.blocked_cel or problem.blocking


# ---------------------------------------------------------------------------------------------------------------
# Rules that need the cluster (configs per Kafka version, prefixes), the assignment, then conflicts.


def _unique_clusters(clusters: list[_Cluster]) -> dict[str, _Cluster]:
    """Clusters by name. kto names a cluster by its KafkaCluster name alone (the CLI's --cluster, the drift
    job's join key), so two KafkaClusters of one name, even in different namespaces, are a conflict."""
    by_name: dict[str, _Cluster] = {}
    for cluster in clusters:
        if cluster.spec is None:
            continue
        first = by_name.setdefault(cluster.spec.name, cluster)
        if first is not cluster:
            places = f"{first.document.source} and {cluster.document.source}"
            rule = f"KafkaCluster {cluster.spec.name} is declared more than once: at {places}"
            for declaration in (first, cluster):
                declaration.document.error("metadata.name", cluster.spec.name, rule)
    return by_name


def _check_topics_against_clusters(
    topics: list[_Topic],
    clusters: Mapping[str, _Cluster],
    declared: Set[object],
    fallback: KafkaVersion | None,
) -> list[ManifestWarning]:
    """Configs are checked with the cluster's Kafka version and names against its prefixes; a topic whose
    cluster is not among the documents (or is invalid) is checked as for Kafka ``fallback``, with a warning."""
    warnings: list[ManifestWarning] = []
    warned: set[str] = set()
    for topic in topics:
        cluster = clusters.get(topic.cluster) if topic.cluster is not None else None
        if cluster is not None:
            _check_cluster_namespace(topic, cluster)
        settings = cluster.spec if cluster is not None and not cluster.document.errors else None
        if settings is None and topic.cluster is not None and topic.cluster not in warned:
            warned.add(topic.cluster)
            state = "is not valid" if topic.cluster in declared else "is not among the documents read"
            against = (
                f"Kafka {format_version(fallback)}"
                if fallback is not None
                else "every Kafka release line the brokers could run"
            )
            message = (
                f"KafkaCluster {topic.cluster} {state}: topic configs are checked against {against} and no "
                "topic prefix limit applies"
            )
            warnings.append(topic.document.warning(message))
        topic.spec = _topic_spec(topic, settings, fallback)
    return warnings


def _check_cluster_namespace(topic: _Topic, cluster: _Cluster) -> None:
    """kto names a cluster by its KafkaCluster's name, the operator by namespace and name: where the documents
    say both namespaces, a KafkaTopic must name the KafkaCluster of the documents, or the operator would find
    none (a bare name is in the KafkaTopic's own namespace)."""
    home = cluster.document.metadata.get("namespace")
    named = topic.cluster_namespace or topic.namespace
    if isinstance(home, str) and home and named is not None and named != home:
        document_value = topic.fields.get("cluster")
        rule = (
            f"names KafkaCluster {named}/{topic.cluster}, but the documents declare KafkaCluster {topic.cluster} in "
            f"namespace {home}: name it {home}/{topic.cluster}"
        )
        topic.document.error("spec.cluster", document_value if document_value is not None else MISSING, rule)


def _topic_spec(
    topic: _Topic, cluster: ClusterSpec | None, fallback: KafkaVersion | None
) -> TopicSpec | None:
    document, fields = topic.document, topic.fields
    if cluster is not None and topic.name is not None:
        _check_prefixes(document, topic.name_path, topic.name, cluster)
    judge = _judge_of(cluster, fallback)
    config = _config(document, fields.get("config", {}), judge)
    unmanaged = _config_keys(document, "spec.unmanagedConfig", fields.get("unmanagedConfig", []))
    if config is not None and unmanaged is not None:
        _check_managed_keys(document, config, unmanaged, cluster)
    partitions, replicas = fields.get("partitions"), fields.get("replicas")
    assignment = _assignment(document, fields.get("replicaAssignment"), partitions, replicas)
    if document.errors or topic.cluster is None or topic.name is None or config is None or unmanaged is None:
        return None
    if not isinstance(partitions, int) or not isinstance(replicas, int):
        return None  # unreachable: the schema check requires both
    return TopicSpec(
        cluster=topic.cluster,
        name=topic.name,
        partitions=partitions,
        replicas=replicas,
        config=config,
        replica_assignment=assignment,
        rack_aware_mode=RackAwareMode(fields.get("rackAwareMode", RackAwareMode.ENFORCED.value)),
        deletion_policy=DeletionPolicy(fields.get("deletionPolicy", DeletionPolicy.RETAIN.value)),
        mode=ApplyMode(fields.get("mode", ApplyMode.APPLY.value)),
        source=document.source,
        unmanaged_config=unmanaged,
        config_judged_as=judge.judgement,
    )


def _check_managed_keys(
    document: _Document, config: Mapping[str, str], unmanaged: Set[str], cluster: ClusterSpec | None
) -> None:
    """A declared override must be one the declarations own, as the plan holds it (``plan.unowned_key_problem``):
    not one the KafkaTopic leaves alone itself, nor one its KafkaCluster leaves to other tools."""
    for key in sorted(config):
        problem = unowned_key_problem(key, unmanaged, cluster)
        if problem is not None:
            document.error(f"spec.config.{key}", config[key], problem, stricter_than_kafka=True)


def _check_tenancy(
    topics: list[_Topic],
    clusters: Mapping[str, _Cluster],
    labels: Mapping[str, Mapping[str, str]],
    rules: TenantRules,
) -> dict[tuple[str, str], tuple[_Topic, Tenant]]:
    """Hold each valid KafkaTopic of another namespace than its KafkaCluster's to that cluster's grant (``rules``
    says how much of it), and return the granted ones as tenants. A KafkaTopic whose document names no namespace
    is in the one it is applied to, which the documents do not say: it is not judged."""
    if rules is TenantRules.NONE:
        return {}
    granted: dict[tuple[str, str], tuple[_Topic, Tenant]] = {}
    used: dict[tuple[str, str], Usage] = {}
    declared: dict[tuple[str, str], set[str]] = {}
    for topic in topics:
        cluster = clusters.get(topic.cluster) if topic.cluster is not None else None
        namespace = topic.namespace
        if topic.spec is None or cluster is None or cluster.spec is None or namespace is None:
            continue
        tenancy = cluster.spec.tenancy
        if tenancy is None or namespace == tenancy.home or not tenancy.home:
            continue
        label = f"{tenancy.home}/{cluster.spec.name}"
        grant = grant_admitting(topic.spec.name, namespace, labels.get(namespace), tenancy, label)
        if isinstance(grant, TopicAuthorizationError):
            path = topic.name_path if grant.field == "topicName" else "spec.cluster"
            topic.document.error(
                path,
                topic.spec.name if path == topic.name_path else topic.fields.get("cluster"),
                str(grant),
            )
            continue
        key = (cluster.spec.name, namespace)
        if rules is TenantRules.ALL:
            violation = limit_violation(topic.spec.name, Declared.of_spec(topic.spec), grant, label)
            if violation is not None:
                field_path = f"spec.{violation.field}" if violation.field else "spec"
                topic.document.error(field_path, _spec_value(topic.fields, violation.field), str(violation))
                continue
            after = used.get(key, Usage()) + Usage(1, topic.spec.partitions)
            over = over_quota(topic.spec.name, Tenant(namespace, label, grant), after)
            if over is None:
                used[key] = after
            else:
                path = "spec.partitions" if over.field == "partitions" else topic.name_path
                topic.document.error(path, MISSING, f"{over}, counted over the documents")
            if not topic.document.usable:
                continue
        declared.setdefault(key, set()).add(topic.spec.name)
        granted[(cluster.spec.name, topic.spec.name)] = (topic, Tenant(namespace, label, grant))
    return {
        key: (topic, Tenant(t.namespace, t.cluster, t.grant, frozenset(declared[(key[0], t.namespace)])))
        for key, (topic, t) in granted.items()
    }


def _spec_value(fields: Mapping[str, Any], path: str | None) -> object:
    """The value at ``partitions`` or ``config.<key>`` of a KafkaTopic's spec, for an error that names it."""
    if path is None:
        return MISSING
    head, _, key = path.partition(".")
    value = fields.get(head, MISSING)
    return _mapping(value).get(key, MISSING) if key else value


def _check_prefixes(document: _Document, path: str, name: str, cluster: ClusterSpec) -> None:
    prefixes = cluster.allowed_topic_prefixes
    if prefixes and not name.startswith(prefixes):
        rule = f"Topic {name} is outside the topic prefixes cluster {cluster.name} allows: {', '.join(prefixes)}."
        document.error(path, name, rule)


@dataclass(frozen=True, slots=True)
class _ConfigJudge:
    """Which rules a topic's config is held to before the cluster is read: its KafkaCluster's declared line
    (``kafka_version``), or, for a cluster whose brokers will say their own (``kafka_version`` None), every line
    they could run; a cluster reached through its brokers is judged by a KRaft controller's path (``kraft``),
    the plan judging again by the path its writes take."""

    kafka_version: KafkaVersion | None
    broker: BrokerSettings | None
    kraft: bool

    @property
    def judgement(self) -> ConfigJudgement | None:
        """What a config found valid here was judged by; None when judged by every line (the plan decides)."""
        if self.kafka_version is None:
            return None
        return _judgement(self.kafka_version, self.broker, self.kraft)

    def check(
        self, props: Mapping[str, object]
    ) -> tuple[dict[str, str] | None, tuple[InvalidConfigurationError, ...]]:
        if self.kafka_version is None:
            return checked_by_some_line(props, broker=self.broker, kraft=self.kraft)
        return checked_topic_config(
            props, kafka_version=self.kafka_version, broker=self.broker, kraft=self.kraft
        )


@lru_cache(maxsize=64)
def _judgement(kafka_version: KafkaVersion, broker: BrokerSettings | None, kraft: bool) -> ConfigJudgement:
    """One shared instance per set of rules, so that thousands of topics hold one reference each."""
    return ConfigJudgement(kafka_version, broker, kraft)


def _judge_of(cluster: ClusterSpec | None, fallback: KafkaVersion | None) -> _ConfigJudge:
    if cluster is None:
        return _ConfigJudge(fallback, None, kraft=fallback is None)
    brokers = cluster.bootstrap_servers is not None
    undeclared = not cluster.kafka_version_declared and brokers
    return _ConfigJudge(None if undeclared else cluster.kafka_version, cluster.broker_settings, kraft=brokers)


def _config(document: _Document, config: object, judge: _ConfigJudge) -> dict[str, str] | None:
    """Canonical config strings, or None with one error per bad key (Kafka stops at the first; a reviewer wants
    them all). The rules across keys are reported once every key is valid on its own."""
    if not isinstance(config, Mapping):
        return None  # the schema check explains it
    props = {key if isinstance(key, str) else str(key): value for key, value in config.items()}
    canonical, problems = judge.check(props)
    for problem in problems:
        path = f"spec.{problem.field or 'config'}"
        key = (problem.field or "").removeprefix("config.")
        document.error(
            path,
            props.get(key, MISSING) if key in props else MISSING,
            str(problem),
            stricter_than_kafka=problem.stricter_than_kafka,
        )
    return canonical


def _assignment(
    document: _Document, assignment: object, partitions: object, replicas: object
) -> dict[int, tuple[int, ...]] | None:
    """A list (index = partition) checked for agreement with the counts, then by Kafka's creation rules."""
    path = "spec.replicaAssignment"
    if not _is_list_of_int_lists(assignment):
        return None  # absent, or the schema check explains the shape
    if isinstance(partitions, int) and len(assignment) != partitions:
        rule = (
            f"replicaAssignment has {len(assignment)} entries but spec.partitions is {partitions}: "
            "give one list of broker ids per partition"
        )
        document.error(path, assignment, rule)
        return None
    wrong = [p for p, r in enumerate(assignment) if isinstance(replicas, int) and len(r) != replicas]
    if wrong:
        listed = ", ".join(map(str, wrong[:_LISTED_PARTITIONS_LIMIT]))
        more = len(wrong) - _LISTED_PARTITIONS_LIMIT
        listed += f" and {more} more" if more > 0 else ""
        document.error(
            path, assignment, f"partitions {listed} do not list spec.replicas ({replicas}) broker ids"
        )
        return None
    manual = {partition: tuple(r) for partition, r in enumerate(assignment)}
    try:
        validate_replica_assignment(manual)
    except KafkaError as error:
        document.error(path, assignment, str(error))
        return None
    return manual


def _is_list_of_int_lists(value: object) -> TypeGuard[list[list[int]]]:
    if type(value) is not list:
        return False
    for entry in value:
        if type(entry) is not list:
            return False
        for broker in entry:
            if type(broker) is not int:
                return False
    return True


def _check_conflicts(topics: list[_Topic]) -> None:
    """Two declarations of one topic, or of two names Kafka refuses side by side ('.' vs '_'), in one cluster:
    both are errors and neither is planned, since which one won would depend on file order."""
    first_by_key: dict[tuple[str, str], _Topic] = {}
    for topic in topics:
        if topic.cluster is None or topic.name is None:
            continue
        first = first_by_key.setdefault((topic.cluster, unify_collision_chars(topic.name)), topic)
        if first is topic:
            continue
        if first.name == topic.name:
            places = f"{first.document.source} and {topic.document.source}"
            rule = f"topic {topic.name} of cluster {topic.cluster} is declared more than once: at {places}"
            for declaration in (first, topic):
                declaration.document.error(declaration.name_path, declaration.name, rule)
            continue
        for declaration, other in ((first, topic), (topic, first)):
            rule = (
                f"Topic '{declaration.name}' collides with existing topics: {other.name} (declared at "
                f"{other.document.source}; Kafka's metric names do not tell '.' from '_')"
            )
            declaration.document.error(declaration.name_path, declaration.name, rule)


def _check_cel(document: _Document) -> None:
    """The CRD's CEL rules, as the API server runs them on a create: only on a document whose schema check found
    no wrong type, missing field, value outside an enum or oversized string or list (apiextensions-apiserver's
    ``hasBlockingErr``), since the rules assume the schema's shape; their failures would only restate those."""
    if document.blocked_cel:
        return
    for failure in _cel_rules(document.kind).check(document.pruned_body):
        value = MISSING if failure.value is None else failure.value
        document.error(failure.field_path, value, failure.message)


@cache
def _cel_rules(kind: str) -> FastCelRules:
    return FastCelRules(crd_schema(kind))
