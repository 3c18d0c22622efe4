"""``topic_names._name_problem`` answers a legal name before looking at the words of any release: the same
verdict, and for an illegal name the same message, as Kafka's rules checked in Kafka's order (the reference
below), for any name and release line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from topic_operator.kafka.releases import ALL_KAFKA_VERSIONS
from topic_operator.kafka.topic_names import _LEGAL_NAME, _WORDS, MAX_NAME_LENGTH, _java_length, _name_problem


def reference(name: str, kafka_version: tuple[int, int]) -> str | None:
    words = next(w for since, w in reversed(_WORDS) if kafka_version >= since)
    if name == "":
        return words.empty
    if name in (".", ".."):
        return words.dot.format(dot=name)
    if _java_length(name) > MAX_NAME_LENGTH:
        return words.too_long.format(name=name, limit=MAX_NAME_LENGTH)
    if _LEGAL_NAME.fullmatch(name) is None:
        return words.bad_chars.format(name=name)
    return None


NAMES = st.one_of(
    st.text(alphabet="ab._-Z9", max_size=6),
    st.text(max_size=6),
    st.sampled_from(
        ["", ".", "..", "...", "a" * 249, "a" * 250, "\U0001f600" * 125, "é" * 249, "a\n", "a/b"]
    ),
    st.integers(240, 260).map(lambda n: "x" * n),
)


@settings(max_examples=2000, deadline=None)
@given(NAMES, st.sampled_from(ALL_KAFKA_VERSIONS))
def test_every_name_gets_the_references_verdict_and_words(name: str, kafka_version: tuple[int, int]) -> None:
    assert _name_problem(name, kafka_version) == reference(name, kafka_version)
