"""The CRD reference: every field of every kind in ``crds/`` (the source of truth; the package, the chart and the
install manifests hold byte-identical copies), with its type, default, limits, description and CEL rules."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tools.docs_reference.markdown import code, generated_header, page, prose, table

CRD_FOLDER = "crds"

_CONSTRAINTS = (
    ("enum", "one of"),
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("minLength", "min length"),
    ("maxLength", "max length"),
    ("minItems", "min items"),
    ("maxItems", "max items"),
    ("maxProperties", "max entries"),
    ("pattern", "pattern"),
    ("format", "format"),
    ("x-kubernetes-list-type", "list type"),
    ("x-kubernetes-list-map-keys", "map keys"),
)


@dataclass(frozen=True, slots=True)
class Field:
    """One node of a CRD's schema, named by its path from the object's root (``spec.tenants[].quota``)."""

    path: str
    schema: Mapping[str, Any]
    required: bool


@dataclass(frozen=True, slots=True)
class Rule:
    """One CEL rule (``x-kubernetes-validations``) and the path of the node that declares it."""

    path: str
    rule: str
    message: str
    message_expression: str
    reason: str
    field_path: str


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def walk(schema: Mapping[str, Any], path: str = "", required: bool = False) -> Iterator[Field]:
    """Every node below ``schema``, depth first, in the order the CRD declares its properties."""
    if path:
        yield Field(path, schema, required)
    needed = set(schema.get("required", ()))
    for name, child in (schema.get("properties") or {}).items():
        yield from walk(child, f"{path}.{name}" if path else name, name in needed)
    if isinstance(schema.get("items"), Mapping):
        yield from walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from walk(schema["additionalProperties"], f"{path}.*")


def rules(schema: Mapping[str, Any], path: str = "") -> Iterator[Rule]:
    """Every CEL rule of the schema, with the path of the node it is declared on (``(root)`` for the object)."""
    for entry in schema.get("x-kubernetes-validations", ()):
        yield Rule(
            path or "(root)",
            str(entry["rule"]),
            str(entry.get("message", "")),
            str(entry.get("messageExpression", "")),
            str(entry.get("reason", "")),
            str(entry.get("fieldPath", "")),
        )
    for name, child in (schema.get("properties") or {}).items():
        yield from rules(child, f"{path}.{name}" if path else name)
    if isinstance(schema.get("items"), Mapping):
        yield from rules(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from rules(schema["additionalProperties"], f"{path}.*")


def type_text(schema: Mapping[str, Any]) -> str:
    """The field's type as a reader thinks of it: ``list of string``, ``map of integer``, ``object``."""
    kind = str(schema.get("type", "any"))
    if schema.get("x-kubernetes-int-or-string"):
        kind = "integer or string"
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"list of {type_text(schema['items'])}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        return f"map of {type_text(schema['additionalProperties'])}"
    if kind == "object" and schema.get("x-kubernetes-preserve-unknown-fields"):
        return "object (any fields)"
    return kind


def constraints_text(schema: Mapping[str, Any]) -> str:
    """The schema's limits on the value, each named, in a fixed order."""
    parts: list[str] = []
    for key, label in _CONSTRAINTS:
        if key not in schema:
            continue
        value = schema[key]
        if key == "enum":
            parts.append(f"{label} " + ", ".join(code(_json(item)) for item in value))
        elif key == "x-kubernetes-list-map-keys":
            parts.append(f"{label} " + ", ".join(code(str(item)) for item in value))
        elif key in ("pattern", "format", "x-kubernetes-list-type"):
            parts.append(f"{label} {code(str(value))}")
        else:
            parts.append(f"{label} {value}")
    for alternative in ("anyOf", "oneOf"):
        if alternative not in schema:
            continue
        options = schema[alternative]
        if all(set(option) == {"required"} for option in options):
            word = "at least one of" if alternative == "anyOf" else "exactly one of"
            parts.append(
                f"{word}: " + "; ".join(" and ".join(code(n) for n in o["required"]) for o in options)
            )
        else:
            described = []
            for option in options:
                limits = constraints_text(option)
                described.append(str(option.get("type", "any")) + (f" ({limits})" if limits else ""))
            parts.append("either " + ", or ".join(described))
    return "; ".join(parts)


def kind_section(crd: Mapping[str, Any]) -> list[str]:
    """The headings, the field table and the CEL rules of one CRD (its served versions, each)."""
    names = crd["spec"]["names"]
    group = crd["spec"]["group"]
    lines = [f"## {names['kind']}", ""]
    lines.append(
        f"Group {code(group)}, scope {crd['spec']['scope']}, plural {code(names['plural'])}"
        + (
            ", short names " + ", ".join(code(n) for n in names.get("shortNames", ()))
            if names.get("shortNames")
            else ""
        )
        + "."
    )
    for version in crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]
        lines += ["", f"### {names['kind']} {version['name']}", ""]
        if schema.get("description"):
            lines += [prose(schema["description"]), ""]
        rows = []
        for found in walk(schema):
            if found.path in ("apiVersion", "kind", "metadata"):
                continue
            node = found.schema
            rows.append(
                [
                    code(found.path),
                    prose(type_text(node)),
                    "yes" if found.required else "",
                    code(_json(node["default"])) if "default" in node else "",
                    constraints_text(node),
                    prose(str(node.get("description", ""))),
                ]
            )
        lines += table(["Field", "Type", "Required", "Default", "Constraints", "Description"], rows)
        cel = list(rules(schema))
        if cel:
            lines += ["", f"#### {names['kind']} {version['name']} validation rules (CEL)", ""]
            lines.append(
                "The API server checks these on every create and update (`kto validate` checks them too); "
                "`self` is the node the rule is declared on, `oldSelf` its value before an update."
            )
            for rule in cel:
                said = rule.message or (
                    f"(message expression) {rule.message_expression}" if rule.message_expression else ""
                )
                details = []
                if rule.reason:
                    details.append(f"reason {code(rule.reason)}")
                if rule.field_path:
                    details.append(f"field {code(rule.field_path)}")
                suffix = f" ({', '.join(details)})" if details else ""
                lines += ["", f"On {code(rule.path)}{suffix}: {prose(said)}", ""]
                lines += [f"    {line}" for line in rule.rule.strip().splitlines()]
    return lines


def render(repository: Path) -> str:
    """The whole page, from every ``crds/*.yaml``, kinds in name order."""
    crds = [yaml.safe_load(path.read_text()) for path in sorted((repository / CRD_FOLDER).glob("*.yaml"))]
    crds.sort(key=lambda crd: str(crd["spec"]["names"]["kind"]))
    lines = [
        generated_header("crds/*.yaml"),
        "",
        "# Custom resources",
        "",
        "Every field of the custom resources the operator watches, as the CRDs in `crds/` declare them "
        "(the chart, the install manifests and the package carry byte-identical copies). A path such as "
        "`spec.tenants[].quota` names a field inside each item of a list; `.*` names the values of a map.",
        "",
    ]
    for crd in crds:
        lines += [*kind_section(crd), ""]
    return page(lines)
