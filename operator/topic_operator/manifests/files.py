"""Which files a load reads, and their text, within the limits: regular files only, never more bytes than allowed.

A path given on the command line may be a file of any extension (a kubectl JSON export), a directory (its
``*.yaml``/``*.yml`` files, recursively, sorted, hidden entries skipped) or ``-`` for standard input. Whatever the
path, the reader never blocks and never reads more than the limits allow: a FIFO, a socket or a device (a symlink
to ``/dev/zero`` committed in a pull request) is refused from ``fstat`` on a descriptor opened without blocking, a
file larger than allowed is refused from its size, and a file that grows while it is read is cut at the limit and
refused. Directory walks do not follow symlinked directories (a link to ``/`` or to its own parent would make the
walk endless) and stop at the file-count limit.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

from topic_operator.manifests.bounded_yaml import LoadBudget

__all__ = ["STDIN", "FileReadError", "FoundFiles", "find_manifest_files", "read_manifest_text"]

STDIN: Final = "-"
"""The path that means standard input."""
STDIN_LABEL: Final = "<stdin>"
MANIFEST_SUFFIXES: Final = (".yaml", ".yml")
_READ_CHUNK: Final = 1024 * 1024


class FileReadError(Exception):
    """A file that is not read, and why, in words for the message (the file is named by the caller)."""


@dataclass(slots=True)
class FoundFiles:
    """The files a given path stands for, in reading order, and what was skipped or stopped the search."""

    files: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(path, why) of directory entries that look like manifests but are not regular files: warnings."""
    error: str | None = None
    """Why the search stopped early (too many files): an error."""


def find_manifest_files(given: str, budget: LoadBudget) -> FoundFiles:
    """The files of one given path: itself unless it is a directory, else its manifests, walked without following
    symlinked directories. ``budget`` counts the files found against the file limit."""
    found = FoundFiles()
    if given == STDIN or not os.path.isdir(given):
        found.files.append(given)
        return found
    limit = budget.limits.max_files
    for path in _walk(given):
        if not _is_regular(path):
            found.skipped.append((path, f"{_file_kind(path)}, not a regular file: skipped"))
            continue
        if len(found.files) >= limit:
            found.error = (
                f"more than {limit:,} manifest files in this directory: the rest is not read "
                "(KTO_MANIFEST_MAX_FILES raises the limit)"
            )
            break
        found.files.append(path)
    found.files.sort(key=lambda p: Path(p).relative_to(given).parts)
    return found


def _walk(top: str) -> Iterator[str]:
    """``*.yaml``/``*.yml`` paths under ``top``, hidden entries skipped."""
    for directory, subdirectories, names in os.walk(top, followlinks=False):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        relative = os.path.relpath(directory, top)
        depth_parts = () if relative == "." else tuple(Path(relative).parts)
        batch = sorted(n for n in names if not n.startswith(".") and n.endswith(MANIFEST_SUFFIXES))
        for name in batch:
            yield os.path.join(top, *depth_parts, name)


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _file_kind(path: str) -> str:
    try:
        return _kind(os.stat(path).st_mode)
    except OSError as error:
        return f"unreadable ({error.strerror or error})"


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def display_name(given: str) -> str:
    return STDIN_LABEL if given == STDIN else given


def read_manifest_text(given: str, budget: LoadBudget, stdin: BinaryIO | None = None) -> str:
    """The UTF-8 text of one file (or of standard input for ``-``), within the per-file and total byte limits.

    Raises ``FileReadError`` for anything that is not read, including a missing file; ``budget.files`` counts
    every file that was opened, ``budget.bytes_read`` every byte read.
    """
    limits = budget.limits
    remaining = limits.max_total_bytes - budget.bytes_read
    allowed = min(limits.max_file_bytes, remaining)
    if given == STDIN:
        source = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
        if source is None:
            raise FileReadError("standard input is closed")
        budget.files += 1
        data = source.read(allowed + 1)
    else:
        data = _read_regular_file(given, allowed, budget)
    if len(data) > allowed:
        raise FileReadError(_too_large(f"more than {allowed:,}", allowed, budget))
    budget.bytes_read += len(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = data[error.start : error.start + 1].hex()
        raise FileReadError(
            f"not UTF-8 text: byte 0x{byte} at offset {error.start:,} ({error.reason})"
        ) from None


def _read_regular_file(path: str, allowed: int, budget: LoadBudget) -> bytes:
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise FileReadError("no such file or directory") from None
    except OSError as error:
        raise FileReadError(
            f"cannot be read: {error.strerror or errno.errorcode.get(error.errno or 0, error)}"
        ) from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise FileReadError(
                f"{_kind(status.st_mode)}, not a regular file: only regular files are read "
                f"({STDIN} reads standard input)"
            )
        budget.files += 1
        if status.st_size > allowed:
            raise FileReadError(_too_large(f"{status.st_size:,}", allowed, budget))
        return _read_at_most(descriptor, allowed + 1)
    except OSError as error:
        raise FileReadError(f"cannot be read: {error.strerror or error}") from None
    finally:
        os.close(descriptor)


def _read_at_most(descriptor: int, count: int) -> bytes:
    chunks: list[bytes] = []
    left = count
    while left > 0:
        chunk = os.read(descriptor, min(left, _READ_CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _too_large(size: str, allowed: int, budget: LoadBudget) -> str:
    limits = budget.limits
    if allowed < limits.max_file_bytes:
        return (
            f"{size} bytes: the files read before it leave {allowed:,} of the {limits.max_total_bytes:,} bytes all "
            "manifests may have together (KTO_MANIFEST_MAX_TOTAL_BYTES raises the limit)"
        )
    return (
        f"{size} bytes: larger than the {limits.max_file_bytes:,} bytes a manifest file may have "
        "(KTO_MANIFEST_MAX_FILE_BYTES raises the limit)"
    )
