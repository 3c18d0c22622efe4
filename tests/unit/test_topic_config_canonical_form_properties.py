"""Properties of the canonical form: it is a fixed point, and equal specs produce equal strings."""

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topic_operator.kafka.errors import InvalidConfigurationError
from topic_operator.kafka.java_lang import LONG_MAX, LONG_MIN
from topic_operator.kafka.topic_configs import (
    TOPIC_CONFIGS,
    ConfigType,
    topic_config_names,
    validate_topic_config,
)

NAMES_3_4 = topic_config_names((3, 4))

_SAMPLE_TEXT = {
    ConfigType.BOOLEAN: ["true", "FALSE", " True ", "yes"],
    ConfigType.INT: ["0", "14", "+7", "0042", " 1048588 ", "-1", "2147483648", "1e3"],
    ConfigType.LONG: ["0", "-1", "-2", "+100", "007", " 604800000 ", "9223372036854775807", "1_000"],
    ConfigType.DOUBLE: ["0.5", ".25", "1", "1d", "0x1p-2", "1e-4", "NaN", "Infinity", "-0.0", "2"],
    ConfigType.STRING: [" gzip ", "producer", "CreateTime", "LogAppendTime", "2.8.1", "3.4-IV0", "GZIP"],
    ConfigType.LIST: ["compact, delete", "delete", "", " ", "*", "100:1, 2:3", "1:1,", "compact,x"],
}

_whitespace = st.sampled_from(["", " ", "\t", "\n", " \x00"])


def _values_for(name: str) -> st.SearchStrategy[object]:
    config_type = TOPIC_CONFIGS[name].type
    samples = st.sampled_from(_SAMPLE_TEXT[config_type])
    padded = st.tuples(_whitespace, samples, _whitespace).map("".join)
    yaml_scalars: st.SearchStrategy[object] = st.one_of(
        st.booleans(),
        st.integers(min_value=LONG_MIN - 1, max_value=LONG_MAX + 1),
        st.floats(),
        st.text(alphabet=string.printable, max_size=8),
    )
    strategies: list[st.SearchStrategy[object]] = [samples, padded, yaml_scalars]
    if config_type is ConfigType.LIST:
        strategies.append(st.lists(st.sampled_from(["compact", "delete", "1:2", "*", "", 3]), max_size=3))
    return st.one_of(strategies)


def _config_specs() -> st.SearchStrategy[dict[str, object]]:
    def build(names: list[str]) -> st.SearchStrategy[dict[str, object]]:
        return st.fixed_dictionaries({name: _values_for(name) for name in names})

    return st.lists(st.sampled_from(NAMES_3_4), unique=True, max_size=6).flatmap(build)


@settings(max_examples=400)
@given(_config_specs())
def test_the_canonical_form_is_a_fixed_point(spec: dict[str, object]) -> None:
    try:
        canonical = validate_topic_config(spec)
    except InvalidConfigurationError:
        return
    assert list(canonical) == sorted(spec)
    assert all(isinstance(value, str) for value in canonical.values())
    assert validate_topic_config(canonical) == canonical


@settings(max_examples=400)
@given(_config_specs())
def test_validation_is_deterministic_and_total(spec: dict[str, object]) -> None:
    """Every input either passes or raises one of the config errors; nothing else escapes."""
    outcomes: list[tuple[str, object]] = []
    for _ in range(2):
        try:
            outcomes.append(("ok", validate_topic_config(spec)))
        except InvalidConfigurationError as error:
            outcomes.append((type(error).__name__, (str(error), error.field)))
    assert outcomes[0] == outcomes[1]


@given(st.integers(min_value=-1, max_value=LONG_MAX), _whitespace, _whitespace)
def test_integers_and_their_padded_texts_agree(number: int, before: str, after: str) -> None:
    as_int = validate_topic_config({"retention.ms": number})
    as_text = validate_topic_config({"retention.ms": f"{before}{number}{after}"})
    assert as_int == as_text == {"retention.ms": str(number)}


@given(st.floats(min_value=0.0, max_value=1.0))
def test_a_dirty_ratio_float_and_its_java_text_agree(ratio: float) -> None:
    from_float = validate_topic_config({"min.cleanable.dirty.ratio": ratio})["min.cleanable.dirty.ratio"]
    assert float(from_float) == ratio
    assert validate_topic_config({"min.cleanable.dirty.ratio": from_float}) == {
        "min.cleanable.dirty.ratio": from_float
    }


@pytest.mark.parametrize("name", NAMES_3_4)
def test_every_key_accepts_its_default_with_padding(name: str) -> None:
    default = TOPIC_CONFIGS[name].default
    assert validate_topic_config({name: f" {default}\t"}) == {name: default}
