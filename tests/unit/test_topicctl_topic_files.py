"""topicctl topic files are read as KafkaTopics: their meaning carried over as topicctl writes it to Kafka, and every
problem named in topicctl's own fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topic_operator.manifests.loader import load_manifests, load_objects
from topic_operator.model import TopicSpec

CLUSTER = "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {name: local}\nspec:\n" + (
    "  zookeeper: {connect: '127.0.0.1:2181/kafka'}\n  kafkaVersion: '3.6'\n"
)


def _load(tmp_path: Path, *documents: str) -> tuple[list[TopicSpec], list[str], list[str]]:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "topics.yaml").write_text("---\n".join(documents))
    loaded = load_manifests([tmp_path / "cluster.yaml", tmp_path / "topics.yaml"])
    prefix = f"{tmp_path}/"
    return (
        list(loaded.topics),
        [str(e).replace(prefix, "") for e in loaded.errors],
        [str(w).replace(prefix, "") for w in loaded.warnings],
    )


ORDERS = """\
meta:
  name: orders.v1
  cluster: local
  environment: prod
  region: eu-west-1
  description: the orders of the shop
  labels: {team: orders}
  consumers: [billing]
spec:
  partitions: 6
  replicationFactor: 3
  retentionMinutes: 100
  settings:
    cleanup.policy: [compact, delete]
    min.cleanable.dirty.ratio: 0.125
    unclean.leader.election.enable: false
    max.message.bytes: 1048588
    segment.ms: 3600000.0
    message.timestamp.type: LogAppendTime
  placement:
    strategy: cross-rack
    picker: randomized
  migration:
    throttleMB: 75
    partitionBatchSize: 2
"""

STATIC = """\
meta: {name: static.t, cluster: local}
spec:
  partitions: 2
  replicationFactor: 2
  placement:
    strategy: static
    staticAssignments: [[1, 2], [2, 3]]
"""


def test_a_topicctl_topic_reads_as_the_kafkatopic_topicctl_would_apply(tmp_path: Path) -> None:
    topics, errors, warnings = _load(tmp_path, ORDERS, STATIC)
    assert errors == []
    assert warnings == []
    assert [(t.cluster, t.name, t.partitions, t.replicas, t.replica_assignment) for t in topics] == [
        ("local", "orders.v1", 6, 3, None),
        ("local", "static.t", 2, 2, {0: (1, 2), 1: (2, 3)}),
    ]
    assert dict(topics[0].config) == {
        "retention.ms": "6000000",  # 100 minutes
        "cleanup.policy": "compact,delete",  # a list, joined as Kafka's list configs are
        "min.cleanable.dirty.ratio": "0.12",  # two decimals, an exact half to even (Go's FormatFloat)
        "unclean.leader.election.enable": "false",
        "max.message.bytes": "1048588",
        "segment.ms": "3600000",  # a whole number, written as one
        "message.timestamp.type": "LogAppendTime",
    }
    assert topics[0].source.endswith("topics.yaml#1")


@pytest.mark.parametrize(
    ("strategy", "what"),
    [
        ("in-rack", "keeps every replica of a partition in its leader's rack"),
        ("static-in-rack", "within a rack listed per partition"),
        ("balanced-leaders", "balances the leaders"),
    ],
)
def test_placements_kafka_cannot_express_are_refused_with_why(
    tmp_path: Path, strategy: str, what: str
) -> None:
    document = f"meta: {{name: t, cluster: local}}\nspec: {{partitions: 3, replicationFactor: 3, placement: {{strategy: {strategy}}}}}\n"
    topics, errors, _ = _load(tmp_path, document)
    assert topics == []
    assert len(errors) == 1
    assert errors[0].startswith(f"topics.yaml#1 topicctl topic t: spec.placement.strategy = '{strategy}': ")
    assert what in errors[0]
    assert "use any or cross-rack" in errors[0]


def test_every_problem_names_the_topicctl_field(tmp_path: Path) -> None:
    bad = """\
meta: {name: bad, cluster: local, owner: me}
spec:
  partitions: 0
  replicationFactor: 3
  retentionMinutes: 5
  settings:
    retention.ms: 100
    segment.bytes: {nested: 1}
    compression.type: brotli
  placement: {strategy: any, picker: best}
"""
    nameless = """\
meta: {cluster: local}
spec:
  partitions: 2
  replicationFactor: 2
  placement: {strategy: static, staticAssignments: [[1, 2], [2]]}
"""
    overflow = "meta: {name: long.retention, cluster: local}\nspec: {partitions: 1, replicationFactor: 0, retentionMinutes: 999999999999999, placement: {strategy: any}}\n"
    topics, errors, _ = _load(tmp_path, bad, nameless, overflow)
    assert topics == []
    fields = [e.split(": ", 2)[1].split(" = ")[0] for e in errors]
    assert fields == [
        "meta.owner",
        "spec.partitions",
        "spec.placement.picker",
        "spec.retentionMinutes",
        "spec.settings.compression.type",
        "spec.settings.segment.bytes",
        "meta.name",
        "spec.placement.staticAssignments",
        "spec.replicationFactor",
        "spec.retentionMinutes",
    ]
    assert "topicctl refuses it too" in errors[3]
    assert "String must be one of" in errors[4]  # Kafka's own words for a bad value
    assert "retention.ms" in errors[-1]  # 999999999999999 minutes is past a long of milliseconds


def test_topicctl_cluster_and_other_files_are_ignored_with_a_warning(tmp_path: Path) -> None:
    cluster_file = (
        "meta: {name: local, environment: prod}\nspec: {bootstrapAddrs: ['b:9092'], zkAddrs: ['z:2181']}\n"
    )
    topics, errors, warnings = _load(tmp_path, cluster_file, STATIC)
    assert errors == []
    assert [t.name for t in topics] == ["static.t"]
    assert warnings == [
        "topics.yaml#1: not a Kubernetes object (no apiVersion or kind) nor a topicctl topic file: ignored"
    ]


def test_a_topicctl_document_inside_a_list_is_not_taken_for_one(tmp_path: Path) -> None:
    """Only a whole YAML document is a topicctl file; an item of a Kubernetes List without apiVersion is not."""
    listed = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [{"meta": {"name": "t"}, "spec": {"partitions": 1}}],
    }
    loaded = load_objects([listed])
    assert loaded.topics == ()
    assert loaded.errors == ()


_json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=8)
)
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
_field_values = st.one_of(_json, st.sampled_from([3, 1, "any", "static", [[1, 2]], {"strategy": "static"}]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    meta=st.dictionaries(st.sampled_from(["name", "cluster", "region", "x"]), _field_values, max_size=4),
    spec=st.dictionaries(
        st.sampled_from(
            ["partitions", "replicationFactor", "retentionMinutes", "settings", "placement", "y"]
        ),
        _field_values,
        max_size=6,
    ),
)
def test_any_topicctl_shaped_document_reads_without_a_crash(
    meta: dict[str, Any], spec: dict[str, Any]
) -> None:
    """Hostile input: whatever the values, a topic or errors, each one line, never an exception."""
    spec.setdefault("partitions", 1)
    loaded = load_objects([{"meta": meta, "spec": spec}])
    for error in loaded.errors:
        assert "\n" not in str(error)
        assert str(error).startswith("objects#1 topicctl topic")
    assert len(loaded.topics) + (1 if loaded.errors else 0) == 1
