"""The CRDs as the manifest loader applies them: read from the package, checked fast, worded for people.

The CRD YAMLs are package data (``topic_operator/crd/``, byte-identical to the repository's ``crds/``, which a
test enforces), so the same schema serves a checkout, an installed wheel and the operator image. The check is the
API server's as ``kubectl apply`` meets it: Draft 4 types (``3.0`` is not an integer), unknown fields refused
(kubectl's default ``--validate=strict``), ``status`` left to the operator, and patterns anchored as Go's regular
expressions anchor them (``$`` is the end of the text, not the end of its last line: Python's ``$`` would let
``"local\\n"`` through as a cluster name). jsonschema's messages name regular expressions and Python types;
``schema_problems`` says the same in the manifest's terms.

Two validators hold the same schema: fastjsonschema's generated code decides whether a document is valid (about
ten times faster, which is most of what 100,000 valid documents cost), and only a document it refuses goes
through jsonschema, for every problem in words. A test holds the two to the same verdict on generated documents.
A refused document's lists are cut just past their ``maxItems`` before jsonschema walks them, and at most
``limit`` problems are taken, so a hostile document costs no more than it shows.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

import fastjsonschema
import orjson
import yaml

if TYPE_CHECKING:  # imported where a document's problems are worded: its import costs every kto command 0.1 s
    import jsonschema

from topic_operator.message_text import shown

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

__all__ = [
    "API_VERSION",
    "CRD_FILES",
    "MISSING",
    "KubernetesYamlLoader",
    "SchemaProblem",
    "crd",
    "crd_schema",
    "schema_problems",
]

API_VERSION: Final = "kto.dev/v1alpha1"
CRD_FILES: Final = {"KafkaTopic": "kafkatopics.kto.dev.yaml", "KafkaCluster": "kafkaclusters.kto.dev.yaml"}


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""The value of a field that is absent (a required field, a missing label)."""


class KubernetesYamlLoader(_SafeLoader):
    """YAML as Kubernetes reads it: timestamps stay strings (``creationTimestamp`` is a string in the API).

    libyaml's parser when available: about ten times faster, which matters for 10,000-topic repositories.
    """


KubernetesYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _SafeLoader.yaml_implicit_resolvers.items()
}


@cache
def crd(kind: str) -> Mapping[str, Any]:
    """The CustomResourceDefinition of ``kind`` (KafkaTopic or KafkaCluster), from the package data."""
    text = resources.files("topic_operator.crd").joinpath(CRD_FILES[kind]).read_text(encoding="utf-8")
    document: Mapping[str, Any] = yaml.load(text, Loader=KubernetesYamlLoader)
    return document


def crd_schema(kind: str) -> Mapping[str, Any]:
    """The ``openAPIV3Schema`` of ``kind`` in the served version."""
    version = API_VERSION.split("/")[1]
    served = next(v for v in crd(kind)["spec"]["versions"] if v["name"] == version)
    schema: Mapping[str, Any] = served["schema"]["openAPIV3Schema"]
    return schema


@cache
def checked_schema(kind: str) -> Mapping[str, Any]:
    """The schema documents are checked against: strict, anchored as in Go, without ``status``."""
    schema = _strict(crd_schema(kind))
    schema["properties"].pop("status", None)
    return schema


@cache
def _validator(kind: str) -> jsonschema.Draft4Validator:
    import jsonschema  # only a document with a problem needs it (see the imports above)

    return jsonschema.Draft4Validator(checked_schema(kind))


@cache
def _fast_validator(kind: str) -> Callable[[object], object]:
    """fastjsonschema's code for the same schema; ``use_default=False``: it must never fill in the document."""
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", **checked_schema(kind)}
    validate: Callable[[object], object] = fastjsonschema.compile(
        draft4, use_default=False, use_formats=False
    )
    return validate


def is_valid(kind: str, body: Mapping[str, Any]) -> bool:
    """The fast verdict: whether ``schema_problems`` would find nothing. Remembered by ``_verdict_key``."""
    checked = {k: v for k, v in body.items() if k != "status"}
    key = _verdict_key(kind, checked)
    if key is not None:
        known = _verdicts.get(key)
        if known is not None:
            return known
    try:
        _fast_validator(kind)(checked)
    except fastjsonschema.JsonSchemaException:
        verdict = False
    else:
        verdict = True
    if key is not None and len(_verdicts) < _VERDICTS_KEPT:
        _verdicts[key] = verdict
    return verdict


_VERDICTS_KEPT: Final = 65_536
_verdicts: dict[tuple[str, bytes], bool] = {}
"""Verdicts by document shape: a repository of 50,000 KafkaTopics has a few hundred distinct specs."""


def _verdict_key(kind: str, checked: Mapping[str, Any]) -> tuple[str, bytes] | None:
    """What the schema's verdict on ``checked`` depends on, as bytes; None when that cannot be said for sure.

    The CRDs' schemas say of ``metadata`` only that it is an object (the names are checked elsewhere), so the
    verdict is the same for every document that differs only inside its ``metadata`` mapping: the key is the
    document as JSON with an empty ``metadata``. JSON tells ``1``, ``1.0`` and ``true`` apart, and keeps the key
    order; what it cannot hold exactly (a set, a non-string key, an integer beyond 64 bits: orjson refuses them)
    or writes as ``null`` (NaN and the infinities, like None) gets no key, and is validated each time."""
    if "metadata" in checked and type(checked["metadata"]) is not dict:
        return None
    shape = {k: {} if k == "metadata" else v for k, v in checked.items()}
    try:
        text = orjson.dumps(shape, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except TypeError:  # orjson.JSONEncodeError
        return None
    return None if b"null" in text else (kind, text)


def _strict(node: Mapping[str, Any]) -> dict[str, Any]:
    """Every object node with listed properties refuses other fields, unless it preserves unknown fields; every
    pattern is anchored at the very end of the text."""
    strict = dict(node)
    if isinstance(node.get("pattern"), str):
        strict["pattern"] = _go_anchored(node["pattern"])
    if "properties" in node:
        strict["properties"] = {name: _strict(child) for name, child in node["properties"].items()}
        if not node.get("x-kubernetes-preserve-unknown-fields"):
            strict.setdefault("additionalProperties", False)
    if isinstance(node.get("items"), Mapping):
        strict["items"] = _strict(node["items"])
    return strict


def _go_anchored(pattern: str) -> str:
    r"""A trailing ``$`` as Go (RE2) reads it without the multi-line flag: ``\Z``, the end of the text."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern[:-1] + r"\Z"
    return pattern


# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    path: str
    value: object
    rule: str
    blocking: bool = False
    """A wrong type, a missing field, a value outside an enum, too long a string or list, an unknown field: the
    kinds of failure after which the API server does not evaluate the CRD's CEL rules."""


_BLOCKING_KEYWORDS: Final = frozenset(
    {"type", "required", "enum", "maxLength", "maxItems", "maxProperties", "additionalProperties"}
)
"""apiextensions-apiserver's ``hasBlockingErr`` (type, required, not-supported, too long, too many) plus unknown
fields, which ``kubectl apply``'s strict field validation refuses before any validation runs."""

_PATTERN_RULES_BY_CRD_TEXT: Final = {
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$": (
        "must be a Kubernetes object name: a lowercase RFC 1123 subdomain"
    ),
    r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$": (
        "must be a KafkaCluster name, or <namespace>/<name> for a KafkaCluster of another namespace"
    ),
    r"^[a-zA-Z0-9._-]+$": "may contain only ASCII alphanumerics, '.', '_' and '-'",
    r"^[^\s,/]+(,[^\s,/]+)*(/[^\s]*)?$": "must be host:port[,host:port...][/chroot], as zookeeper.connect",
    r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5}(,(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5})*$": (
        "must be host:port[,host:port...], as bootstrap.servers (an IPv6 address in brackets)"
    ),
}
_PATTERN_RULES: Final = {_go_anchored(pattern): rule for pattern, rule in _PATTERN_RULES_BY_CRD_TEXT.items()}
_JSON_TYPES: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "a mapping",
    "array": "a list",
}


def schema_problems(
    kind: str, body: Mapping[str, Any], *, strimzi: bool = False, limit: int = 50
) -> list[SchemaProblem]:
    """The schema failures of a document (at most ``limit``), in field order, each as path, value and rule.

    ``strimzi``: the document was converted from a Strimzi KafkaTopic, whose partitions and replicas are
    optional (they default to broker settings that kto cannot know offline), so their absence is explained.
    """
    if is_valid(kind, body):
        return []
    checked = _within_max_items({k: v for k, v in body.items() if k != "status"}, checked_schema(kind))
    errors = sorted(
        itertools.islice(_validator(kind).iter_errors(checked), limit),
        key=lambda e: [str(p) for p in e.absolute_path],
    )
    explained = (problem for error in errors for problem in _explain(error, strimzi, limit))
    return list(itertools.islice(explained, limit))


def _within_max_items(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` with every list that has a ``maxItems`` cut to one item past it, so that jsonschema reports the
    length without walking a million items; only the path the schema describes is copied."""
    if isinstance(value, list):
        maximum = schema.get("maxItems")
        if isinstance(maximum, int) and len(value) > maximum + 1:
            value = value[: maximum + 1]
        items = schema.get("items")
        if isinstance(items, Mapping) and ("properties" in items or "items" in items or "maxItems" in items):
            return [_within_max_items(item, items) for item in value]
        return value
    properties = schema.get("properties")
    if isinstance(value, Mapping) and isinstance(properties, Mapping):
        return {
            key: _within_max_items(item, properties[key]) if key in properties else item
            for key, item in value.items()
        }
    return value


def _explain(error: jsonschema.ValidationError, strimzi: bool, limit: int) -> Iterator[SchemaProblem]:
    path = _path(error.absolute_path)
    keyword, instance = str(error.validator), error.instance
    expected: Any = error.validator_value
    blocking = keyword in _BLOCKING_KEYWORDS
    if keyword == "required" and isinstance(instance, Mapping):
        # jsonschema reports each missing property separately, its name first in the message.
        for name in expected:
            if name not in instance and error.message.startswith(repr(name)):
                rule = "required field is missing"
                if strimzi and name in ("partitions", "replicas"):
                    rule += " (Strimzi would take the broker's default, which kto cannot know: declare it)"
                yield SchemaProblem(_join(path, name), MISSING, rule, blocking)
        return
    if keyword == "additionalProperties" and isinstance(instance, Mapping):
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        known = schema.get("properties", {})
        unknown = heapq.nsmallest(limit, (name for name in instance if name not in known), key=str)
        for name in unknown:
            rule = f"unknown field (known: {', '.join(known)})"
            yield SchemaProblem(_join(path, str(name)), instance[name], rule, blocking)
        return
    yield SchemaProblem(path, instance, _rule(keyword, expected, instance, error.message), blocking)


def _rule(keyword: str, expected: Any, instance: object, fallback: str) -> str:
    if keyword == "type":
        rule = f"must be {_JSON_TYPES.get(str(expected), str(expected))}"
        if expected == "string" and isinstance(instance, (int, float)) and not isinstance(instance, bool):
            rule += f' (quote it in YAML: "{shown(instance)}")'
        elif expected == "integer" and isinstance(instance, str) and instance.strip().isdigit():
            rule += f" (write {shown(instance.strip()).strip(chr(39))}, without quotes)"
        return rule
    if keyword == "pattern":
        return _PATTERN_RULES.get(str(expected), f"must match {expected}")
    if keyword == "anyOf" and all(isinstance(e, Mapping) and set(e) == {"required"} for e in expected):
        # KafkaCluster.spec: how the cluster is reached; one of the ways is needed
        choices = " or ".join(", ".join(e["required"]) for e in expected)
        return f"needs {choices} (or both): how to reach the cluster"
    if keyword in ("minLength", "minItems") and expected == 1:
        return "must not be empty"
    words = {
        "enum": f"must be one of {', '.join(map(str, expected))}" if isinstance(expected, list) else "",
        "minimum": f"must be at least {expected}",
        "maximum": f"must be at most {expected}",
        "minLength": f"must have at least {expected} characters",
        "maxLength": f"must have at most {expected} characters",
        "minItems": f"must have at least {expected} items",
        "maxItems": f"must have at most {expected} items",
    }
    return words.get(keyword) or fallback


def _path(steps: Iterable[str | int]) -> str:
    text = ""
    for step in steps:
        text = f"{text}[{step}]" if isinstance(step, int) else _join(text, step)
    return text


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
