"""``snapshot_files.file_clusters`` skips runs of lines with one search; it must find exactly the clusters that
looking at every line finds (``line_cluster`` on each non-blank line, split as Hadoop splits), on any bytes."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topic_operator.drift.snapshot_files import file_clusters, line_cluster, read_lines

_PIECES = [
    b'{"cluster":"a","x":1}',
    b'{"cluster":"ab"}',
    b'{"cluster":"b"}',
    b'{"brokers":[],"cluster":"a"}',
    b"",
    b"  ",
    b'{"cluster":5}',
    b"not json",
    b'{"cluster":"a"',
    b'{"cluster":"a\\"q"}',
    b'["cluster"]',
    b'{"cluster":null}',
    b'{"cluster":"\xe9"}',
]


def every_line(path: Path) -> set[str | None]:
    return {line_cluster(line) for line in read_lines(path) if line.strip()}


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from(_PIECES), st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"])), max_size=10
    ),
    st.booleans(),
)
def test_file_clusters_are_every_lines_clusters(
    tmp_path: Path, lines: list[tuple[bytes, bytes]], last_line_ended: bool
) -> None:
    data = b"".join(text + end for text, end in lines)
    data = data if last_line_ended else data.rstrip(b"\r\n")
    path = tmp_path / "snapshot.jsonl"
    path.write_bytes(data)
    assert file_clusters(path) == every_line(path)


def test_a_snapshot_file_is_its_one_cluster(tmp_path: Path) -> None:
    path = tmp_path / "east.jsonl"
    header = b'{"brokers":[{"id":1}],"cluster":"east","schema":2,"topic":null}'
    topics = b"".join(b'{"cluster":"east","topic":"t%d"}\n' % i for i in range(1000))
    path.write_bytes(header + b"\n" + topics + b'{"cluster":"west","topic":"w"}\n' + topics)
    assert file_clusters(path) == {"east", "west"}
