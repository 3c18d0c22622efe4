"""Declared and stored configs compare by meaning, not spelling: no drift noise from YAML typing or list order."""

from topic_operator.kafka.topic_configs import comparable_config, validate_topic_config


def test_numbers_compare_by_value() -> None:
    declared = validate_topic_config({"retention.ms": 1000})
    for stored in ("1000", " 1000 ", "+1000", "01000"):
        assert comparable_config({"retention.ms": stored}) == comparable_config(declared)
    assert comparable_config({"retention.ms": "1001"}) != comparable_config(declared)


def test_lists_compare_as_sets_and_booleans_ignore_case() -> None:
    assert comparable_config({"cleanup.policy": "delete, compact"}) == comparable_config(
        {"cleanup.policy": "compact,delete"}
    )
    assert comparable_config({"cleanup.policy": "compact"}) != comparable_config(
        {"cleanup.policy": "compact,delete"}
    )
    assert comparable_config({"preallocate": "TRUE"}) == comparable_config({"preallocate": "true"})
    assert comparable_config({"min.cleanable.dirty.ratio": "0.50"}) == comparable_config(
        {"min.cleanable.dirty.ratio": ".5"}
    )


def test_unparseable_or_unknown_stored_values_stay_raw() -> None:
    assert comparable_config({"retention.ms": "7d", "x.unknown": " a "}) == {
        "retention.ms": "7d",
        "x.unknown": " a ",
    }
    assert comparable_config({"retention.ms": "7d"}) != comparable_config({"retention.ms": "604800000"})
