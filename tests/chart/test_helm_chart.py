"""The Helm chart, through Helm's own Go library (helm-python-sdk): lint --strict is clean, every rendering with
default and non-default values validates, values.schema.json refuses bad values, and the CRDs' CEL rules refuse a
partition decrease and a rename of the example topics."""

from __future__ import annotations

import copy
from typing import Any

import helm_python as helm
import pytest
import yaml
from validation import CHART, ROOT, crd_schema, documents, problems, render, rendered_documents

from topic_operator.crd.cel_rules import CelRules
from topic_operator.k8s.process.settings import environment_variables
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
        {
            "name": "events",
            "namespace": "kafka",
            "bootstrapServers": "kafka-0.kafka:9093,kafka-1.kafka:9093",
            "tls": {"secretName": "kafka-ca"},
            "sasl": {"mechanism": "SCRAM-SHA-512", "secretName": "kto-kafka-user"},
            "kafkaVersion": "4.1",
            "brokerConfig": {"remote.log.storage.system.enable": "true"},
            "tenants": [{"namespaces": ["team-b"], "topicPrefixes": ["team-b."]}],
        },
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
    assert (
        kinds
        == [
            "ClusterRole",
            "ClusterRole",  # the tenants', bound by nothing in the chart
            "ClusterRoleBinding",
            "Deployment",
            "Role",  # the leader Lease's, in the release's namespace
            "Role",  # get on Secrets, in the release's namespace only
            "RoleBinding",
            "RoleBinding",
            "Service",
            "ServiceAccount",
            "ValidatingAdmissionPolicy",  # judged by the API server, against the KafkaClusters of the release's namespace
            "ValidatingAdmissionPolicyBinding",
        ]
    )


def test_non_default_values_reach_the_objects() -> None:
    docs = rendered_documents(NON_DEFAULT)
    kinds = sorted(d["kind"] for d in docs)
    # one per watched namespace, the leader Lease's, and one for Secrets in each namespace holding KafkaClusters
    assert kinds.count("Role") == 6
    assert kinds.count("RoleBinding") == 6
    # The namespaces rule (cluster-scoped: no Role can grant it) and the tenants' role.
    assert kinds.count("ClusterRole") == 2
    assert kinds.count("ClusterRoleBinding") == 1
    assert "ServiceMonitor" in kinds
    assert "PrometheusRule" in kinds
    dashboard = next(d for d in docs if d["kind"] == "ConfigMap")
    assert (dashboard["metadata"]["namespace"], dashboard["metadata"]["labels"]["grafana_dashboard"]) == (
        "monitoring",
        "1",
    )
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "KafkaCluster"] == [
        "main",
        "legacy",
        "events",
    ]
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
    secrets = [r for r in roles if r["metadata"]["name"] == "kto-kafka-topic-operator-secrets"]
    watched = [r for r in roles if r is not lease and r not in secrets]
    assert {r["metadata"]["namespace"] for r in watched} == {"team-a", "team-b"}
    assert lease["metadata"]["namespace"] == "kafka-topic-operator"  # the release's own namespace only
    assert lease["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]}
    ]


def test_the_settings_env_parse_from_the_rendered_deployment() -> None:
    """What the chart sets, the operator accepts: the rendered environment builds valid settings."""
    from topic_operator.k8s.process.settings import settings_from_env

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
        {
            "clusters": [
                {
                    "name": "x",
                    "zookeeper": {"connect": "zk:2181"},
                    "bootstrapServers": "b:9092",
                    "kafkaVersion": "4.1",
                }
            ]
        },
        {"clusters": [{"name": "x", "bootstrapServers": "b:9092", "kafkaVersion": "5.0"}]},
        {
            "clusters": [
                {
                    "name": "x",
                    "bootstrapServers": "b:9092",
                    "sasl": {"mechanism": "GSSAPI", "secretName": "s"},
                }
            ]
        },
        {"clusters": [{"name": "x", "bootstrapServers": "b:9092", "tls": {"caKey": "ca.crt"}}]},
        {"clusters": [{"name": "x", "bootstrapServers": "b:9092", "brokerConfig": {"a": 1}}]},
        {"clusters": [{"name": "x", "bootstrapServers": "b:9092", "spec": {}}]},
        _one_cluster(reassignment={"enabled": "yes"}),
        _one_cluster(reassignment={"throttleBytesPerSecond": 0}),
        _one_cluster(reassignment={"throttleBytesPerSecond": "fast"}),
        _one_cluster(reassignment={"throttle": 1}),
        {"unknownKey": True},
        {"metrics": {"prometheusRule": {"enabled": "yes"}}},
        {"metrics": {"grafanaDashboard": {"labels": {"grafana_dashboard": 1}}}},
        {"metrics": {"grafanaDashboard": {"namespace": "Not_A_Namespace"}}},
        {"webhook": {"failurePolicy": "Sometimes"}},
        {"webhook": {"failurePolicy": "fail"}},
        {"webhook": {"enabled": "yes"}},
        {"webhook": {"port": 0}},
        {"webhook": {"port": 65536}},
        {"webhook": {"port": "9443"}},
        {"webhook": {"caBundle": "..."}},
    ],
)
def test_values_schema_refuses_bad_values(bad: dict[str, Any]) -> None:
    with helm.Chart.load(CHART) as chart, pytest.raises(helm.HelmError):
        chart.validate_schema(chart.merge_values(bad))


NAMESPACES_RULE = {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]}
TENANT_RULES = [
    {"apiGroups": ["kto.dev"], "resources": ["kafkatopics"],
     "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
    {"apiGroups": ["kto.dev"], "resources": ["kafkatopics/status"], "verbs": ["get"]},
]  # fmt: skip
WEBHOOK_ENV = (
    "KTO_WEBHOOK_PORT",
    "KTO_WEBHOOK_LISTEN",
    "KTO_WEBHOOK_SERVICE",
    "KTO_WEBHOOK_FAILURE_POLICY",
    "KTO_WEBHOOK_CERTIFICATE_DIR",
)
WATCHED_NAMESPACES = {"watchNamespaces": ["team-a", "team-b"]}


SECRETS_RULE = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}


@pytest.mark.parametrize(
    ("values", "namespaces"),
    [
        (None, {"kafka-topic-operator"}),
        (WATCHED_NAMESPACES, {"kafka-topic-operator"}),
        ({"clusterNamespaces": ["kafka", "team-a"]}, {"kafka", "team-a"}),
        (NON_DEFAULT, {"kafka-topic-operator", "team-a", "kafka"}),
    ],
    ids=["default", "watchNamespaces", "clusterNamespaces", "clusters"],
)
def test_secrets_are_read_only_where_kafkaclusters_live(
    values: dict[str, Any] | None, namespaces: set[str]
) -> None:
    """No ClusterRole grants Secrets, whatever namespaces are watched; a Role and a RoleBinding named as the
    operator names the missing one (KTO_SECRETS_ROLE_BINDING) grant get on them in clusterNamespaces (default:
    the release's own) and in the namespace of every KafkaCluster the chart declares."""
    docs = rendered_documents(values)
    assert all(SECRETS_RULE not in d["rules"] for d in docs if d["kind"] == "ClusterRole")
    name = _operator_env(docs)["KTO_SECRETS_ROLE_BINDING"]
    roles = [d for d in docs if d["kind"] == "Role" and SECRETS_RULE in d["rules"]]
    assert all(r["rules"] == [SECRETS_RULE] and r["metadata"]["name"] == name for r in roles)
    assert {r["metadata"]["namespace"] for r in roles} == namespaces
    bindings = [d for d in docs if d["kind"] == "RoleBinding" and d["metadata"]["name"] == name]
    assert {b["metadata"]["namespace"] for b in bindings} == namespaces
    for binding in bindings:
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
        assert binding["subjects"] == [
            {
                "kind": "ServiceAccount",
                "name": "kto-kafka-topic-operator",
                "namespace": "kafka-topic-operator",
            }
        ]


def _operator_env(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in _operator_container(docs)["env"]}


def _named(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def _operator_container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


def _rules(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [rule for d in docs if d["kind"] in ("ClusterRole", "Role") for rule in d["rules"]]


@pytest.mark.parametrize("values", [None, WATCHED_NAMESPACES], ids=["clusterwide", "watchNamespaces"])
def test_the_operator_may_list_and_watch_namespaces_in_both_modes(values: dict[str, Any] | None) -> None:
    """kopf watches the Namespaces (their labels, for spec.tenants' namespaceSelector) whatever namespaces it
    watches KafkaTopics in; namespaces are cluster-scoped, so only a ClusterRole grants it."""
    docs = rendered_documents(values)
    role = _named(docs, "ClusterRole", "kto-kafka-topic-operator")
    binding = _named(docs, "ClusterRoleBinding", "kto-kafka-topic-operator")
    assert role["rules"][-1] == NAMESPACES_RULE
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "kto-kafka-topic-operator"}  # fmt: skip
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "kto-kafka-topic-operator", "namespace": "kafka-topic-operator"}
    ]
    namespaced = [
        d
        for d in docs
        if d["kind"] == "Role" and not d["metadata"]["name"].endswith(("-election", "-secrets"))
    ]
    if values:
        # Watching some namespaces: the ClusterRole holds the namespaces rule alone, the kto.dev rules are Roles.
        assert role["rules"] == [NAMESPACES_RULE]
        assert {r["metadata"]["namespace"] for r in namespaced} == {"team-a", "team-b"}
    else:
        assert role["rules"][0]["resources"] == ["kafkatopics", "kafkaclusters"]
        assert namespaced == []
    assert all(NAMESPACES_RULE not in r["rules"] for r in namespaced)


@pytest.mark.parametrize("values", [None, NON_DEFAULT], ids=["default", "non-default"])
def test_the_webhook_is_off_by_default(values: dict[str, Any] | None) -> None:
    docs = rendered_documents(values)
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "Service"] == [
        "kto-kafka-topic-operator-metrics"
    ]
    container = _operator_container(docs)
    assert not [e["name"] for e in container["env"] if e["name"].startswith("KTO_WEBHOOK_")]
    assert [p["name"] for p in container["ports"]] == ["health", "metrics"]
    assert not [r for r in _rules(docs) if "admissionregistration.k8s.io" in r["apiGroups"]]
    assert "webhook" not in render(values)["kafka-topic-operator/templates/NOTES.txt"].lower()


@pytest.mark.parametrize(
    ("webhook", "watch"),
    [
        ({"enabled": True}, {}),
        ({"enabled": True, "failurePolicy": "Fail", "port": 8443}, WATCHED_NAMESPACES),
    ],
    ids=["defaults", "fail-port-8443-watchNamespaces"],
)
def test_the_webhook_when_enabled(webhook: dict[str, Any], watch: dict[str, Any]) -> None:
    docs = rendered_documents({"webhook": webhook, **watch})
    for doc in docs:
        assert problems(doc) == [], (doc["kind"], doc["metadata"].get("name"))
    port = webhook.get("port", 9443)
    policy = webhook.get("failurePolicy", "Ignore")
    container = _operator_container(docs)
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert {name: env.get(name) for name in WEBHOOK_ENV} == {
        "KTO_WEBHOOK_PORT": str(port),
        "KTO_WEBHOOK_LISTEN": "0.0.0.0",
        "KTO_WEBHOOK_SERVICE": "kafka-topic-operator/kto-kafka-topic-operator-webhook",
        "KTO_WEBHOOK_FAILURE_POLICY": policy,
        "KTO_WEBHOOK_CERTIFICATE_DIR": "/etc/kto/webhook",
    }
    assert {"name": "webhook", "containerPort": port, "protocol": "TCP"} in container["ports"]
    service = _named(docs, "Service", "kto-kafka-topic-operator-webhook")
    assert service["metadata"]["namespace"] == "kafka-topic-operator"
    assert service["spec"]["ports"] == [
        {"name": "https", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
    ]
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    assert service["spec"]["selector"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    # Every replica serves the certificate of one Secret, which the configuration's caBundle trusts: the chart's,
    # so the operator has no right on webhook configurations at all.
    assert not [r for r in _rules(docs) if "admissionregistration.k8s.io" in r["apiGroups"]]
    secret = _named(docs, "Secret", "kto-kafka-topic-operator-webhook-tls")
    assert secret["type"] == "kubernetes.io/tls"
    assert {"name": "webhook-certificate", "mountPath": "/etc/kto/webhook", "readOnly": True} in container[
        "volumeMounts"
    ]
    pod = deployment["spec"]["template"]["spec"]
    assert {"name": "webhook-certificate",
            "secret": {"secretName": secret["metadata"]["name"], "defaultMode": 0o400}} in pod["volumes"]  # fmt: skip
    configuration = _named(docs, "ValidatingWebhookConfiguration", "kto-kafka-topic-operator-webhook")
    (hook,) = configuration["webhooks"]
    assert hook["failurePolicy"] == policy
    assert hook["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
    assert hook["clientConfig"]["service"] == {"namespace": "kafka-topic-operator", "name": service["metadata"]["name"],
                                               "port": 443, "path": "/validate-kafkatopics"}  # fmt: skip
    assert [(r["resources"], r["operations"]) for r in hook["rules"]] == [
        (["kafkatopics"], ["CREATE", "UPDATE"])
    ]
    _certificate_is_the_services(secret, service)
    notes = render({"webhook": webhook, **watch})["kafka-topic-operator/templates/NOTES.txt"]
    assert f"Admission webhook (failurePolicy {policy})" in notes


def _certificate_is_the_services(secret: dict[str, Any], service: dict[str, Any]) -> None:
    """The Secret's certificate is signed by its CA and names the Service as the API server calls it."""
    import base64

    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

    authority = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["ca.crt"]))
    certificate = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    host = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    assert host in names.get_values_for_type(x509.DNSName)
    key = authority.public_key()
    assert isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey)
    assert isinstance(key, rsa.RSAPublicKey)  # Helm's genCA makes RSA keys
    key.verify(
        certificate.signature,
        certificate.tbs_certificate_bytes,
        padding.PKCS1v15(),
        certificate.signature_hash_algorithm,  # type: ignore[arg-type]
    )


def test_the_webhook_env_is_what_the_operator_reads() -> None:
    """The chart's KTO_WEBHOOK_* are settings of the operator, and parse. Skipped until the operator has them."""
    from topic_operator.k8s.process.settings import settings_from_env

    known = set(environment_variables().values())
    if not known & set(WEBHOOK_ENV):
        pytest.skip("the operator reads no KTO_WEBHOOK_* setting yet")
    assert set(WEBHOOK_ENV) <= known
    for policy in ("Ignore", "Fail"):
        container = _operator_container(
            rendered_documents({"webhook": {"enabled": True, "failurePolicy": policy}})
        )
        assert {e["name"] for e in container["env"]} <= known
        settings_from_env({e["name"]: e["value"] for e in container["env"] if "value" in e})


@pytest.mark.parametrize("values", [None, NON_DEFAULT], ids=["default", "non-default"])
def test_the_tenant_role_grants_kafkatopics_only(values: dict[str, Any] | None) -> None:
    docs = rendered_documents(values)
    role = _named(docs, "ClusterRole", "kto-kafka-topic-operator-tenant")
    assert role["rules"] == TENANT_RULES
    # Bound by the platform team in each tenant namespace, never aggregated into edit/admin, never bound here.
    assert not [
        k for k in role["metadata"]["labels"] if k.startswith("rbac.authorization.k8s.io/aggregate-to")
    ]
    assert "aggregationRule" not in role
    assert not [d for d in docs if d.get("roleRef", {}).get("name") == "kto-kafka-topic-operator-tenant"]


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
    assert [c.name for c in loaded.clusters] == ["main", "legacy", "events"]
    assert [c.reassignment for c in loaded.clusters] == [
        ReassignmentPolicy(True, 10485760),
        ReassignmentPolicy(),
        ReassignmentPolicy(),
    ]
    main, legacy, events = clusters
    assert events["metadata"]["namespace"] == "kafka"
    assert {k: events["spec"][k] for k in ("bootstrapServers", "kafkaVersion")} == {
        "bootstrapServers": "kafka-0.kafka:9093,kafka-1.kafka:9093",
        "kafkaVersion": "4.1",
    }
    assert events["spec"]["sasl"] == {"mechanism": "SCRAM-SHA-512", "secretName": "kto-kafka-user"}
    assert loaded.clusters[2].bootstrap_servers == "kafka-0.kafka:9093,kafka-1.kafka:9093"
    assert loaded.clusters[2].zookeeper_connect == ""
    assert main["spec"]["reassignment"] == {"enabled": True, "throttleBytesPerSecond": 10485760}
    assert "reassignment" not in legacy["spec"]
    assert yaml.safe_dump(clusters)
