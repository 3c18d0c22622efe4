"""Every path from bytes to a message is bounded: which files are read (regular files only, never blocking),
how many bytes, API objects given already parsed, the settings that raise the limits, and the messages
themselves (one short, escaped line whatever the input)."""

from __future__ import annotations

import io
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topic_operator.manifests.limits import (
    DEFAULT_LIMITS,
    LimitSettingError,
    env_names,
    limits_from_environment,
)
from topic_operator.manifests.loader import load_manifests, load_objects
from topic_operator.message_text import LINE_LIMIT, escaped, one_line, shortened, shown

TOPIC = (
    "apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {{name: {name}}}\n"
    "spec: {{cluster: local, partitions: 1, replicas: 1}}\n"
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def errors_of(*paths: str, **options: Any) -> list[str]:
    return [str(e) for e in load_manifests(paths, **options).errors]


# ---- files ----------------------------------------------------------------------------------------------------


@pytest.mark.timeout(20)
def test_a_fifo_and_a_device_are_refused_without_blocking() -> None:
    os.mkfifo("pipe.yaml")
    os.symlink("/dev/zero", "zero.yaml")
    Path("ok.yaml").write_text(TOPIC.format(name="orders"))
    manifests = load_manifests(["pipe.yaml", "zero.yaml", "ok.yaml"])
    assert [str(e) for e in manifests.errors] == [
        "pipe.yaml: a FIFO, not a regular file: only regular files are read (- reads standard input)",
        "zero.yaml: a character device, not a regular file: only regular files are read (- reads standard input)",
    ]
    assert [t.name for t in manifests.topics] == ["orders"]


@pytest.mark.timeout(20)
def test_special_files_inside_a_directory_are_skipped_with_a_warning() -> None:
    Path("repo/sub").mkdir(parents=True)
    os.mkfifo("repo/pipe.yaml")
    os.symlink("/dev/zero", "repo/sub/zero.yml")
    os.symlink("..", "repo/sub/loop")  # a symlinked directory is not followed
    Path("repo/topics.yaml").write_text(TOPIC.format(name="orders"))
    manifests = load_manifests(["repo"])
    assert manifests.errors == ()
    assert [str(w) for w in manifests.warnings][:2] == [
        "repo/pipe.yaml: a FIFO, not a regular file: skipped",
        "repo/sub/zero.yml: a character device, not a regular file: skipped",
    ]
    assert [t.name for t in manifests.topics] == ["orders"]


def test_a_file_over_the_size_limit_is_refused_from_its_size() -> None:
    limits = replace(DEFAULT_LIMITS, max_file_bytes=1000)
    Path("big.yaml").write_text("a: " + "x" * 5000 + "\n")
    assert errors_of("big.yaml", limits=limits) == [
        "big.yaml: 5,004 bytes: larger than the 1,000 bytes a manifest file may have (KTO_MANIFEST_MAX_FILE_BYTES "
        "raises the limit)"
    ]


def test_all_files_together_are_bounded() -> None:
    limits = replace(DEFAULT_LIMITS, max_total_bytes=150)
    for name in ("a", "b", "c"):
        Path(f"{name}.yaml").write_text(TOPIC.format(name=name))  # 104 bytes each
    manifests = load_manifests(["a.yaml", "b.yaml", "c.yaml"], limits=limits)
    assert [t.name for t in manifests.topics] == ["a"]
    assert next(str(e) for e in manifests.errors).startswith(
        "b.yaml: 117 bytes: the files read before it leave 33 of the 150 bytes all manifests may have together"
    )


def test_a_directory_walk_stops_at_the_file_limit() -> None:
    Path("repo").mkdir()
    for number in range(5):
        Path(f"repo/t{number}.yaml").write_text(TOPIC.format(name=f"t{number}"))
    manifests = load_manifests(["repo"], limits=replace(DEFAULT_LIMITS, max_files=3))
    assert [str(e) for e in manifests.errors] == [
        "repo: more than 3 manifest files in this directory: the rest is not read (KTO_MANIFEST_MAX_FILES raises "
        "the limit)"
    ]
    assert len(manifests.topics) == 3


def test_standard_input_is_read_once_and_bounded() -> None:
    stdin = io.BytesIO(TOPIC.format(name="orders").encode())
    manifests = load_manifests(["-", "-"], stdin=stdin)
    assert [t.source for t in manifests.topics] == ["<stdin>#1"]
    assert manifests.summary() == "OK: 1 file, 1 document: 0 clusters and 1 topic valid, 1 warning"
    flood = io.BytesIO(b"a: " + b"x" * 2000)
    assert errors_of("-", stdin=flood, limits=replace(DEFAULT_LIMITS, max_file_bytes=1000)) == [
        "<stdin>: more than 1,000 bytes: larger than the 1,000 bytes a manifest file may have "
        "(KTO_MANIFEST_MAX_FILE_BYTES raises the limit)"
    ]


def test_errors_per_document_are_capped_with_a_closing_line() -> None:
    keys = ", ".join(f"k{number}: 1" for number in range(200))
    Path("t.yaml").write_text(TOPIC.format(name="orders").replace("replicas: 1", f"replicas: 1, {keys}"))
    errors = errors_of("t.yaml", limits=replace(DEFAULT_LIMITS, max_errors_per_document=5))
    assert len(errors) == 6
    assert errors[-1] == (
        "t.yaml#1 KafkaTopic orders: further problems of this document are not listed (at most 5 are: "
        "KTO_MANIFEST_MAX_ERRORS_PER_DOCUMENT raises the limit)"
    )


def test_an_alias_bomb_in_an_unknown_key_costs_a_second_and_one_line() -> None:
    """It took 40 s and 2.8 GB, then a MemoryError while building the error message."""
    laughs = "".join(
        f"  a{level}: &a{level} [" + ", ".join([f"*a{level - 1}" if level else '"lol"'] * 9) + "]\n"
        for level in range(9)
    )
    Path("t.yaml").write_text(TOPIC.format(name="orders").replace("spec: {", "junk:\n" + laughs + "spec: {"))
    started = time.monotonic()
    (error,) = errors_of("t.yaml")
    assert time.monotonic() - started < 2
    assert error.startswith("t.yaml#1: aliases repeat more than 1,000,000 nodes in all (line ")


def test_a_large_alias_expansion_within_the_limit_is_shown_briefly() -> None:
    laughs = "".join(
        f"    a{level}: &a{level} [" + ", ".join([f"*a{level - 1}" if level else '"lol"'] * 9) + "]\n"
        for level in range(5)
    )
    Path("t.yaml").write_text(
        TOPIC.format(name="orders")
        .replace("replicas: 1}", "replicas: 1, config: {x: *a4}}")
        .replace("metadata:", "junk:\n  laughs:\n" + laughs + "metadata:")
    )
    started = time.monotonic()
    errors = errors_of("t.yaml")
    assert time.monotonic() - started < 5
    assert all(len(line) <= LINE_LIMIT for line in errors)
    assert any('spec.config.x = [[[[["lol", "lol", "lol"' in line for line in errors)


# ---- API objects ----------------------------------------------------------------------------------------------


def _api_topic(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": "orders", "namespace": "ns"},
        "spec": {"cluster": "local", "partitions": 1, "replicas": 1, **spec},
    }


def _nested(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"x": value}
    return value


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (_api_topic(config={"x": _nested(5000)}), "more than 64 levels of nesting"),
        (
            _api_topic(config={"x": "y" * 2_000_000}),
            "a string of 2,000,000 characters: at most 1,048,576 are read",
        ),
        (_api_topic(config={"x" * 2_000_000: 1}), "a string of 2,000,000 characters"),
        (_api_topic(config={"x": list(range(1_100_000))}), "more than 1,000,000 values in one object"),
        (_api_topic(config={"x": b"bytes"}), "not a JSON value: a bytes"),
    ],
)
def test_api_objects_are_held_to_the_same_limits(body: dict[str, Any], message: str) -> None:
    """The API server hands the operator parsed JSON: no YAML parser bounded it, so the loader does."""
    manifests = load_objects([body, _api_topic()], origin="ns/orders")
    (error,) = manifests.errors
    assert str(error).startswith(f"ns/orders#1: {message}")
    assert [t.source for t in manifests.topics] == ["ns/orders#2"]


def test_a_self_referencing_object_ends_at_the_depth_limit() -> None:
    body = _api_topic()
    body["spec"]["config"] = {"loop": body}
    (error,) = load_objects([body]).errors
    assert "more than 64 levels of nesting" in str(error)


# ---- settings -------------------------------------------------------------------------------------------------


def test_every_limit_has_its_variable_and_each_variable_raises_it() -> None:
    names = env_names()
    assert sorted(names.values()) == sorted(f"KTO_MANIFEST_{name.upper()}" for name in names)
    raised = limits_from_environment(dict.fromkeys(names.values(), "7"))
    assert all(getattr(raised, name) == 7 for name in names)
    assert limits_from_environment({}) == DEFAULT_LIMITS
    assert limits_from_environment({"KTO_MANIFEST_MAX_DEPTH": "1_000"}).max_depth == 1000


@pytest.mark.parametrize("raw", ["0", "-5", "lots", "1e9"])
def test_a_bad_limit_setting_names_the_variable(raw: str) -> None:
    with pytest.raises(LimitSettingError, match="KTO_MANIFEST_MAX_DEPTH must be a positive integer"):
        limits_from_environment({"KTO_MANIFEST_MAX_DEPTH": raw})


# ---- messages -------------------------------------------------------------------------------------------------

_HOSTILE_TEXT = st.text(
    alphabet=st.one_of(st.characters(), st.sampled_from("\n\r\x00\x1b\u202e\u2028\ufeff\\'\"")), max_size=3000
)


@settings(max_examples=300, deadline=None)
@given(text=_HOSTILE_TEXT, limit=st.integers(min_value=20, max_value=2000))
def test_a_shortened_text_is_one_printable_bounded_line(text: str, limit: int) -> None:
    result = shortened(text, limit)
    assert result.isprintable()
    assert len(result) <= limit + 10  # the note of what was cut may exceed the kept text's room a little
    if len(text) <= limit and text.isprintable():
        assert result == text


@settings(max_examples=200, deadline=None)
@given(value=st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _HOSTILE_TEXT,
                                    st.binary(max_size=50)),
                          lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                  st.dictionaries(_HOSTILE_TEXT, inner, max_size=5)),
                          max_leaves=30))  # fmt: skip
def test_a_shown_value_is_one_printable_bounded_line(value: Any) -> None:
    result = shown(value)
    assert result.isprintable()
    assert len(result) <= 80


def test_showing_a_huge_shared_structure_costs_what_is_shown() -> None:
    level: Any = ["lol"] * 10
    for _ in range(9):
        level = [level] * 10  # 10**10 leaves, shared
    started = time.monotonic()
    assert shown(level).startswith('[[[[[[[[[["lol", "lol"')
    assert shown(2**100_000) == "<an integer of 100,001 bits>"
    assert time.monotonic() - started < 0.5


def test_the_tail_of_a_long_line_survives_the_cut() -> None:
    line = one_line(
        "Invalid value " + "9" * 1_000_000 + " for configuration retention.ms: Not a number of type LONG"
    )
    assert len(line) <= LINE_LIMIT
    assert line.startswith("Invalid value 999")
    assert line.endswith("999 for configuration retention.ms: Not a number of type LONG")
    assert "...[999,102 characters cut]..." in line


def test_control_characters_are_escaped() -> None:
    assert escaped("a\nb\x00c\x1b[31m\u202ed\u2028") == "a\\nb\\x00c\\x1b[31m\\u202ed\\u2028"
    Path("t.yaml").write_text(TOPIC.format(name="orders").replace("spec: {", 'spec: {topicName: "x\\ny\\0",'))
    (error,) = errors_of("t.yaml")
    assert "\n" not in error
    assert "\x00" not in error
    assert "spec.topicName = 'x\\ny\\x00'" in error
