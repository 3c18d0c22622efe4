"""YAML documents are built from libyaml's events with every limit checked while parsing: the values equal
PyYAML's safe loader's, and hostile text (deep nesting, alias bombs, long scalars, odd tags) ends in one message,
never a crash, a traceback or unbounded memory."""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
import time
from dataclasses import replace
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topic_operator.manifests.bounded_yaml import LoadBudget, YamlReadError, yaml_documents
from topic_operator.manifests.limits import DEFAULT_LIMITS, ManifestLimits


class _PyYamlKubernetes(yaml.SafeLoader):
    """PyYAML's own loader as the reference, with timestamps left strings as Kubernetes does."""


_PyYamlKubernetes.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read(text: str, limits: ManifestLimits = DEFAULT_LIMITS) -> list[Any]:
    return [document.value for document in yaml_documents(text, LoadBudget(limits))]


def refusal(text: str, limits: ManifestLimits = DEFAULT_LIMITS) -> YamlReadError:
    with pytest.raises(YamlReadError) as raised:
        read(text, limits)
    return raised.value


# ---- the same values as PyYAML -------------------------------------------------------------------------------

CORPUS = [
    "a: 1\nb: 0x1f\nc: 0o17\nd: 1_000\ne: 1:30\nf: -.inf\ng: .nan\nh: 1e3\ni: 3.25\n",
    "t: [yes, No, on, OFF, true, y, n, ~, null, '', \"\"]\n",
    "when: 2024-01-01\nat: 2024-01-01T10:00:00Z\nquoted: '2024-01-01'\n",
    "base: &base {a: 1, b: 2}\nmore: &more {c: 3}\nmerged: {<<: [*base, *more], b: 9}\none: {<<: *base}\n",
    "s: !!str 12\ni: !!int '12'\nf: !!float '1'\nb: !!binary aGVsbG8=\nn: !!null ''\nset: !!set {a, b}\n",
    "- &x [1, 2]\n- *x\n- {k: *x}\n",
    "literal: |\n  two\n  lines\nfolded: >\n  one\n  line\nplain: multi\n  line\n",
    "---\na: 1\n---\n---\n- b\n...\n",
    '{"json": [1, 2.5, true, null, {"nested": "yes"}]}\n',
    "? complex\n: key\n=: equals\n'<<': not a merge\n",
]


@pytest.mark.parametrize("text", CORPUS)
def test_values_equal_pyyamls_safe_loader(text: str) -> None:
    assert read(text) == list(yaml.load_all(text, Loader=_PyYamlKubernetes))


@st.composite
def _documents(draw: st.DrawFn) -> Any:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False),
        st.text(max_size=20),
        st.sampled_from(
            ["yes", "0x10", "1:20", "~", "2024-01-01", "<<", "=", "-", "- a", "a: b", "#x", "&a"]
        ),
    )
    keys = st.one_of(st.text(max_size=10), st.integers(-5, 5), st.booleans())
    return draw(
        st.recursive(
            scalars,
            lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
            max_leaves=20,
        )
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_documents(), flow=st.sampled_from([None, True, False]), canonical=st.booleans())
def test_values_equal_pyyamls_on_generated_documents(
    document: Any, flow: bool | None, canonical: bool
) -> None:
    text = yaml.safe_dump(document, default_flow_style=flow, canonical=canonical, allow_unicode=True)
    assert read(text) == [yaml.load(text, Loader=_PyYamlKubernetes)]


def test_an_explicit_timestamp_is_still_a_date() -> None:
    assert read("d: !!timestamp 2001-12-14\n") == [{"d": datetime.date(2001, 12, 14)}]


# ---- limits ---------------------------------------------------------------------------------------------------


def test_a_hundred_thousand_levels_end_in_a_message_not_a_segfault() -> None:
    """PyYAML's C loader crashes the process (exit 139) on this text, even inside an ignored ConfigMap."""
    script = (
        "import sys\n"
        "from topic_operator.manifests.loader import load_manifests\n"
        "m = load_manifests(['-'], stdin=sys.stdin.buffer)\n"
        "print(*m.errors, sep='\\n')\n"
    )
    text = "apiVersion: v1\nkind: ConfigMap\ndata: " + "[" * 100_000 + "]" * 100_000 + "\n"
    completed = subprocess.run(
        [sys.executable, "-c", script], input=text.encode(), capture_output=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr.decode()[-2000:]
    # Our limit stops it at level 64 unless libyaml's scanner, which reads up to a line ahead of the events we
    # count, meets its own bound first (PyYAML 6.0.4's libyaml refuses more than 1,000 levels): one line either way.
    assert re.fullmatch(
        r"<stdin>#1: (more than 64 levels of nesting \(line 3, column 70\) \(KTO_MANIFEST_MAX_DEPTH raises the "
        r"limit\)|not valid YAML: exceeded maximum nesting depth \(line 3, column \d+\).*)",
        completed.stdout.decode().strip(),
    ), completed.stdout.decode()[:2000]


def test_depth_is_counted_in_lists_and_mappings_alike() -> None:
    limits = replace(DEFAULT_LIMITS, max_depth=3)
    assert read("a: {b: [1]}\n", limits) == [{"a": {"b": [1]}}]
    assert refusal("a: {b: [[1]]}\n", limits).message.startswith(
        "more than 3 levels of nesting (line 1, column 9)"
    )
    assert refusal("- - - - x\n", limits).message.startswith("more than 3 levels of nesting")


def _laughs(levels: int, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_within_a_second() -> None:
    started = time.monotonic()
    error = refusal("apiVersion: v1\nkind: ConfigMap\ndata:\n" + _laughs(10).replace("a", "  a", 1))
    assert time.monotonic() - started < 1.0
    assert "aliases repeat more than 1,000,000 nodes in all" in error.message
    assert "refused as an alias bomb (KTO_MANIFEST_MAX_ALIAS_NODES raises the limit)" in error.message


def test_aliases_are_counted_across_documents_and_a_few_pass() -> None:
    limits = replace(DEFAULT_LIMITS, max_alias_nodes=100)
    shared = "base: &b {retention.ms: 1, cleanup.policy: delete}\nuse: *b\n"
    config = {"retention.ms": 1, "cleanup.policy": "delete"}
    assert read(shared, limits) == [{"base": config, "use": config}]
    assert "aliases repeat more than 100 nodes" in refusal("---\n".join([shared] * 40), limits).message


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    """A recursive structure would make every later walk endless."""
    assert refusal("a: &x [1, *x]\n").message.startswith("found undefined alias 'x' (line 1, column 11)")


def test_a_scalar_over_the_limit_is_refused_and_not_echoed() -> None:
    limits = replace(DEFAULT_LIMITS, max_scalar_chars=1000)
    error = refusal("a: " + "x" * 5000 + "\n", limits)
    assert error.message == (
        "a scalar of 5,000 characters (line 1, column 4): at most 1,000 are read (KTO_MANIFEST_MAX_SCALAR_CHARS "
        "raises the limit)"
    )
    assert refusal("x" * 5000 + ": 1\n", limits).message.startswith(
        "a scalar of 5,000 characters (line 1, column 1)"
    )


def test_documents_are_counted_in_all() -> None:
    limits = replace(DEFAULT_LIMITS, max_documents=3)
    budget = LoadBudget(limits)
    assert len(list(yaml_documents("a: 1\n---\nb: 2\n", budget))) == 2
    with pytest.raises(YamlReadError) as raised:
        list(yaml_documents("c: 3\n---\nd: 4\n", budget))
    assert (raised.value.index, raised.value.message) == (
        2,
        "more than 3 documents in all: the rest is not read (KTO_MANIFEST_MAX_DOCUMENTS raises the limit)",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!int foo\n", "cannot read 'foo' as tag:yaml.org,2002:int (line 1, column 4): not a valid int"),
        ("a: !!timestamp no\n", "cannot read 'no' as tag:yaml.org,2002:timestamp (line 1, column 4)"),
        ("a: !!bool maybe\n", "cannot read 'maybe' as tag:yaml.org,2002:bool (line 1, column 4)"),
        ("a: !!binary abc\n", "cannot read 'abc' as tag:yaml.org,2002:binary (line 1, column 4)"),
        ("a: 1" + "0" * 5000 + "\n", "(line 1, column 4): an integer of more than 4300 digits"),
        ("a: !!python/object:os.system x\n", "could not determine a constructor for the tag"),
        ("a: !!set [1]\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:set'"),
        ("? [1]\n: x\n", "found unhashable key (line 1, column 5): a mapping key must be a scalar"),
        ("a: {<<: 1}\n", "expected a mapping or a list of mappings for merging"),
        ("a: *nowhere\n", "found undefined alias 'nowhere'"),
        ("a: [1\n", "not valid YAML: "),
        ("a: b\n\x00\n", "not valid YAML: "),
    ],
)
def test_odd_yaml_is_one_message(text: str, message: str) -> None:
    assert message in refusal(text).message


def test_a_key_given_twice_is_reported_and_the_document_still_read() -> None:
    (document,) = yaml_documents("spec:\n  partitions: 3\n  partitions: 300\n", LoadBudget(DEFAULT_LIMITS))
    assert document.value == {"spec": {"partitions": 300}}
    assert document.problems == (
        "the key 'partitions' appears more than once in one mapping (line 2, column 3): YAML keeps the last value "
        "silently, Kubernetes refuses the document",
    )
    (merged,) = yaml_documents("b: &b {x: 1}\nm: {<<: *b, x: 2}\n", LoadBudget(DEFAULT_LIMITS))
    assert merged.problems == ()  # a merged key overridden is not a duplicate


@pytest.mark.parametrize("text", CORPUS)
def test_without_libyaml_the_pure_python_parser_gives_the_same_values(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML built without libyaml: its own parser emits the same events, without recursion either."""
    from topic_operator.manifests import bounded_yaml

    expected = read(text)
    monkeypatch.setattr(bounded_yaml, "_EVENT_PARSER", yaml.SafeLoader)
    assert read(text) == expected
    limits = replace(DEFAULT_LIMITS, max_depth=3)
    assert refusal("- - - - x\n", limits).message.startswith("more than 3 levels of nesting")
