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
from collections.abc import AsyncIterator, Collection, Mapping
from typing import Any, Final

import kopf
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from topic_operator.k8s.bodies import mapping
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.kafka.errors import TopicAuthorizationError
from topic_operator.tenants.grants import cluster_reference
from topic_operator.tenants.rules import (
    Declared,
    Tenant,
    Usage,
    changed_fields,
    grant_admitting,
    limit_violation,
    over_quota,
)

__all__ = ["CONFIGURATION", "TenancyWebhookServer", "admission_refusal", "webhook_server"]

CONFIGURATION: Final = "kafka-topic-operator.kto.dev"
"""The ValidatingWebhookConfiguration kopf manages for the operator (the webhook's RBAC names it)."""


def admission_refusal(
    ctx: OperatorContext,
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
    tenancy = ctx.tenancy_of(key)
    if tenancy is None or key[0] == namespace:
        return None
    label = "/".join(key)
    labels = ctx.labels_of(namespace)
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
    return _over_declared_quota(ctx, key, namespace, str(name), topic, declared, tenant, growing)


def _over_declared_quota(
    ctx: OperatorContext,
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
    for claim in ctx.claims.tenant_claims(key, namespace):
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
    **_: Any,
) -> None:
    """kopf's validating handler for KafkaTopics: raise kopf's AdmissionError (403) with the refusal."""
    ctx = getattr(memo, "kto", None)
    if not isinstance(ctx, OperatorContext) or operation not in ("CREATE", "UPDATE"):
        return
    where = namespace or mapping(body.get("metadata")).get("namespace")
    if not isinstance(where, str) or not where:
        return
    refusal = admission_refusal(ctx, body, old if operation == "UPDATE" else None, where)
    if refusal is not None:
        raise kopf.AdmissionError(refusal, code=403)


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
