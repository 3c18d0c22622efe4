"""The API server's rules for a CustomResourceDefinition (apiextensions.k8s.io/v1), written from Kubernetes'
documentation, so that a CRD the API server would refuse fails here first.

Sources: "Extend the Kubernetes API with CustomResourceDefinitions" (kubernetes.io/docs/tasks/extend-kubernetes/
custom-resources/custom-resource-definitions/), its sections "Specifying a structural schema", "Validation"
(the fields that cannot be set, ``uniqueItems``, ``additionalProperties``), "Defaulting", "Validation rules"
(``x-kubernetes-validations``), "Subresources", "Additional printer columns", and the reference of
``JSONSchemaProps`` (``x-kubernetes-*`` extensions). Each rule below cites the part of those pages it comes from;
``problems(crd)`` returns one line per violation, with the field path as the API server writes it
(``spec.versions[0].schema.openAPIV3Schema.properties[metadata]``).

The rules, by name (``RULES``), so tests can prove each one can fail:

- ``type``: a structural schema specifies a non-empty ``type`` at the root, for every field of an object
  (``properties``, ``additionalProperties``) and for the items of an array, unless the node sets
  ``x-kubernetes-int-or-string: true`` or ``x-kubernetes-preserve-unknown-fields: true``; the type is one of the
  OpenAPI types.
- ``junctors``: inside ``allOf``/``anyOf``/``oneOf``/``not`` no ``type``, ``description``, ``title``, ``default``,
  ``additionalProperties``, ``nullable`` or ``x-kubernetes-*`` (except the int-or-string pattern), and every field
  or items named there is also specified outside them.
- ``metadata``: if ``metadata`` is specified (at the root, or in an embedded resource), only restrictions on
  ``metadata.name`` and ``metadata.generateName`` are allowed; a ``description`` counts as specifying metadata.
- ``forbidden``: ``definitions``, ``dependencies``, ``deprecated``, ``discriminator``, ``id``,
  ``patternProperties``, ``readOnly``, ``writeOnly``, ``xml``, ``$ref``, ``$schema`` and ``additionalItems`` cannot
  be set (nor anything that is not a field of JSONSchemaProps); ``uniqueItems`` cannot be true;
  ``additionalProperties`` cannot be false and is mutually exclusive with ``properties``; ``items`` is one schema.
- ``root``: the root is an object; ``apiVersion`` and ``kind``, when specified, are strings; with the status
  subresource the root may hold only the fields that keep ``status`` extractable (no junctors, no
  ``additionalProperties``, no ``default``, no ``nullable``, no ``enum``).
- ``extensions``: ``x-kubernetes-preserve-unknown-fields`` is true or absent; ``x-kubernetes-int-or-string``
  takes no ``type``; ``x-kubernetes-embedded-resource`` needs ``type: object`` and ``properties`` or
  ``x-kubernetes-preserve-unknown-fields``; ``x-kubernetes-list-type`` only on arrays (``atomic``, ``set``,
  ``map``: a set of scalars, a map of objects keyed by ``x-kubernetes-list-map-keys`` that are scalar properties
  of the items, required or defaulted); ``x-kubernetes-list-map-keys`` only with ``map``;
  ``x-kubernetes-map-type`` only on objects (``granular``, ``atomic``).
- ``defaults``: a default validates against its schema, is pruned (no field the schema does not know), is not
  inside ``metadata``, and is null only where ``nullable: true``.
- ``validations``: each ``x-kubernetes-validations`` entry has a ``rule`` that compiles as CEL, a ``message``
  without line breaks, a known ``reason``, and no other keys.
- ``bounds``: numeric bounds the API server can hold: float64 exactly, and within int64 for an integer field;
- ``crd``: the CustomResourceDefinition around the schemas: ``metadata.name`` is ``<plural>.<group>``, names are
  DNS labels, a known scope, versions with unique names and exactly one storage version, each with a schema,
  printer columns with a known type and format, a ``status`` subresource that is an empty object.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import celpy
import jsonschema

__all__ = ["RULES", "Problem", "problems"]

RULES: Final = (
    "type",
    "junctors",
    "metadata",
    "forbidden",
    "root",
    "extensions",
    "defaults",
    "validations",
    "bounds",
    "crd",
)

_TYPES: Final = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_SCALARS: Final = frozenset({"string", "integer", "number", "boolean"})
_JUNCTORS: Final = ("allOf", "anyOf", "oneOf", "not")
_FORBIDDEN: Final = frozenset(
    {
        "definitions",
        "dependencies",
        "deprecated",
        "discriminator",
        "id",
        "patternProperties",
        "readOnly",
        "writeOnly",
        "xml",
        "$ref",
        "$schema",
        "additionalItems",
    }
)
_JSON_SCHEMA_PROPS: Final = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "default",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "items",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "properties",
        "additionalProperties",
        "externalDocs",
        "example",
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)
# What may be set inside a junctor: value validations only (structural schema, rule 3).
_NOT_IN_JUNCTORS: Final = ("type", "description", "title", "default", "additionalProperties", "nullable")
# The root of a schema with the status subresource (Subresources: "status"): what keeps .status extractable.
_ROOT_WITH_STATUS: Final = frozenset(
    {
        "description",
        "type",
        "format",
        "title",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "required",
        "items",
        "properties",
        "externalDocs",
        "example",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    }
)
_VALIDATION_KEYS: Final = frozenset(
    {"rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"}
)
_VALIDATION_REASONS: Final = frozenset(
    {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"}
)
_PRINTER_TYPES: Final = frozenset({"integer", "number", "string", "boolean", "date"})
_PRINTER_FORMATS: Final = frozenset(
    {"int32", "int64", "float", "double", "byte", "date", "date-time", "password"}
)
_DNS_1035_LABEL: Final = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_1123_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class Problem(str):
    """One violation: ``<rule>: <field path>: <what is wrong>`` (a str, so tests can compare and print it)."""

    @property
    def rule(self) -> str:
        return self.split(":", 1)[0]


def problems(crd: Mapping[str, Any]) -> list[Problem]:
    """Every reason the API server would refuse ``crd`` (empty: it would accept it)."""
    found = list(_crd_problems(crd))
    for index, version in enumerate(_list(_get(crd, "spec", "versions"))):
        if not isinstance(version, Mapping):
            continue
        schema = _get(version, "schema", "openAPIV3Schema")
        if not isinstance(schema, Mapping):
            continue
        path = f"spec.versions[{index}].schema.openAPIV3Schema"
        with_status = isinstance(_get(version, "subresources", "status"), Mapping)
        found.extend(_schema_problems(schema, path, with_status=with_status))
    return found


# -- the CRD around the schemas ----------------------------------------------------------------------------------


def _crd_problems(crd: Mapping[str, Any]) -> Iterator[Problem]:
    def bad(path: str, message: str) -> Problem:
        return Problem(f"crd: {path}: {message}")

    if crd.get("apiVersion") != "apiextensions.k8s.io/v1":
        yield bad("apiVersion", f"{crd.get('apiVersion')!r}: only apiextensions.k8s.io/v1 is served")
    if crd.get("kind") != "CustomResourceDefinition":
        yield bad("kind", f"{crd.get('kind')!r}: must be CustomResourceDefinition")
    spec = crd.get("spec")
    if not isinstance(spec, Mapping):
        yield bad("spec", "Required value")
        return
    group, names = spec.get("group"), spec.get("names")
    if not isinstance(group, str) or not _DNS_1123_SUBDOMAIN.match(group) or "." not in group:
        yield bad("spec.group", f"{group!r}: should be a domain with at least one dot")
    if not isinstance(names, Mapping):
        yield bad("spec.names", "Required value")
        names = {}
    for key in ("plural", "singular"):
        if not isinstance(names.get(key), str) or not _DNS_1035_LABEL.match(names[key]):
            yield bad(f"spec.names.{key}", f"{names.get(key)!r}: a lowercase RFC 1035 label is required")
    for key in ("kind", "listKind"):
        if not isinstance(names.get(key), str) or not names[key]:
            yield bad(f"spec.names.{key}", "Required value")
    if names.get("kind") is not None and names.get("kind") == names.get("listKind"):
        yield bad("spec.names.listKind", "kind and listKind may not be the same")
    for key in ("shortNames", "categories"):
        for i, value in enumerate(_list(names.get(key))):
            if not isinstance(value, str) or not _DNS_1035_LABEL.match(value):
                yield bad(f"spec.names.{key}[{i}]", f"{value!r}: a lowercase RFC 1035 label is required")
    name = _get(crd, "metadata", "name")
    if name != f"{names.get('plural')}.{group}":
        yield bad("metadata.name", f'{name!r}: must be spec.names.plural+"."+spec.group')
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        yield bad("spec.scope", f'{spec.get("scope")!r}: supported values: "Cluster", "Namespaced"')
    versions = _list(spec.get("versions"))
    if not versions:
        yield bad("spec.versions", "Required value: must have at least one version")
    seen: set[object] = set()
    for i, version in enumerate(versions):
        at = f"spec.versions[{i}]"
        if not isinstance(version, Mapping):
            yield bad(at, "must be an object")
            continue
        if not isinstance(version.get("name"), str) or not _DNS_1035_LABEL.match(version["name"]):
            yield bad(f"{at}.name", f"{version.get('name')!r}: a lowercase RFC 1035 label is required")
        if version.get("name") in seen:
            yield bad(f"{at}.name", f"{version.get('name')!r}: Duplicate value")
        seen.add(version.get("name"))
        for flag in ("served", "storage"):
            if not isinstance(version.get(flag), bool):
                yield bad(f"{at}.{flag}", "Required value: a boolean")
        if not isinstance(_get(version, "schema", "openAPIV3Schema"), Mapping):
            yield bad(f"{at}.schema.openAPIV3Schema", "Required value: schemas are required")
        yield from _subresource_problems(version.get("subresources"), f"{at}.subresources")
        for j, column in enumerate(_list(version.get("additionalPrinterColumns"))):
            yield from _column_problems(column, f"{at}.additionalPrinterColumns[{j}]")
    storage = [v for v in versions if isinstance(v, Mapping) and v.get("storage") is True]
    if versions and len(storage) != 1:
        yield bad(
            "spec.versions", f"must have exactly one version marked as storage version, has {len(storage)}"
        )


def _subresource_problems(subresources: object, at: str) -> Iterator[Problem]:
    if subresources is None:
        return
    if not isinstance(subresources, Mapping) or set(subresources) - {"status", "scale"}:
        yield Problem(f"crd: {at}: only status and scale subresources exist")
        return
    if "status" in subresources and subresources["status"] != {}:
        yield Problem(f"crd: {at}.status: must be an empty object")
    scale = subresources.get("scale")
    if scale is not None and not (isinstance(scale, Mapping) and scale.get("specReplicasPath")):
        yield Problem(f"crd: {at}.scale.specReplicasPath: Required value")


def _column_problems(column: object, at: str) -> Iterator[Problem]:
    if not isinstance(column, Mapping):
        yield Problem(f"crd: {at}: must be an object")
        return
    if not isinstance(column.get("name"), str) or not column["name"]:
        yield Problem(f"crd: {at}.name: Required value")
    if column.get("type") not in _PRINTER_TYPES:
        yield Problem(f"crd: {at}.type: {column.get('type')!r}: must be one of {sorted(_PRINTER_TYPES)}")
    if "format" in column and column["format"] not in _PRINTER_FORMATS:
        yield Problem(f"crd: {at}.format: {column['format']!r}: must be one of {sorted(_PRINTER_FORMATS)}")
    if not isinstance(column.get("jsonPath"), str) or not column["jsonPath"].startswith("."):
        yield Problem(f"crd: {at}.jsonPath: Required value: a JSONPath starting with '.'")
    if not isinstance(column.get("priority", 0), int) or column.get("priority", 0) < 0:
        yield Problem(f"crd: {at}.priority: must be a non-negative integer")


# -- the schemas ----------------------------------------------------------------------------------------------------


def _schema_problems(root: Mapping[str, Any], path: str, *, with_status: bool) -> Iterator[Problem]:
    if root.get("type") != "object":
        yield Problem(f"root: {path}.type: {root.get('type')!r}: must be object at the root")
    for key in ("apiVersion", "kind"):
        field = _get(root, "properties", key)
        if isinstance(field, Mapping) and field.get("type") not in (None, "string"):
            yield Problem(f"root: {path}.properties[{key}].type: must be string")
    if with_status:
        for key in sorted(set(root) - _ROOT_WITH_STATUS):
            yield Problem(
                f"root: {path}.{key}: only {sorted(_ROOT_WITH_STATUS)} are allowed at the root of the schema if the "
                "status subresource is enabled"
            )
    yield from _metadata_problems(root, path)
    yield from _node_problems(root, path, place="root")


def _metadata_problems(node: Mapping[str, Any], path: str) -> Iterator[Problem]:
    """Structural schema, rule 4: of metadata, only name and generateName may be restricted."""
    metadata = _get(node, "properties", "metadata")
    if not isinstance(metadata, Mapping):
        return
    at = f"{path}.properties[metadata]"
    if metadata.get("type", "object") != "object":
        yield Problem(f"metadata: {at}.type: must be object")
    extra = sorted(set(metadata) - {"type", "properties"})
    inner = metadata.get("properties") or {}
    extra += [f"properties[{name}]" for name in sorted(set(inner) - {"name", "generateName"})]
    if extra:
        yield Problem(
            f"metadata: {at}: Forbidden: must not specify anything other than name and generateName, but "
            f"metadata is implicitly specified ({', '.join(extra)})"
        )
    for name in ("name", "generateName"):
        field = inner.get(name) if isinstance(inner, Mapping) else None
        if isinstance(field, Mapping):
            if field.get("type", "string") != "string":
                yield Problem(f"metadata: {at}.properties[{name}].type: must be string")
            if "default" in field:
                yield Problem(
                    f"metadata: {at}.properties[{name}].default: Forbidden: no defaults in metadata"
                )


def _children(node: Mapping[str, Any], path: str) -> Iterator[tuple[str, str, object]]:
    """(path, place, schema) of each sub-schema that must be typed: object fields, map values, array items."""
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        for name, child in properties.items():
            yield f"{path}.properties[{name}]", "field", child
    additional = node.get("additionalProperties")
    if isinstance(additional, Mapping):
        yield f"{path}.additionalProperties", "field", additional
    items = node.get("items")
    if items is not None:
        yield f"{path}.items", "items", items


def _node_problems(node: Mapping[str, Any], path: str, *, place: str) -> Iterator[Problem]:
    yield from _forbidden_problems(node, path)
    yield from _type_problems(node, path, place)
    yield from _extension_problems(node, path)
    yield from _validation_problems(node, path)
    yield from _default_problems(node, path)
    yield from _junctor_problems(node, path)
    yield from _bound_problems(node, path)
    if node.get("x-kubernetes-embedded-resource") is True:
        yield from _metadata_problems(node, path)
    for child_path, child_place, child in _children(node, path):
        if isinstance(child, Mapping):
            yield from _node_problems(child, child_path, place=child_place)
        elif child_place == "items":
            yield Problem(f"forbidden: {child_path}: items must be a schema object and not an array")
        else:
            yield Problem(f"type: {child_path}: must be a schema object")


def _bound_problems(node: Mapping[str, Any], path: str) -> Iterator[Problem]:
    """The API server holds ``minimum``, ``maximum`` and ``multipleOf`` as float64 and compares an integer field
    with them as int64: a bound float64 cannot hold exactly is silently another number, and one at 2**63 or
    beyond becomes -2**63, so that no value passes (seen on kube-apiserver 1.32 with ``maximum:
    9223372036854775807``, which refused every value as "should be less than or equal to
    -9223372036854775808")."""
    for key in ("minimum", "maximum", "multipleOf"):
        bound = node.get(key)
        if isinstance(bound, bool) or not isinstance(bound, int | float):
            continue
        held = float(bound)
        if held != bound or (node.get("type") == "integer" and not -(2**63) <= held < 2**63):
            yield Problem(
                f"bounds: {path}.{key}: {bound} is held by the API server as the float64 {held!r}, "
                "which is not the same number or is beyond int64"
            )


def _forbidden_problems(node: Mapping[str, Any], path: str) -> Iterator[Problem]:
    for key in sorted(set(node) - _JSON_SCHEMA_PROPS):
        why = (
            "Forbidden: cannot be set in a CustomResourceDefinition" if key in _FORBIDDEN else "unknown field"
        )
        yield Problem(f"forbidden: {path}.{key}: {why}")
    if node.get("uniqueItems") is True:
        yield Problem(f"forbidden: {path}.uniqueItems: Forbidden: uniqueItems cannot be set to true")
    if node.get("additionalProperties") is False:
        yield Problem(
            f"forbidden: {path}.additionalProperties: Forbidden: additionalProperties cannot be set to false"
        )
    if "additionalProperties" in node and "properties" in node:
        yield Problem(
            f"forbidden: {path}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
        )
    if node.get("type") == "array" and "items" not in node:
        yield Problem(f"forbidden: {path}.items: Required value: must be specified for an array")


def _type_problems(node: Mapping[str, Any], path: str, place: str) -> Iterator[Problem]:
    open_ended = (
        node.get("x-kubernetes-int-or-string") is True
        or node.get("x-kubernetes-preserve-unknown-fields") is True
    )
    kind = node.get("type")
    if kind is None:
        if not open_ended:
            where = {
                "root": "at the root",
                "field": "for specified object fields",
                "items": "for specified array items",
            }
            yield Problem(f"type: {path}.type: Required value: must not be empty {where[place]}")
    elif kind not in _TYPES:
        yield Problem(f"type: {path}.type: {kind!r}: supported values: {sorted(_TYPES)}")


def _extension_problems(node: Mapping[str, Any], path: str) -> Iterator[Problem]:
    def bad(key: str, message: str) -> Problem:
        return Problem(f"extensions: {path}.{key}: {message}")

    if (
        "x-kubernetes-preserve-unknown-fields" in node
        and node["x-kubernetes-preserve-unknown-fields"] is not True
    ):
        yield bad("x-kubernetes-preserve-unknown-fields", "must be true or undefined")
    if node.get("x-kubernetes-int-or-string") is True and "type" in node:
        yield bad("type", "must be empty if x-kubernetes-int-or-string is true")
    if node.get("x-kubernetes-embedded-resource") is True:
        if node.get("type") != "object":
            yield bad("type", "must be object if x-kubernetes-embedded-resource is true")
        if not node.get("properties") and node.get("x-kubernetes-preserve-unknown-fields") is not True:
            yield bad("properties", "must not be empty if x-kubernetes-embedded-resource is true without "
                      "x-kubernetes-preserve-unknown-fields")  # fmt: skip
    list_type, keys = node.get("x-kubernetes-list-type"), node.get("x-kubernetes-list-map-keys")
    if list_type is not None:
        if node.get("type") != "array":
            yield bad("x-kubernetes-list-type", "must only be used on type array")
        if list_type not in ("atomic", "set", "map"):
            yield bad("x-kubernetes-list-type", f'{list_type!r}: supported values: "atomic", "map", "set"')
    items = node.get("items") if isinstance(node.get("items"), Mapping) else {}
    if (
        list_type == "set"
        and items.get("type") not in _SCALARS
        and items.get("x-kubernetes-map-type") != "atomic"
    ):
        yield bad("items.type", "must be a scalar (or an atomic map) for x-kubernetes-list-type set")
    if list_type == "map":
        yield from _list_map_problems(items, keys, path)
    elif keys is not None:
        yield bad("x-kubernetes-list-map-keys", "must only be used with x-kubernetes-list-type map")
    map_type = node.get("x-kubernetes-map-type")
    if map_type is not None:
        if node.get("type") != "object":
            yield bad("x-kubernetes-map-type", "must only be used on type object")
        if map_type not in ("granular", "atomic"):
            yield bad("x-kubernetes-map-type", f'{map_type!r}: supported values: "atomic", "granular"')


def _list_map_problems(items: Mapping[str, Any], keys: object, path: str) -> Iterator[Problem]:
    at = f"extensions: {path}"
    if items.get("type") != "object":
        yield Problem(f"{at}.items.type: must be object for x-kubernetes-list-type map")
    if not isinstance(keys, list) or not keys or len(set(map(str, keys))) != len(keys):
        yield Problem(f"{at}.x-kubernetes-list-map-keys: must be a non-empty list of unique property names")
        return
    properties = items.get("properties") or {}
    required = set(items.get("required") or ())
    for key in keys:
        field = properties.get(key)
        if not isinstance(field, Mapping):
            yield Problem(f"{at}.x-kubernetes-list-map-keys: {key!r}: must be a property of the items")
            continue
        if field.get("type") not in _SCALARS:
            yield Problem(f"{at}.items.properties[{key}].type: a map key must be a scalar")
        if key not in required and "default" not in field:
            yield Problem(f"{at}.items.properties[{key}]: a map key must be required or have a default")


def _validation_problems(node: Mapping[str, Any], path: str) -> Iterator[Problem]:
    rules = node.get("x-kubernetes-validations")
    if rules is None:
        return
    for i, entry in enumerate(_list(rules)):
        at = f"validations: {path}.x-kubernetes-validations[{i}]"
        if not isinstance(entry, Mapping):
            yield Problem(f"{at}: must be an object")
            continue
        for key in sorted(set(entry) - _VALIDATION_KEYS):
            yield Problem(f"{at}.{key}: unknown field")
        rule = entry.get("rule")
        if not isinstance(rule, str) or not rule.strip():
            yield Problem(f"{at}.rule: Required value")
        else:
            try:
                celpy.Environment().compile(rule)
            except Exception as error:  # celpy raises its own parse errors, of several classes
                first = str(error).splitlines()[0] if str(error) else type(error).__name__
                yield Problem(f"{at}.rule: compilation failed: {first}")
        message = entry.get("message")
        if message is not None and (not isinstance(message, str) or not message.strip()):
            yield Problem(f"{at}.message: must be non-empty if specified")
        elif isinstance(message, str) and ("\n" in message or "\r" in message):
            yield Problem(f"{at}.message: must not contain line breaks")
        if "reason" in entry and entry["reason"] not in _VALIDATION_REASONS:
            yield Problem(
                f"{at}.reason: {entry['reason']!r}: supported values: {sorted(_VALIDATION_REASONS)}"
            )


def _default_problems(node: Mapping[str, Any], path: str) -> Iterator[Problem]:
    if "default" not in node:
        return
    default = node["default"]
    at = f"defaults: {path}.default"
    if default is None:
        if node.get("nullable") is not True:
            yield Problem(f"{at}: must not be null for a field that is not nullable")
        return
    if node.get("x-kubernetes-int-or-string") is True:
        if not isinstance(default, int | str) or isinstance(default, bool):
            yield Problem(f"{at}: {default!r}: must be an integer or a string")
        return
    validator = jsonschema.Draft4Validator(_as_json_schema(node, pruning=True))
    try:
        errors = list(validator.iter_errors(default))
    except (jsonschema.exceptions.UnknownType, jsonschema.exceptions.SchemaError):
        return  # a schema the type rule refuses already: no default can be checked against it
    for error in errors:
        where = "".join(f"[{p}]" for p in error.absolute_path)
        yield Problem(f"{at}{where}: Invalid value: {error.message}")


def _as_json_schema(node: Mapping[str, Any], *, pruning: bool) -> dict[str, Any]:
    """The node as a JSON Schema that also refuses what pruning would drop (a default must be pruned)."""
    out: dict[str, Any] = {
        k: v
        for k, v in node.items()
        if not k.startswith("x-kubernetes-") and k not in ("default", "nullable")
    }
    if node.get("nullable") is True and isinstance(node.get("type"), str):
        out["type"] = [node["type"], "null"]
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {k: _as_json_schema(v, pruning=pruning) for k, v in properties.items()}
        if pruning and node.get("x-kubernetes-preserve-unknown-fields") is not True:
            out["additionalProperties"] = False
    if isinstance(node.get("additionalProperties"), Mapping):
        out["additionalProperties"] = _as_json_schema(node["additionalProperties"], pruning=pruning)
    if isinstance(node.get("items"), Mapping):
        out["items"] = _as_json_schema(node["items"], pruning=pruning)
    for junctor in _JUNCTORS:
        if isinstance(node.get(junctor), list):
            out[junctor] = [
                _as_json_schema(s, pruning=False) for s in node[junctor] if isinstance(s, Mapping)
            ]
        elif isinstance(node.get(junctor), Mapping):
            out[junctor] = _as_json_schema(node[junctor], pruning=False)
    return out


# -- junctors (structural schema, rules 2 and 3) ---------------------------------------------------------------------


def _junctor_problems(node: Mapping[str, Any], path: str) -> Iterator[Problem]:
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    for junctor in _JUNCTORS:
        if junctor not in node:
            continue
        branches = node[junctor] if junctor != "not" else [node[junctor]]
        if not isinstance(branches, list):
            yield Problem(f"junctors: {path}.{junctor}: must be a list of schemas")
            continue
        for i, branch in enumerate(branches):
            at = f"{path}.{junctor}" + (f"[{i}]" if junctor != "not" else "")
            if isinstance(branch, Mapping):
                yield from _inside_junctor(branch, at, outside=node, int_or_string=int_or_string)


def _inside_junctor(
    branch: Mapping[str, Any], at: str, *, outside: Mapping[str, Any], int_or_string: bool
) -> Iterator[Problem]:
    int_or_string_pattern = (
        int_or_string and set(branch) == {"type"} and branch["type"] in ("integer", "string")
    )
    for key in _NOT_IN_JUNCTORS:
        if key in branch and not (key == "type" and int_or_string_pattern):
            yield Problem(f"junctors: {at}.{key}: Forbidden: must be empty to be structural")
    for key in sorted(k for k in branch if k.startswith("x-kubernetes-")):
        yield Problem(f"junctors: {at}.{key}: Forbidden: must be undefined to be structural")
    for name in _keys(branch.get("properties")):
        if name not in _keys(outside.get("properties")):
            yield Problem(
                f"junctors: {at}.properties[{name}]: Required value: must be specified outside of the junctors too"
            )
    if "items" in branch and "items" not in outside:
        yield Problem(f"junctors: {at}.items: Required value: must be specified outside of the junctors too")
    for junctor in _JUNCTORS:  # nested junctors follow the same rules, against the same outside
        nested = branch.get(junctor)
        for i, inner in enumerate(nested if isinstance(nested, list) else [nested] if nested else []):
            if isinstance(inner, Mapping):
                yield from _inside_junctor(
                    inner, f"{at}.{junctor}[{i}]", outside=outside, int_or_string=int_or_string
                )


# -- helpers ---------------------------------------------------------------------------------------------------------


def _get(mapping: object, *keys: str) -> Any:
    for key in keys:
        if not isinstance(mapping, Mapping):
            return None
        mapping = mapping.get(key)
    return mapping


def _list(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def _keys(value: object) -> set[str]:
    return {str(k) for k in value} if isinstance(value, Mapping) else set()
