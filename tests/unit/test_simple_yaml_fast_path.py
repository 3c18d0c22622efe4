"""The fast path for plain block YAML (``bounded_yaml._simple_documents``) gives exactly what the event path gives:
the same documents, numbered alike, with the same values of the same types in the same key order, and the same
refusal where the text has a problem (which the fast path always leaves to the event path to word)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topic_operator.manifests import bounded_yaml
from topic_operator.manifests.bounded_yaml import LoadBudget, YamlReadError, yaml_documents
from topic_operator.manifests.limits import DEFAULT_LIMITS, ManifestLimits


def strict(value: Any) -> Any:
    """``value`` with every type and every mapping's key order made part of what is compared (True == 1 and
    {a, b} == {b, a} otherwise)."""
    if isinstance(value, dict):
        return ("dict", [(strict(k), strict(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [strict(v) for v in value])
    return (type(value).__name__, repr(value))


def outcome(text: str, limits: ManifestLimits = DEFAULT_LIMITS) -> tuple[Any, ...]:
    budget = LoadBudget(limits)
    documents: list[Any] = []
    try:
        for document in yaml_documents(text, budget):
            documents.append((document.index, strict(document.value), document.problems))
    except YamlReadError as error:
        return tuple(documents), (error.index, error.message), budget.documents
    return tuple(documents), None, budget.documents


def event_path_outcome(text: str, limits: ManifestLimits = DEFAULT_LIMITS) -> tuple[Any, ...]:
    original = bounded_yaml._simple_documents
    bounded_yaml._simple_documents = lambda text, limits: None  # type: ignore[assignment]
    try:
        return outcome(text, limits)
    finally:
        bounded_yaml._simple_documents = original


def takes_fast_path(text: str) -> bool:
    return bounded_yaml._simple_documents(text, DEFAULT_LIMITS) is not None


TOPIC = """apiVersion: kto.dev/v1alpha1
kind: KafkaTopic
metadata:
  name: orders-{i}
  namespace: team-a
  labels:
    app.kubernetes.io/name: orders
spec:
  cluster: main
  partitions: 12
  replicas: 3
  config:
    retention.ms: {retention}   # a week
    cleanup.policy: compact,delete
    min.insync.replicas: '2'
    message.timestamp.type: "CreateTime"
    segment.bytes: 1_073_741_824
    unclean.leader.election.enable: false
    local.retention.ms: -2
    compression.type: ~
    note: 'it''s here'
"""

SIMPLE = [
    "---\n".join(TOPIC.format(i=i, retention=r) for i, r in enumerate(["604800000", "-1", "0x10", "1:30"])),
    "# the topics of team a\n---\n" + TOPIC.format(i=1, retention=1) + "---\n",
    "a: 1\n---\n",
    "---\na: 1\n---\n---\nb: 2\n",
    "---",
    "",
    "# only a comment\n",
    "  a: 1\n  b:\n    c: 2\n  d:\n",
    "a:\n  b:\n    c:\n  d: x\n",
    "a: yes\nb: No\nc: on\nd: .inf\ne: -.Inf\nf: .nan\ng: 0o17\nh: 017\ni: +12\nj: 1.5e3\nk: 190:20:30\n",
    "a: null\nb: Null\nc: ~\nd: ''\ne: \"\"\nf: true\n1: one\n",
    "a: http://x:9092/y\nb: x=y\nc: (a)\nd: $HOME\ne: a b  c\n",
    "a: b # c\nd: 'e' # f\ng: \"h\"   # i\n",
    "metadata: {name: a, namespace: 'team-a'}\nspec: {cluster: main, partitions: 3}\nstatus: {}\n",
]

NOT_SIMPLE = [
    "metadata: {name: a, labels: {app: b}}\n",
    "metadata: {name: a,}\n",
    "a:\n- 1\n- 2\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: |\n  text\n",
    "a: 1\na: 2\n",
    "a: 1\n  b: 2\n",
    "a:\n    b: 1\n  c: 2\n",
    "a: b: c\n",
    "a: 'unclosed\n",
    'a: "esc\\n"\n',
    "a: b\n\tc: d\n",
    "a: 1\r\nb: 2\r\n",
    "a: caf\u00e9\n",
    "--- a: 1\n",
    "a: 1\n...\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: 'x'#y\n",
    "a: x#y\n",
    "<<: {a: 1}\n",
    "a: =\n",
    "a: 123456789012345678901234567890123456789012345678901234567890" + "1" * 5000 + "\n",
    "? a\n: b\n",
    "plain scalar document\n",
    "a: 1\n---\n- 1\n",
]


@pytest.mark.parametrize("text", SIMPLE)
def test_the_simple_style_takes_the_fast_path_with_the_event_paths_values(text: str) -> None:
    assert takes_fast_path(text)
    assert outcome(text) == event_path_outcome(text)


@pytest.mark.parametrize("text", NOT_SIMPLE)
def test_anything_else_is_read_by_the_event_path(text: str) -> None:
    assert not takes_fast_path(text)
    assert outcome(text) == event_path_outcome(text)


def test_the_limits_hold_on_the_fast_path_as_on_the_event_path() -> None:
    text = "---\n".join(TOPIC.format(i=i, retention=1) for i in range(5))
    for limits in (
        ManifestLimits(max_documents=3),
        ManifestLimits(max_scalar_chars=4),
        ManifestLimits(max_depth=2),
    ):
        assert outcome(text, limits) == event_path_outcome(text, limits)
        assert outcome(text, limits)[1] is not None


def test_the_budget_is_charged_across_files_as_by_the_event_path() -> None:
    text = "---\n".join(TOPIC.format(i=i, retention=1) for i in range(3))
    fast, slow = LoadBudget(ManifestLimits(max_documents=4)), LoadBudget(ManifestLimits(max_documents=4))
    assert [d.index for d in yaml_documents(text, fast)] == [1, 2, 3]
    original = bounded_yaml._simple_documents
    bounded_yaml._simple_documents = lambda text, limits: None  # type: ignore[assignment]
    try:
        list(yaml_documents(text, slow))
        with pytest.raises(YamlReadError) as slow_error:
            list(yaml_documents(text, slow))
    finally:
        bounded_yaml._simple_documents = original
    with pytest.raises(YamlReadError) as fast_error:
        list(yaml_documents(text, fast))
    assert (fast_error.value.index, fast_error.value.message) == (
        slow_error.value.index,
        slow_error.value.message,
    )


KEYS = st.sampled_from(
    ["a", "b", "name", "retention.ms", "1", "true", "null", "~", "x_y", "a/b", "0x1", "-k"]
)
VALUES = st.sampled_from(
    [
        "",
        "1",
        "-1",
        "+1",
        "0",
        "012",
        "0o12",
        "0x1F",
        "1_000",
        "1:20",
        "1.5",
        ".5",
        "1e3",
        "1.0e+3",
        ".inf",
        "-.inf",
        ".NaN",
        "true",
        "False",
        "yes",
        "NO",
        "on",
        "Off",
        "y",
        "n",
        "null",
        "~",
        "NULL",
        "abc",
        "a b",
        "a:b",
        "a: b",
        "a #c",
        "#c",
        "a#c",
        "'q'",
        "'it''s'",
        "'a' #c",
        '"d"',
        '"e\\n"',
        "'x",
        "-",
        "- a",
        "-x",
        "=",
        "<<",
        "2024-01-01",
        "a,b",
        "[1]",
        "{a: 1}",
        "{}",
        "{ }",
        "{a: 1, b: x}",
        "{a: 'x,y', b: '3.9'}",
        "{a: 1,}",
        "{a: {b: 1}}",
        "{a: 1} #c",
        "{a: 1}x",
        "{a: b c, d: -1}",
        "{a: 1, a: 2}",
        "{a: 1:2}",
        "{a: }",
        "{a: null, b: ~, c: true}",
        "{true: 1, 1: x}",
        '{a: "q"}',
        "{a: [1]}",
        "{a:1}",
        "{ a: 1 }",
        "{a: 1 , b: 2}",
        "{a: -x, b: - x}",
        "{a: 1",
        "{a: 1}}",
        "{a: <<}",
        "{<<: {a: 1}}",
        "&x 1",
        "*x",
        "!!str 1",
        "|",
        ">",
        "@x",
        "`x",
        "%x",
        "?",
        "? x",
        ":",
        "x:",
        "1 ",
        "é",
    ]
)
LINES = st.one_of(
    st.builds(lambda i, k, v: " " * i + f"{k}:" + (f" {v}" if v else ""), st.integers(0, 6), KEYS, VALUES),
    st.sampled_from(["---", "--- ", "...", "", "   ", "# c", "  # c", "- a", "  - a", "x", "a: 1\t"]),
)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(LINES, max_size=12), st.booleans())
def test_any_mix_of_lines_reads_as_the_event_path_reads_it(lines: list[str], newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if newline else "")
    assert outcome(text) == event_path_outcome(text)


def test_each_document_has_mappings_of_its_own() -> None:
    """Lines repeat from document to document and are read once; the mappings made of them are not shared, so
    a change to one manifest's value is never seen in another's."""
    text = "a: {b: 1}\nc:\n  d: 2\n---\na: {b: 1}\nc:\n  d: 2\n"
    assert takes_fast_path(text)
    first, second = (document.value for document in yaml_documents(text, LoadBudget(DEFAULT_LIMITS)))
    assert first == second
    assert first["a"] is not second["a"]
    assert first["c"] is not second["c"]
