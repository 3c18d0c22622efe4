"""Messages about manifests name the real cause: why no cluster could be chosen, which field is wrong (the kind,
not the version), how many files were read, and no invented rule failure. These stop before any ZooKeeper is
contacted, so they run without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from topic_operator.cli.main import main
from topic_operator.manifests.loader import load_manifests

CLUSTER = "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {{name: {name}{namespace}}}\n" \
    "spec: {{zookeeper: {{connect: '127.0.0.1:1/kafka'}}}}\n"  # fmt: skip
TOPIC = (
    "apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {{name: {name}}}\n"
    "spec: {{cluster: {cluster}, partitions: 1, replicas: 1{extra}}}\n"
)


def cluster(name: str, namespace: str = "") -> str:
    return CLUSTER.format(name=name, namespace=f", namespace: {namespace}" if namespace else "")


def topic(name: str, cluster: str = "local", extra: str = "") -> str:
    return TOPIC.format(name=name, cluster=cluster, extra=extra)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def kto(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_a_missing_file_is_named_before_the_cluster_question(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = kto(capsys, command, "-f", "nowhere.yaml", "--yes" if command == "apply" else "-v")
    assert code == 1
    assert err == [
        "error: nowhere.yaml: no such file or directory",
        "kto "
        + command
        + ": the manifests name no cluster (see the errors above; FAILED: 1 error in 0 files, "
        "0 documents (0 clusters and 0 topics valid))",
    ]


def test_a_cluster_declared_twice_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    Path("c.yaml").write_text(cluster("local") + "---\n" + cluster("local", "other"))
    code, err = kto(capsys, "plan", "-f", "c.yaml")
    assert code == 1
    assert err[0] == (
        "error: c.yaml#1 KafkaCluster local: metadata.name = 'local': KafkaCluster local is declared more than "
        "once: at c.yaml#1 and c.yaml#2"
    )
    assert err[-1].startswith("kto plan: the manifests name no cluster (see the errors above;")


def test_topics_of_a_cluster_declared_twice_say_so_when_no_zookeeper_is_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("c.yaml").write_text(
        cluster("local") + "---\n" + cluster("local", "other") + "---\n" + topic("orders")
    )
    code, err = kto(capsys, "plan", "-f", "c.yaml")
    assert code == 1
    assert err[-1] == (
        "kto plan: no ZooKeeper and no brokers for cluster local: its KafkaCluster is not valid (see the errors "
        "above); pass --zookeeper or --bootstrap-server, or declare its KafkaCluster"
    )


def test_several_clusters_and_an_unknown_cluster_are_told_apart(capsys: pytest.CaptureFixture[str]) -> None:
    Path("t.yaml").write_text(topic("orders", "eu") + "---\n" + topic("orders", "us"))
    assert kto(capsys, "plan", "-f", "t.yaml") == (
        1,
        ["kto plan: the manifests name several clusters (eu, us): choose one with --cluster"],
    )
    code, err = kto(capsys, "plan", "-f", "t.yaml", "--cluster", "asia")
    assert code == 1
    assert err == [
        "kto plan: the manifests declare nothing valid for cluster asia (they name eu, us; OK: 1 file, 2 "
        "documents: 0 clusters and 2 topics valid, 2 warnings)"
    ]


def test_empty_manifests_say_what_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    Path("cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    code, err = kto(capsys, "plan", "-f", "cm.yaml")
    assert code == 1
    assert err == [
        "kto plan: the manifests name no cluster (no KafkaCluster, and no KafkaTopic naming one; OK: 1 file, 1 "
        "document: 0 clusters and 0 topics valid, 1 warning)"
    ]


def test_an_unknown_kind_is_blamed_on_the_kind_and_a_wrong_version_on_the_version() -> None:
    Path("k.yaml").write_text(
        "apiVersion: kto.dev/v1alpha1\nkind: Kafkatopic\nmetadata: {name: a}\n---\n"
        "apiVersion: kto.dev/v1\nkind: KafkaTopic\nmetadata: {name: b}\n---\n"
        "apiVersion: kto.dev\nkind: KafkaTopic\nmetadata: {name: c}\n"
    )
    assert [str(e) for e in load_manifests(["k.yaml"]).errors] == [
        "k.yaml#1 Kafkatopic a: kind = 'Kafkatopic': kto.dev serves the kinds KafkaTopic and KafkaCluster only "
        "(kinds are case-sensitive)",
        "k.yaml#2 KafkaTopic b: apiVersion = 'kto.dev/v1': kto.dev serves KafkaTopic and KafkaCluster in "
        "kto.dev/v1alpha1",
        "k.yaml#3 KafkaTopic c: apiVersion = 'kto.dev': kto.dev serves KafkaTopic and KafkaCluster in "
        "kto.dev/v1alpha1",
    ]


def test_every_file_opened_is_counted_even_one_that_is_not_utf8() -> None:
    Path("good.yaml").write_text(topic("orders"))
    Path("latin1.yaml").write_bytes("# caf\xe9\n".encode("latin-1") + topic("clicks").encode())
    manifests = load_manifests(["good.yaml", "latin1.yaml"])
    assert [str(e) for e in manifests.errors] == [
        "latin1.yaml: not UTF-8 text: byte 0xe9 at offset 5 (invalid continuation byte)"
    ]
    assert manifests.summary().startswith("FAILED: 1 error in 2 files, 1 document")


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        (", config: {retention.ms: !!binary aGVsbG8=}", "spec.config.retention.ms"),
        (", config: {retention.ms: 99999999999999999999999999}", "spec.config.retention.ms"),
        (", config: {x: {y: [1, 2.5, null]}}", "spec.config.x"),
    ],
)
def test_an_unusual_config_value_blames_only_that_value(extra: str, field: str) -> None:
    """cel-python converted the whole spec for the replicaAssignment rules, so an odd config value made them
    fail to evaluate on a topic without a replicaAssignment."""
    Path("t.yaml").write_text(topic("orders", extra=extra))
    errors = load_manifests(["t.yaml"], check_cel=True).errors
    assert [e.field_path for e in errors] == [field]


def test_a_missing_or_null_partition_count_is_only_missing() -> None:
    Path("t.yaml").write_text(
        topic("orders").replace("partitions: 1, ", "")
        + "---\n"
        + topic("clicks").replace("partitions: 1", "partitions: null")
        + "---\n"
        + topic("views").replace("partitions: 1", "partitions: null")[:-2]
        + ", replicaAssignment: [[0]]}\n"
    )
    manifests = load_manifests(["t.yaml"], check_cel=True)
    assert manifests.topics == ()
    assert [str(e) for e in manifests.errors] == [
        "t.yaml#1 KafkaTopic orders: spec.partitions: required field is missing",
        "t.yaml#2 KafkaTopic clicks: spec.partitions: required field is missing",
        "t.yaml#3 KafkaTopic views: spec.partitions: required field is missing",
    ]
