"""The Helm values reference: every value of the chart's ``values.yaml``, with its default, the comment above it
and what ``values.schema.json`` allows.

PyYAML drops comments, so the file is read twice: parsed for the values, and line by line for the comment block
right above each key (the key's path is followed through the indentation). A comment at the top of a group (the
key ``batching:``) describes the group and heads its section.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from tools.docs_reference.crds import constraints_text
from tools.docs_reference.markdown import code, generated_header, page, prose, table

CHART = Path("helm") / "kafka-topic-operator"

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):(?:\s|$)")


def key_comments(text: str) -> dict[tuple[str, ...], list[str]]:
    """The comment lines right above each key of a YAML file of mappings, by the key's path."""
    comments: dict[tuple[str, ...], list[str]] = {}
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            pending.append(stripped[1:].removeprefix(" "))
            continue
        if not stripped:
            pending = []
            continue
        found = _KEY.match(line)
        if found is None:
            pending = []
            continue
        indent = len(found.group("indent"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, found.group("key")))
        comments[tuple(key for _, key in stack)] = pending
        pending = []
    return comments


def leaves(values: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every value that is not a non-empty mapping, by its path, in the file's order."""
    for key, value in values.items():
        if isinstance(value, Mapping) and value:
            yield from leaves(value, (*path, key))
        else:
            yield (*path, key), value


def schema_of(schema: Mapping[str, Any], path: tuple[str, ...]) -> Mapping[str, Any] | None:
    """The schema node of a value's path, or None when the schema has no entry for it."""
    node: Mapping[str, Any] = schema
    for key in path:
        properties = node.get("properties") or {}
        if key in properties:
            node = properties[key]
        elif isinstance(node.get("additionalProperties"), Mapping):
            node = node["additionalProperties"]
        else:
            return None
    return node


def _type_text(node: Mapping[str, Any]) -> str:
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind is None:
        options = [
            str(option.get("type")) for option in node.get("anyOf", node.get("oneOf", ())) if "type" in option
        ]
        return " or ".join(options)
    if kind == "array" and isinstance(node.get("items"), Mapping) and "type" in node["items"]:
        return f"list of {node['items']['type']}"
    return str(kind)


def _comment_text(lines: list[str]) -> list[str]:
    """A comment as Markdown: prose, with an indented example kept as a code block."""
    out: list[str] = []
    words: list[str] = []
    example: list[str] = []
    for line in lines:
        if line.startswith("  ") or (example and not line.strip()):
            example.append(line[2:])
            continue
        words.append(line)
    if words:
        out.append(prose(" ".join(words)))
    if example:
        out += [""] + ["    " + line.rstrip() for line in example]
    return out


def render(repository: Path) -> str:
    chart = repository / CHART
    text = (chart / "values.yaml").read_text()
    values = yaml.safe_load(text)
    schema = json.loads((chart / "values.schema.json").read_text())
    comments = key_comments(text)
    lines = [
        generated_header("helm/kafka-topic-operator/values.yaml and values.schema.json"),
        "",
        "# Helm values",
        "",
        "Every value of the chart `helm/kafka-topic-operator`, with its default and what it does. "
        "`values.schema.json` checks each one: `helm install` and `helm template` refuse a value of the wrong "
        "type or outside what the column *Allowed* says, naming it. The operator's settings they become are "
        "in [Settings](settings.md).",
    ]
    rows: list[list[str]] = []

    def flush() -> None:
        if rows:
            lines.extend(["", *table(["Value", "Default", "Type", "Allowed", "Description"], rows)])
            rows.clear()

    def add(path: tuple[str, ...], default: Any) -> None:
        node = schema_of(schema, path)
        if node is None:
            raise LookupError(f"values.schema.json has no entry for {'.'.join(path)}")
        # A value without a comment of its own takes its enclosing mapping's (a group's own comment heads it).
        said = comments.get(path) or (comments.get(path[:-1], []) if len(path) > 2 else [])
        description = _comment_text(said) if said else [prose(str(node.get("description", "")))]
        name = ".".join(path)
        rows.append(
            [code(name), code(json.dumps(default)), _type_text(node), constraints_text(node), description[0]]
        )
        if len(description) > 1:  # an example: a code block under the table, not in a cell
            flush()
            lines.extend(["", f"Example of `{name}`:", *description[1:]])

    every = list(leaves(values))
    lines += ["", "## Top-level values"]
    for path, default in every:
        if len(path) == 1:
            add(path, default)
    flush()
    groups = [key for key, value in values.items() if isinstance(value, Mapping) and value]
    for group in groups:
        lines += ["", f"## {group}"]
        if comments.get((group,)):
            lines += ["", *_comment_text(comments[(group,)])]
        for path, default in every:
            if len(path) > 1 and path[0] == group:
                add(path, default)
        flush()
    return page(lines)
