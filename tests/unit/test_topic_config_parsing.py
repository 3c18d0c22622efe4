"""Values parse as Kafka's ConfigDef.parseType parses them, and come back in canonical form (semantics §7.2)."""

import pytest

from topic_operator.kafka.errors import ConfigError
from topic_operator.kafka.topic_configs import validate_topic_config


def canonical(key: str, value: object) -> str:
    return validate_topic_config({key: value})[key]


def rejection(key: str, value: object) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        validate_topic_config({key: value})
    assert caught.value.field == f"config.{key}"
    assert caught.value.kafka_class == "org.apache.kafka.common.config.ConfigException"
    assert not caught.value.stricter_than_kafka
    return caught.value


# ---- BOOLEAN ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", "true"),
        ("false", "false"),
        ("TRUE", "true"),
        ("False", "false"),
        (" true\t", "true"),
        ("\x00false\n", "false"),
        ("falſe", "false"),  # U+017F upper-cases to 'S', so Java's equalsIgnoreCase matches "false"
        (True, "true"),
        (False, "false"),
    ],
)
def test_booleans_are_case_insensitive_and_canonical(value: object, expected: str) -> None:
    assert canonical("preallocate", value) == expected


@pytest.mark.parametrize("value", ["yes", "1", "", "t", "truee", "\u00a0true", 1, 0])
def test_other_booleans_are_refused(value: object) -> None:
    raw = str(value)
    assert str(rejection("preallocate", value)) == (
        f"Invalid value {raw} for configuration preallocate: Expected value to be either true or false"
    )


# ---- INT and LONG ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1000", "1000"),
        (1000, "1000"),
        (" 1000 ", "1000"),
        ("\t1000\r\n", "1000"),
        ("+5", "5"),
        ("007", "7"),
        ("-0", "0"),
        ("-1", "-1"),
        ("١٠٠٠", "1000"),  # Arabic-Indic digits: Java's Character.digit accepts any BMP decimal digit
        ("9223372036854775807", "9223372036854775807"),
        ("-9223372036854775808", "-9223372036854775808"),
    ],
)
def test_longs_parse_as_java_long_parse_long(value: object, expected: str) -> None:
    assert canonical("retention.bytes", value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "1_000",
        "1 000",
        "1000.0",
        "1e3",
        "0x10",
        "",
        " ",
        "-",
        "+",
        "+-1",
        "--1",
        "1000L",
        "\u00a01000",  # NBSP is above U+0020, so String.trim keeps it
        "𝟏𝟎𝟎𝟎",  # mathematical digits are outside the BMP: Java sees surrogates, not digits
        "9223372036854775808",
        "-9223372036854775809",
    ],
)
def test_bad_longs_are_not_numbers(value: str) -> None:
    assert str(rejection("retention.bytes", value)) == (
        f"Invalid value {value} for configuration retention.bytes: Not a number of type LONG"
    )


def test_int_boundaries() -> None:
    assert canonical("max.message.bytes", "2147483647") == "2147483647"
    assert canonical("max.message.bytes", 2147483647) == "2147483647"
    assert str(rejection("max.message.bytes", "2147483648")) == (
        "Invalid value 2147483648 for configuration max.message.bytes: Not a number of type INT"
    )
    assert str(rejection("max.message.bytes", 2147483648)) == (
        "Invalid value 2147483648 for configuration max.message.bytes: Not a number of type INT"
    )


def test_int_minimum_is_reached_through_the_range_check_not_the_parser() -> None:
    assert str(rejection("max.message.bytes", "-2147483648")) == (
        "Invalid value -2147483648 for configuration max.message.bytes: Value must be at least 0"
    )
    assert str(rejection("max.message.bytes", "-2147483649")) == (
        "Invalid value -2147483649 for configuration max.message.bytes: Not a number of type INT"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1000.0, "1000.0"), (1e20, "1.0E20"), (0.5, "0.5"), (float("inf"), "Infinity")],
)
def test_a_yaml_float_for_an_int_fails_like_the_string_java_would_print(value: float, shown: str) -> None:
    assert str(rejection("segment.bytes", value)) == (
        f"Invalid value {shown} for configuration segment.bytes: Not a number of type INT"
    )


def test_the_raw_untrimmed_text_is_quoted_in_the_message() -> None:
    assert str(rejection("segment.ms", " 12x ")) == (
        "Invalid value  12x  for configuration segment.ms: Not a number of type LONG"
    )


# ---- DOUBLE ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0.5", "0.5"),
        (" 0.5 ", "0.5"),
        ("0.50", "0.5"),
        (".5", "0.5"),
        ("5e-1", "0.5"),
        ("5E-1", "0.5"),
        ("+0.5", "0.5"),
        ("0.5f", "0.5"),
        ("0.5D", "0.5"),
        ("1d", "1.0"),
        ("1", "1.0"),
        ("1.", "1.0"),
        ("0", "0.0"),
        ("-0", "-0.0"),
        ("0x1p-1", "0.5"),
        ("0X.8P0", "0.5"),
        ("0x1.0p-1d", "0.5"),
        ("1e-4", "1.0E-4"),
        ("0.0001", "1.0E-4"),
        ("0.001", "0.001"),
        ("0.1", "0.1"),
        ("1e-400", "0.0"),
        (0.25, "0.25"),
        (1, "1.0"),
        (0, "0.0"),
    ],
)
def test_doubles_parse_as_java_double_parse_double(value: object, expected: str) -> None:
    assert canonical("min.cleanable.dirty.ratio", value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "inf",
        "-inf",
        "nan",
        "infinity",
        "1_0",
        "1e",
        "1e+",
        "e5",
        ".",
        "0x1",
        "0x1.8",
        "Infinityd",
        "NaNf",
        "1ff",
        "",
    ],
)
def test_bad_doubles_are_not_numbers(value: str) -> None:
    assert str(rejection("min.cleanable.dirty.ratio", value)) == (
        f"Invalid value {value} for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE"
    )


# ---- STRING ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(" gzip ", "gzip"), ("\tzstd\n", "zstd"), ("producer", "producer")],
)
def test_strings_are_java_trimmed(value: str, expected: str) -> None:
    assert canonical("compression.type", value) == expected


def test_a_yaml_float_version_is_read_as_java_prints_it() -> None:
    assert canonical("message.format.version", 2.8) == "2.8"
    assert canonical("message.format.version", 3.0) == "3.0"
    assert str(rejection("message.format.version", 0.10)) == (
        "Invalid value 0.1 for configuration message.format.version: Version 0.1 is not a valid version"
    )


# ---- LIST ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("compact, delete", "compact,delete"),
        ("compact ,\tdelete", "compact,delete"),
        (" delete ", "delete"),
        ("", ""),
        ("   ", ""),
        ("delete,delete", "delete,delete"),  # 3.4 keeps duplicates
        (["compact", "delete"], "compact,delete"),
        (("delete",), "delete"),
        ([], ""),
    ],
)
def test_lists_split_on_commas_with_whitespace(value: object, expected: str) -> None:
    assert canonical("cleanup.policy", value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("100:0,", "100:0,"),  # trailing empty items are kept (split limit -1)
        (",100:0", ",100:0"),
        ("1:1,,2:2", "1:1,,2:2"),
        ("1:1 , 2:2", "1:1,2:2"),
        (["1:1", "", "2:2"], "1:1,,2:2"),
    ],
)
def test_list_items_are_kept_as_parsed(value: object, expected: str) -> None:
    assert canonical("follower.replication.throttled.replicas", value) == expected


def test_numbers_in_a_yaml_list_become_items_as_java_prints_them() -> None:
    key = "leader.replication.throttled.replicas"
    assert str(rejection(key, [1, 2.5, True])) == (
        f"Invalid value [1, 2.5, true] for configuration {key}: {key} must be the literal '*' or a list of "
        "replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
    )


# ---- value types -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "retention.ms",
            {"ms": 1},
            'Invalid value {"ms": 1} for configuration retention.ms: '
            "the value must be a string, number or boolean",
        ),
        (
            "retention.ms",
            [1000],
            "Invalid value [1000] for configuration retention.ms: the value must be a string, number or boolean",
        ),
        (
            "cleanup.policy",
            ["compact", ["delete"]],
            'Invalid value ["compact", ["delete"]] for configuration cleanup.policy: '
            "each list item must be a string, number or boolean",
        ),
        (
            "cleanup.policy",
            {"compact"},
            'Invalid value ["compact"] for configuration cleanup.policy: '
            "the value must be a string, number or boolean",
        ),
    ],
)
def test_values_of_other_types_are_refused(key: str, value: object, message: str) -> None:
    assert str(rejection(key, value)) == message


def test_output_holds_only_the_given_keys_sorted() -> None:
    result = validate_topic_config({"segment.ms": 100, "cleanup.policy": "compact", "preallocate": True})
    assert list(result) == ["cleanup.policy", "preallocate", "segment.ms"]
    assert result == {"cleanup.policy": "compact", "preallocate": "true", "segment.ms": "100"}


def test_equivalent_specs_have_equal_canonical_forms() -> None:
    variants: list[dict[str, object]] = [
        {"retention.ms": 1000, "cleanup.policy": ["compact", "delete"], "preallocate": True},
        {"retention.ms": "1000", "cleanup.policy": "compact, delete", "preallocate": "TRUE"},
        {"retention.ms": " +01000 ", "cleanup.policy": "compact,delete", "preallocate": " true "},
    ]
    results = [validate_topic_config(variant) for variant in variants]
    assert results[0] == {"cleanup.policy": "compact,delete", "preallocate": "true", "retention.ms": "1000"}
    assert results[1] == results[0]
    assert results[2] == results[0]
