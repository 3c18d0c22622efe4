"""Every CustomResourceDefinition the project ships passes the API server's own rules (``structural_schema``), and
each of those rules refuses a small CRD that breaks it, so the check is known to be able to fail.

A real API server refused both kto.dev CRDs once, for a ``description`` under ``metadata``; the validators of the
time only checked documents against the schemas, not the schemas against the API server's rules."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.structural_schema import RULES, problems

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(
    {
        *(ROOT / "crds").glob("*.yaml"),
        *(ROOT / "operator" / "topic_operator" / "crd").glob("*.yaml"),
        *(ROOT / "manifests" / "install").glob("*crd*.yaml"),
        *(ROOT / "helm" / "kafka-topic-operator" / "crds").glob("*.yaml"),
    }
)


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(ROOT)) for p in SHIPPED])
def test_every_shipped_crd_passes(path: Path) -> None:
    documents = _documents(path)
    assert documents
    assert all(doc["kind"] == "CustomResourceDefinition" for doc in documents)
    for document in documents:
        assert problems(document) == [], document["metadata"]["name"]


def test_the_shipped_set_covers_every_copy() -> None:
    """The install manifests and the chart carry the kto.dev CRDs: every copy is checked."""
    names = {doc["metadata"]["name"] for path in SHIPPED for doc in _documents(path)}
    assert names == {
        "kafkatopics.kto.dev",
        "kafkaclusters.kto.dev",
    }
    assert len(SHIPPED) == 8  # crds/, the package, manifests/install/ and the chart: 2 each


# -- each rule can fail ------------------------------------------------------------------------------------------


def _minimal() -> dict[str, Any]:
    """A small CRD that passes every rule; each case below breaks it in one place."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.dev"},
        "spec": {
            "group": "example.dev",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
                    ],
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "A widget.",
                            "x-kubernetes-validations": [
                                {"rule": "self.spec.size >= 0", "message": "no negatives"}
                            ],
                            "properties": {
                                "metadata": {"type": "object"},
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "size": {"type": "integer", "default": 1, "minimum": 0},
                                        "port": {
                                            "x-kubernetes-int-or-string": True,
                                            "anyOf": [{"type": "integer"}, {"type": "string"}],
                                        },
                                        "labels": {
                                            "type": "object",
                                            "additionalProperties": {"type": "string"},
                                        },
                                        "tags": {
                                            "type": "array",
                                            "x-kubernetes-list-type": "set",
                                            "items": {"type": "string"},
                                        },
                                        "extra": {
                                            "type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True,
                                        },
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "conditions": {
                                            "type": "array",
                                            "x-kubernetes-list-type": "map",
                                            "x-kubernetes-list-map-keys": ["type"],
                                            "items": {
                                                "type": "object",
                                                "required": ["type"],
                                                "properties": {"type": {"type": "string"}},
                                            },
                                        }
                                    },
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def _root(crd: dict[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return root


def _spec(crd: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = _root(crd)["properties"]["spec"]["properties"]
    return spec


Breaker = Callable[[dict[str, Any]], object]

BROKEN: list[tuple[str, str, Breaker]] = [
    ("metadata", "a description under metadata", lambda c: _root(c)["properties"]["metadata"].update(description="x")),
    ("metadata", "a field of metadata other than name", lambda c: _root(c)["properties"]["metadata"].update(
        properties={"labels": {"type": "object"}})),
    ("metadata", "a default for metadata.name", lambda c: _root(c)["properties"]["metadata"].update(
        properties={"name": {"type": "string", "default": "w"}})),
    ("type", "a field without a type", lambda c: _spec(c)["size"].pop("type")),
    ("type", "array items without a type", lambda c: _spec(c)["tags"]["items"].pop("type")),
    ("type", "a map value without a type", lambda c: _spec(c)["labels"]["additionalProperties"].pop("type")),
    ("type", "an unknown type", lambda c: _spec(c)["size"].update(type="int")),
    ("junctors", "a type inside anyOf", lambda c: _spec(c).update(
        mode={"type": "string", "anyOf": [{"type": "string", "enum": ["a"]}]})),
    ("junctors", "a description inside oneOf", lambda c: _spec(c).update(
        mode={"type": "string", "oneOf": [{"description": "x", "enum": ["a"]}]})),
    ("junctors", "a field named only inside allOf", lambda c: _root(c)["properties"]["spec"].update(
        allOf=[{"properties": {"ghost": {"minimum": 1}}}])),
    ("junctors", "an extension inside not", lambda c: _spec(c)["size"].update(
        **{"not": {"x-kubernetes-int-or-string": True}})),
    ("forbidden", "a $ref", lambda c: _spec(c).update(ref={"$ref": "#/definitions/x"})),
    ("forbidden", "uniqueItems true", lambda c: _spec(c)["tags"].update(uniqueItems=True)),
    ("forbidden", "additionalProperties false", lambda c: _root(c)["properties"]["spec"].update(
        additionalProperties=False)),
    ("forbidden", "properties with additionalProperties", lambda c: _spec(c)["labels"].update(
        properties={"a": {"type": "string"}})),
    ("forbidden", "patternProperties", lambda c: _spec(c)["labels"].update(patternProperties={})),
    ("forbidden", "an array without items", lambda c: _spec(c)["tags"].pop("items")),
    ("forbidden", "items as a list", lambda c: _spec(c)["tags"].update(items=[{"type": "string"}])),
    ("forbidden", "a misspelt keyword", lambda c: _spec(c)["size"].update(minimun=0)),
    ("root", "a root that is not an object", lambda c: _root(c).update(type="string")),
    ("root", "kind typed as an integer", lambda c: _root(c)["properties"].update(kind={"type": "integer"})),
    ("root", "anyOf at the root with the status subresource", lambda c: _root(c).update(
        anyOf=[{"required": ["spec"]}])),
    ("extensions", "preserve-unknown-fields false", lambda c: _spec(c)["extra"].update(
        **{"x-kubernetes-preserve-unknown-fields": False})),
    ("extensions", "int-or-string with a type", lambda c: _spec(c)["port"].update(type="string")),
    ("extensions", "a list type on an object", lambda c: _spec(c)["labels"].update(
        **{"x-kubernetes-list-type": "set"})),
    ("extensions", "a set of objects", lambda c: _spec(c)["tags"].update(items={"type": "object"})),
    ("extensions", "a map key that is not required", lambda c: _root(c)["properties"]["status"]["properties"][
        "conditions"]["items"].pop("required")),
    ("extensions", "map keys without a map list", lambda c: _spec(c)["tags"].update(
        **{"x-kubernetes-list-map-keys": ["x"]})),
    ("extensions", "a map type on an array", lambda c: _spec(c)["tags"].update(**{"x-kubernetes-map-type": "atomic"})),
    ("extensions", "an embedded resource that is not an object", lambda c: _spec(c)["size"].update(
        **{"x-kubernetes-embedded-resource": True})),
    ("defaults", "a default of the wrong type", lambda c: _spec(c)["size"].update(default="one")),
    ("defaults", "a default below the minimum", lambda c: _spec(c)["size"].update(default=-1)),
    ("defaults", "a default with a field pruning drops", lambda c: _root(c)["properties"]["spec"].update(
        default={"size": 1, "ghost": 2})),
    ("defaults", "a null default that is not nullable", lambda c: _spec(c)["size"].update(default=None)),
    ("validations", "a rule that does not compile", lambda c: _root(c)["x-kubernetes-validations"][0].update(
        rule="self.spec.size >=")),
    ("validations", "a message with a line break", lambda c: _root(c)["x-kubernetes-validations"][0].update(
        message="no\nnegatives")),
    ("validations", "an unknown reason", lambda c: _root(c)["x-kubernetes-validations"][0].update(reason="Bad")),
    ("validations", "a validation without a rule", lambda c: _root(c)["x-kubernetes-validations"][0].pop("rule")),
    ("bounds", "an integer maximum of 2**63 - 1", lambda c: _spec(c)["size"].update(maximum=2**63 - 1)),
    ("bounds", "a bound float64 rounds", lambda c: _spec(c)["size"].update(minimum=2**60 + 1)),
    ("crd", "a name that is not plural.group", lambda c: c["metadata"].update(name="widget.example.dev")),
    ("crd", "two storage versions", lambda c: c["spec"]["versions"].append(
        {**copy.deepcopy(c["spec"]["versions"][0]), "name": "v2"})),
    ("crd", "a version without a schema", lambda c: c["spec"]["versions"][0].pop("schema")),
    ("crd", "an unknown printer column type", lambda c: c["spec"]["versions"][0]["additionalPrinterColumns"][0].update(
        type="int")),
    ("crd", "an upper-case plural", lambda c: c["spec"]["names"].update(plural="Widgets")),
    ("crd", "a status subresource with content", lambda c: c["spec"]["versions"][0]["subresources"].update(
        status={"x": 1})),
    ("crd", "an unknown scope", lambda c: c["spec"].update(scope="Global")),
]  # fmt: skip


def test_the_minimal_crd_passes() -> None:
    assert problems(_minimal()) == []


@pytest.mark.parametrize(("rule", "breaker"), [(r, b) for r, _, b in BROKEN], ids=[w for _, w, _ in BROKEN])
def test_each_rule_refuses_a_crd_that_breaks_it(rule: str, breaker: Breaker) -> None:
    crd = _minimal()
    breaker(crd)
    found = problems(crd)
    assert found, "the broken CRD passed"
    assert rule in {p.rule for p in found}, found


def test_every_rule_has_a_breaking_case() -> None:
    assert {rule for rule, _, _ in BROKEN} == set(RULES)


def test_the_metadata_refusal_reads_like_the_api_servers() -> None:
    crd = _minimal()
    _root(crd)["properties"]["metadata"]["description"] = "Standard object metadata."
    (problem,) = problems(crd)
    assert "spec.versions[0].schema.openAPIV3Schema.properties[metadata]" in problem
    assert (
        "must not specify anything other than name and generateName, but metadata is implicitly specified"
        in problem
    )
