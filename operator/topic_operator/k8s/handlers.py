"""The kopf handlers: thin translations between kopf's calls and ``topics``/``clusters``/``topic_work``.

Registered on a registry built by ``build_registry(settings)`` rather than at import time, so intervals come from
the settings and tests inspect (or run) exactly what ``kto run`` runs. Every handler takes the operator's
``OperatorContext`` from ``memo.kto``.

- KafkaTopic: kopf watches; the watch-event handler keeps the KafkaTopic's claim and hands the event to the
  operator's ``TopicWork``, which decides from the object whether there is work, reconciles, writes the status and
  retries (``topic_work`` says why not kopf's create/update/resume handlers). Delete (only with
  ``deletionPolicy: Delete``, so only those get a finalizer) stays kopf's: delete or keep the Kafka topic.
- KafkaCluster: create/update/resume -> connect and report; delete (optional: no finalizer) -> disconnect; a
  daemon keeps its session and every ``drift_interval`` seconds reports the cluster and checks its topics for
  drift. It lives on the KafkaCluster, not on each KafkaTopic, because kopf gives every object with a timer a
  finalizer, and ``deletionPolicy: Retain`` promises none; it also makes one plan per cluster instead of one
  per topic.
- KafkaTopic claims by topic name (ownership; each claim carries its body, the drift timer's work list): kept in
  ``memo.kto.claims`` by a handler of every KafkaTopic watch event, not a kopf index (``claim_index`` says why).
  Every reconcile first waits for kopf's first list of KafkaTopics (``readiness.listed``).
- Two kopf indices (kopf fills them before any handler runs): KafkaCluster identities (which KafkaClusters are
  the same Kafka cluster; it also keeps each KafkaCluster's body), and every Namespace's labels (for the grants
  that select namespaces by label). Both kinds are few, so kopf's per-object wait costs nothing there.
- With ``KTO_WEBHOOK_PORT`` set, a validating admission webhook for KafkaTopics (``admission``).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import sys
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Final, cast

import kopf

from topic_operator.access.address import spec_identity
from topic_operator.k8s.bodies import mapping, shaped
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.kafkaclusters.clusters import (
    CLUSTER_FAILURES,
    describe_cluster,
    failed_verdict,
    forget_cluster,
    reconcile_cluster,
)
from topic_operator.k8s.kafkaclusters.registry import ClusterHandle
from topic_operator.k8s.kafkaclusters.sessions import keep_session
from topic_operator.k8s.kafkatopics.admission import CONFIGURATION, validate_kafkatopic, webhook_server
from topic_operator.k8s.kafkatopics.claim_index import ClaimIndex
from topic_operator.k8s.kafkatopics.ownership import ClusterKey, claim_of
from topic_operator.k8s.kafkatopics.topic_work import TopicWork
from topic_operator.k8s.kafkatopics.topics import check_drift, delete_topic, reconcile_topic
from topic_operator.k8s.process.login import register_logins
from topic_operator.k8s.process.persistence import STATUS_FIELD, configure_persistence
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.k8s.records import Verdict, is_paused
from topic_operator.k8s.status import same_status
from topic_operator.model import ClusterState
from topic_operator.tenants.grants import cluster_reference
from topic_operator.tenants.rules import tenant_usage

__all__ = ["FINALIZER", "GROUP", "build_kopf_settings", "build_registry"]

logger = logging.getLogger(__name__)

GROUP: Final = "kto.dev"
VERSION: Final = "v1alpha1"
TOPICS: Final = (GROUP, VERSION, "kafkatopics")
CLUSTERS: Final = (GROUP, VERSION, "kafkaclusters")
NAMESPACES: Final = ("", "v1", "namespaces")
FINALIZER: Final = "kto.dev/finalizer"
REPORTING_COMPONENT: Final = "kafka-topic-operator"
"""Who the operator's Events say they come from (``source.component``, ``reportingComponent``)."""


# -- helpers ----------------------------------------------------------------------------------------------------


_LIST_PAGE: Final = 500
"""Objects per page of kopf's lists: kubectl's and client-go's page."""

_WORKER_IDLE_TIMEOUT: Final = 0.5
"""Seconds a kopf worker waits for its object's next event before it leaves (kopf's default: 5)."""

_VALIDATIONS_SLACK: Final = 1_000
"""Validations kept beyond one per KafkaTopic: those of KafkaTopics deleted while the watch was away."""

_SHARED_TEXT: Final = 64
"""Strings up to this length are shared between the copies (``sys.intern``): keys, names, reasons, config values."""


def _detached(value: Any) -> Any:
    """A plain copy. Every KafkaTopic's claim holds one for as long as the KafkaTopic exists, and JSON decoding
    gives each body its own copy of every key and short value; the copies share them (at 10,000 KafkaTopics the
    decoder's strings were the largest live allocation, tracemalloc showed)."""
    if isinstance(value, Mapping):
        return {sys.intern(str(k)): _detached(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_detached(v) for v in value]
    if type(value) is str:
        return sys.intern(value) if len(value) <= _SHARED_TEXT else value
    return copy.copy(value)


def _plain(body: Mapping[str, Any]) -> dict[str, Any]:
    """kopf's bodies are live views; the engine and the indices get plain, detached dicts and lists, with the
    containers read before validation in shape (``bodies.shaped``)."""
    return shaped(_detached(body))


_NOT_KEPT: Final = {"metadata": "managedFields", "status": STATUS_FIELD}
"""What the operator never reads of a KafkaTopic: the API server's field ownership records (kilobytes per
object on a real API server) and kopf's own records in the status (a copy of the spec). kopf reads its records
from its own body; a status patch of ours merges beside them."""


def _topic_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The plain KafkaTopic the handlers work on, and that a claim carries for the drift timer (one per KafkaTopic
    for as long as it exists): without ``_NOT_KEPT``, which is never copied."""
    slim = dict(body)
    for part, field in _NOT_KEPT.items():
        slim[part] = {k: v for k, v in mapping(body.get(part)).items() if k != field}
    return _plain(slim)


def _context(memo: Any) -> OperatorContext:
    ctx = getattr(memo, "kto", None)
    if not isinstance(ctx, OperatorContext):
        raise kopf.PermanentError(
            "the operator context (memo.kto) is missing: start the operator with `kto run`"
        )
    return ctx


def _identity_of(index: Mapping[ClusterKey, Iterable[str]]) -> Any:
    def identity_of(key: ClusterKey) -> str | None:
        return next(iter(index.get(key, ())), None)

    return identity_of


async def _claims(ctx: OperatorContext) -> ClaimIndex:
    """The claims, once every KafkaTopic of kopf's first list is in them (until then, a younger KafkaTopic
    could act on a topic whose older claimant has not been seen yet)."""
    await ctx.readiness.listed("kafkatopics")
    return ctx.claims


def _declared(claim_index: ClaimIndex, identities: Mapping[ClusterKey, Iterable[str]]) -> Any:
    """The topic names declared for a Kafka cluster, by its identity: those of the KafkaTopics naming any
    KafkaCluster of that identity, read from the index by cluster (not by walking every claim)."""
    identity_of = _identity_of(identities)

    def declared(identity: str) -> Collection[str]:
        return claim_index.topics_of(k for k in claim_index.clusters() if identity_of(k) == identity)

    return declared


def _cluster_label(topic: Mapping[str, Any]) -> str:
    """The metrics label of a KafkaTopic's cluster: ``namespace/name`` of its KafkaCluster (never the topic, so
    label cardinality stays the number of clusters)."""
    namespace = str(mapping(topic.get("metadata")).get("namespace"))
    return "/".join(cluster_reference(namespace, str(mapping(topic.get("spec")).get("cluster"))))


def _post(ctx: OperatorContext, body: Mapping[str, Any], verdict: Verdict, *, changed: bool) -> None:
    """Events accompany a status change: a retry that finds the same situation posts nothing new."""
    if changed:
        for event in verdict.events:
            ctx.events.post(body, type=event.type, reason=event.reason, message=event.message)


def _finish(ctx: OperatorContext, body: Mapping[str, Any], verdict: Verdict, patch: kopf.Patch) -> None:
    changed = bool(verdict.status) and not same_status(body.get("status"), verdict.status)
    patch.status.update(verdict.status)
    _post(ctx, body, verdict, changed=changed)
    if verdict.retry is not None and not ctx.clusters.closed:  # stopping: no retry would run (and kopf waits)
        raise kopf.TemporaryError(verdict.retry, delay=ctx.settings.retry_delay)


# -- the claims and the index ------------------------------------------------------------------------------------


def _seen(memo: Any, plural: str, body: kopf.Body) -> None:
    """Tell readiness that kopf's list reached this object."""
    ctx = getattr(memo, "kto", None)
    if isinstance(ctx, OperatorContext):
        ctx.readiness.seen(plural, body.get("metadata", {}).get("uid"))


# Every callback is a coroutine, even where nothing is awaited: kopf runs a plain function in a thread pool, and
# these run for every watch event of every object (a thread hop each was a fifth of the CPU per event).


async def topic_event(
    body: kopf.Body,
    memo: Any,
    type: str | None,
    kto_cluster_identities: kopf.Index[ClusterKey, str] | None = None,
    kto_namespace_labels: kopf.Index[str, dict[str, str]] | None = None,
    **_: Any,
) -> None:
    """Every KafkaTopic watch event, kopf's first list included: its claim, carrying its body for the drift
    timer; readiness hears of it, so the claims are complete when kopf's first list has been seen; and the
    operator's ``TopicWork`` gets it, to reconcile it if it is work."""
    ctx = getattr(memo, "kto", None)
    if not isinstance(ctx, OperatorContext):
        return
    plain = keep_claim(ctx, body, type)
    _seen(memo, "kafkatopics", body)
    if kto_cluster_identities is not None:
        ctx.cluster_identities = kto_cluster_identities
    if kto_namespace_labels is not None:
        ctx.namespace_labels = kto_namespace_labels
    work = topic_work(ctx)
    if plain is None:
        metadata = mapping(body.get("metadata"))
        work.forget(str(metadata.get("namespace")), str(metadata.get("name")))
    else:
        work.offer(plain, first_sight=type in (None, "ADDED"))


def keep_claim(ctx: OperatorContext, body: Mapping[str, Any], type: str | None) -> dict[str, Any] | None:
    """The KafkaTopic's claim kept as this watch event shows it; its plain body (None: it is gone)."""
    metadata = mapping(body.get("metadata"))
    if type == "DELETED":
        ctx.claims.drop(str(metadata.get("namespace")), str(metadata.get("name")))
        ctx.validations.drop(metadata.get("uid"))
        return None
    plain = _topic_body(body)
    claim = claim_of(body, keep=plain)
    if claim is not None:
        ctx.claims.put(claim)
        # One validation kept per KafkaTopic: with fewer places than KafkaTopics, every drift check (which walks
        # them all in the same order) would find none of them and validate the whole cluster again.
        ctx.validations.make_room_for(ctx.claims.objects + _VALIDATIONS_SLACK)
    else:
        ctx.claims.drop(str(metadata.get("namespace")), str(metadata.get("name")))
    return plain


def topic_work(ctx: OperatorContext) -> TopicWork:
    """The operator's KafkaTopic work, made on first use (in the running loop)."""
    if ctx.topic_work is None:

        async def write_status(namespace: str, name: str, status: Mapping[str, Any]) -> None:
            await ctx.patch_status("kafkatopics", namespace, name, status)

        ctx.topic_work = TopicWork(
            lambda body: _reconciled(ctx, body),
            write_status=write_status,
            post_events=lambda body, verdict: _post(ctx, body, verdict, changed=True),
            differs=lambda current, new: not same_status(current, new),
            is_paused=is_paused,
            retry_delay=ctx.settings.retry_delay,
            concurrency=ctx.settings.worker_limit,
            may_retry=lambda: not ctx.clusters.closed,  # stopping: no retry would run
        )
    work = ctx.topic_work
    if not isinstance(work, TopicWork):
        raise TypeError(f"memo.kto.topic_work is {type(work).__name__}, not the operator's TopicWork")
    return work


async def _reconciled(ctx: OperatorContext, body: Mapping[str, Any]) -> Verdict:
    claims = await _claims(ctx)
    verdict = await reconcile_topic(
        ctx, body, claims=claims, identity_of=_identity_of(ctx.cluster_identities)
    )
    ctx.metrics.reconciles.labels(_cluster_label(body), verdict.result).inc()
    return verdict


async def kto_cluster_identities(
    body: kopf.Body, memo: Any, namespace: str | None, name: str | None, **_: Any
) -> dict[ClusterKey, str]:
    """Every KafkaCluster's identity; and its body, kept before any KafkaTopic is handled (kopf fills its indices
    first), so that a KafkaTopic naming a KafkaCluster that exists is never told ClusterNotFound, and is judged
    against its grants even while the cluster is unreachable."""
    _seen(memo, "kafkaclusters", body)
    ctx = getattr(memo, "kto", None)
    if isinstance(ctx, OperatorContext) and namespace is not None and name is not None:
        ctx.cluster_bodies[(namespace, name)] = _plain(body)
    spec = mapping(body.get("spec"))
    connect = mapping(spec.get("zookeeper")).get("connect")
    servers = spec.get("bootstrapServers")
    if not isinstance(connect, str):
        connect = ""
    if not (connect or isinstance(servers, str)) or namespace is None or name is None:
        return {}
    return {(namespace, name): spec_identity(connect, servers if isinstance(servers, str) else None)}


async def kto_namespace_labels(body: kopf.Body, name: str | None, **_: Any) -> dict[str, dict[str, str]]:
    """Every namespace's labels, for the grants that select namespaces by label (``spec.tenants``)."""
    labels = mapping(mapping(body.get("metadata")).get("labels"))
    return {} if name is None else {name: {str(k): str(v) for k, v in labels.items()}}


# -- KafkaTopic -------------------------------------------------------------------------------------------------


async def topic_deleted(
    body: kopf.Body,
    memo: Any,
    kto_cluster_identities: kopf.Index[ClusterKey, str],
    **_: Any,
) -> None:
    ctx = _context(memo)
    plain = _topic_body(body)
    claims = await _claims(ctx)
    verdict = await delete_topic(ctx, plain, claims=claims, identity_of=_identity_of(kto_cluster_identities))
    ctx.metrics.reconciles.labels(_cluster_label(plain), verdict.result).inc()
    for event in verdict.events:
        ctx.events.post(plain, type=event.type, reason=event.reason, message=event.message)
    if not verdict.release:
        raise kopf.TemporaryError(verdict.retry or "deletion not finished", delay=ctx.settings.retry_delay)


# -- KafkaCluster -----------------------------------------------------------------------------------------------


async def cluster_changed(
    body: kopf.Body,
    memo: Any,
    patch: kopf.Patch,
    kto_cluster_identities: kopf.Index[ClusterKey, str],
    **_: Any,
) -> None:
    ctx = _context(memo)
    plain = _plain(body)
    verdict = await reconcile_cluster(
        ctx, plain, declared=_declared(await _claims(ctx), kto_cluster_identities)
    )
    key = (str(plain["metadata"].get("namespace")), str(plain["metadata"].get("name")))
    ctx.cluster_statuses[key] = verdict.status  # what kopf writes: the session keeper need not write it again
    _finish(ctx, plain, verdict, patch)


async def cluster_deleted(body: kopf.Body, memo: Any, **_: Any) -> None:
    await forget_cluster(_context(memo), _plain(body))


async def cluster_timer(
    body: kopf.Body,
    memo: Any,
    patch: kopf.Patch,
    kto_cluster_identities: kopf.Index[ClusterKey, str],
    **_: Any,
) -> None:
    """One round of the cluster, written through kopf's ``patch``: what the session keeper does every
    ``drift_interval`` (the handler tests call it as the timer it was)."""
    ctx = _context(memo)
    if ctx.clusters.closed:
        return  # the operator is stopping: its sessions are closed
    plain = _plain(body)
    verdict = await _cluster_round(ctx, plain, await _claims(ctx), kto_cluster_identities)
    changed = not same_status(plain.get("status"), verdict.status)
    if changed:
        patch.status.update(verdict.status)
    _post(ctx, plain, verdict, changed=changed)


async def _cluster_round(
    ctx: OperatorContext,
    body: Mapping[str, Any],
    claims: ClaimIndex,
    identities: kopf.Index[ClusterKey, str],
) -> Verdict:
    """Connect (or keep the session) and describe the cluster; when connected, check its KafkaTopics for drift,
    which also reconciles the unsettled ones (changed while it was down, or whose owner went away)."""
    verdict, read = await describe_cluster(ctx, body, declared=_declared(claims, identities))
    key = (str(body["metadata"].get("namespace")), str(body["metadata"].get("name")))
    handle = ctx.clusters.get(key)
    if verdict.retry is None and handle is not None:
        try:
            _, state = await check_drift(
                ctx,
                handle,
                claims.of_cluster(key),
                claims=claims,
                identity_of=_identity_of(identities),
                state=read,
            )
            tenants = _tenant_report(ctx, handle, body, state)
        except CLUSTER_FAILURES as error:  # gone between describing the cluster and checking its topics
            return failed_verdict(ctx, body, error)
        if tenants:
            verdict = dataclasses.replace(verdict, status={**verdict.status, **tenants})
    return verdict


def _tenant_report(
    ctx: OperatorContext, handle: ClusterHandle, body: Mapping[str, Any], state: ClusterState
) -> dict[str, Any]:
    """``status.tenants`` (each other namespace's usage in Kafka against its quota) and ``status.tenantErrors``
    (the grants that could not be read, each granting nothing), with the tenant metrics, from the ``state`` the
    drift check read; for a KafkaCluster that grants nothing and is named by no other namespace, nothing (and
    what an earlier version reported is cleared)."""
    tenancy = ctx.tenancy_of(handle.key)
    declared = ctx.claims.tenants_of(handle.key)
    if tenancy is None or not (tenancy.grants or tenancy.problems or declared):
        ctx.metrics.record_tenants(handle.label, [])
        previous = mapping(body.get("status"))
        return {field: None for field in ("tenants", "tenantErrors") if field in previous}
    rows = tenant_usage(tenancy, declared, ctx.labels_of, state)
    ctx.metrics.record_tenants(handle.label, rows)
    return {"tenants": [row.to_status() for row in rows], "tenantErrors": list(tenancy.problems)}


async def cluster_session(
    body: kopf.Body,
    memo: Any,
    stopped: kopf.DaemonStopped,
    kto_cluster_identities: kopf.Index[ClusterKey, str],
    **_: Any,
) -> None:
    """The KafkaCluster's session keeper and periodic round (``sessions``): a lost session is replaced, the
    KafkaTopics changed meanwhile are reconciled as soon as it is back, and every ``drift_interval`` the cluster
    is described and its KafkaTopics checked for drift."""
    ctx = _context(memo)
    claims = await _claims(ctx)
    await keep_session(
        ctx,
        lambda: _plain(body),
        stopped,
        round_=lambda: _cluster_round(ctx, _plain(body), claims, kto_cluster_identities),
        every=ctx.settings.drift_interval,
        poll_every=ctx.settings.kraft_poll_interval,
    )
    if stopped.reason is not None and stopped.reason & kopf.DaemonStoppingReason.RESOURCE_DELETED:
        await forget_cluster(
            ctx, _plain(body)
        )  # gone without its delete handler (its finalizer removed by hand)


# -- operator ---------------------------------------------------------------------------------------------------


async def cleanup(memo: Any, **_: Any) -> None:
    """Close every ZooKeeper session (ending the sessions at once rather than after their timeout), and set the
    operator's stop flag: stopped by a signal, kopf would otherwise wait 5 s for its waiter on that flag."""
    ctx = getattr(memo, "kto", None)
    if isinstance(ctx, OperatorContext):
        if ctx.stop_flag is not None:
            ctx.stop_flag.set()
        if ctx.topic_work is not None:
            await ctx.topic_work.close()
        close_events = getattr(ctx.events, "close", None)
        if close_events is not None:
            await close_events()
        await ctx.clusters.close()
        close = getattr(ctx.api, "close", None)
        if close is not None:
            await close()


def _handler(fn: Any) -> Any:
    """kopf's callback protocols list every kwarg kopf may pass; ours name only what they use, plus the index
    kwargs kopf adds by index name, which no protocol can list."""
    return cast(Any, fn)


def build_registry(settings: OperatorSettings) -> kopf.OperatorRegistry:
    """Every handler of the operator, on a registry of its own, with the login handlers kopf's default registry
    would have (``login``): a bare registry has none, and the operator could not log in anywhere."""
    registry = kopf.OperatorRegistry()
    register_logins(registry, connections=settings.api_connections)
    kopf.on.event(*TOPICS, registry=registry, id="topic-event")(_handler(topic_event))
    kopf.index(*CLUSTERS, registry=registry)(_handler(kto_cluster_identities))
    kopf.index(*NAMESPACES, registry=registry)(_handler(kto_namespace_labels))

    kopf.on.delete(
        *TOPICS, registry=registry, id="topic-delete", field="spec.deletionPolicy", value="Delete"
    )(_handler(topic_deleted))

    kopf.on.resume(*CLUSTERS, registry=registry, id="cluster")(_handler(cluster_changed))
    kopf.on.create(*CLUSTERS, registry=registry, id="cluster")(_handler(cluster_changed))
    kopf.on.update(*CLUSTERS, registry=registry, id="cluster")(_handler(cluster_changed))
    kopf.on.delete(*CLUSTERS, registry=registry, id="cluster-delete", optional=True)(
        _handler(cluster_deleted)
    )
    kopf.daemon(*CLUSTERS, registry=registry, id="session", cancellation_timeout=5.0)(
        _handler(cluster_session)
    )

    if settings.webhook_port and not settings.webhook_certificate_dir:  # otherwise every replica serves it
        kopf.on.validate(
            *TOPICS,
            registry=registry,
            id="tenancy",
            operations=["CREATE", "UPDATE"],
            ignore_failures=settings.webhook_failure_policy == "Ignore",
        )(_handler(validate_kafkatopic))

    kopf.on.cleanup(registry=registry)(_handler(cleanup))
    return registry


def build_kopf_settings(settings: OperatorSettings, *, priority: int) -> kopf.OperatorSettings:
    """kopf's own settings: our finalizer, kopf's records in the status (``persistence``), peering, no
    CRD/namespace scanning."""
    kopf_settings = kopf.OperatorSettings()
    configure_persistence(kopf_settings, finalizer=FINALIZER)
    kopf_settings.posting.reporting_component = REPORTING_COMPONENT
    kopf_settings.posting.level = logging.INFO
    kopf_settings.queueing.worker_limit = settings.worker_limit or None
    # kopf's first list, and every relist, in pages as kubectl and client-go list: kopf's default is the whole
    # kind in one response, which with 50,000 KafkaTopics is a few hundred MB of JSON parsed at once, and was the
    # restart's peak of memory.
    kopf_settings.watching.chunk_size = _LIST_PAGE
    # A per-object worker leaves soon after its object's last event, instead of idling for kopf's 5 s: a worker
    # holds one of the ``worker_limit`` slots while it idles, so with 2,000 slots kopf took at most 400 objects a
    # second through its first list, and a restart over 50,000 KafkaTopics at least two minutes.
    kopf_settings.queueing.idle_timeout = _WORKER_IDLE_TIMEOUT
    # Our CRDs are installed before the operator: no need to watch CRDs or list namespaces (least privilege).
    kopf_settings.scanning.disabled = True
    kopf_settings.peering.name = settings.peering or "default"
    kopf_settings.peering.standalone = not settings.peering
    kopf_settings.peering.mandatory = bool(settings.peering)
    kopf_settings.peering.clusterwide = settings.clusterwide
    kopf_settings.peering.priority = priority
    kopf_settings.peering.stealth = True
    if settings.webhook_port and not settings.webhook_certificate_dir:
        kopf_settings.admission.server = webhook_server(settings)
        kopf_settings.admission.managed = CONFIGURATION
    return kopf_settings
