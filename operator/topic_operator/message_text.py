"""How values from manifests are echoed in messages: shortened and escaped, so that one message is one short line.

Whatever a manifest holds ends up in a message sooner or later: a topic name in Kafka's "Topic name is invalid"
sentence, a config key in a field path, a 50 MB scalar as "the value". Manifests come from pull requests by anyone
and messages go to CI logs, terminals, Kubernetes Events and status conditions, so every piece of text that came
from input goes through this module before it is shown:

- ``escaped`` writes every character that is not printable (newline, NUL, ESC, the bidirectional overrides,
  U+2028...) as a Python escape (``\\n``, ``\\x00``, ``\\u202e``), so that a message cannot span lines, hide text or
  steer a terminal;
- ``shortened`` keeps the head and the tail of a long text and says how much was cut between them, so that both a
  value at the start of a sentence and the rule at its end survive;
- ``shown`` renders any value (string, number, list, mapping, bytes) as a bounded, escaped one-liner without ever
  walking more of it than it prints: a structure of a million nodes costs what its first 80 characters cost.

Pure: no I/O, usable by every layer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

__all__ = [
    "LINE_LIMIT",
    "NAME_LIMIT",
    "PATH_LIMIT",
    "VALUE_LIMIT",
    "error_line",
    "escaped",
    "one_line",
    "shortened",
    "shown",
]

VALUE_LIMIT: Final = 80
"""Characters of a value shown in a message (``spec.config.x = '...'``)."""
PATH_LIMIT: Final = 160
"""Characters of a field path or file name (a config key is part of a path, and keys can be long)."""
NAME_LIMIT: Final = 120
"""Characters of an object name or kind."""
LINE_LIMIT: Final = 1000
"""Characters of one whole message line, whatever it is made of."""

_CUT_MARK: Final = "..."


def escaped(text: str) -> str:
    """``text`` with every non-printable character written as an escape; printable text is returned as it is.

    Printable is Python's ``str.isprintable`` (space included): control characters, format characters (the
    bidirectional overrides, zero-width joiners), line and paragraph separators and unassigned code points are
    escaped, as ``repr`` would write them. A backslash stays as it is: the escapes are for reading, not parsing.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if char in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shortened(text: str, limit: int) -> str:
    """``text`` escaped, if that fits in ``limit`` characters; else its head and tail around a note of how much
    was cut between them.

    Only the kept pieces are escaped, so a 50 MB text costs what ``limit`` characters cost, and the result is at
    most ``limit`` characters plus the note. The tail is kept because messages often end with the rule
    ("... for configuration retention.ms: Not a number of type LONG").
    """
    if len(text) <= limit:
        whole = escaped(text)
        if len(whole) <= limit:
            return whole
    keep = max(limit - 30, 2)
    head_size, tail_size = keep * 2 // 3, keep - keep * 2 // 3
    head = escaped(text[:head_size])[:head_size]
    tail = escaped(text[-tail_size:])[-tail_size:]
    cut = max(len(text) - head_size - tail_size, 0)
    return f"{head}{_CUT_MARK}[{cut:,} characters cut]{_CUT_MARK}{tail}"


def one_line(message: str, limit: int = LINE_LIMIT) -> str:
    """A whole message as one bounded, escaped line: what every printed error and warning goes through last."""
    return shortened(message, limit)


def error_line(error: BaseException) -> str:
    """What went wrong, in one bounded line: the error's first line of text, or its type's name when it has none
    (``TimeoutError()``, a dropped connection: a log line that ends in ``: `` tells nobody anything)."""
    lines = str(error).strip().splitlines()
    return one_line(lines[0] if lines else type(error).__name__)


def shown(value: object, limit: int = VALUE_LIMIT) -> str:
    """A value as a message shows it: a string as the YAML author wrote it (``'7d'``), anything else as JSON
    (``true``, ``[0, 1]``), at most ``limit`` characters and escaped. Only as much of a structure is rendered as
    is shown, so a deep or aliased value costs no more than a small one."""
    if isinstance(value, str):
        text = repr(value[: limit + 1])
        cut = len(value) > limit
    else:
        pieces: list[str] = []
        length = 0
        cut = False
        for piece in _json_pieces(value, limit + 1):
            pieces.append(piece)
            length += len(piece)
            if length > limit:
                cut = True
                break
        text = "".join(pieces)
    if cut or len(text) > limit:
        return escaped(text[: limit - len(_CUT_MARK)]) + _CUT_MARK
    return escaped(text)


def _json_pieces(value: object, budget: int) -> Iterator[str]:
    """JSON-like text of ``value`` in small pieces, depth-first without recursion; strings inside are cut to
    ``budget`` before they are quoted, so no piece is larger than what can be shown."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Literal):
            yield item.text
        elif isinstance(item, str):
            yield json.dumps(item[:budget])
        elif isinstance(item, bool) or item is None:
            yield json.dumps(item)
        elif isinstance(item, int):
            yield _int_text(item, budget)
        elif isinstance(item, float):
            yield json.dumps(item) if math.isfinite(item) else str(item)
        elif isinstance(item, Mapping):
            stack.extend(reversed(_mapping_parts(item)))
        elif isinstance(item, (Sequence, set, frozenset)) and not isinstance(item, (bytes, bytearray)):
            stack.extend(reversed(_sequence_parts(item)))
        else:
            yield json.dumps(repr(item)[:budget])


class _Literal:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_OPEN_LIST, _CLOSE_LIST, _OPEN_MAP, _CLOSE_MAP, _COMMA, _COLON = (
    _Literal("["),
    _Literal("]"),
    _Literal("{"),
    _Literal("}"),
    _Literal(", "),
    _Literal(": "),
)
_PARTS_SHOWN: Final = VALUE_LIMIT
"""At most this many entries of one collection are queued: more could not be shown anyway."""


def _sequence_parts(items: Sequence[object] | set[object] | frozenset[object]) -> list[object]:
    parts: list[object] = [_OPEN_LIST]
    for number, item in enumerate(items):
        if number >= _PARTS_SHOWN:
            parts.append(_Literal(", ..."))
            break
        if number:
            parts.append(_COMMA)
        parts.append(item)
    parts.append(_CLOSE_LIST)
    return parts


def _mapping_parts(mapping: Mapping[object, object]) -> list[object]:
    parts: list[object] = [_OPEN_MAP]
    for number, (key, item) in enumerate(mapping.items()):
        if number >= _PARTS_SHOWN:
            parts.append(_Literal(", ..."))
            break
        if number:
            parts.append(_COMMA)
        parts.extend(
            (key if isinstance(key, str) else _Literal(json.dumps(str(key)[:VALUE_LIMIT])), _COLON, item)
        )
    parts.append(_CLOSE_MAP)
    return parts


def _int_text(number: int, budget: int) -> str:
    """Decimal digits of an integer, without converting a huge one whole (Python refuses more than 4,300 digits,
    and the conversion is quadratic)."""
    if number.bit_length() <= 3 * budget:
        return str(number)
    return f"<an integer of {number.bit_length():,} bits>"
