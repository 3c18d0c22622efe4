"""``schema.is_valid`` remembers its verdicts by document shape (the document without what is inside its
``metadata``, which the CRDs' schemas do not look into): over any sequence of documents, each verdict equals the
one the schema's validator gives that document alone, whatever documents came before it."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topic_operator.manifests import schema
from topic_operator.manifests.schema import _fast_validator, is_valid


def fresh_verdict(kind: str, body: dict[str, Any]) -> bool:
    try:
        _fast_validator(kind)({k: v for k, v in body.items() if k != "status"})
    except schema.fastjsonschema.JsonSchemaException:
        return False
    return True


LOOK_ALIKES = st.sampled_from(
    [
        None,
        1,
        1.0,
        True,
        0,
        False,
        0.0,
        "1",
        float("nan"),
        float("inf"),
        2**64,
        -(2**63),
        "null",
        (1,),
        [1],
        {1},
    ]
)
VALUES = st.recursive(
    st.one_of(LOOK_ALIKES, st.integers(-3, 300), st.text(max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 2)), inner, max_size=3),
    ),
    max_leaves=6,
)
CONFIGS = st.dictionaries(st.sampled_from(["retention.ms", "cleanup.policy", "x"]), VALUES, max_size=2)
SPECS = st.fixed_dictionaries(
    {},
    optional={
        "cluster": st.one_of(st.sampled_from(["main", "bad name", "ns/main"]), VALUES),
        "partitions": st.one_of(st.integers(-1, 3), VALUES),
        "replicas": st.one_of(st.integers(-1, 3), VALUES),
        "config": st.one_of(CONFIGS, VALUES),
        "mode": st.one_of(st.sampled_from(["Apply", "Plan", "apply"]), VALUES),
        "replicaAssignment": st.one_of(st.lists(st.lists(st.integers(0, 3), max_size=3), max_size=2), VALUES),
        "unknown": VALUES,
    },
)
METADATA = st.one_of(
    st.fixed_dictionaries({"name": st.text(max_size=5)}, optional={"labels": VALUES}), VALUES
)
BODIES = st.fixed_dictionaries(
    {"apiVersion": st.just("kto.dev/v1alpha1"), "kind": st.just("KafkaTopic")},
    optional={"metadata": METADATA, "spec": st.one_of(SPECS, VALUES), "status": VALUES, "extra": VALUES},
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(BODIES, min_size=1, max_size=12))
def test_every_remembered_verdict_is_the_validators_own(bodies: list[dict[str, Any]]) -> None:
    schema._verdicts.clear()
    for body in [*bodies, *bodies]:  # the second time round, from what was remembered
        assert is_valid("KafkaTopic", body) is fresh_verdict("KafkaTopic", body), body


def test_documents_that_differ_only_inside_metadata_share_a_verdict_and_others_do_not() -> None:
    schema._verdicts.clear()
    spec = {"cluster": "main", "partitions": 3, "replicas": 1}
    for name in ("a", "b", "c"):
        assert is_valid(
            "KafkaTopic",
            {
                "apiVersion": "kto.dev/v1alpha1",
                "kind": "KafkaTopic",
                "metadata": {"name": name},
                "spec": spec,
            },
        )
    assert len(schema._verdicts) == 1
    assert not is_valid(
        "KafkaTopic",
        {
            "apiVersion": "kto.dev/v1alpha1",
            "kind": "KafkaTopic",
            "metadata": {"name": "d"},
            "spec": {**spec, "partitions": 3.0},
        },
    )
    assert not is_valid(
        "KafkaTopic", {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": "d", "spec": spec}
    )
    assert len(schema._verdicts) == 2
