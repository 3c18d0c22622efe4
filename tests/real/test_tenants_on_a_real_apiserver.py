"""Multi-tenancy on a real kube-apiserver: a platform's KafkaCluster grants other namespaces (``spec.tenants``),
and what those namespaces may do is decided where it must be, whatever a tenant sends.

- The operator is the final judge: with no webhook, every KafkaTopic reaches it, and only granted ones reach
  ZooKeeper; each refusal says why (Forbidden, PolicyViolation, ClusterNotFound). A namespace relabelled into a
  selector is granted without anyone touching its KafkaTopics; a grant narrowed under an existing topic shrinks
  nothing and refuses only the change that breaks it; a refusal is said by one Event, not one per drift check.
- A quota holds under concurrent creates from two namespaces: exactly the quota reaches ZooKeeper, never more,
  however the creations fall into batches; a partitions quota holds for creations and increases alike.
- The tenant role of ``manifests/tenants/`` gives a tenant its KafkaTopics and nothing else: no Secrets (the
  platform's ZooKeeper credentials live in them), no KafkaClusters, no status, no other namespace. RBAC is the
  API server's, so only a real one proves it.
- The admission webhook refuses at apply what the operator would refuse, over the TLS the operator sets up for the
  real API server, with the RBAC of ``manifests/webhook/`` and nothing more (the API server's audit log shows no
  refused request); an operator that is down never blocks an apply (failurePolicy Ignore), and judges what was
  applied meanwhile when it is back.

``kto run`` runs as a process logged in with the install's ServiceAccount token, drift checks every 2 s (that is
how a relabelled namespace's KafkaTopics are judged again). One operator at a time for the module (they would
share the leader Lease): tests that need the webhook swap it in. Each test has namespaces and a ZooKeeper chroot
of its own, so none depends on another's order.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from harness.kto_objects import (
    KTO_API,
    events_of,
    kafka_cluster,
    kafka_topic,
    ready,
    remove_kto_objects,
    wait_cluster_ready,
    wait_topic,
)
from harness.kube_client import KubeApiError, KubeClient
from harness.operator_process import TEST_SETTINGS, Operator, start_operator
from harness.real_apiserver import AS_DEPLOYED, RealApiServer
from harness.tenants import (
    WEBHOOK_MANIFESTS,
    Namespaces,
    can_i,
    expect_refused,
    kafka_topics_in_zookeeper,
    manifest_documents,
    may,
    settled_topics,
    tenant_client,
)
from harness.zookeeper import ZkChroot
from topic_operator.testing.local_server import free_port
from topic_operator.zookeeper.znodes import TopicConfigZNode, TopicZNode

pytestmark = pytest.mark.timeout(180)

TENANT_LABEL = "kto.dev/tenant"
WEBHOOK_CONFIGURATION = "kafka-topic-operator.kto.dev"
ADMISSION = "admissionregistration.k8s.io/v1"


# -- the module's operator -------------------------------------------------------------------------------------------


class OperatorSlot:
    """At most one operator of this module runs at a time: two would share the leader Lease, and only the holder
    works (and serves the webhook). ``running(kind)`` gives the one asked for, stopping the other first."""

    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig
        self.current: Operator | None = None
        self.kind = ""
        self.started = 0

    def running(self, directory: Path, kind: str = "plain", **environment: str) -> Operator:
        """The operator of ``kind`` (started in ``directory``, the test's, if it is not running yet); its log is
        linked into ``directory`` as ``operator-*.log``, so a failed test's report shows it."""
        if self.current is None or self.kind != kind or self.current.process.poll() is not None:
            self.stop()
            self.started += 1
            self.current = start_operator(
                directory,
                self.kubeconfig,
                settings={**TEST_SETTINGS, "KTO_DRIFT_INTERVAL": "2"},
                name=f"operator-{kind}-{self.started}",
                **{**AS_DEPLOYED, **environment},
            )
            self.kind = kind
            self.current.wait_ready()
        link = directory / f"operator-{kind}-shared.log"
        if self.current.log.parent != directory and not link.exists():
            link.symlink_to(self.current.log)
        return self.current

    def stop(self) -> None:
        """SIGTERM; it must exit cleanly, with no traceback in its output."""
        if self.current is None:
            return
        operator, self.current = self.current, None
        code = operator.stop()
        output = operator.output()
        assert code == 0, output[-3000:]
        assert "Traceback" not in output, output[-5000:]

    def kill(self) -> str:
        """SIGKILL, as an OOM kill or a lost node ends a pod: no clean-up at all. Its output until then."""
        if self.current is None:
            return ""
        operator, self.current = self.current, None
        operator.kill()
        return operator.output()


@pytest.fixture(scope="module")
def operator_slot(kube: KubeClient, operator_kubeconfig: Path) -> Iterator[OperatorSlot]:
    slot = OperatorSlot(operator_kubeconfig)
    yield slot
    slot.stop()


@pytest.fixture
def operator(operator_slot: OperatorSlot, tmp_path: Path) -> Operator:
    """The module's operator without the webhook: the operator alone judges."""
    return operator_slot.running(tmp_path)


@pytest.fixture
def tenants(kube: KubeClient) -> Iterator[Namespaces]:
    """Namespaces of this test's own (``tenants["team-a"]`` is ``team-a-<suffix>``), emptied of kto.dev objects
    afterwards: the tenants' first, then the platform's KafkaCluster."""
    names = Namespaces.new()
    yield names
    for namespace in sorted(names.created, key=lambda n: n.startswith("platform")):
        remove_kto_objects(kube, namespace)


def _declare_cluster(kube: KubeClient, platform: str, chroot: ZkChroot, grants: list[dict[str, Any]]) -> str:
    """KafkaCluster ``main`` of ``platform`` granting ``grants``, Ready; its reference as tenants spell it."""
    kube.create("kafkaclusters", kafka_cluster(platform, "main", chroot.connect_string, tenants=grants))
    wait_cluster_ready(kube, platform)
    return f"{platform}/main"


def _partitions(zk: KazooClient, topic: str) -> int:
    return len(TopicZNode.decode(topic, zk.get(TopicZNode.path(topic))[0]).partitions)


def _config(zk: KazooClient, topic: str) -> dict[str, str]:
    return TopicConfigZNode.decode(topic, zk.get(TopicConfigZNode.path(topic))[0])


def _message(kube: KubeClient, namespace: str, name: str) -> str:
    return str(ready(kube.get(KTO_API, "kafkatopics", namespace, name)).get("message", ""))


# -- 1. the operator is the final judge --------------------------------------------------------------------------------


def test_the_operator_alone_judges_every_kafkatopic_by_the_grants(
    kube: KubeClient, zk_chroot: ZkChroot, kafka_zk: KazooClient, tenants: Namespaces, operator: Operator
) -> None:
    platform = tenants.create(kube, "platform")
    a = tenants.create(kube, "team-a")
    b = tenants.create(kube, "team-b", {TENANT_LABEL: "true"})
    c = tenants.create(kube, "team-c")
    grants: list[dict[str, Any]] = [
        {
            "namespaces": [a],
            "topicPrefixes": ["team-a."],
            "limits": {"max": {"partitions": 6, "retention.ms": 604800000}},
        },
        {"namespaceSelector": {"matchLabels": {TENANT_LABEL: "true"}}},
    ]
    main = _declare_cluster(kube, platform, zk_chroot, grants)

    kube.create("kafkatopics", kafka_topic(a, "team-a.orders", main, config={"retention.ms": 86400000}))
    kube.create("kafkatopics", kafka_topic(a, "team-b.stolen", main))
    kube.create("kafkatopics", kafka_topic(a, "team-a.big", main, partitions=12))
    kube.create("kafkatopics", kafka_topic(a, "team-a.lost", f"{platform}/absent"))
    kube.create("kafkatopics", kafka_topic(b, "x", main))
    kube.create("kafkatopics", kafka_topic(c, "team-c.events", main))

    wait_topic(kube, a, "team-a.orders", 1, "Created")
    wait_topic(kube, b, "x", 1, "Created")  # a selected namespace; no topicPrefixes on its grant: any name
    stolen = ready(wait_topic(kube, a, "team-b.stolen", 1, "Forbidden"))
    assert "Not authorized to access topics: [team-b.stolen]" in stolen["message"], stolen
    assert "spec.tenants[0].topicPrefixes" in stolen["message"], stolen
    big = ready(wait_topic(kube, a, "team-a.big", 1, "PolicyViolation"))
    assert "breaks the limits" in big["message"], big
    assert "spec.tenants[0].limits.max.partitions" in big["message"], big
    outsider = ready(wait_topic(kube, c, "team-c.events", 1, "Forbidden"))
    assert "Not authorized to access topics: [team-c.events]" in outsider["message"], outsider
    assert f"does not grant namespace {c}" in outsider["message"], outsider
    lost = ready(wait_topic(kube, a, "team-a.lost", 1, "ClusterNotFound"))
    assert "absent" in lost["message"], lost
    assert kafka_topics_in_zookeeper(kafka_zk) == {"team-a.orders", "x"}, "only granted topics are written"

    # Relabelled into the selector: granted at the next drift check, with no edit of the KafkaTopic.
    tenants.label(kube, "team-c", {TENANT_LABEL: "true"})
    wait_topic(kube, c, "team-c.events", 1, "Created")
    assert kafka_topics_in_zookeeper(kafka_zk) == {"team-a.orders", "x", "team-c.events"}

    # Narrowed under team-a.orders (3 partitions, retention a day): nothing shrinks or is rewritten; a partition
    # increase is then refused, judged on what it changes (partitions), not on the retention it leaves alone.
    grants[0]["limits"] = {"max": {"partitions": 2, "retention.ms": 3600000}}
    kube.patch(KTO_API, "kafkaclusters", platform, "main", {"spec": {"tenants": grants}})
    kube.wait_for(
        lambda: kube.get(KTO_API, "kafkaclusters", platform, "main")["status"].get("observedGeneration") == 2,
        timeout=30,
        what="the narrowed grant seen by the operator",
    )
    kube.patch(KTO_API, "kafkatopics", a, "team-a.orders", {"spec": {"partitions": 4}})
    narrowed = ready(wait_topic(kube, a, "team-a.orders", 2, "PolicyViolation"))
    assert (
        "partitions 4 is above the most allowed, 2 (spec.tenants[0].limits.max.partitions)"
        in narrowed["message"]
    )
    assert "retention.ms" not in narrowed["message"], "judged on a field the change does not change"
    assert (_partitions(kafka_zk, "team-a.orders"), _config(kafka_zk, "team-a.orders")) == (
        3,
        {"retention.ms": "86400000"},
    ), "a narrowed grant shrinks and rewrites nothing"
    assert kafka_topics_in_zookeeper(kafka_zk) == {"team-a.orders", "x", "team-c.events"}

    # A refusal is said once: the drift checks that judge the refused KafkaTopics again (every 2 s here) post no
    # new Event while nothing changes ("Events accompany a status change", as for every other reason). The
    # narrowed grant changed team-a.big's refusal (at most 2 partitions now, not 6): that is said once more.
    def drift_checks() -> float:
        return operator.metric("kto_drift_check_duration_seconds_count", cluster=main) or 0.0

    since = drift_checks()
    kube.wait_for(lambda: drift_checks() >= since + 2, timeout=30, what=f"two more drift checks of {main}")
    assert {
        name: events_of(kube, namespace, name)
        for namespace, name in ((a, "team-b.stolen"), (a, "team-a.big"), (a, "team-a.orders"))
    } == {
        "team-b.stolen": [("Warning", "Forbidden")],
        "team-a.big": [("Warning", "PolicyViolation")] * 2,
        "team-a.orders": [("Normal", "Created"), ("Warning", "PolicyViolation")],
    }


# -- 2. a quota under concurrent creates -----------------------------------------------------------------------------


def test_a_quota_holds_under_concurrent_creates_from_two_namespaces(
    kube: KubeClient, zk_chroot: ZkChroot, kafka_zk: KazooClient, tenants: Namespaces, operator: Operator
) -> None:
    platform = tenants.create(kube, "platform")
    a, b, p = (tenants.create(kube, short) for short in ("team-a", "team-b", "team-p"))
    grants = [
        {"namespaces": [a], "quota": {"topics": 5}},
        {"namespaces": [b], "quota": {"topics": 5}},
        {"namespaces": [p], "quota": {"partitions": 10}},
    ]
    main = _declare_cluster(kube, platform, zk_chroot, grants)

    names = {a: [f"a-{i:02}" for i in range(10)], b: [f"b-{i:02}" for i in range(10)]}
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def create_all(namespace: str) -> None:
        try:
            start.wait(10)
            for name in names[namespace]:
                kube.create("kafkatopics", kafka_topic(namespace, name, main, partitions=1))
        except BaseException as error:  # reported by the test's thread
            failures.append(error)

    threads = [threading.Thread(target=create_all, args=(n,)) for n in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [], failures

    in_zookeeper = kafka_topics_in_zookeeper
    for index, namespace in enumerate((a, b)):
        settled = settled_topics(kube, namespace, names[namespace], ("Created", "QuotaExceeded"))
        created = {n for n, condition in settled.items() if condition["reason"] == "Created"}
        assert len(created) == 5, {n: c["reason"] for n, c in settled.items()}
        written = {t for t in in_zookeeper(kafka_zk) if t.startswith(names[namespace][0][:2])}
        assert written == created, "exactly the Created ones are in ZooKeeper"
        for name in set(settled) - created:
            message = settled[name]["message"]
            assert f"over its quota of 5 (spec.tenants[{index}].quota.topics)" in message, message

    # A partitions quota of 10: three topics of 3 partitions fit, a fourth does not; one may then grow to 4, and
    # no other after it.
    grown = [f"p-{i}" for i in range(4)]
    for name in grown:
        kube.create("kafkatopics", kafka_topic(p, name, main, partitions=3))
    settled = settled_topics(kube, p, grown, ("Created", "QuotaExceeded"))
    fitted = sorted(n for n, condition in settled.items() if condition["reason"] == "Created")
    assert len(fitted) == 3, {n: c["reason"] for n, c in settled.items()}
    (over,) = set(grown) - set(fitted)
    assert "over its quota of 10 (spec.tenants[2].quota.partitions)" in settled[over]["message"]
    first, second = fitted[:2]
    kube.patch(KTO_API, "kafkatopics", p, first, {"spec": {"partitions": 4}})
    wait_topic(kube, p, first, 2, "Updated")
    kube.patch(KTO_API, "kafkatopics", p, second, {"spec": {"partitions": 4}})
    refused = ready(wait_topic(kube, p, second, 2, "QuotaExceeded"))
    assert "to 11 partitions" in refused["message"], refused
    assert "over its quota of 10 (spec.tenants[2].quota.partitions)" in refused["message"], refused
    assert {t: _partitions(kafka_zk, t) for t in in_zookeeper(kafka_zk) if t.startswith("p-")} == {
        first: 4,
        **dict.fromkeys(fitted[1:], 3),
    }


# -- 3. the tenant role ----------------------------------------------------------------------------------------------


def test_the_tenant_role_gives_kafkatopics_of_its_namespace_and_nothing_else(
    apiserver: RealApiServer, kube: KubeClient, tenants: Namespaces
) -> None:
    platform, a, b = (tenants.create(kube, short) for short in ("platform", "team-a", "team-b"))
    for namespace in (platform, a):
        kube.create("secrets", {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                "metadata": {"name": "zk-creds", "namespace": namespace},
                                "stringData": {"password": "s3cret"}})  # fmt: skip
    deployer = tenant_client(apiserver, kube, a)

    deployer.create("kafkatopics", kafka_topic(a, "team-a.orders", f"{platform}/main"))
    deployer.patch(KTO_API, "kafkatopics", a, "team-a.orders", {"spec": {"partitions": 6}})
    assert deployer.get(KTO_API, "kafkatopics", a, "team-a.orders")["spec"]["partitions"] == 6
    deployer.call("GET", KubeClient.path(KTO_API, "kafkatopics", a, "team-a.orders") + "/status")

    forbidden: dict[str, Callable[[], object]] = {
        "get a Secret of its namespace": lambda: deployer.get("v1", "secrets", a, "zk-creds"),
        "list the Secrets of its namespace": lambda: deployer.list("v1", "secrets", a),
        "get a Secret of the platform": lambda: deployer.get("v1", "secrets", platform, "zk-creds"),
        "list KafkaClusters of its namespace": lambda: deployer.list(KTO_API, "kafkaclusters", a),
        "list KafkaClusters of the platform": lambda: deployer.list(KTO_API, "kafkaclusters", platform),
        "create a KafkaTopic in another namespace": lambda: deployer.create(
            "kafkatopics", kafka_topic(b, "team-a.elsewhere", f"{platform}/main")
        ),
        "write its KafkaTopic's status": lambda: deployer.call(
            "PATCH",
            KubeClient.path(KTO_API, "kafkatopics", a, "team-a.orders") + "/status",
            {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Created"}]}},
            "application/merge-patch+json",
        ),
        "create an Event": lambda: deployer.create(
            "events",
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": "forged", "namespace": a},
                "involvedObject": {"kind": "KafkaTopic", "namespace": a, "name": "team-a.orders"},
                "reason": "Created",
                "message": "forged",
                "type": "Normal",
            },
        ),
    }
    answers: dict[str, object] = {}
    for what, call in forbidden.items():
        try:
            call()
            answers[what] = "allowed"
        except KubeApiError as error:
            answers[what] = error.status
    assert answers == dict.fromkeys(forbidden, 403)

    # What kubectl auth can-i tells the tenant: the same, from the authorizer itself.
    assert [
        can_i(deployer, "create", "kafkatopics", a),
        can_i(deployer, "delete", "kafkatopics", a),
        can_i(deployer, "get", "kafkatopics/status", a),
        can_i(deployer, "patch", "kafkatopics/status", a),
        can_i(deployer, "get", "secrets", a, group=""),
        can_i(deployer, "create", "kafkaclusters", a),
        can_i(deployer, "create", "kafkatopics", b),
        can_i(deployer, "get", "kafkatopics", platform),
    ] == [True, True, True, False, False, False, False, False]

    deployer.delete(KTO_API, "kafkatopics", a, "team-a.orders")
    assert deployer.list(KTO_API, "kafkatopics", a) == []


# -- 4. the admission webhook ----------------------------------------------------------------------------------------


def _webhooks(kube: KubeClient) -> list[dict[str, Any]]:
    """The webhooks of the configuration kopf keeps for the operator (none when it does not exist)."""
    try:
        found = kube.get(ADMISSION, "validatingwebhookconfigurations", None, WEBHOOK_CONFIGURATION)
    except KubeApiError as error:
        if error.status == 404:
            return []
        raise
    return list(found.get("webhooks") or [])


def test_the_webhook_refuses_at_apply_what_the_grants_refuse_and_never_blocks_when_down(
    apiserver: RealApiServer,
    kube: KubeClient,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    tenants: Namespaces,
    operator_slot: OperatorSlot,
    tmp_path: Path,
) -> None:
    rbac = manifest_documents(WEBHOOK_MANIFESTS / "rbac.yaml")
    for document in rbac:
        kube.apply_document(document)
    account = "system:serviceaccount:kafka-topic-operator:kafka-topic-operator"
    kube.wait_for(
        lambda: (
            may(kube, account, "create", "admissionregistration.k8s.io", "validatingwebhookconfigurations")
            and may(
                kube,
                account,
                "patch",
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
                WEBHOOK_CONFIGURATION,
            )
        ),
        timeout=20,
        what="manifests/webhook/rbac.yaml in effect for the operator",
    )
    platform, a, b = (tenants.create(kube, short) for short in ("platform", "team-a", "team-b"))
    deployer = tenant_client(apiserver, kube, a)
    port = free_port()
    before = len(apiserver.audit_events(account))
    try:
        operator_slot.running(
            tmp_path,
            "webhook",
            KTO_WEBHOOK_PORT=str(port),
            KTO_WEBHOOK_LISTEN="127.0.0.1",
            KTO_WEBHOOK_HOST="127.0.0.1",
        )
        grants = [
            {
                "namespaces": [a],
                "topicPrefixes": ["team-a."],
                "quota": {"topics": 3},
                "limits": {"max": {"partitions": 6}},
            }
        ]
        main = _declare_cluster(kube, platform, zk_chroot, grants)
        (webhook,) = kube.wait_for(
            lambda: [
                w
                for w in _webhooks(kube)
                if w["clientConfig"].get("caBundle")
                and w["clientConfig"].get("url", "").startswith(f"https://127.0.0.1:{port}/")
            ],
            timeout=30,
            what=f"the ValidatingWebhookConfiguration {WEBHOOK_CONFIGURATION} calling 127.0.0.1:{port}",
        )
        assert webhook["failurePolicy"] == "Ignore", webhook
        assert [(r["resources"], sorted(r["operations"])) for r in webhook["rules"]] == [
            (["kafkatopics"], ["CREATE", "UPDATE"])
        ], webhook["rules"]

        # Granted: admitted, and the operator creates it.
        deployer.create("kafkatopics", kafka_topic(a, "team-a.orders", main))
        wait_topic(kube, a, "team-a.orders", 1, "Created")

        # Refused at apply, with the refusal the status would carry.
        expect_refused(
            lambda: deployer.create("kafkatopics", kafka_topic(a, "team-b.stolen", main)),
            403,
            "Not authorized to access topics: [team-b.stolen]",
            "spec.tenants[0].topicPrefixes",
        )
        expect_refused(
            lambda: deployer.create("kafkatopics", kafka_topic(a, "team-a.big", main, partitions=12)),
            403,
            "breaks the limits",
            "spec.tenants[0].limits.max.partitions",
        )
        expect_refused(
            lambda: deployer.patch(KTO_API, "kafkatopics", a, "team-a.orders", {"spec": {"partitions": 12}}),
            403,
            "breaks the limits",
            "partitions 12 is above the most allowed, 6",
        )
        expect_refused(  # a namespace no grant matches (the admin's apply: the tenant may not write there at all)
            lambda: kube.create("kafkatopics", kafka_topic(b, "team-b.orders", main)),
            403,
            "Not authorized to access topics: [team-b.orders]",
            f"does not grant namespace {b}",
        )
        assert deployer.get(KTO_API, "kafkatopics", a, "team-a.orders")["metadata"]["generation"] == 1

        # An update within the limits is admitted and applied.
        deployer.patch(KTO_API, "kafkatopics", a, "team-a.orders", {"spec": {"partitions": 6}})
        wait_topic(kube, a, "team-a.orders", 2, "Updated")

        # The quota, counted over the namespace's KafkaTopics as declared: a fourth is refused at apply.
        for name in ("team-a.billing", "team-a.audit"):
            deployer.create("kafkatopics", kafka_topic(a, name, main))
            wait_topic(kube, a, name, 1, "Created")
        expect_refused(
            lambda: deployer.create("kafkatopics", kafka_topic(a, "team-a.fourth", main)),
            403,
            "over its quota of 3",
            "spec.tenants[0].quota.topics",
        )

        granted = {"team-a.orders", "team-a.billing", "team-a.audit"}
        assert {t["metadata"]["name"] for t in kube.list(KTO_API, "kafkatopics", a)} == granted
        assert kube.list(KTO_API, "kafkatopics", b) == []
        assert kafka_topics_in_zookeeper(kafka_zk) == granted, "nothing refused reaches ZooKeeper"
        assert _partitions(kafka_zk, "team-a.orders") == 6

        # The operator dies (SIGKILL: nothing removes its webhook from the configuration). The API server cannot
        # reach the webhook, and failurePolicy Ignore admits even what the webhook would refuse: an operator that
        # is down never blocks an apply (the operator judges it when it is back).
        output = operator_slot.kill()
        assert "Traceback" not in output, output[-5000:]
        assert [w["clientConfig"].get("url", "") for w in _webhooks(kube)] == [webhook["clientConfig"]["url"]]
        deployer.create("kafkatopics", kafka_topic(a, "team-b.sneaky", main))
        deployer.patch(KTO_API, "kafkatopics", a, "team-a.orders", {"spec": {"partitions": 12}})

        # Back (without the webhook, once the dead one's Lease has expired): the operator is the final judge.
        operator_slot.running(tmp_path)
        sneaky = ready(wait_topic(kube, a, "team-b.sneaky", 1, "Forbidden", timeout=60))
        assert "Not authorized to access topics: [team-b.sneaky]" in sneaky["message"], sneaky
        wait_topic(kube, a, "team-a.orders", 3, "PolicyViolation")
        assert kafka_topics_in_zookeeper(kafka_zk) == granted
        assert _partitions(kafka_zk, "team-a.orders") == 6

        # Everything the webhook operator asked the API server for, the install's and the webhook's RBAC granted
        # (as test_install_rbac_is_exactly_what_the_operator_uses proves for the operator without it).
        refused = [
            f"{e['verb']} {e['requestURI']}"
            for e in apiserver.audit_events(account)[before:]
            if e.get("responseStatus", {}).get("code") == 403
        ]
        assert refused == [], (
            "RBAC refused the operator: kopf retries a refused request for ~1 min, then it exits"
        )
    finally:
        if operator_slot.kind == "webhook":
            operator_slot.stop()  # a clean exit: kopf empties the configuration's webhooks
        for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
            with contextlib.suppress(KubeApiError):
                kube.delete(ADMISSION, kind, None, WEBHOOK_CONFIGURATION)
        for document in reversed(rbac):
            with contextlib.suppress(KubeApiError):
                plural, _ = kube.resource(document["apiVersion"], document["kind"])
                kube.delete(document["apiVersion"], plural, None, document["metadata"]["name"])
