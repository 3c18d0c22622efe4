"""The Java-semantics helpers behave like the JDK methods Kafka calls, not like their Python look-alikes."""

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topic_operator.kafka.java_lang import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    JavaNumberFormatError,
    java_double_to_string,
    java_equals_ignore_case,
    java_list_to_string,
    java_split,
    java_trim,
    parse_java_boolean,
    parse_java_double,
    parse_java_int,
    parse_java_long,
    split_config_list,
)


def test_integer_limits() -> None:
    assert (INT_MIN, INT_MAX) == (-2147483648, 2147483647)
    assert (LONG_MIN, LONG_MAX) == (-9223372036854775808, 9223372036854775807)


# ---- String.trim -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  a b  ", "a b"),
        ("\x00\x01\x1fa\x7f", "a\x7f"),  # DEL (U+007F) is above U+0020: kept
        ("\u00a0a\u00a0", "\u00a0a\u00a0"),  # NBSP is kept, unlike str.strip
        ("\u2003a", "\u2003a"),
        ("\t\n\r\x0b\x0c", ""),
    ],
)
def test_java_trim_strips_only_chars_up_to_space(text: str, expected: str) -> None:
    assert java_trim(text) == expected


# ---- Integer.parseInt / Long.parseLong -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("+5", 5),
        ("-5", -5),
        ("007", 7),
        ("-0", 0),
        ("2147483647", INT_MAX),
        ("-2147483648", INT_MIN),
    ],
)
def test_parse_int(text: str, expected: int) -> None:
    assert parse_java_int(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "+", "-", "2147483648", "-2147483649", " 1", "1 ", "1_0", "0x1", "1.0", "++1", "+-1", "٣٣٣٣٣٣٣٣٣٣٣"],
)
def test_parse_int_refuses_what_java_refuses(text: str) -> None:
    with pytest.raises(JavaNumberFormatError):
        parse_java_int(text)


def test_parse_long_boundaries() -> None:
    assert parse_java_long("9223372036854775807") == LONG_MAX
    assert parse_java_long("-9223372036854775808") == LONG_MIN
    for text in ("9223372036854775808", "-9223372036854775809", "1" * 400):
        with pytest.raises(JavaNumberFormatError):
            parse_java_long(text)


def test_unicode_digits_count_only_inside_the_bmp() -> None:
    assert parse_java_long("٤٢") == 42  # ARABIC-INDIC
    assert parse_java_long("४२") == 42  # DEVANAGARI
    assert parse_java_long("４２") == 42  # FULLWIDTH
    with pytest.raises(JavaNumberFormatError):
        parse_java_long("𝟒𝟐")  # MATHEMATICAL BOLD, U+1D7D2: two UTF-16 surrogates in Java
    with pytest.raises(JavaNumberFormatError):
        parse_java_long("²")  # superscript two: numeric but not a decimal digit


@given(st.integers(min_value=LONG_MIN, max_value=LONG_MAX))
def test_parse_long_reads_what_str_writes(number: int) -> None:
    assert parse_java_long(str(number)) == number
    if number >= 0:
        assert parse_java_long(f"+{number}") == number
        assert parse_java_long(f"000{number}") == number


@given(st.integers(min_value=LONG_MIN * 4, max_value=LONG_MAX * 4), st.integers(min_value=0, max_value=60))
def test_leading_zeros_read_alike_on_the_short_and_the_long_way(number: int, zeros: int) -> None:
    """ASCII digits up to 40 characters are read by ``int()``, longer ones digit by digit: the same answers."""
    text = ("-" if number < 0 else "") + "0" * zeros + str(abs(number))
    if LONG_MIN <= number <= LONG_MAX:
        assert parse_java_long(text) == number
    else:
        with pytest.raises(JavaNumberFormatError):
            parse_java_long(text)


@given(st.integers().filter(lambda n: not INT_MIN <= n <= INT_MAX))
def test_parse_int_refuses_every_number_out_of_range(number: int) -> None:
    with pytest.raises(JavaNumberFormatError):
        parse_java_int(str(number))


# ---- Double.parseDouble ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1.0),
        ("  1.5  ", 1.5),  # parseDouble trims by itself
        ("-.5", -0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("1E+3", 1000.0),
        ("1e-3", 0.001),
        ("1f", 1.0),
        ("1F", 1.0),
        ("1d", 1.0),
        ("1.5D", 1.5),
        ("0x10p0", 16.0),
        ("0x1.8p1", 3.0),
        ("-0X.4P2", -1.0),
        ("0x1p-1074", 5e-324),
        ("0x1p2000", math.inf),
        ("-0x1p2000", -math.inf),
        ("1e400", math.inf),
        ("Infinity", math.inf),
        ("+Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("0.1f", 0.1),  # the suffix does not round to float precision
    ],
)
def test_parse_double(text: str, expected: float) -> None:
    assert parse_java_double(text) == expected


@pytest.mark.parametrize("text", ["NaN", "-NaN", "+NaN", " NaN "])
def test_parse_double_nan(text: str) -> None:
    assert math.isnan(parse_java_double(text))


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "inf",
        "nan",
        "infinity",
        "INFINITY",
        "NaNd",
        "Infinityf",
        "1_000.0",
        "1e",
        "1e+",
        "e1",
        ".",
        "-",
        "+-1",
        "1.2.3",
        "0x1",
        "0x1.8",
        "0xp1",
        "0x1pA",
        "1dd",
        "1fd",
        "١",
        "1,5",
        "\u00a01",
    ],
)
def test_parse_double_refuses_what_java_refuses(text: str) -> None:
    with pytest.raises(JavaNumberFormatError):
        parse_java_double(text)


# ---- booleans and case -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"), [("true", True), ("TrUe", True), ("FALSE", False), ("falſe", False)]
)
def test_parse_boolean(text: str, expected: bool) -> None:
    assert parse_java_boolean(text) is expected


@pytest.mark.parametrize("text", ["", "yes", "1", " true", "tru", "truE!"])
def test_parse_boolean_refuses_the_rest(text: str) -> None:
    with pytest.raises(ValueError, match="neither true nor false"):
        parse_java_boolean(text)


def test_equals_ignore_case_uses_single_char_mappings() -> None:
    assert java_equals_ignore_case("Kafka", "kAFKA")
    assert java_equals_ignore_case("ſ", "S")
    assert not java_equals_ignore_case("ß", "SS")  # Java maps one char to one char
    assert not java_equals_ignore_case("a", "ab")


# ---- splitting -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("  ", []),
        ("a", ["a"]),
        ("a, b", ["a", "b"]),
        ("a ,\tb", ["a", "b"]),
        (" a,b ", ["a", "b"]),
        ("a,,b,", ["a", "", "b", ""]),
        (",a", ["", "a"]),
        (",", ["", ""]),
        ("a b,c", ["a b", "c"]),
        ("a\u00a0,b", ["a\u00a0", "b"]),  # Java's \s is ASCII only
    ],
)
def test_split_config_list(text: str, expected: list[str]) -> None:
    assert split_config_list(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.8.1", ["2", "8", "1"]),
        ("3.4.", ["3", "4"]),
        ("3.4..", ["3", "4"]),
        (".3", ["", "3"]),
        ("a..b", ["a", "", "b"]),
        ("...", []),
        ("", [""]),
        ("3", ["3"]),
    ],
)
def test_java_split_drops_trailing_empty_strings(text: str, expected: list[str]) -> None:
    assert java_split(text, ".") == expected


def test_java_list_to_string() -> None:
    assert java_list_to_string(["a", "", "b"]) == "[a, , b]"
    assert java_list_to_string([]) == "[]"


# ---- Double.toString -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.5, "0.5"),
        (-0.1, "-0.1"),
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1234567.0, "1234567.0"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (12345678.0, "1.2345678E7"),
        (1.5e300, "1.5E300"),
        (1e23, "1.0E23"),
        (2.0**63, "9.223372036854776E18"),
        (0.1 + 0.2, "0.30000000000000004"),
        (0.0009999999999999998, "9.999999999999998E-4"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (2.2250738585072014e-308, "2.2250738585072014E-308"),
        (5e-324, "4.9E-324"),  # Double.MIN_VALUE: at least two digits, the nearer pair
        (-5e-324, "-4.9E-324"),
        (1e-323, "9.9E-324"),
        (1.5e-323, "1.5E-323"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
    ],
)
def test_java_double_to_string(value: float, expected: str) -> None:
    assert java_double_to_string(value) == expected


@given(st.floats(allow_nan=False))
def test_double_to_string_reads_back_to_the_same_double(value: float) -> None:
    text = java_double_to_string(value)
    parsed = parse_java_double(text)
    assert struct.pack(">d", parsed) == struct.pack(">d", value)  # bit-exact, so -0.0 stays -0.0


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=1e-300))
def test_double_to_string_is_as_short_as_repr_allows(value: float) -> None:
    mantissa = java_double_to_string(value).split("E")[0].lstrip("-").replace(".", "").strip("0")
    shortest = repr(value).split("e")[0].replace(".", "").strip("0")
    assert len(mantissa) == max(len(shortest), 1) or (len(shortest) == 1 and len(mantissa) == 2)
