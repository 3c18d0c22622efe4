"""A Parquet table of declared-topic rows, checked before any task converts it.

A table written by another tool can lack a column, hold nulls where a topic needs a value, or spell an enum in a
way the manifests never would. Read with the declared-topic schema (``DESIRED_ARROW``), a missing column reads as
nulls, as it does with Spark's reader given ``DESIRED_SCHEMA``; left there, a null ``partitions`` or an unknown
``mode`` would end a task with a traceback. Both engines check the table on the driver first and refuse it in one
line that names the file, the column, the value and the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any, Final

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from topic_operator.drift.arrow_schemas import DESIRED_ARROW
from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.model import ApplyMode, DeletionPolicy

__all__ = ["check_declared_rows", "read_declared_table"]

REQUIRED: Final = ("cluster", "topic", "partitions", "replicas")
"""The columns every declared topic must have a value in; the others have the manifests' defaults."""

_ENUMS: Final[Mapping[str, type[Enum]]] = {
    "rack_aware_mode": RackAwareMode,
    "deletion_policy": DeletionPolicy,
    "mode": ApplyMode,
}


def check_declared_rows(table: Any, path: str) -> None:
    """Refuse ``table`` (read from ``path``) when a required column is null anywhere or an enum column holds a
    value the manifests do not have; ``ValueError`` naming the file, the column and the rule."""
    for column in REQUIRED:
        nulls = table.column(column).null_count
        if nulls:
            raise ValueError(
                f"{path}: column {column} is null (or missing) in {nulls} of {table.num_rows} rows: every declared "
                f"topic needs {', '.join(REQUIRED)}"
            )
    for column, kind in _ENUMS.items():
        allowed = [member.value for member in kind]
        values = pc.unique(table.column(column).drop_null()).to_pylist()
        wrong = sorted(v for v in values if v not in allowed)
        if wrong:
            raise ValueError(
                f"{path}: column {column} holds {wrong[0]!r}: must be one of {', '.join(allowed)}"
            )


def read_declared_table(path: str, columns: list[str] | None = None) -> Any:
    """``path`` (a Parquet file or a directory of part files) with the declared-topic schema, checked; only
    ``columns`` (with the checked ones) when given."""
    wanted = None if columns is None else sorted({*columns, *REQUIRED, *_ENUMS})
    try:
        table = pq.read_table(path, schema=DESIRED_ARROW, columns=wanted)
    except pa.ArrowException as error:
        raise ValueError(f"{path}: not a table of declared-topic rows ({error})") from error
    check_declared_rows(table, path)
    return table
