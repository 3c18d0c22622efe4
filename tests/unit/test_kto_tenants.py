"""``kto`` holds the KafkaTopics of other namespaces to their KafkaCluster's grants, as the operator does.

What is proven, and why it matters (a platform team runs ``kto validate`` and ``kto plan`` in CI, before anything
reaches the cluster, and must see the same refusals the operator would give):
- ``kto validate`` passes a KafkaTopic of ``payments`` the KafkaCluster ``kafka/main`` grants, and refuses, each in
  one line naming the file, the field and the rule: a name outside the grant's prefixes, partitions above the
  grant's limit, a topic over the namespace's quota (counted over the documents), and a KafkaTopic of a namespace
  no entry grants; a ``v1`` Namespace among the documents gives its labels to a selector grant.
- ``kto plan --snapshot`` (no ZooKeeper) judges the plan against the grants with usage counted in the snapshot:
  an over-quota creation and an over-limit change are rejected without actions, while a grandfathered topic,
  already beyond the limit, stays unchanged and unrefused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.cli import kto
from harness.states import cluster_state, existing
from topic_operator.snapshot_rows import rows_from_cluster


def kafka_cluster(quota_topics: int = 2) -> str:
    """The platform's KafkaCluster ``main`` in namespace ``kafka``: ``payments`` by name, analytics by label."""
    return f"""\
apiVersion: kto.dev/v1alpha1
kind: KafkaCluster
metadata: {{name: main, namespace: kafka}}
spec:
  zookeeper: {{connect: '127.0.0.1:1/unused'}}
  tenants:
    - namespaces: [payments]
      topicPrefixes: [payments.]
      quota: {{topics: {quota_topics}}}
      limits:
        max: {{partitions: 12}}
    - namespaceSelector:
        matchLabels: {{kto.dev/tenant: analytics}}
      topicPrefixes: [analytics.]
"""


def kafka_topic(
    name: str, topic: str, partitions: int = 6, *, namespace: str = "payments", cluster: str = "kafka/main"
) -> str:
    return f"""\
apiVersion: kto.dev/v1alpha1
kind: KafkaTopic
metadata: {{name: {name}, namespace: {namespace}}}
spec: {{cluster: {cluster}, topicName: {topic}, partitions: {partitions}, replicas: 3}}
"""


def namespace(name: str, labels: Mapping[str, str]) -> str:
    """A ``v1`` Namespace document, as ``kubectl get namespace -o yaml`` gives it (trimmed)."""
    shown = ", ".join(f"{key}: {value}" for key, value in labels.items())
    return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}, labels: {{{shown}}}}}\n"


GOOD = kafka_topic("transactions", "payments.transactions")


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    """A directory holding the KafkaCluster (first, by file name) and the good KafkaTopic of ``payments``."""
    directory = tmp_path / "manifests"
    directory.mkdir()
    (directory / "00-kafkacluster.yaml").write_text(kafka_cluster())
    (directory / "10-transactions.yaml").write_text(GOOD)
    return directory


def validate(capsys: pytest.CaptureFixture[str], directory: Path) -> tuple[int, list[str], list[str]]:
    """Exit code, the error lines and the other lines of ``kto validate DIRECTORY``."""
    code, out, err = kto(capsys, "validate", str(directory))
    assert err == ""
    lines = out.splitlines()
    errors = [line for line in lines if line.startswith(str(directory))]
    return code, errors, [line for line in lines if line not in errors]


def test_a_granted_topic_of_another_namespace_validates(
    capsys: pytest.CaptureFixture[str], manifests: Path
) -> None:
    code, errors, rest = validate(capsys, manifests)
    assert (code, errors) == (0, [])
    assert rest == ["OK: 2 files, 2 documents: 1 cluster and 1 topic valid"]


def test_the_home_namespaces_topics_are_not_held_to_any_grant(
    capsys: pytest.CaptureFixture[str], manifests: Path
) -> None:
    (manifests / "20-platform.yaml").write_text(
        kafka_topic("internal", "platform.anything", 100, namespace="kafka", cluster="main")
    )
    code, errors, _ = validate(capsys, manifests)
    assert (code, errors) == (0, [])


@pytest.mark.parametrize(
    ("document", "field", "rule"),
    [
        (
            kafka_topic("orders", "orders"),
            "spec.topicName = 'orders'",
            "Not authorized to access topics: [orders]: namespace payments may use topic names starting with "
            "payments. only (KafkaCluster kafka/main, spec.tenants[0].topicPrefixes)",
        ),
        (
            kafka_topic("big", "payments.big", 24),
            "spec.partitions = 24",
            "Topic payments.big breaks the limits KafkaCluster kafka/main sets for its namespace: partitions 24 is "
            "above the most allowed, 12 (spec.tenants[0].limits.max.partitions)",
        ),
        (
            kafka_topic("stranger", "payments.stranger", namespace="other"),
            "spec.cluster = 'kafka/main'",
            "Not authorized to access topics: [payments.stranger]: KafkaCluster kafka/main does not grant "
            "namespace other (spec.tenants: no entry lists it or selects its labels)",
        ),
    ],
    ids=["name-outside-the-prefix", "partitions-above-the-limit", "namespace-not-granted"],
)
def test_a_topic_the_grant_refuses_is_one_error_naming_file_field_and_rule(
    capsys: pytest.CaptureFixture[str], manifests: Path, document: str, field: str, rule: str
) -> None:
    (manifests / "20-refused.yaml").write_text(document)
    code, errors, rest = validate(capsys, manifests)
    assert code == 1
    [error] = errors
    assert error.startswith(f"{manifests / '20-refused.yaml'}#1 KafkaTopic ")
    assert f": {field}: {rule}" in error
    assert rest[-1].startswith("FAILED: 1 error in 3 files")


def test_the_topic_over_the_quota_is_the_one_error_naming_the_quota(
    capsys: pytest.CaptureFixture[str], manifests: Path
) -> None:
    (manifests / "20-second.yaml").write_text(kafka_topic("second", "payments.second"))
    code, errors, _ = validate(capsys, manifests)
    assert (code, errors) == (0, [])  # two topics: the quota exactly
    (manifests / "30-third.yaml").write_text(kafka_topic("third", "payments.third"))
    code, errors, _ = validate(capsys, manifests)
    assert code == 1
    assert errors == [
        f"{manifests / '30-third.yaml'}#1 KafkaTopic payments/third: spec.topicName: Topic payments.third would "
        "take namespace payments to 3 topics on KafkaCluster kafka/main, over its quota of 2 "
        "(spec.tenants[0].quota.topics), counted over the documents"
    ]


def test_a_refused_topic_does_not_count_toward_the_quota(
    capsys: pytest.CaptureFixture[str], manifests: Path
) -> None:
    (manifests / "20-big.yaml").write_text(kafka_topic("big", "payments.big", 24))
    (manifests / "30-second.yaml").write_text(kafka_topic("second", "payments.second"))
    code, errors, _ = validate(capsys, manifests)
    assert code == 1
    [error] = errors
    assert "20-big.yaml" in error
    assert "limits.max.partitions" in error


def test_a_namespace_document_gives_its_labels_to_a_selector_grant(
    capsys: pytest.CaptureFixture[str], manifests: Path
) -> None:
    (manifests / "20-clicks.yaml").write_text(
        kafka_topic("clicks", "analytics.clicks", namespace="clickstream")
    )
    code, errors, _ = validate(capsys, manifests)
    assert code == 1
    [error] = errors
    assert "spec.cluster = 'kafka/main'" in error
    assert "does not grant namespace clickstream" in error

    (manifests / "05-clickstream.yaml").write_text(namespace("clickstream", {"kto.dev/tenant": "analytics"}))
    code, errors, _ = validate(capsys, manifests)
    assert (code, errors) == (0, [])

    (manifests / "05-clickstream.yaml").write_text(namespace("clickstream", {"kto.dev/tenant": "billing"}))
    code, errors, _ = validate(capsys, manifests)
    assert code == 1
    assert "does not grant namespace clickstream" in errors[0]


def test_the_selector_grants_prefixes_hold_for_the_namespace_it_selects(
    capsys: pytest.CaptureFixture[str], manifests: Path
) -> None:
    (manifests / "05-clickstream.yaml").write_text(namespace("clickstream", {"kto.dev/tenant": "analytics"}))
    (manifests / "20-clicks.yaml").write_text(
        kafka_topic("clicks", "payments.clicks", namespace="clickstream")
    )
    code, errors, _ = validate(capsys, manifests)
    assert code == 1
    [error] = errors
    assert "spec.topicName = 'payments.clicks'" in error
    assert "analytics. only (KafkaCluster kafka/main, spec.tenants[1].topicPrefixes)" in error


@pytest.mark.parametrize("cluster", ["elsewhere/main", "main"], ids=["another-namespace", "bare-name"])
def test_a_cluster_reference_to_another_namespace_is_not_the_kafkaclusters(
    capsys: pytest.CaptureFixture[str], manifests: Path, cluster: str
) -> None:
    (manifests / "20-elsewhere.yaml").write_text(
        kafka_topic("elsewhere", "payments.elsewhere", cluster=cluster)
    )
    code, errors, _ = validate(capsys, manifests)
    assert code == 1
    [error] = errors
    assert f"spec.cluster = {cluster!r}" in error


# -- kto plan --snapshot ------------------------------------------------------------------------------------------


def replicas_on_six(partitions: int) -> dict[int, tuple[int, ...]]:
    return {p: tuple((p + r) % 6 for r in range(3)) for p in range(partitions)}


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    """``kto snapshot`` of cluster ``main``: ``payments.legacy`` with 24 partitions (above today's limit of 12:
    grandfathered) and ``payments.grow`` with 6. Both count toward the payments quota."""
    state = cluster_state(
        existing("payments.legacy", replicas_on_six(24)), existing("payments.grow", replicas_on_six(6))
    )
    path = tmp_path / "main.jsonl"
    rows = rows_from_cluster("main", state, "2025-01-01T00:00:00+00:00")
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def plan_json(
    capsys: pytest.CaptureFixture[str], directory: Path, snapshot: Path
) -> tuple[int, dict[str, Any], str]:
    code, out, err = kto(capsys, "plan", "-f", str(directory), "--snapshot", str(snapshot), "-o", "json")
    by_topic = {t["topic"]: t for t in json.loads(out)["topics"]}
    return code, by_topic, err


def test_plan_refuses_an_over_quota_creation_and_an_over_limit_change_and_leaves_the_grandfathered_topic(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, snapshot: Path
) -> None:
    directory = tmp_path / "plan"
    directory.mkdir()
    (directory / "00-kafkacluster.yaml").write_text(kafka_cluster(quota_topics=3))
    (directory / "10-legacy.yaml").write_text(kafka_topic("legacy", "payments.legacy", 24))
    (directory / "20-grow.yaml").write_text(kafka_topic("grow", "payments.grow", 24))
    (directory / "30-new.yaml").write_text(kafka_topic("new", "payments.new", 3))
    (directory / "40-newer.yaml").write_text(kafka_topic("newer", "payments.newer", 3))
    code, topics, err = plan_json(capsys, directory, snapshot)
    assert (code, err) == (1, "")

    legacy = topics["payments.legacy"]
    assert (legacy["status"], legacy["actions"], legacy["rejections"]) == ("unchanged", [], [])

    created = topics["payments.new"]  # the third topic: the quota exactly
    assert (created["status"], created["rejections"]) == ("create", [])
    assert [a["type"] for a in created["actions"]] == ["create"]

    over_quota = topics["payments.newer"]
    assert (over_quota["status"], over_quota["actions"]) == ("rejected", [])
    [rejection] = over_quota["rejections"]
    assert rejection["kafka_class"] == "org.apache.kafka.common.errors.PolicyViolationException"
    assert rejection["message"] == (
        "Topic payments.newer would take namespace payments to 4 topics on KafkaCluster kafka/main, over its quota "
        "of 3 (spec.tenants[0].quota.topics)"
    )

    over_limit = topics["payments.grow"]
    assert (over_limit["status"], over_limit["actions"]) == ("rejected", [])
    assert over_limit["changes"] == [{"field": "partitions", "before": 6, "after": 24}]
    [rejection] = over_limit["rejections"]
    assert rejection["field"] == "partitions"
    assert (
        "partitions 24 is above the most allowed, 12 (spec.tenants[0].limits.max.partitions)"
        in rejection["message"]
    )


def test_plan_counts_the_snapshots_topics_so_a_quota_already_used_refuses_the_creation(
    capsys: pytest.CaptureFixture[str], manifests: Path, snapshot: Path
) -> None:
    (manifests / "20-legacy.yaml").write_text(kafka_topic("legacy", "payments.legacy", 24))
    (manifests / "30-grow.yaml").write_text(kafka_topic("grow", "payments.grow", 6))
    code, topics, _ = plan_json(capsys, manifests, snapshot)  # quota 2, both used in Kafka
    assert code == 1
    assert {name: t["status"] for name, t in topics.items()} == {
        "payments.grow": "unchanged",
        "payments.legacy": "unchanged",
        "payments.transactions": "rejected",
    }
    assert "to 3 topics" in topics["payments.transactions"]["rejections"][0]["message"]


def test_plan_leaves_out_a_topic_of_a_namespace_not_granted_with_one_error(
    capsys: pytest.CaptureFixture[str], manifests: Path, snapshot: Path
) -> None:
    (manifests / "20-stranger.yaml").write_text(
        kafka_topic("stranger", "payments.stranger", namespace="other")
    )
    code, topics, err = plan_json(capsys, manifests, snapshot)
    assert code == 1
    assert sorted(topics) == ["payments.transactions"]
    assert topics["payments.transactions"]["status"] == "create"
    [line] = err.splitlines()
    assert line.startswith(
        f"error: {manifests / '20-stranger.yaml'}#1 KafkaTopic other/stranger: spec.cluster"
    )
    assert "does not grant namespace other" in line


def test_plan_of_granted_topics_within_every_rule_has_changes_and_no_rejection(
    capsys: pytest.CaptureFixture[str], manifests: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.jsonl"
    rows = rows_from_cluster("main", cluster_state(), "2025-01-01T00:00:00+00:00")
    empty.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, topics, err = plan_json(capsys, manifests, empty)
    assert (code, err) == (2, "")
    assert topics["payments.transactions"]["status"] == "create"
