"""The CRDs as the manifest loader applies them: read from the package, checked with jsonschema, worded for people.

The CRD YAMLs are package data (``topic_operator/crds/``, byte-identical to the repository's ``crds/``, which a
test enforces), so the same schema serves a checkout, an installed wheel and the operator image. The check is the
API server's as ``kubectl apply`` meets it: Draft 4 types (``3.0`` is not an integer), unknown fields refused
(kubectl's default ``--validate=strict``), ``status`` left to the operator. jsonschema's messages name regular
expressions and Python types; ``schema_problems`` says the same in the manifest's terms.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final

# No stubs in the dev extras yet (types-jsonschema would provide them); Any is contained in this module.
import jsonschema
import yaml

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
    text = resources.files("topic_operator").joinpath("crds", CRD_FILES[kind]).read_text(encoding="utf-8")
    document: Mapping[str, Any] = yaml.load(text, Loader=KubernetesYamlLoader)
    return document


def crd_schema(kind: str) -> Mapping[str, Any]:
    """The ``openAPIV3Schema`` of ``kind`` in the served version."""
    version = API_VERSION.split("/")[1]
    served = next(v for v in crd(kind)["spec"]["versions"] if v["name"] == version)
    schema: Mapping[str, Any] = served["schema"]["openAPIV3Schema"]
    return schema


@cache
def _validator(kind: str) -> jsonschema.Draft4Validator:
    schema = _strict(crd_schema(kind))
    schema["properties"].pop("status", None)
    return jsonschema.Draft4Validator(schema)


def _strict(node: Mapping[str, Any]) -> dict[str, Any]:
    """Every object node with listed properties refuses other fields, unless it preserves unknown fields."""
    strict = dict(node)
    if "properties" in node:
        strict["properties"] = {name: _strict(child) for name, child in node["properties"].items()}
        if not node.get("x-kubernetes-preserve-unknown-fields"):
            strict.setdefault("additionalProperties", False)
    if isinstance(node.get("items"), Mapping):
        strict["items"] = _strict(node["items"])
    return strict


# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    path: str
    value: object
    rule: str


_PATTERN_RULES: Final = {
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$": (
        "must be a Kubernetes object name: a lowercase RFC 1123 subdomain"
    ),
    r"^[a-zA-Z0-9._-]+$": "may contain only ASCII alphanumerics, '.', '_' and '-'",
    r"^(2\.8|3\.[0-9])$": 'must be a Kafka release from 2.8 to 3.9 as "major.minor", e.g. "3.4"',
    r"^[^\s,/]+(,[^\s,/]+)*(/[^\s]*)?$": "must be host:port[,host:port...][/chroot], as zookeeper.connect",
}
_JSON_TYPES: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "a mapping",
    "array": "a list",
}


def schema_problems(kind: str, body: Mapping[str, Any], *, strimzi: bool = False) -> list[SchemaProblem]:
    """Every schema failure of a document, in field order, each as path, value and rule.

    ``strimzi``: the document was converted from a Strimzi KafkaTopic, whose partitions and replicas are
    optional (they default to broker settings that kto cannot know offline), so their absence is explained.
    """
    checked = {k: v for k, v in body.items() if k != "status"}
    errors = sorted(_validator(kind).iter_errors(checked), key=lambda e: [str(p) for p in e.absolute_path])
    return [problem for error in errors for problem in _explain(error, strimzi)]


def _explain(error: jsonschema.ValidationError, strimzi: bool) -> Iterator[SchemaProblem]:
    path = _path(error.absolute_path)
    keyword, instance = str(error.validator), error.instance
    expected: Any = error.validator_value
    if keyword == "required" and isinstance(instance, Mapping):
        # jsonschema reports each missing property separately, its name first in the message.
        for name in expected:
            if name not in instance and error.message.startswith(repr(name)):
                rule = "required field is missing"
                if strimzi and name in ("partitions", "replicas"):
                    rule += " (Strimzi would take the broker's default, which kto cannot know: declare it)"
                yield SchemaProblem(_join(path, name), MISSING, rule)
        return
    if keyword == "additionalProperties" and isinstance(instance, Mapping):
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        known = schema.get("properties", {})
        for name in sorted(set(instance) - set(known), key=str):
            rule = f"unknown field (known: {', '.join(known)})"
            yield SchemaProblem(_join(path, str(name)), instance[name], rule)
        return
    yield SchemaProblem(path, instance, _rule(keyword, expected, instance, error.message))


def _rule(keyword: str, expected: Any, instance: object, fallback: str) -> str:
    if keyword == "type":
        rule = f"must be {_JSON_TYPES.get(str(expected), str(expected))}"
        if expected == "string" and isinstance(instance, (int, float)) and not isinstance(instance, bool):
            rule += f' (quote it in YAML: "{instance}")'
        elif expected == "integer" and isinstance(instance, str) and instance.strip().isdigit():
            rule += f" (write {instance.strip()}, without quotes)"
        return rule
    if keyword == "pattern":
        return _PATTERN_RULES.get(str(expected), f"must match {expected}")
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
