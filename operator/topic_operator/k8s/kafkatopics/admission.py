"""The validating admission webhook: what a KafkaCluster's grants refuse, refused at ``kubectl apply``.

kopf serves it (``@kopf.on.validate``), with its webhook server and the ValidatingWebhookConfiguration it keeps up
to date (``kafka-topic-operator.kto.dev``). It is opt-in (``KTO_WEBHOOK_PORT``) and by default the API server
ignores it when it cannot answer (``failurePolicy: Ignore``), so an operator that is down never blocks an apply: the
operator judges every KafkaTopic again anyway, and it is the final judge.

The rules are ``tenants.rules``'s, the ones the operator and ``kto`` use. Admission has no Kafka to count in, so a quota
is counted over the namespace's KafkaTopics as declared (their topics, their partitions): it refuses at apply what
would go over on its face, and the operator, counting in Kafka, refuses the rest.

Only KafkaTopics of another namespace than their KafkaCluster's are judged; a KafkaTopic whose KafkaCluster is not
known passes (it may be applied before its cluster, as GitOps tools do, and the operator says ClusterNotFound).
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

import kopf
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from topic_operator.k8s.bodies import mapping
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.kafkaclusters.registry import ClusterKey
from topic_operator.k8s.process.admission_serving import AdmissionAnswer
from topic_operator.k8s.process.kube_api import KubernetesApi
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.kafka.errors import TopicAuthorizationError
from topic_operator.tenants.grants import Tenancy, cluster_reference, read_tenancy
from topic_operator.tenants.rules import (
    Declared,
    Tenant,
    Usage,
    changed_fields,
    grant_admitting,
    limit_violation,
    over_quota,
)

__all__ = [
    "CONFIGURATION",
    "AdmissionFacts",
    "FetchedFacts",
    "IndexedFacts",
    "TenancyWebhookServer",
    "admission_refusal",
    "admission_warnings",
    "fetch_facts",
    "judge_review",
    "webhook_server",
]

CONFIGURATION: Final = "kafka-topic-operator.kto.dev"
"""The ValidatingWebhookConfiguration kopf manages for the operator (the webhook's RBAC names it)."""


class ClaimSeen(Protocol):
    """A KafkaTopic as a quota counts it: its object name, its topic, its body."""

    @property
    def name(self) -> str: ...

    @property
    def topic(self) -> str: ...

    @property
    def body(self) -> Mapping[str, Any]: ...


class AdmissionFacts(Protocol):
    """What judging a KafkaTopic reads besides the KafkaTopic: its KafkaCluster's grants, its namespace's labels
    and the namespace's other KafkaTopics on that cluster. The leader reads them from kopf's indexes
    (``IndexedFacts``); a standby, which runs no kopf, from the API server (``fetch_facts``)."""

    def tenancy_of(self, key: ClusterKey) -> Tenancy | None: ...

    def labels_of(self, namespace: str) -> Mapping[str, str] | None: ...

    def tenant_claims(self, key: ClusterKey, namespace: str) -> Iterable[ClaimSeen]: ...

    def knows_cluster(self, key: ClusterKey) -> bool: ...


@dataclass(frozen=True, slots=True)
class IndexedFacts:
    """The facts as the running operator's indexes hold them."""

    ctx: OperatorContext

    def tenancy_of(self, key: ClusterKey) -> Tenancy | None:
        return self.ctx.tenancy_of(key)

    def labels_of(self, namespace: str) -> Mapping[str, str] | None:
        return self.ctx.labels_of(namespace)

    def tenant_claims(self, key: ClusterKey, namespace: str) -> Iterable[ClaimSeen]:
        return self.ctx.claims.tenant_claims(key, namespace)

    def knows_cluster(self, key: ClusterKey) -> bool:
        return key in self.ctx.cluster_bodies


@dataclass(frozen=True, slots=True)
class FetchedClaim:
    name: str
    topic: str
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class FetchedFacts:
    """The facts of one review, read from the API server when it came (a standby's view)."""

    key: ClusterKey
    exists: bool
    tenancy: Tenancy | None
    labels: Mapping[str, str] | None
    claims: tuple[FetchedClaim, ...]

    def tenancy_of(self, key: ClusterKey) -> Tenancy | None:
        return self.tenancy if key == self.key else None

    def labels_of(self, namespace: str) -> Mapping[str, str] | None:
        return self.labels

    def tenant_claims(self, key: ClusterKey, namespace: str) -> Iterable[ClaimSeen]:
        return self.claims if key == self.key else ()

    def knows_cluster(self, key: ClusterKey) -> bool:
        return self.exists and key == self.key


async def fetch_facts(api: KubernetesApi, key: ClusterKey, namespace: str) -> FetchedFacts:
    """What judging a KafkaTopic of ``namespace`` naming KafkaCluster ``key`` reads, from the API server: the
    KafkaCluster (none: nothing to judge), then the namespace's labels and its KafkaTopics naming that cluster."""
    body = await api.read_kafkacluster(*key)
    if body is None or key[0] == namespace:
        return FetchedFacts(key, body is not None, None, None, ())
    tenancy = read_tenancy(key[0], mapping(body.get("spec")).get("tenants"))
    labels = await api.namespace_labels(namespace)
    claims = []
    for topic_body in await api.list_kafkatopics(namespace):
        spec, metadata = mapping(topic_body.get("spec")), mapping(topic_body.get("metadata"))
        cluster, name = spec.get("cluster"), metadata.get("name")
        topic = spec.get("topicName", name)
        named = isinstance(cluster, str) and cluster_reference(namespace, cluster) == key
        if named and isinstance(name, str) and isinstance(topic, str):
            claims.append(FetchedClaim(name, topic, topic_body))
    return FetchedFacts(key, True, tenancy, labels, tuple(claims))


def _named_cluster(body: Mapping[str, Any], namespace: str) -> ClusterKey | None:
    cluster = mapping(body.get("spec")).get("cluster")
    return cluster_reference(namespace, cluster) if isinstance(cluster, str) and cluster else None


async def judge_review(
    ctx: OperatorContext, leading: Callable[[], bool], request: Mapping[str, Any]
) -> AdmissionAnswer:
    """An AdmissionReview's request judged as ``validate_kafkatopic`` judges it, by every replica: with the
    indexes while this replica leads and they are complete (``leading``), else with what the API server says."""
    operation, body = request.get("operation"), request.get("object")
    where = request.get("namespace")
    if operation not in ("CREATE", "UPDATE") or not isinstance(body, Mapping):
        return AdmissionAnswer()
    if not isinstance(where, str) or not where:
        return AdmissionAnswer()
    old = request.get("oldObject") if operation == "UPDATE" else None
    old = old if isinstance(old, Mapping) else None
    facts: AdmissionFacts = IndexedFacts(ctx)
    if not leading():
        key = _named_cluster(body, where)
        if key is None:
            return AdmissionAnswer()
        facts = await fetch_facts(ctx.api, key, where)
    refusal = admission_refusal(facts, body, old, where)
    return AdmissionAnswer(refusal, () if refusal else tuple(admission_warnings(facts, body, where)))


def admission_warnings(facts: AdmissionFacts, body: Mapping[str, Any], namespace: str) -> list[str]:
    """What ``kubectl`` should say of an admitted KafkaTopic: that the KafkaCluster it names does not exist (a
    policy cannot tell: it sees the KafkaClusters one at a time). It is admitted all the same, since GitOps tools
    apply a KafkaTopic and its cluster in no set order; it waits for the cluster (``ClusterNotFound``)."""
    key = _named_cluster(body, namespace)
    if key is None or facts.knows_cluster(key):
        return []
    return [f"KafkaCluster {key[0]}/{key[1]} does not exist: the KafkaTopic waits for it (ClusterNotFound)"]


def admission_refusal(
    facts: AdmissionFacts,
    body: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    namespace: str,
) -> str | None:
    """Why the KafkaTopic ``body`` (an update of ``old``; None: a creation) of ``namespace`` is refused, or None."""
    spec, metadata = mapping(body.get("spec")), mapping(body.get("metadata"))
    if old is not None and (mapping(old.get("spec")) == spec or metadata.get("deletionTimestamp")):
        return None  # labels, annotations, finalizers (kopf's own, on deletion): nothing the grants judge
    cluster, name = spec.get("cluster"), metadata.get("name")
    topic = spec.get("topicName", name)
    if not isinstance(cluster, str) or not isinstance(topic, str) or not cluster:
        return None  # the CRD's schema refuses it
    key = cluster_reference(namespace, cluster)
    tenancy = facts.tenancy_of(key)
    if tenancy is None or key[0] == namespace:
        return None
    label = "/".join(key)
    labels = facts.labels_of(namespace)
    grant = grant_admitting(topic, namespace, labels, tenancy, label)
    if isinstance(grant, TopicAuthorizationError):
        return str(grant)
    declared = Declared.of_body(spec)
    fields = None if old is None else changed_fields(mapping(old.get("spec")), spec)
    violation = limit_violation(topic, declared, grant, label, fields)
    if violation is not None:
        return str(violation)
    growing = Usage(1, declared.partitions or 0)
    if old is not None:
        before = Declared.of_body(mapping(old.get("spec"))).partitions or 0
        growing = Usage(0, max(0, (declared.partitions or 0) - before))
    if not (growing.topics or growing.partitions):
        return None  # adds nothing: a namespace over a narrowed quota may still change its topics' configs
    tenant = Tenant(namespace, label, grant)
    return _over_declared_quota(facts, key, namespace, str(name), topic, declared, tenant, growing)


def _over_declared_quota(
    facts: AdmissionFacts,
    key: tuple[str, str],
    namespace: str,
    name: str,
    topic: str,
    declared: Declared,
    tenant: Tenant,
    growing: Usage,
) -> str | None:
    """The quota as the declarations have it: the namespace's other KafkaTopics on the cluster, and this one;
    only what the change adds (``growing``) is held to it."""
    if not tenant.grant.quota.limited:
        return None
    topics: set[str] = {topic}
    partitions = declared.partitions or 0
    for claim in facts.tenant_claims(key, namespace):
        if claim.name == name or claim.topic in topics:
            continue
        topics.add(claim.topic)
        counted = mapping(claim.body.get("spec")).get("partitions")
        partitions += counted if isinstance(counted, int) and not isinstance(counted, bool) else 0
    over = over_quota(topic, tenant, Usage(len(topics), partitions), growing=growing)
    return None if over is None else f"{over} (counted over the namespace's KafkaTopics as declared)"


async def validate_kafkatopic(
    body: kopf.Body,
    old: kopf.Body | None,
    memo: Any,
    namespace: str | None,
    operation: str | None,
    warnings: list[str],
    **_: Any,
) -> None:
    """kopf's validating handler for KafkaTopics: raise kopf's AdmissionError (403) with the refusal; the
    warnings of an admitted one go to ``warnings``, which kopf puts in its answer."""
    ctx = getattr(memo, "kto", None)
    if not isinstance(ctx, OperatorContext) or operation not in ("CREATE", "UPDATE"):
        return
    where = namespace or mapping(body.get("metadata")).get("namespace")
    if not isinstance(where, str) or not where:
        return
    facts = IndexedFacts(ctx)
    refusal = admission_refusal(facts, body, old if operation == "UPDATE" else None, where)
    if refusal is not None:
        raise kopf.AdmissionError(refusal, code=403)
    warnings.extend(admission_warnings(facts, body, where))


class TenancyWebhookServer(kopf.WebhookServer):
    """kopf's webhook server, with a self-signed certificate made by ``cryptography`` (kopf's own needs the
    ``certbuilder`` extra), and, in a cluster, the API server pointed at a Service instead of a URL."""

    def __init__(self, *, service: str = "", **options: Any) -> None:
        super().__init__(**options)
        self.service = service
        """``<namespace>/<name>`` of the Service in front of the webhook (empty: the URL kopf builds)."""

    async def __call__(self, fn: Any) -> AsyncIterator[Any]:
        async for config in super().__call__(fn):
            if self.service:
                namespace, name = self.service.split("/")
                path = (self.path or "").rstrip("/")
                yield {
                    "service": {"namespace": namespace, "name": name, "port": 443, "path": path or "/"},
                    "caBundle": config.get("caBundle"),
                }
            else:
                yield config

    @staticmethod
    def build_certificate(hostnames: Collection[str], password: str | None = None) -> tuple[bytes, bytes]:
        """A self-signed certificate for ``hostnames`` (IP addresses and DNS names as SANs), valid for a year,
        and its key, in PEM. A restart makes a new one, and kopf puts it in the configuration's caBundle."""
        key = ec.generate_private_key(ec.SECP256R1())
        names: list[x509.GeneralName] = []
        for hostname in dict.fromkeys(h for h in hostnames if h and h not in ("0.0.0.0", "::")):
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(hostname)))
            except ValueError:
                names.append(x509.DNSName(hostname))
        common = next((n.value for n in names if isinstance(n, x509.DNSName)), None) or "kafka-topic-operator"
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, str(common))])
        now = datetime.datetime.now(datetime.UTC)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        encryption: serialization.KeySerializationEncryption = (
            serialization.BestAvailableEncryption(password.encode())
            if password
            else serialization.NoEncryption()
        )
        return (
            certificate.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption),
        )


def webhook_server(settings: OperatorSettings) -> TenancyWebhookServer:
    """The webhook server the settings ask for (``KTO_WEBHOOK_*``)."""
    extra: list[str] = []
    if settings.webhook_service:
        namespace, name = settings.webhook_service.split("/")
        extra = [f"{name}.{namespace}.svc", f"{name}.{namespace}.svc.cluster.local"]
    return TenancyWebhookServer(
        addr=settings.webhook_listen,
        port=settings.webhook_port,
        host=settings.webhook_host or None,
        service=settings.webhook_service,
        extra_sans=extra,
    )
