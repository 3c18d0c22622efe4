"""Writing a command's output whole or not at all, so a failed write never leaves half a file for the next
reader."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from topic_operator.cli.options import UsageError

__all__ = ["check_writable", "write_whole"]


def check_writable(output: Path) -> None:
    """Before reading a whole cluster: refuse an output that cannot be written, in one line."""
    if output.is_dir():
        raise UsageError(f"cannot write the snapshot to {str(output)!r}: it is a directory")
    if not output.parent.is_dir():
        raise UsageError(
            f"cannot write the snapshot to {str(output)!r}: directory {str(output.parent)!r} does not exist"
        )


def write_whole(output: Path, text: str) -> None:
    """All or nothing: a temporary file beside ``output``, renamed over it, so a failed write (disk full, no
    permission) never leaves half a snapshot for the drift job to read, nor spoils the previous one. Anything
    but a regular file (``/dev/stdout``, a FIFO, a symlink) is written in place: renaming over it would replace
    the device or the link itself."""
    temporary: str | None = None
    try:
        if output.is_symlink() or (output.exists() and not output.is_file()):
            with output.open("w") as file:
                file.write(text)
            return
        descriptor, temporary = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.")
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as a plain open() would have made it
        os.replace(temporary, output)
    except OSError as error:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise UsageError(f"cannot write the snapshot to {str(output)!r}: {error.strerror or error}") from None
