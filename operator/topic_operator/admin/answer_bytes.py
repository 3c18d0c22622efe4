"""The pieces of Kafka's wire format that the answer readers (``config_answers``, ``metadata_answers``) share:
unsigned varints, compact strings and tagged fields of the flexible versions (KIP-482), and the error that says an
answer does not follow its layout."""

from __future__ import annotations

__all__ = ["UndecodableAnswerError", "compact_string", "skip_tagged_fields", "uvarint"]


class UndecodableAnswerError(ValueError):
    """The bytes do not follow the layout of the answer's version."""


def uvarint(data: bytes, position: int) -> tuple[int, int]:
    """An unsigned varint at ``position``, and the position after it."""
    value = 0
    shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
        if shift > 28:
            raise UndecodableAnswerError("a varint longer than five bytes")


def skip_tagged_fields(data: bytes, position: int) -> int:
    """The position after a tagged-field section (its count, then each tag, size and value)."""
    count, position = uvarint(data, position)
    for _ in range(count):
        _, position = uvarint(data, position)
        size, position = uvarint(data, position)
        position += size
    if position > len(data):
        raise UndecodableAnswerError("tagged fields run past the end of the answer")
    return position


def compact_string(data: bytes, position: int) -> tuple[str | None, int]:
    """A compact nullable string (its length plus one as a varint; 0 for null), and the position after it."""
    length, position = uvarint(data, position)
    if length == 0:
        return None, position
    end = position + length - 1
    if end > len(data):
        raise UndecodableAnswerError("a string runs past the end of the answer")
    return data[position:end].decode(), end
