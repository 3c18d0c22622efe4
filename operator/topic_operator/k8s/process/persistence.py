"""Where kopf keeps what it remembers about each object, chosen so that handling a change costs one API write.

kopf remembers, per object, the last spec it handled (its "diff-base", to tell a creation from an update and an
update from nothing) and the progress of handlers being retried. By default it keeps both in annotations: every
handled change then costs a patch of the object for the annotation, plus the patch of its status subresource that
the handler's status needs, and both come back as watch events to be processed again. Kept in the status instead
(``status.kopf``, declared in both CRDs, preserved as is), kopf's record and the handler's status go out in one
status patch.

The diff-base holds only what changes the operator's work: the spec, and the pause annotation. kopf's default
also holds every label and annotation, so labelling 10,000 KafkaTopics would run 10,000 reconciles and write
10,000 statuses for nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

import kopf

from topic_operator.k8s.records import PAUSED_ANNOTATION

__all__ = ["STATUS_FIELD", "SpecDiffBaseStorage", "configure_persistence"]

STATUS_FIELD: Final = "kopf"
"""``status.kopf``: kopf's records (``last-handled-configuration``, ``progress``)."""


class SpecDiffBaseStorage(kopf.StatusDiffBaseStorage):
    """kopf's status diff-base, restricted to the spec and the pause annotation; none at all for KafkaTopics.

    KafkaTopic changes are not kopf's to detect (``topic_work``): kopf handles only the deletion of those with
    ``deletionPolicy: Delete``, for which no diff-base is needed. Without one, kopf sees each of their events as
    a creation with no handler and records nothing, instead of patching every spec change into ``status.kopf``
    (a write per change that nothing reads), and builds no essence for any KafkaTopic event."""

    def build(self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None) -> kopf.BodyEssence:
        if _is_topic(body):
            return _topic_essence(body)
        fields = list(extra_fields or ())
        essence = cast(
            dict[str, Any], super().build(body=_essential_parts(body, fields), extra_fields=fields)
        )
        annotations = (essence.get("metadata") or {}).get("annotations") or {}
        essence.pop("metadata", None)
        if PAUSED_ANNOTATION in annotations:
            essence["metadata"] = {"annotations": {PAUSED_ANNOTATION: annotations[PAUSED_ANNOTATION]}}
        return cast(kopf.BodyEssence, essence)

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        return None if _is_topic(body) else super().fetch(body=body)

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        if not _is_topic(body):
            super().store(body=body, patch=patch, essence=essence)


def _is_topic(body: Mapping[str, Any]) -> bool:
    return body.get("kind") == "KafkaTopic"


def _topic_essence(body: Mapping[str, Any]) -> kopf.BodyEssence:
    """What kopf's filters read of a KafkaTopic: kopf matches a handler's ``field``/``value`` against the
    essence, not the body, and the delete handler is only for ``spec.deletionPolicy: Delete``."""
    policy = (body.get("spec") or {}).get("deletionPolicy")
    return cast(kopf.BodyEssence, {} if policy is None else {"spec": {"deletionPolicy": policy}})


def configure_persistence(settings: kopf.OperatorSettings, *, finalizer: str) -> None:
    settings.persistence.finalizer = finalizer
    settings.persistence.progress_storage = kopf.StatusProgressStorage(name=STATUS_FIELD)
    settings.persistence.diffbase_storage = SpecDiffBaseStorage(name=STATUS_FIELD)


def _essential_parts(body: Mapping[str, Any], extra_fields: Iterable[Any]) -> kopf.Body:
    """What kopf's ``build`` can keep of ``body``: it deep-copies the whole body before dropping the metadata and
    the status, which is most of a KafkaTopic (the API server's ``managedFields``, kopf's records, the status).
    Left out here before the copy, unless an extra field names them; the essence is the same."""
    named = {(field.split(".", 1)[0] if isinstance(field, str) else field[0]) for field in extra_fields}
    parts = {key: value for key, value in body.items() if key not in _DROPPED or key in named}
    if "metadata" not in named:
        metadata = body.get("metadata") or {}
        parts["metadata"] = {key: metadata[key] for key in ("annotations",) if key in metadata}
    return cast(kopf.Body, parts)


_DROPPED: Final = ("metadata", "status")
"""The stanzas kopf's ``DiffBaseStorage.build`` removes (it picks back the labels, which ``build`` drops with the
rest of the metadata, and the annotations, of which only the pause annotation stays)."""
