"""The shape the operator reads a KafkaTopic or KafkaCluster body in, whatever the API server handed over.

With its schema validation on, the API server only stores objects of the CRD's shape; but an object stored before
a schema change, or written with validation off, can hold anything. The operator reads ``metadata``,
``metadata.annotations``, ``status`` and ``status.conditions`` of every body before validating it (for ownership,
pause, and the previous status), so those are given their shape here, once, where a body enters: anything else
in their place reads as empty. ``spec`` is left as it is, for validation to refuse in its own words; code that
reads it before validation goes through ``mapping``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["mapping", "shaped"]


def mapping(value: object) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def shaped(body: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the body's top level with the containers the operator reads before validation in shape."""
    metadata = dict(mapping(body.get("metadata")))
    metadata["annotations"] = {
        str(k): v for k, v in mapping(metadata.get("annotations")).items() if isinstance(v, str)
    }
    status = dict(mapping(body.get("status")))
    conditions = status.get("conditions")
    if "conditions" in status:
        status["conditions"] = (
            [c for c in conditions if isinstance(c, Mapping)] if isinstance(conditions, list) else []
        )
    return {**body, "metadata": metadata, "status": status}
