"""The few pieces of Java's standard library whose behaviour Kafka's config rules inherit.

Kafka parses every topic config with ``String.trim``, ``Integer.parseInt``, ``Long.parseLong``,
``Double.parseDouble`` and a regex split, and prints parsed numbers with ``toString``. Python's look-alikes differ
at the edges (``int(" 1_0 ")`` is 10, ``float("inf")`` parses, ``str.strip`` removes U+00A0, ``repr(1e7)`` is
``1e7``), and an edge that parses here but not in Kafka would let the planner write a config that brokers reject.
So each helper below reproduces the Java behaviour exactly, and says where it deliberately stops.

Pure functions, no I/O.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from typing import Final

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "LONG_MAX",
    "LONG_MIN",
    "JavaNumberFormatError",
    "java_double_to_string",
    "java_equals_ignore_case",
    "java_list_to_string",
    "java_split",
    "java_trim",
    "parse_java_boolean",
    "parse_java_double",
    "parse_java_int",
    "parse_java_long",
    "split_config_list",
]

INT_MIN: Final = -(2**31)
INT_MAX: Final = 2**31 - 1
LONG_MIN: Final = -(2**63)
LONG_MAX: Final = 2**63 - 1

_TRIMMED_CHARS: Final = "".join(chr(code) for code in range(0x21))
"""``String.trim`` removes every char up to and including U+0020 (all ASCII controls), and nothing else."""

_REGEX_WHITESPACE: Final = "[ \\t\\n\\x0b\\f\\r]"
"""Java's ``\\s`` without UNICODE_CHARACTER_CLASS; Python's ``\\s`` would also match U+00A0, U+2028, ..."""

_COMMA_WITH_WHITESPACE: Final = re.compile(f"{_REGEX_WHITESPACE}*,{_REGEX_WHITESPACE}*")

_ASCII_INTEGER: Final = re.compile(r"[+-]?[0-9]+")
_ASCII_INTEGER_MAX_CHARS: Final = 40
"""Longer digit strings go the digit-by-digit way, which stops at the first digit past the range."""
_DECIMAL_DOUBLE: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?")
_HEX_DOUBLE: Final = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?"
)
_SPECIAL_DOUBLE: Final = re.compile(r"([+-]?)(NaN|Infinity)")

_EXACT_DOUBLE_PRECISION: Final = 800
"""Enough decimal digits to hold any double exactly (the longest, a subnormal, has 767 significant digits)."""

_PLAIN_NOTATION_EXPONENTS: Final = range(-3, 7)
"""``Double.toString`` writes 10^-3 <= |d| < 10^7 without an exponent, everything else as ``d.dddE<n>``."""


class JavaNumberFormatError(ValueError):
    """Java's ``NumberFormatException``: the text is not a number of the requested type."""


def java_trim(text: str) -> str:
    """``String.trim``. ConfigDef trims every value with it, so a trailing NBSP survives and breaks a number."""
    return text.strip(_TRIMMED_CHARS)


def parse_java_int(text: str) -> int:
    """``Integer.parseInt(text)``: Kafka's parser for INT configs (the caller trims first, as ConfigDef does)."""
    return _parse_java_integer(text, INT_MIN, INT_MAX)


def parse_java_long(text: str) -> int:
    """``Long.parseLong(text)``: Kafka's parser for LONG configs (the caller trims first, as ConfigDef does)."""
    return _parse_java_integer(text, LONG_MIN, LONG_MAX)


def _parse_java_integer(text: str, lowest: int, highest: int) -> int:
    """One optional sign, then at least one decimal digit, and the result within range.

    Python's ``int()`` is laxer: it strips whitespace and accepts '_' between digits. Java accepts any Unicode
    decimal digit (``Character.digit``) but only in the BMP, because it reads UTF-16 chars one at a time. On
    the text nearly every value is, a sign and ASCII digits, the two agree, and ``int()`` reads it in a tenth of
    the time the digit-by-digit walk takes (which a manifest of 10,000 topics pays for every number).
    """
    if len(text) <= _ASCII_INTEGER_MAX_CHARS and _ASCII_INTEGER.fullmatch(text) is not None:
        value = int(text)
        if lowest <= value <= highest:
            return value
        raise JavaNumberFormatError(f'For input string: "{text}"')
    sign, digits = _split_sign(text)
    if not digits:
        raise JavaNumberFormatError(f'For input string: "{text}"')
    limit = -lowest if sign < 0 else highest
    value = 0
    for char in digits:
        digit = _java_decimal_digit(char)
        if digit < 0:
            raise JavaNumberFormatError(f'For input string: "{text}"')
        value = value * 10 + digit
        if value > limit:
            raise JavaNumberFormatError(f'For input string: "{text}"')
    return sign * value


def _split_sign(text: str) -> tuple[int, str]:
    """Java reads a single leading '+' or '-'; a second sign is just a bad digit."""
    if text[:1] == "-":
        return -1, text[1:]
    if text[:1] == "+":
        return 1, text[1:]
    return 1, text


def _java_decimal_digit(char: str) -> int:
    """``Character.digit(char, 10)``: a Unicode decimal digit (category Nd) within the BMP, else -1."""
    if ord(char) > 0xFFFF:
        return -1
    return unicodedata.decimal(char, -1)


def parse_java_double(text: str) -> float:
    """``Double.parseDouble(text)``, the grammar of ``FloatingDecimal.readJavaFormatString``.

    Accepted: optional sign; ``NaN`` or ``Infinity`` (exact case, no suffix); decimal digits with an optional '.'
    and an optional exponent; hex floats ``0x<hex>[.<hex>]p<exp>``; then one optional f/F/d/D suffix, which does
    not change the value. Python's ``float()`` also takes "inf", "nan", "1_0" and Unicode digits, which Java does
    not. Like Java, the text is trimmed first. Values are correctly rounded in both languages, so the parsed double
    is the same; only absurd exponents beyond 2^31 digits could differ, and both give 0 or infinity there.
    """
    trimmed = java_trim(text)
    special = _SPECIAL_DOUBLE.fullmatch(trimmed)
    if special is not None:
        return _special_double(special.group(1), special.group(2))
    if _HEX_DOUBLE.fullmatch(trimmed) is not None:
        return _hex_double(_without_suffix(trimmed))
    if _DECIMAL_DOUBLE.fullmatch(trimmed) is not None:
        return float(_without_suffix(trimmed))
    raise JavaNumberFormatError(f'For input string: "{trimmed}"' if trimmed else "empty String")


def _special_double(sign: str, word: str) -> float:
    """Java's NaN is unsigned in effect; Infinity keeps its sign."""
    if word == "NaN":
        return math.nan
    return -math.inf if sign == "-" else math.inf


def _without_suffix(number: str) -> str:
    """The f/F/d/D type suffix only tells javac the literal's type; ``parseDouble`` ignores it."""
    return number[:-1] if number[-1] in "fFdD" else number


def _hex_double(number: str) -> float:
    """``float.fromhex`` rounds like Java, but raises where Java overflows quietly to infinity."""
    try:
        return float.fromhex(number)
    except OverflowError:
        return -math.inf if number.startswith("-") else math.inf


def parse_java_boolean(text: str) -> bool:
    """ConfigDef's BOOLEAN rule: ``true`` or ``false`` by ``equalsIgnoreCase``, anything else an error.

    Not ``Boolean.parseBoolean``, which quietly reads every other string as false. ``equalsIgnoreCase`` compares
    char by char through upper and lower case, so the long s (U+017F, upper case 'S') makes "falſe" a false.
    """
    if java_equals_ignore_case(text, "true"):
        return True
    if java_equals_ignore_case(text, "false"):
        return False
    raise ValueError(f"{text!r} is neither true nor false")


def java_equals_ignore_case(left: str, right: str) -> bool:
    """``String.equalsIgnoreCase``: equal lengths, and each pair of chars equal, equal in upper case, or equal in
    lower case after upper-casing. Java maps one char to one char, so Python's multi-char mappings ('ß' -> 'SS')
    count as no mapping."""
    if len(left) != len(right):
        return False
    return all(_chars_equal_ignoring_case(a, b) for a, b in zip(left, right, strict=True))


def _chars_equal_ignoring_case(a: str, b: str) -> bool:
    if a == b:
        return True
    upper_a, upper_b = _simple_upper(a), _simple_upper(b)
    return upper_a == upper_b or _simple_lower(upper_a) == _simple_lower(upper_b)


def _simple_upper(char: str) -> str:
    mapped = char.upper()
    return mapped if len(mapped) == 1 else char


def _simple_lower(char: str) -> str:
    mapped = char.lower()
    return mapped if len(mapped) == 1 else char


def split_config_list(text: str) -> list[str]:
    """ConfigDef's LIST rule: trim, an empty result is the empty list, otherwise split on the regex ``\\s*,\\s*``
    with limit -1, so empty items (leading, inner and trailing) are kept: "a,,b," is ["a", "", "b", ""]."""
    trimmed = java_trim(text)
    if not trimmed:
        return []
    return _COMMA_WITH_WHITESPACE.split(trimmed)


def java_split(text: str, separator: str) -> list[str]:
    """``text.split(Pattern.quote(separator))``: limit 0 drops trailing empty strings ("3.4." is ["3", "4"],
    "..." is []), but a text with no separator at all comes back whole, even when empty ("" is [""])."""
    parts = text.split(separator)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_list_to_string(items: Iterable[object]) -> str:
    """``AbstractCollection.toString``: how Kafka prints a list value in an error message, "[a, b]"."""
    return "[" + ", ".join(str(item) for item in items) + "]"


def java_double_to_string(value: float) -> str:
    """``Double.toString`` as specified since JDK 19 (Giulietti's shortest-decimal algorithm).

    The digits are the shortest decimal that reads back to the same double (Python's ``repr`` finds the same
    digits), but Java never prints fewer than two: when one digit suffices it picks the two-digit decimal closest
    to the exact value, hence "4.9E-324" rather than "5.0E-324". Between 10^-3 and 10^7 the number is written
    plainly ("0.001", "1234567.0"), outside in Java's ``d.dddE<n>`` form ("1.0E7", "1.0E-4"). Older JDKs
    occasionally printed a longer form; every form here still reads back to the same double.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    digits, exponent = _java_shortest_digits(abs(value))
    if exponent in _PLAIN_NOTATION_EXPONENTS:
        return sign + _plain_notation(digits, exponent)
    return sign + _scientific_notation(digits, exponent)


def _java_shortest_digits(magnitude: float) -> tuple[str, int]:
    """The significant digits d1d2...dn (no trailing zeros) and exponent e with magnitude ~ d1.d2...dn x 10^e."""
    digits, exponent = _decimal_digits(Decimal(repr(magnitude)))
    if len(digits) == 1:
        return _closest_two_digits(magnitude) or (digits, exponent)
    return digits, exponent


def _decimal_digits(number: Decimal) -> tuple[str, int]:
    """Split a positive decimal into its significant digits and scientific exponent."""
    _, digit_tuple, place = number.as_tuple()
    assert isinstance(place, int)  # finite by construction
    digits = "".join(str(digit) for digit in digit_tuple).rstrip("0") or "0"
    exponent = place + len(digit_tuple) - 1
    return digits, exponent


def _closest_two_digits(magnitude: float) -> tuple[str, int] | None:
    """Java's two-digit minimum: the decimal of at most two digits nearest the exact binary value, if it reads
    back. It may sit a decade below the one-digit answer: 2 x Double.MIN_VALUE prints "9.9E-324", not "1.0E-323".
    """
    with localcontext() as context:
        context.prec = _EXACT_DOUBLE_PRECISION
        exact = Decimal(magnitude)
        step = exact.adjusted() - 1
        candidate = exact.scaleb(-step).to_integral_value(rounding=ROUND_HALF_EVEN).scaleb(step)
    if float(candidate) != magnitude:
        return None
    return _decimal_digits(candidate)


def _plain_notation(digits: str, exponent: int) -> str:
    """e.g. ("15", 0) -> "1.5", ("1", 2) -> "100.0", ("1", -3) -> "0.001": always a digit after the point."""
    if exponent < 0:
        return "0." + "0" * (-exponent - 1) + digits
    whole = digits[: exponent + 1].ljust(exponent + 1, "0")
    fraction = digits[exponent + 1 :] or "0"
    return f"{whole}.{fraction}"


def _scientific_notation(digits: str, exponent: int) -> str:
    """e.g. ("1", 7) -> "1.0E7", ("12345", -5) -> "1.2345E-5"."""
    return f"{digits[0]}.{digits[1:] or '0'}E{exponent}"
