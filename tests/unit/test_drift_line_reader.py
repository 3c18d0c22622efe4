"""The drift job reads a topic row's partition states and partitions once per cluster when its line is as
``kto snapshot`` writes it (``_LineReader``: the line cut in two, the repeated part remembered). Whatever the line
-- well-formed, malformed, with keys given twice, a look-alike segment nested in a config or a string, escapes,
cut short -- the reader answers what ``_read_row`` answers on the whole line, a row equal key for key or the same
reason, and the layout JSON it hands the observer is the one the observer would have written itself. A cluster's
lines read as bytes (the reader's cut) and as text (read whole) give the same state, health, load and problems.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from test_observer_fast_path import rows

from topic_operator.drift.cluster_drift import _LineReader, _observe, _read_row
from topic_operator.model import Broker, ClusterState
from topic_operator.snapshot_rows import rows_from_cluster

SEGMENT = b'"partition_states":{"0":{"isr":[1],"leader":1}},"partitions":{"0":[1]}'
TEXT_EDITS = (
    "none",
    "none",
    "none",
    "key twice at the end",
    "segment in the config",
    "segment only in the config",
    "segment in a string",
    "escape in the config",
    "cut short",
    "trailing bytes",
    "schema 1",
    "no topic",
    "spaces",
)


def _edited(line: bytes, edit: str, draw: st.DrawFn) -> bytes:
    """``line`` changed in one of the ways that could fool a reader that cuts it."""
    if edit == "key twice at the end" and line.endswith(b"}"):
        return (
            line[:-1]
            + b","
            + draw(st.sampled_from([SEGMENT, b'"partitions":{}', b'"partition_states":null']))
            + b"}"
        )
    if edit == "segment in the config":
        return line.replace(b'"config":{', b'"config":{"x":{"y":1,' + SEGMENT + b"},", 1)
    if edit == "segment only in the config":  # the row's own members renamed, a look-alike nested
        line = line.replace(b'"partition_states":', b'"partition_statez":').replace(
            b'"partitions":', b'"partitionz":'
        )
        return line.replace(b'"config":{', b'"config":{"x":{"y":1,' + SEGMENT + b"},", 1)
    if edit == "segment in a string":
        return line.replace(b'"config":{', b'"config":{"x":"' + SEGMENT.replace(b'"', b'\\"') + b'",', 1)
    if edit == "escape in the config":
        return line.replace(b'"config":{', b'"config":{"a\\u0022b":"c\\\\",', 1)
    if edit == "cut short":
        return line[: draw(st.integers(0, len(line)))]
    if edit == "trailing bytes":
        return line + draw(st.sampled_from([b" ", b"x", b"}", b",{}"]))
    if edit == "schema 1":
        return line.replace(b'"schema":2', b'"schema":1', 1)
    if edit == "no topic":
        return line.replace(b'"topic":"', b'"topix":"', 1)
    if edit == "spaces":
        return line.replace(b",", b", ", draw(st.integers(1, 3)))
    return line


@st.composite
def lines(draw: st.DrawFn) -> list[bytes]:
    drawn = []
    for row in draw(rows()):
        line = orjson.dumps({"cluster": "c", "schema": 2, **row}, option=orjson.OPT_SORT_KEYS)
        drawn.append(_edited(line, draw(st.sampled_from(TEXT_EDITS)), draw))
    return drawn


@settings(max_examples=800)
@given(lines())
def test_the_reader_reads_every_line_as_read_whole(texts: list[bytes]) -> None:
    reader = _LineReader()
    for text in [*texts, *texts]:  # twice: the second time from what it remembers
        row, layout_text = reader.read(text)
        assert row == _read_row(text)
        if layout_text is not None:
            assert isinstance(row, dict)
            assert layout_text == orjson.dumps((row["partitions"], row.get("partition_states")))


@settings(max_examples=300)
@given(lines())
def test_a_cluster_read_as_bytes_is_the_cluster_read_as_text(texts: list[bytes]) -> None:
    header = orjson.dumps(rows_from_cluster("c", ClusterState("id", {1: Broker(1, "a")}, {}), "t")[0])
    texts = [header, *texts]
    files = [f"file-{i % 2}" for i in range(len(texts))]
    as_bytes = _observe("c", texts, files)
    as_text = _observe("c", [t.decode("utf-8", "surrogateescape") for t in texts], files)
    assert _comparable(as_bytes) == _comparable(as_text)


def _comparable(observed: tuple[Any, Any]) -> tuple[object, ...]:
    result, problems = observed
    if result is None:
        return None, problems
    topics = [(name, topic, list(topic.partitions.items())) for name, topic in result.state.topics.items()]
    return topics, result.taken_at, result.health, result.loads, problems
