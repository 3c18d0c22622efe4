"""``kto convert``: manifests of any format kto reads become KafkaTopics of one format that read back as
the same topics; object names are always valid, unique and stable; bad input writes nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topic_operator.cli.main import main
from topic_operator.manifests.loader import load_manifests
from topic_operator.manifests.topic_documents import is_object_name, object_name, object_names
from topic_operator.model import TopicSpec

CLUSTER = "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {name: local}\nspec:\n" + (
    "  zookeeper: {connect: '127.0.0.1:2181/kafka'}\n  kafkaVersion: '3.6'\n"
)
TOPICCTL = """\
meta: {name: orders.v1, cluster: local, environment: prod, region: eu}
spec:
  partitions: 6
  replicationFactor: 3
  retentionMinutes: 100
  settings: {cleanup.policy: [compact, delete]}
  placement: {strategy: cross-rack}
---
meta: {name: static.t, cluster: local}
spec:
  partitions: 2
  replicationFactor: 2
  placement: {strategy: static, staticAssignments: [[1, 2], [2, 3]]}
"""
STRIMZI = """\
apiVersion: kafka.strimzi.io/v1beta1
kind: KafkaTopic
metadata: {name: payments, labels: {strimzi.io/cluster: local}}
spec: {topicName: Payments_V1, partitions: 3, replicas: 2, config: {retention.ms: 60000}}
"""

_topic_names = st.text(st.sampled_from("abcXYZ019._-"), min_size=1, max_size=40).filter(
    lambda n: n not in (".", "..")
)


@given(st.lists(st.tuples(st.sampled_from(["eu", "us"]), _topic_names), max_size=30))
def test_object_names_are_valid_unique_and_stable(pairs: list[tuple[str, str]]) -> None:
    names = object_names(pairs)
    assert set(names) == set(pairs)
    assert all(is_object_name(n) for n in names.values())
    assert len(set(names.values())) == len(names)
    assert object_names(reversed(pairs)) == names
    for (_, topic), name in names.items():
        if is_object_name(topic) and sum(t == topic for _, t in names) == 1:
            assert name == topic  # a name that is valid already is kept


def _specs(*paths: Path) -> list[TopicSpec]:
    loaded = load_manifests(list(paths))
    assert loaded.errors == ()
    return sorted((dataclasses.replace(t, source="") for t in loaded.topics), key=lambda t: t.name)


@pytest.mark.parametrize("target", ["kto", "strimzi"])
def test_converted_documents_read_back_as_the_same_topics(tmp_path: Path, target: str) -> None:
    source = tmp_path / "in"
    source.mkdir()
    (source / "cluster.yaml").write_text(CLUSTER)
    (source / "topicctl.yaml").write_text(TOPICCTL if target == "kto" else TOPICCTL.split("---\n")[0])
    (source / "strimzi.yaml").write_text(STRIMZI)
    assert main(["convert", "-f", str(source), "--to", target, "-o", str(tmp_path / "out")]) == 0
    written = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.yaml"))
    expected = ["local/orders.v1.yaml", "local/payments-v1-71ed02c8.yaml"]
    assert written == sorted([*expected, "local/static.t.yaml"] if target == "kto" else expected)
    assert _specs(source / "cluster.yaml", tmp_path / "out") == _specs(source)


def test_bad_input_and_what_strimzi_cannot_say_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "topics.yaml").write_text(
        TOPICCTL + "---\nmeta: {name: bad, cluster: local}\nspec: {partitions: 1}\n"
    )
    assert main(["convert", "-f", str(tmp_path / "topics.yaml"), "-o", str(tmp_path / "out")]) == 1
    assert (
        "topicctl topic bad: spec.placement: a topicctl topic needs placement.strategy"
        in capsys.readouterr().err
    )
    (tmp_path / "topics.yaml").write_text(TOPICCTL)
    assert (
        main(["convert", "-f", str(tmp_path / "topics.yaml"), "--to", "strimzi", "-o", str(tmp_path / "out")])
        == 1
    )
    assert "a Strimzi KafkaTopic has no replicaAssignment; convert it --to kto" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_cluster_name_that_is_no_object_name_is_refused_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cluster name becomes a folder of the output: one that could leave it is refused by the CRD's own rule
    (and would be renamed as an object name if it were not)."""
    (tmp_path / "t.yaml").write_text(
        "meta: {name: t, cluster: ../../escaped}\n"
        "spec: {partitions: 1, replicationFactor: 1, placement: {strategy: any}}\n"
    )
    assert main(["convert", "-f", str(tmp_path / "t.yaml"), "-o", str(tmp_path / "out")]) == 1
    assert "meta.cluster = '../../escaped': must be a KafkaCluster name" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert object_name("../../escaped") == f"escaped-{object_name('../../escaped')[-8:]}"
