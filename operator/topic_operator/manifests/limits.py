"""How much of its input the manifest loader accepts: every limit, its default, its environment variable and why.

``kto validate`` runs in CI on pull requests from anyone, so what it reads must be treated as hostile: a YAML alias
bomb, a hundred thousand nested brackets, a 50 MB scalar, a symlink to ``/dev/zero``. Each limit below is enforced
before or while the input is parsed, never after, so nothing can make the loader crash, hang or grow without bound:
a file too large is refused from its size before it is read, and the YAML reader stops at the first document that
nests too deep, repeats too much through aliases or holds too long a scalar. A refused file is one error line; the
other files are still read.

The defaults are far above what a real repository needs (a KafkaTopic is a few hundred bytes, nested six levels;
Kubernetes itself stores no object above 1.5 MB) and low enough that the worst input within them is read in about
a minute and a few GB. Each can be raised (or lowered) through its environment variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Final

__all__ = [
    "DEFAULT_LIMITS",
    "LimitSettingError",
    "ManifestLimits",
    "limits_from_environment",
    "object_problem",
]


def _env(name: str) -> dict[str, str]:
    return {"env": name}


class LimitSettingError(ValueError):
    """An environment variable that does not hold a positive integer; the message names it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestLimits:
    """The bounds of one load (one command, or one operator call of ``load_objects``)."""

    max_file_bytes: int = field(default=64 * 1024 * 1024, metadata=_env("KTO_MANIFEST_MAX_FILE_BYTES"))
    """Bytes of one file (or of standard input). Checked from the file's size before reading, then enforced while
    reading, since a file can grow in between."""
    max_total_bytes: int = field(default=256 * 1024 * 1024, metadata=_env("KTO_MANIFEST_MAX_TOTAL_BYTES"))
    """Bytes of all files of one load together: files past it are not read."""
    max_files: int = field(default=100_000, metadata=_env("KTO_MANIFEST_MAX_FILES"))
    """Manifest files found in the given directories: a walk stops there."""
    max_documents: int = field(default=1_000_000, metadata=_env("KTO_MANIFEST_MAX_DOCUMENTS"))
    """YAML documents (or API objects) of one load together: reading stops there."""
    max_depth: int = field(default=64, metadata=_env("KTO_MANIFEST_MAX_DEPTH"))
    """Nesting of lists and mappings in one document. A KafkaTopic needs 5 levels, a ``kubectl get -o yaml``
    export with managedFields about 12; a hundred thousand levels crash libyaml's composer."""
    max_scalar_chars: int = field(default=1024 * 1024, metadata=_env("KTO_MANIFEST_MAX_SCALAR_CHARS"))
    """Characters of one string (a value or a key)."""
    max_alias_nodes: int = field(default=1_000_000, metadata=_env("KTO_MANIFEST_MAX_ALIAS_NODES"))
    """Nodes that YAML aliases add, all files together: an alias counts every node of what it repeats, so a
    "billion laughs" document is refused after a few lines instead of expanding to billions of nodes."""
    max_object_nodes: int = field(default=1_000_000, metadata=_env("KTO_MANIFEST_MAX_OBJECT_NODES"))
    """Nodes (values, lists, mappings) of one API object given already parsed (``load_objects``)."""
    max_errors_per_document: int = field(default=50, metadata=_env("KTO_MANIFEST_MAX_ERRORS_PER_DOCUMENT"))
    """Problems listed for one document; one more line says that the rest are not listed."""


DEFAULT_LIMITS: Final = ManifestLimits()


def env_names() -> dict[str, str]:
    """Field name -> environment variable, for the settings reference and for errors."""
    return {f.name: f.metadata["env"] for f in fields(ManifestLimits)}


def limits_from_environment(environ: Mapping[str, str] | None = None) -> ManifestLimits:
    """The defaults, with every ``KTO_MANIFEST_*`` variable that is set taking their place."""
    source = os.environ if environ is None else environ
    changes: dict[str, int] = {}
    for name, variable in env_names().items():
        raw = source.get(variable)
        if raw is None or not raw.strip():
            continue
        try:
            number = int(raw.strip().replace("_", ""))
        except ValueError:
            number = 0
        if number <= 0:
            raise LimitSettingError(f"{variable} must be a positive integer, got {raw[:40]!r}")
        changes[name] = number
    return replace(DEFAULT_LIMITS, **changes) if changes else DEFAULT_LIMITS


_PLAIN_SCALARS: Final = frozenset({bool, int, float, type(None)})


def object_problem(body: object, limits: ManifestLimits) -> str | None:
    """Why an object given already parsed (an API body) is refused: too deep, too large, too long a string, or
    not JSON; None if it is within ``limits``. No YAML parser bounded it, so it is walked here, without recursion
    (a self-referencing object ends at the depth limit), stopping at the first problem."""
    stack: list[tuple[object, int]] = [(body, 0)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > limits.max_object_nodes:
            return (
                f"more than {limits.max_object_nodes:,} values in one object "
                "(KTO_MANIFEST_MAX_OBJECT_NODES raises the limit)"
            )
        # Most values of an API body are plain scalars, strings and dicts: their own types are looked at
        # first, since asking whether a dict is a Mapping goes through the ABC's machinery for every value.
        if type(value) in _PLAIN_SCALARS:
            continue
        if isinstance(value, str):
            if len(value) > limits.max_scalar_chars:
                return (
                    f"a string of {len(value):,} characters: at most {limits.max_scalar_chars:,} are read "
                    "(KTO_MANIFEST_MAX_SCALAR_CHARS raises the limit)"
                )
        elif isinstance(value, (dict, list, Mapping)):  # in this order: a dict or list before the ABC
            if depth >= limits.max_depth:
                return f"more than {limits.max_depth} levels of nesting (KTO_MANIFEST_MAX_DEPTH raises the limit)"
            if isinstance(value, (dict, Mapping)):
                for key, item in value.items():
                    stack.append((key, depth + 1))
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in value)
        elif not isinstance(value, (bool, int, float)) and value is not None:
            return f"not a JSON value: a {type(value).__name__}"
    return None
