"""The Helm chart, through Helm's own Go library (helm-python-sdk): lint --strict is clean, every rendering with
default and non-default values validates, values.schema.json refuses bad values, and the CRDs' CEL rules refuse a
partition decrease and a rename of the example topics."""

from __future__ import annotations

import copy
from typing import Any

import helm_python as helm
import pytest
import yaml
from validation import CHART, ROOT, crd_schema, documents, problems, rendered_documents

from topic_operator.crd.cel_rules import CelRules
from topic_operator.k8s.settings import environment_variables
from topic_operator.model import ReassignmentPolicy

NON_DEFAULT: dict[str, Any] = {
    "image": {"repository": "registry.example.com/kto", "tag": "1.2.3", "pullPolicy": "Always"},
    "replicaCount": 2,
    "watchNamespaces": ["team-a", "team-b"],
    "resyncInterval": 60,
    "revertDrift": False,
    "batching": {"linger": 1.5, "maxBatchSize": 100, "queueSize": 50, "queueWait": 2},
    "logLevel": "debug",
    "logFormat": "plain",
    "metrics": {
        "port": 9100,
        "service": {"enabled": True, "type": "ClusterIP", "annotations": {"a": "b"}},
        "prometheusRule": {"enabled": True, "labels": {"release": "prometheus"}},
        "grafanaDashboard": {
            "enabled": True,
            "annotations": {"grafana_folder": "Kafka"},
            "namespace": "monitoring",
        },
    },
    "serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"release": "prometheus"}},
    "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [{"key": "dedicated", "operator": "Exists"}],
    "clusters": [
        {
            "name": "main",
            "namespace": "team-a",
            "zookeeper": {
                "connect": "zk-0.zk:2181,zk-1.zk:2181/kafka",
                "tls": {"secretName": "zk-tls"},
                "auth": {"type": "SASL", "secretName": "zk-creds"},
            },
            "kafkaVersion": "3.6",
            "allowDelete": True,
            "allowedTopicPrefixes": ["orders", "payments."],
            "reassignment": {"enabled": True, "throttleBytesPerSecond": 10485760},
        },
        {"name": "legacy", "zookeeper": {"connect": "old-zk:2181"}},
    ],
}


def test_lint_strict_is_clean() -> None:
    for values in (None, NON_DEFAULT):
        report = helm.lint(CHART, values, strict=True)
        assert report["errors"] == []
        assert [m for m in report["messages"] if m["severity"] >= 2] == []


@pytest.mark.parametrize("values", [None, NON_DEFAULT], ids=["default", "non-default"])
def test_every_rendered_document_validates(values: dict[str, Any] | None) -> None:
    docs = rendered_documents(values)
    kinds = sorted(d["kind"] for d in docs)
    assert "Deployment" in kinds
    for doc in docs:
        assert problems(doc) == [], (doc["kind"], doc["metadata"].get("name"))
        assert doc["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert doc["metadata"]["labels"]["app.kubernetes.io/instance"] == "kto"


def test_default_values_install_cluster_wide_without_extras() -> None:
    kinds = sorted(d["kind"] for d in rendered_documents())
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "Role",  # the leader Lease's, in the release's namespace
        "RoleBinding",
        "Service",
        "ServiceAccount",
    ]


def test_non_default_values_reach_the_objects() -> None:
    docs = rendered_documents(NON_DEFAULT)
    kinds = sorted(d["kind"] for d in docs)
    assert kinds.count("Role") == 3  # one per watched namespace, and the leader Lease's
    assert kinds.count("RoleBinding") == 3
    assert "ClusterRole" not in kinds
    assert "ServiceMonitor" in kinds
    assert "PrometheusRule" in kinds
    dashboard = next(d for d in docs if d["kind"] == "ConfigMap")
    assert (dashboard["metadata"]["namespace"], dashboard["metadata"]["labels"]["grafana_dashboard"]) == (
        "monitoring",
        "1",
    )
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "KafkaCluster"] == ["main", "legacy"]
    legacy = next(d for d in docs if d["kind"] == "KafkaCluster" and d["metadata"]["name"] == "legacy")
    assert legacy["metadata"]["namespace"] == "kafka-topic-operator"
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert set(env) <= set(environment_variables().values())
    assert env["KTO_WATCH_NAMESPACES"] == "team-a,team-b"
    assert (env["KTO_DRIFT_INTERVAL"], env["KTO_REVERT_DRIFT"], env["KTO_QUEUE_SIZE"]) == (
        "60",
        "false",
        "50",
    )
    assert (env["KTO_LOG_LEVEL"], env["KTO_LOG_FORMAT"], env["KTO_METRICS_PORT"]) == (
        "debug",
        "plain",
        "9100",
    )
    assert container["image"] == "registry.example.com/kto:1.2.3"
    assert deployment["spec"]["replicas"] == 2
    roles = [r for r in docs if r["kind"] == "Role"]
    (lease,) = [r for r in roles if r["metadata"]["name"] == "kto-kafka-topic-operator-leader-election"]
    watched = [r for r in roles if r is not lease]
    assert {r["metadata"]["namespace"] for r in watched} == {"team-a", "team-b"}
    assert lease["metadata"]["namespace"] == "kafka-topic-operator"  # the release's own namespace only
    assert lease["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]}
    ]


def test_the_settings_env_parse_from_the_rendered_deployment() -> None:
    """What the chart sets, the operator accepts: the rendered environment builds valid settings."""
    from topic_operator.k8s.settings import settings_from_env

    for values in (None, NON_DEFAULT):
        deployment = next(d for d in rendered_documents(values) if d["kind"] == "Deployment")
        env = {e["name"]: e["value"] for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]
               if "value" in e}  # fmt: skip
        settings_from_env(env)


def _one_cluster(**fields: Any) -> dict[str, Any]:
    return {"clusters": [{"name": "x", "zookeeper": {"connect": "zk:2181"}, **fields}]}


@pytest.mark.parametrize(
    "bad",
    [
        {"logLevel": "loud"},
        {"batching": {"queueSize": 0}},
        {"watchNamespaces": ["Not_A_Namespace"]},
        {"clusters": [{"name": "x"}]},
        {"clusters": [{"name": "x", "zookeeper": {"connect": "zk:2181"}, "kafkaVersion": "4.0"}]},
        _one_cluster(reassignment={"enabled": "yes"}),
        _one_cluster(reassignment={"throttleBytesPerSecond": 0}),
        _one_cluster(reassignment={"throttleBytesPerSecond": "fast"}),
        _one_cluster(reassignment={"throttle": 1}),
        {"unknownKey": True},
        {"metrics": {"prometheusRule": {"enabled": "yes"}}},
        {"metrics": {"grafanaDashboard": {"labels": {"grafana_dashboard": 1}}}},
        {"metrics": {"grafanaDashboard": {"namespace": "Not_A_Namespace"}}},
    ],
)
def test_values_schema_refuses_bad_values(bad: dict[str, Any]) -> None:
    with helm.Chart.load(CHART) as chart, pytest.raises(helm.HelmError):
        chart.validate_schema(chart.merge_values(bad))


def test_chart_crds_are_the_repositorys() -> None:
    with helm.Chart.load(CHART) as chart:
        crds = {c["filename"].rsplit("/", 1)[-1]: c["data"] for c in chart.crds}
    for name in ("kafkaclusters.kto.dev.yaml", "kafkatopics.kto.dev.yaml"):
        assert crds[name] == (ROOT / "crds" / name).read_text()


def example_topics() -> list[dict[str, Any]]:
    docs = documents(p.read_text() for p in sorted((ROOT / "manifests" / "examples").glob("*.yaml")))
    return [d for d in docs if d["apiVersion"] == "kto.dev/v1alpha1" and d["kind"] == "KafkaTopic"]


def test_cel_rules_refuse_a_decrease_and_a_rename_of_every_example_topic() -> None:
    rules = CelRules(crd_schema("KafkaTopic"))
    topics = example_topics()
    assert topics
    for old in topics:
        assert rules.check(old, old) == []
        decreased = copy.deepcopy(old)
        decreased["spec"]["partitions"] = old["spec"]["partitions"] - 1
        decreased["spec"].pop("replicaAssignment", None)
        assert [f.field_path for f in rules.check(decreased, old)] == ["spec.partitions"]
        renamed = copy.deepcopy(old)
        renamed["spec"]["topicName"] = old["spec"].get("topicName", old["metadata"]["name"]) + "-renamed"
        assert [f.field_path for f in rules.check(renamed, old)] == ["spec.topicName"]


def test_rendered_clusters_parse_as_the_operator_reads_them() -> None:
    from topic_operator.manifests.loader import load_objects

    clusters = [d for d in rendered_documents(NON_DEFAULT) if d["kind"] == "KafkaCluster"]
    loaded = load_objects(clusters)
    assert loaded.errors == ()
    assert [c.name for c in loaded.clusters] == ["main", "legacy"]
    assert [c.reassignment for c in loaded.clusters] == [
        ReassignmentPolicy(True, 10485760),
        ReassignmentPolicy(),
    ]
    main, legacy = clusters
    assert main["spec"]["reassignment"] == {"enabled": True, "throttleBytesPerSecond": 10485760}
    assert "reassignment" not in legacy["spec"]
    assert yaml.safe_dump(clusters)
