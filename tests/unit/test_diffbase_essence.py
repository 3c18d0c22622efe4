"""The diff-base essence is kopf's own, restricted to the spec and the pause annotation, whatever the body holds;
a KafkaTopic has none but what kopf's delete handler filters on.

``SpecDiffBaseStorage.build`` hands kopf only the parts of a body its ``build`` keeps (kopf deep-copies the whole
body first, ``managedFields`` and status included). These tests hold it to kopf's ``build`` of the whole body, for
the kind kopf handles the changes of (KafkaCluster). KafkaTopic changes are the operator's own (``topic_work``).
"""

from __future__ import annotations

from typing import Any, cast

import kopf
from hypothesis import given
from hypothesis import strategies as st

from topic_operator.k8s.process.persistence import SpecDiffBaseStorage
from topic_operator.k8s.records import PAUSED_ANNOTATION

KEYS = st.sampled_from(["a", "b", "retention.ms", "kopf.zalando.org/x", "kto.dev/paused"])
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3))
VALUES = st.recursive(LEAVES, lambda inner: st.dictionaries(KEYS, inner, max_size=3) | st.lists(inner, max_size=2),
                      max_leaves=8)  # fmt: skip
ANNOTATIONS = st.dictionaries(
    st.sampled_from([PAUSED_ANNOTATION, "team", "kubectl.kubernetes.io/last-applied-configuration",
                     "kopf.zalando.org/last-handled-configuration", "other.io/note"]),
    st.text(max_size=4), max_size=3,
)  # fmt: skip
FIELDS = st.sampled_from(
    [("spec", "deletionPolicy"), ("status", "phase"), ("metadata", "labels"), "spec.cluster", "status.kopf"]
)


@st.composite
def bodies(draw: st.DrawFn) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": "t",
        "namespace": "ns",
        "uid": "u",
        "generation": draw(st.integers(1, 3)),
    }
    if draw(st.booleans()):
        metadata["labels"] = draw(st.dictionaries(KEYS, st.text(max_size=3), max_size=2))
    if draw(st.booleans()):
        metadata["annotations"] = draw(ANNOTATIONS)
    if draw(st.booleans()):
        metadata["managedFields"] = [{"manager": "kubectl", "fieldsV1": draw(VALUES)}]
    body: dict[str, Any] = {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": metadata,
                            "spec": draw(st.dictionaries(KEYS, VALUES, max_size=4))}  # fmt: skip
    if draw(st.booleans()):
        body["status"] = {"phase": draw(VALUES), "kopf": {"last-handled-configuration": draw(VALUES)}}
    return body


def _kopfs_essence(body: dict[str, Any], fields: list[Any]) -> dict[str, Any]:
    """kopf's status diff-base of the whole body, then the metadata dropped and the pause annotation kept, as the
    storage promises."""
    essence = cast(dict[str, Any], kopf.StatusDiffBaseStorage(name="kopf").build(body=kopf.Body(body),
                                                                                 extra_fields=fields))  # fmt: skip
    annotations = (essence.pop("metadata", None) or {}).get("annotations") or {}
    if PAUSED_ANNOTATION in annotations:
        essence["metadata"] = {"annotations": {PAUSED_ANNOTATION: annotations[PAUSED_ANNOTATION]}}
    return essence


@given(body=bodies(), fields=st.lists(FIELDS, max_size=2))
def test_the_essence_equals_kopfs_build_of_the_whole_body(body: dict[str, Any], fields: list[Any]) -> None:
    built = SpecDiffBaseStorage(name="kopf").build(body=kopf.Body(body), extra_fields=fields)
    assert built == _kopfs_essence(body, fields)


def test_the_essence_is_a_copy_and_leaves_out_what_never_changes_the_work() -> None:
    body = {
        "apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster",
        "metadata": {"name": "t", "uid": "u", "labels": {"team": "a"}, "managedFields": [{"manager": "m"}],
                     "annotations": {PAUSED_ANNOTATION: "true", "team": "a"}},
        "spec": {"cluster": "main", "config": {"retention.ms": 1}},
        "status": {"kopf": {"progress": {}}, "conditions": []},
    }  # fmt: skip
    built = cast(dict[str, Any], SpecDiffBaseStorage(name="kopf").build(body=kopf.Body(body)))
    assert built == {"spec": {"cluster": "main", "config": {"retention.ms": 1}},
                     "metadata": {"annotations": {PAUSED_ANNOTATION: "true"}}}  # fmt: skip
    built["spec"]["config"]["retention.ms"] = 2
    assert body["spec"]["config"]["retention.ms"] == 1  # type: ignore[index]


def test_a_kafkatopic_has_no_diff_base_but_the_deletion_policy_its_delete_handler_filters_on() -> None:
    storage = SpecDiffBaseStorage(name="kopf")
    body = kopf.Body({"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic",
                      "metadata": {"name": "t", "annotations": {PAUSED_ANNOTATION: "true"}},
                      "spec": {"cluster": "main", "deletionPolicy": "Delete"},
                      "status": {"kopf": {"last-handled-configuration": '{"spec": {}}'}}})  # fmt: skip
    assert storage.build(body=body) == {"spec": {"deletionPolicy": "Delete"}}
    assert storage.fetch(body=body) is None  # an older version's record is not read
    patch = kopf.Patch()
    storage.store(body=body, patch=patch, essence=storage.build(body=body))
    assert dict(patch) == {}, "nothing written for a KafkaTopic"
    retained = kopf.Body({"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": {"name": "t"},
                          "spec": {"cluster": "main"}})  # fmt: skip
    assert storage.build(body=retained) == {}
