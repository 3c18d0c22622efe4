"""Snapshot rows in the form earlier versions of kto wrote, to show they are still read the same."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def version_1_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Schema 1's form of one cluster's schema 2 rows: the header's fields on every topic row and no header
    row, except for a cluster without topics, which is its header row alone."""
    header, *topics = rows
    shared = {key: value for key, value in header.items() if key != "topic"}
    return [{**shared, **topic, "schema": 1} for topic in topics] or [{**header, "schema": 1}]
