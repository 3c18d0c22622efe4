"""YAML documents from text, bounded while they are parsed: nesting depth, alias expansion, scalar length, count.

PyYAML's fast loader composes nodes with recursive C code (a hundred thousand nested brackets crash the process)
and leaves aliases shared, to be expanded by whoever walks the result (a "billion laughs" document then takes
minutes and gigabytes in the first ``json.dumps``). So documents are built here from libyaml's event stream, which
is produced without recursion: each event is checked against the limits as it arrives, and building stops at the
first one that is exceeded, before anything larger exists.

The values are what PyYAML's safe loader makes of the same text (same tag resolution and scalar constructors,
merge keys included), except that timestamps stay strings as in the Kubernetes API, a mapping key given twice is
reported (YAML keeps the last silently; Kubernetes refuses the document), and an alias may not refer to a node
that contains it. Building from events is also about twice as fast as PyYAML's own loader, which spends most of
its time in generic node and constructor machinery.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from topic_operator.manifests.limits import ManifestLimits

try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML built without libyaml: the pure-Python parser emits the same events
    _EVENT_PARSER: Any = yaml.SafeLoader
else:
    _EVENT_PARSER = CParser

__all__ = ["LoadBudget", "YamlDocument", "YamlReadError", "yaml_documents", "yaml_problem"]

_TAG: Final = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ, _MERGE, _VALUE = (f"{_TAG}{name}" for name in ("str", "map", "seq", "merge", "value"))
_SET, _OMAP, _PAIRS, _TIMESTAMP = (f"{_TAG}{name}" for name in ("set", "omap", "pairs", "timestamp"))


class _Constructor(yaml.SafeLoader):
    """PyYAML's safe scalar constructors and implicit resolvers, minus the implicit timestamp (Kubernetes keeps
    ``2024-01-01`` a string)."""


_Constructor.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_RESOLVERS: Final = _Constructor.yaml_implicit_resolvers
_CONSTRUCTOR: Final = _Constructor("")
_SCALAR_CONSTRUCTORS: Final[dict[str, Callable[[ScalarNode], Any]]] = {
    f"{_TAG}{name}": getattr(_CONSTRUCTOR, f"construct_yaml_{name}")
    for name in ("int", "float", "bool", "null", "binary", "timestamp")
}


@dataclass(slots=True)
class LoadBudget:
    """What one load has used so far of the limits that hold across files."""

    limits: ManifestLimits
    bytes_read: int = 0
    files: int = 0
    documents: int = 0
    alias_nodes: int = 0


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """One YAML document: its number in the file (from 1), its value, and problems that do not stop reading."""

    index: int
    value: object
    problems: tuple[str, ...] = ()


class YamlReadError(Exception):
    """The text cannot be read further: a syntax error or an exceeded limit, in document ``index``."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


def yaml_problem(error: yaml.YAMLError) -> str:
    """The parser's problem with line and column in the file (PyYAML's own text names "<unicode string>")."""
    if not isinstance(error, yaml.MarkedYAMLError):
        return " ".join(str(error).split())
    parts = []
    for text, mark in ((error.problem, error.problem_mark), (error.context, error.context_mark)):
        if text:
            parts.append(f"{text}{_at(mark)}" if mark else text)
    return " ".join(parts)


def _at(mark: Any) -> str:
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def yaml_documents(text: str, budget: LoadBudget) -> Iterator[YamlDocument]:
    """Every document of ``text`` in order; raises ``YamlReadError`` where reading must stop (the documents
    before it have been yielded). ``budget`` is charged for documents and alias expansion.

    A file written only in the plain block style is read by the fast path (``_simple_documents``), with the same
    values; the budget is charged per document as it is yielded, as the event path charges it."""
    simple = _simple_documents(text, budget.limits)
    if simple is not None and budget.documents + len(simple) <= budget.limits.max_documents:
        for document in simple:
            budget.documents += 1
            yield document
        return
    parser: Any = _EVENT_PARSER(text)
    builder = _Builder(parser.get_event, budget)
    index = 0
    try:
        parser.get_event()  # StreamStartEvent
        while True:
            event = parser.get_event()
            if isinstance(event, StreamEndEvent):
                return
            index += 1
            if not isinstance(
                event, DocumentStartEvent
            ):  # pragma: no cover - libyaml always starts documents
                raise YamlReadError(index, "not valid YAML: expected the start of a document")
            budget.documents += 1
            if budget.documents > budget.limits.max_documents:
                raise YamlReadError(
                    index,
                    f"more than {budget.limits.max_documents:,} documents in all: the rest is not read "
                    "(KTO_MANIFEST_MAX_DOCUMENTS raises the limit)",
                )
            value, problems = builder.document()
            yield YamlDocument(index, value, problems)
    except yaml.YAMLError as error:
        raise YamlReadError(max(index, 1), f"not valid YAML: {yaml_problem(error)}") from None
    except _RefusedError as refusal:
        raise YamlReadError(max(index, 1), refusal.message) from None


class _RefusedError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(slots=True)
class _Collection:
    """A list or mapping being built, with what is needed to finish it."""

    value: Any
    is_mapping: bool
    tag: str
    anchor: str | None
    nodes_before: int
    """The document's node count before this collection: its size, for aliases, is the count at its end minus
    this."""
    start: Any
    key: Any = None
    """The key read and waiting for its value (``_NO_KEY`` when none)."""
    merges: list[Any] | None = None
    duplicates: list[Any] | None = None


_NO_KEY: Final = object()
_IMMUTABLE: Final = frozenset({str, int, float, bool, type(None)})
_CACHED_TEXT: Final = 64
_CACHED_VALUES: Final = 50_000


class _Builder:
    """Python values from one document's events, with the limits checked on every event."""

    def __init__(self, get_event: Callable[[], Any], budget: LoadBudget) -> None:
        self._get_event = get_event
        self._budget = budget
        limits = budget.limits
        self._max_depth = limits.max_depth
        self._max_scalar = limits.max_scalar_chars
        self._plain_values: dict[str, Any] = {}
        """Plain scalars already resolved (keys and common values repeat in every document), immutable values
        only, short texts only, cleared when it grows past a bound."""

    def document(self) -> tuple[object, tuple[str, ...]]:
        get_event = self._get_event
        max_depth, max_scalar = self._max_depth, self._max_scalar
        anchors: dict[str, tuple[Any, int]] = {}
        plain_values = self._plain_values
        stack: list[_Collection] = []
        problems: list[str] = []
        nodes = 0
        root: Any = None
        while True:
            event = get_event()
            kind = type(event)
            if kind is ScalarEvent:
                nodes += 1
                text = event.value
                if len(text) > max_scalar:
                    raise _RefusedError(
                        f"a scalar of {len(text):,} characters{_at(event.start_mark)}: at most "
                        f"{max_scalar:,} are read (KTO_MANIFEST_MAX_SCALAR_CHARS raises the limit)"
                    )
                if event.tag is None and event.implicit[0]:
                    value = plain_values.get(text, _NO_KEY)
                    if value is _NO_KEY:
                        value = _scalar(event, text)
                        if len(text) <= _CACHED_TEXT and type(value) in _IMMUTABLE:
                            if len(plain_values) >= _CACHED_VALUES:
                                plain_values.clear()
                            plain_values[text] = value
                elif event.tag is None:
                    value = text
                else:
                    value = _scalar(event, text)
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                if len(stack) >= max_depth:
                    raise _RefusedError(
                        f"more than {max_depth} levels of nesting{_at(event.start_mark)} "
                        "(KTO_MANIFEST_MAX_DEPTH raises the limit)"
                    )
                is_mapping = kind is MappingStartEvent
                stack.append(
                    _Collection(
                        {} if is_mapping else [],
                        is_mapping,
                        _collection_tag(event, is_mapping),
                        event.anchor,
                        nodes,
                        event.start_mark,
                        _NO_KEY,
                    )
                )
                nodes += 1
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                done = stack.pop()
                value = _finished(done, problems)
                if done.anchor is not None:
                    anchors[done.anchor] = (value, nodes - done.nodes_before)
            elif kind is AliasEvent:
                found = anchors.get(event.anchor)
                if found is None:
                    raise _RefusedError(
                        f"found undefined alias {event.anchor!r}{_at(event.start_mark)} (an alias must follow its "
                        "anchor and must not be inside it)"
                    )
                value, size = found
                nodes += size
                self._budget.alias_nodes += size
                if self._budget.alias_nodes > self._budget.limits.max_alias_nodes:
                    raise _RefusedError(
                        f"aliases repeat more than {self._budget.limits.max_alias_nodes:,} nodes in all"
                        f"{_at(event.start_mark)}: refused as an alias bomb (KTO_MANIFEST_MAX_ALIAS_NODES "
                        "raises the limit)"
                    )
            elif kind is DocumentEndEvent:
                return root, tuple(problems)
            else:  # pragma: no cover - libyaml emits nothing else inside a document
                raise _RefusedError(f"not valid YAML: unexpected {kind.__name__}")
            if not stack:
                root = value
                continue
            top = stack[-1]
            if not top.is_mapping:
                top.value.append(value)
            elif top.key is _NO_KEY:
                top.key = value if type(value) is str else _key(value, event)
            else:
                key = top.key
                if type(key) is str and key not in top.value:
                    top.value[key] = value
                else:
                    _put(top, key, value)
                top.key = _NO_KEY


def _scalar(event: Any, text: str) -> Any:
    """PyYAML's ``resolve`` and safe constructor for one scalar; any failure is a YAML problem, never a crash."""
    tag = event.tag
    if tag is None or tag == "!":
        tag = _resolved(text) if event.implicit[0] else _STR
    if tag == _STR:
        return text
    if tag == _MERGE:
        return _MergeKey(text)
    if tag == _VALUE:
        return text
    construct = _SCALAR_CONSTRUCTORS.get(tag)
    if construct is None:
        raise _RefusedError(f"could not determine a constructor for the tag {tag!r}{_at(event.start_mark)}")
    try:
        return construct(ScalarNode(tag, text, event.start_mark, event.end_mark))
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, yaml.YAMLError) as error:
        reason = (
            "an integer of more than 4300 digits"
            if "digits" in str(error)
            else f"not a valid {tag[len(_TAG) :]}"
        )
        raise _RefusedError(f"cannot read {text[:40]!r} as {tag}{_at(event.start_mark)}: {reason}") from None


def _resolved(text: str) -> str:
    for tag, regexp in _RESOLVERS.get(text[:1], ()):
        if regexp.match(text):
            return str(tag)
    return _STR


class _MergeKey(str):
    """The ``<<`` key of a merge: its value's mappings are merged into the mapping that holds it. Elsewhere (as a
    value) it is just the string ``<<``."""

    __slots__ = ()


def _collection_tag(event: Any, is_mapping: bool) -> str:
    tag = event.tag
    if tag is None or tag == "!":
        return _MAP if is_mapping else _SEQ
    allowed = (_MAP, _SET) if is_mapping else (_SEQ, _OMAP, _PAIRS)
    if tag not in allowed:
        raise _RefusedError(f"could not determine a constructor for the tag {tag!r}{_at(event.start_mark)}")
    return str(tag)


def _key(value: Any, event: Any) -> Any:
    if isinstance(value, (list, dict, set)):
        raise _RefusedError(f"found unhashable key{_at(event.start_mark)}: a mapping key must be a scalar")
    return value


def _put(collection: _Collection, key: Any, value: Any) -> None:
    if type(key) is _MergeKey:
        if collection.merges is None:
            collection.merges = []
        collection.merges.append(value)
        return
    mapping = collection.value
    if key in mapping:
        if collection.duplicates is None:
            collection.duplicates = []
        collection.duplicates.append(key)
    mapping[key] = value


def _finished(collection: _Collection, problems: list[str]) -> Any:
    value = collection.value
    if collection.duplicates:
        for key in collection.duplicates:
            problems.append(
                f"the key {key!r} appears more than once in one mapping{_at(collection.start)}: YAML keeps the "
                "last value silently, Kubernetes refuses the document"
            )
    if collection.merges:
        value = _merged(collection.merges, value, collection.start)
    if collection.tag == _SET:
        return set(value)
    if collection.tag in (_OMAP, _PAIRS):
        return _pairs(value, collection)
    return value


def _merged(merges: list[Any], explicit: dict[Any, Any], start: Any) -> dict[Any, Any]:
    """PyYAML's merge: later ``<<`` keys win over earlier ones, earlier mappings of a ``<<`` list over later ones,
    and the mapping's own keys over all."""
    result: dict[Any, Any] = {}
    for merge in merges:
        sources = merge if isinstance(merge, list) else [merge]
        for source in reversed(sources):
            if not isinstance(source, dict):
                raise _RefusedError(f"expected a mapping or a list of mappings for merging{_at(start)}")
            result.update(source)
    result.update(explicit)
    return result


def _pairs(items: list[Any], collection: _Collection) -> list[tuple[Any, Any]]:
    pairs = []
    for item in items:
        if not isinstance(item, dict) or len(item) != 1:
            raise _RefusedError(f"expected a single mapping item for {collection.tag}{_at(collection.start)}")
        pairs.append(next(iter(item.items())))
    return pairs


# ---------------------------------------------------------------------------------------------------------------
# The fast path for plain block YAML.
#
# Manifests are mostly written in one narrow style: block mappings, one ``key: value`` per line, plain or simply
# quoted scalars, ``---`` between documents, whole-line comments. libyaml makes a Python event object with two
# marks for every scalar and collection, which costs more than reading such lines directly. So a file written
# only in that style is read line by line here, with the scalars resolved by the same resolvers and constructors
# as the event path; anything else in the file (flow style, sequences, anchors, tags, block scalars, a duplicate
# key, a limit approached, a scalar a constructor refuses, any syntax error) makes ``_simple_documents`` give up
# and the whole file goes through the event path, so every problem is still reported by it, with its line.

_SIMPLE_KEY: Final = re.compile(r"( *)([A-Za-z0-9_][A-Za-z0-9_./-]*):(?: +(.*))?$")
_SIMPLE_PLAIN: Final = re.compile(
    r"(?:[A-Za-z0-9_.~/+=()$^]|-(?=[^ ]))[A-Za-z0-9_.~/+=()$^@,:-]*(?: +[A-Za-z0-9_.~/+=()$^@,:-]+)*"
)
_SINGLE_QUOTED: Final = re.compile(r"'((?:[^'\n]|'')*)'(?: +#.*)? *$")
_DOUBLE_QUOTED: Final = re.compile(r'"([^"\\\n]*)"(?: +#.*)? *$')
_NOT_SIMPLE: Final = re.compile(r"[^\x20-\x7e\n]")
_FLOW_PLAIN: Final = (
    r"(?:[A-Za-z0-9_.~/+=()$^]|-(?=[^ ,}]))[A-Za-z0-9_.~/+=()$^@-]*(?: +[A-Za-z0-9_.~/+=()$^@-]+)*"
)
"""A plain scalar inside a flow mapping: no ``,`` ``:`` or brackets, which end it or change its meaning there."""
_FLOW_ITEM: Final = re.compile(
    rf" *([A-Za-z0-9_][A-Za-z0-9_./-]*): +('(?:[^'\n]|'')*'|\"[^\"\\\n]*\"|{_FLOW_PLAIN}) *(,|}})"
)
"""One ``key: value`` of a flow mapping on one line, and what follows it (``,`` or the closing ``}``)."""
_FLOW_END: Final = re.compile(r"(?: +#.*)? *$")
"""Tabs, carriage returns, control characters and anything beyond ASCII: the event path reads those."""


class _NotSimpleError(Exception):
    """The text is not in the simple style: read it through the event path."""


def _simple_documents(text: str, limits: ManifestLimits) -> list[YamlDocument] | None:
    """Every document of ``text`` when all of it is in the simple style, exactly as the event path builds them;
    None otherwise."""
    if _NOT_SIMPLE.search(text):
        return None
    max_depth = min(limits.max_depth, 32)
    max_scalar = limits.max_scalar_chars
    resolved: dict[str, Any] = {}
    seen: dict[str, Any] = {}
    """Lines already read: most lines of a file of manifests repeat in every document."""
    documents: list[YamlDocument] = []
    explicit = False  # the document follows a ``---``: a document even when empty
    root: dict[Any, Any] | None = None
    stack: list[tuple[int, dict[Any, Any]]] = []
    pending: tuple[int, dict[Any, Any], Any] | None = None  # a ``key:`` whose value is on the lines below
    try:
        for line in text.split("\n"):
            parsed = seen.get(line)
            if parsed is None:
                parsed = _simple_line(line, max_scalar, resolved)
                if len(seen) < _CACHED_VALUES:
                    seen[line] = parsed
            if parsed is _BLANK:
                continue
            if parsed is _SEPARATOR:
                if pending is not None:
                    pending[1][pending[2]] = _simple_plain("", resolved)
                    pending = None
                if root is not None or explicit:
                    documents.append(YamlDocument(len(documents) + 1, root))
                root, stack, explicit = None, [], True
                continue
            indent, key, value = parsed
            if pending is not None:
                parent_indent, parent, parent_key = pending
                pending = None
                if indent > parent_indent:
                    if len(stack) >= max_depth:
                        raise _NotSimpleError
                    child: dict[Any, Any] = {}
                    parent[parent_key] = child
                    stack.append((indent, child))
                else:
                    parent[parent_key] = _simple_plain("", resolved)
            if root is None:
                root = {}
                stack.append((indent, root))
            while indent < stack[-1][0]:
                stack.pop()
                if not stack:
                    raise _NotSimpleError
            if indent != stack[-1][0]:
                raise _NotSimpleError
            mapping = stack[-1][1]
            if key in mapping:
                raise _NotSimpleError
            if value is _PENDING:
                pending = (indent, mapping, key)
                mapping[key] = None  # holds the key's place in the order; replaced by the lines below
            elif type(value) is dict:  # a flow mapping: its own levels and its own dict in every document
                if len(stack) >= max_depth:
                    raise _NotSimpleError
                mapping[key] = dict(value)
            else:
                mapping[key] = value
    except _NotSimpleError:
        return None
    if pending is not None:
        pending[1][pending[2]] = _simple_plain("", resolved)
    if root is not None or explicit:
        documents.append(YamlDocument(len(documents) + 1, root))
    return documents


_BLANK: Final = object()
_SEPARATOR: Final = object()
_PENDING: Final = object()


def _simple_line(line: str, max_scalar: int, resolved: dict[str, Any]) -> Any:
    """``_BLANK`` (a blank line or a comment), ``_SEPARATOR`` (``---``), or the indent, key and value of a
    ``key: value`` line, the value ``_PENDING`` when it is on the lines below (a mapping, or null)."""
    if not line or line.isspace() or line.lstrip(" ").startswith("#"):
        return _BLANK
    if line.startswith(("---", "...", "%")):
        if line.rstrip(" ") == "---":
            return _SEPARATOR
        raise _NotSimpleError
    match = _SIMPLE_KEY.match(line)
    if match is None or len(match[2]) > max_scalar:
        raise _NotSimpleError
    key = _simple_plain(match[2], resolved)
    rest = match[3]
    if rest is None or not (rest := rest.rstrip(" ")) or rest[0] == "#":
        return len(match[1]), key, _PENDING
    return len(match[1]), key, _simple_value(rest, max_scalar, resolved)


def _simple_value(rest: str, max_scalar: int, resolved: dict[str, Any]) -> Any:
    """The value after ``key: ``: a quoted scalar (a string), a plain one resolved as the event path does, or a
    flow mapping of such scalars on the same line (``metadata: {name: orders}``)."""
    first = rest[0]
    if first == "{":
        return _flow_mapping(rest, max_scalar, resolved)
    if first == "'":
        quoted = _SINGLE_QUOTED.match(rest)
        if quoted is None:
            raise _NotSimpleError
        value = quoted[1].replace("''", "'")
    elif first == '"':
        quoted = _DOUBLE_QUOTED.match(rest)
        if quoted is None:
            raise _NotSimpleError
        value = quoted[1]
    else:
        comment = rest.find(" #")
        if comment >= 0:
            rest = rest[:comment].rstrip(" ")
        if not _SIMPLE_PLAIN.fullmatch(rest) or ": " in rest or rest.endswith(":"):
            raise _NotSimpleError
        value = _simple_plain(rest, resolved)
    if len(rest) > max_scalar:
        raise _NotSimpleError
    return value


def _flow_mapping(rest: str, max_scalar: int, resolved: dict[str, Any]) -> dict[Any, Any]:
    """``{key: value, ...}`` on one line, every value a scalar ``_simple_value`` reads; anything else (nesting,
    a key given twice, a value left out, a trailing comma) is left to the event path."""
    mapping: dict[Any, Any] = {}
    inside = rest[1:].lstrip(" ")
    if inside.startswith("}"):  # {}
        position = len(rest) - len(inside) + 1
    else:
        position = 1
        while True:
            item = _FLOW_ITEM.match(rest, position)
            if item is None or len(item[2]) > max_scalar:
                raise _NotSimpleError
            key = _simple_plain(item[1], resolved)
            if key in mapping:
                raise _NotSimpleError
            mapping[key] = _simple_value(item[2], max_scalar, resolved)
            position = item.end()
            if item[3] == "}":
                break
    if _FLOW_END.fullmatch(rest, position) is None:
        raise _NotSimpleError
    return mapping


def _simple_plain(text: str, resolved: dict[str, Any]) -> Any:
    """A plain scalar as ``_scalar`` resolves and constructs it; a tag the simple style does not take (a merge
    key, ``=``) or a constructor's refusal leaves it to the event path."""
    value = resolved.get(text, _NO_KEY)
    if value is not _NO_KEY:
        return value
    tag = _resolved(text)
    if tag == _STR:
        value = text
    else:
        construct = _SCALAR_CONSTRUCTORS.get(tag)
        if construct is None:
            raise _NotSimpleError
        try:
            value = construct(ScalarNode(tag, text, None, None))
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError, yaml.YAMLError):
            raise _NotSimpleError from None  # the event path reports it, with its line
        if type(value) not in _IMMUTABLE:
            raise _NotSimpleError
    if len(resolved) < _CACHED_VALUES:
        resolved[text] = value
    return value
