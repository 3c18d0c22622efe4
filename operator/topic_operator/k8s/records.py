"""The records the operator's parts hand each other: a reconcile's outcome (``Verdict``, ``DeletionVerdict``, with
the Events to post), and the annotation that pauses a KafkaTopic. Below every job of ``k8s/`` (KafkaTopics,
KafkaClusters, the process), so that each imports them from here and none reaches up into another's module.
Plain data: no kopf, no Kubernetes client."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["PAUSED_ANNOTATION", "DeletionVerdict", "EventSpec", "Verdict", "is_paused"]

PAUSED_ANNOTATION: Final = "kto.dev/paused"
"""A KafkaTopic annotated ``"true"`` is left as it is: planned and reported, never written."""


@dataclass(frozen=True, slots=True)
class EventSpec:
    """A Kubernetes Event to post on the object a verdict is about."""

    type: str
    """Normal or Warning."""
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one reconcile of a KafkaTopic decided: its status, the Events, and whether to run again."""

    status: dict[str, Any]
    """Merge-patched into the KafkaTopic's status (empty: leave it as it is)."""
    result: str
    """The metrics label: an engine outcome, or paused / invalid / cluster_not_found / forbidden / conflict /
    cluster_unavailable / deferred."""
    events: tuple[EventSpec, ...] = ()
    retry: str | None = None
    """Why the reconcile should run again later (None: done)."""


@dataclass(frozen=True, slots=True)
class DeletionVerdict:
    """What one attempt to delete a KafkaTopic decided: whether its finalizer goes, and why not yet."""

    release: bool
    """Let the KafkaTopic go (remove the finalizer); False means retry later."""
    result: str
    events: tuple[EventSpec, ...] = ()
    retry: str | None = None


def is_paused(body: Mapping[str, Any]) -> bool:
    """Whether ``body`` carries the pause annotation, set to true (in any case)."""
    annotations = (body.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(PAUSED_ANNOTATION, "")).strip().lower() == "true"
