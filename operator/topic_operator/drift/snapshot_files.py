"""Snapshot files as the drift job reads them, without Spark: which files, which lines, and each line's cluster.

The process engine (``processes``) must read exactly what Spark's text source reads, so each rule here is
Spark's:

- **Files**: every file under the directory, recursively, except hidden ones: a path part starting with ``.``,
  or with ``_`` unless it holds ``=`` (a partition directory), or ending ``._COPYING_``, as Spark's file index
  skips them. ``.gz`` and ``.bz2`` files are decompressed, as Hadoop's codecs do; other compressed forms are
  refused by name (only the Spark engine has their codecs).
- **Lines**: split at ``\\n``, ``\\r`` and ``\\r\\n``, as Hadoop's line reader splits them (``bytes.splitlines``
  splits at exactly these; ``str.splitlines`` would also split inside a value at U+2028 and others). Bytes that
  are not UTF-8 are kept as lone surrogates, which orjson refuses: such a line is unreadable, with its file
  named, not silently altered.
- **The cluster of a line**, which groups the lines: read from a leading ``{"cluster":"..."`` as
  ``inputs.read_snapshots`` reads it, otherwise from the parsed line (``get_json_object``'s answer: the string,
  the JSON text of another value, or None). ``cluster_drift`` reads every line again and refuses one whose
  ``cluster`` is not its group's.
"""

from __future__ import annotations

import bz2
import gzip
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import orjson

from topic_operator.drift.cluster_drift import SnapshotError

__all__ = [
    "LEADING_CLUSTER",
    "check_snapshot_files",
    "file_clusters",
    "line_cluster",
    "read_lines",
    "snapshot_files",
]

LEADING_CLUSTER: Final = r'^\{"cluster":"([^"\\]*)"'
"""A line whose first key is ``cluster`` with a plain string value (no escape), as ``kto snapshot`` writes every
topic row (its keys sorted, and no topic field sorts before ``cluster``): the value is the group key as it
stands, read without parsing the rest of the line."""

_LEADING: Final = re.compile(LEADING_CLUSTER.encode())

_DECOMPRESS: Final = {".gz": gzip.decompress, ".bz2": bz2.decompress}
_ONLY_SPARK_READS: Final = (".zst", ".lz4", ".snappy", ".deflate", ".zstd")


def _hidden(part: str) -> bool:
    return (part.startswith("_") and "=" not in part) or part.startswith(".") or part.endswith("._COPYING_")


def snapshot_files(directory: str | Path) -> list[Path]:
    """The files Spark's text source reads under ``directory`` (recursively), sorted."""
    root = Path(directory)
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and not any(_hidden(part) for part in path.relative_to(root).parts)
    )


def check_snapshot_files(directory: str | Path) -> None:
    """Fail early, naming the directory, when there is nothing to read."""
    root = Path(directory)
    if not root.is_dir():
        raise SnapshotError(f"snapshot directory {root} does not exist")
    if not snapshot_files(root):
        raise SnapshotError(f"snapshot directory {root} has no files (write them with kto snapshot)")


def _read(path: Path) -> bytes:
    """The file's bytes, decompressed by suffix."""
    data = path.read_bytes()
    decompress = _DECOMPRESS.get(path.suffix)
    if decompress is not None:
        try:
            data = decompress(data)
        except (OSError, EOFError, ValueError) as error:
            raise SnapshotError(f"{path}: cannot be decompressed ({error})") from error
    elif path.suffix in _ONLY_SPARK_READS:
        raise SnapshotError(
            f"{path}: {path.suffix} files are read by the Spark engine only (kto drift --engine spark)"
        )
    return data


def read_lines(path: Path) -> list[bytes]:
    """The file's lines, decompressed by suffix, split as Hadoop's line reader splits them."""
    return _read(path).splitlines()


def line_cluster(line: bytes) -> str | None:
    """The cluster that groups ``line``: its leading ``cluster`` string, else the parsed line's."""
    found = _LEADING.match(line)
    if found is not None:
        try:
            return found.group(1).decode()
        except UnicodeDecodeError:
            return None
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(row) is not dict:
        return None
    value = row.get("cluster")
    if value is None or type(value) is str:
        return value
    return orjson.dumps(value).decode()


def keyed_lines(lines: list[bytes]) -> Iterator[tuple[str | None, bytes]]:
    """Each line with its cluster. Most lines of a file share one cluster and start with it: a line that starts
    with the same ``{"cluster":"X"`` as the one before is X's without another look."""
    prefix = b"\x00"  # no line starts with it
    current: str | None = None
    for line in lines:
        if not line.startswith(prefix):
            current = line_cluster(line)
            found = _LEADING.match(line)
            prefix = found.group(0) if found is not None and current is not None else b"\x00"
        yield current, line


def file_clusters(path: Path) -> set[str | None]:
    """The clusters whose lines ``path`` holds (None: lines without a readable cluster); blank lines, which the
    job skips, hold none.

    Without splitting the file: from each line whose cluster is looked up, one regular expression search (in C)
    skips every following line that starts with the same ``{"cluster":"X"``, which in a ``kto snapshot`` file
    is all of them but the header."""
    data = _read(path)
    if b"\r" in data:  # CR line ends: line by line (the skipping search below would try every byte)
        return {key for key, line in keyed_lines(data.splitlines()) if line.strip()}
    clusters: set[str | None] = set()
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        line, start = data[start:end], end + 1
        if not line.strip():
            continue
        key = line_cluster(line)
        clusters.add(key)
        leading = _LEADING.match(line)
        if leading is not None and key is not None:
            # The next line start not followed by this same prefix, or the end of the data.
            skipped = re.compile(rb"\n(?!" + re.escape(leading.group(0)) + rb")").search(data, end)
            start = size if skipped is None else skipped.end()
    return clusters
