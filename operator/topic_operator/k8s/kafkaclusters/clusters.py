"""KafkaCluster reconciliation: validate, read its Secrets, connect (or keep the session), report the cluster.

Shared by the KafkaCluster's create/update/resume handlers and its timer. Connection failures become a Ready=False
condition whose reason says which kind (unreachable, refused credentials, missing chroot, not a Kafka cluster,
missing Secret), plus a retry; nothing here imports kopf.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from kazoo.exceptions import KazooException

from topic_operator.access.interface import ClusterAccessError, ClusterMismatchError, ClusterUnavailableError
from topic_operator.admin.errors import (
    AdminSettingsError,
    BrokersRefusedCredentialsError,
    BrokersTlsError,
)
from topic_operator.k8s.conditions import READY, Condition, Reason
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.kafkaclusters.cluster_config import ClusterConfigError, cluster_config, secret_names
from topic_operator.k8s.kafkaclusters.registry import ClusterHandle
from topic_operator.k8s.process.kube_api import SecretForbiddenError
from topic_operator.k8s.records import EventSpec, Verdict
from topic_operator.k8s.status import cluster_status, kafka_release_status
from topic_operator.kafka.kraft_migration import WriterChoice
from topic_operator.manifests.loader import load_objects
from topic_operator.model import ClusterState
from topic_operator.zookeeper.errors import (
    NotAKafkaClusterError,
    ZooKeeperAuthError,
    ZooKeeperChrootMissingError,
)

__all__ = [
    "CLUSTER_FAILURES",
    "classify_failure",
    "connect_cluster",
    "describe_cluster",
    "failed_verdict",
    "forget_cluster",
    "reconcile_cluster",
    "writer_moved",
]

logger = logging.getLogger(__name__)


def _key(body: Mapping[str, Any]) -> tuple[str, str]:
    metadata = body.get("metadata") or {}
    return str(metadata.get("namespace", "")), str(metadata.get("name", ""))


async def connect_cluster(ctx: OperatorContext, body: Mapping[str, Any]) -> ClusterHandle:
    """The cluster's handle, connecting if needed; raises ``ClusterConfigError`` or the ZooKeeper error."""
    key = _key(body)
    ctx.cluster_bodies[key] = body
    manifests = load_objects([body], origin=f"{key[0]}/{key[1]}", limits=ctx.manifest_limits)
    if manifests.errors or not manifests.clusters:
        problems = "; ".join(
            f"{e.field_path}: {e.rule}" if e.field_path else e.rule for e in manifests.errors
        )
        raise ClusterConfigError(problems or "invalid KafkaCluster")
    secrets = await _read_secrets(ctx, key[0], secret_names(body))
    config = await asyncio.to_thread(
        cluster_config,
        body,
        secrets,
        material_dir=ctx.settings.material_dir,
        connection_timeout=ctx.settings.zk_connection_timeout,
        session_timeout=ctx.settings.zk_session_timeout,
    )
    return await ctx.clusters.configure(key, manifests.clusters[0], body, config)


async def _read_secrets(
    ctx: OperatorContext, namespace: str, names: Iterable[str]
) -> dict[str, Mapping[str, Any] | None]:
    """The Secrets a KafkaCluster names, from its own namespace; one RBAC does not let the operator read is the
    KafkaCluster's ``SecretForbidden``, naming the RoleBinding that would grant it."""
    secrets: dict[str, Mapping[str, Any] | None] = {}
    for name in names:
        try:
            secrets[name] = await ctx.api.read_secret(namespace, name)
        except SecretForbiddenError:
            binding = ctx.settings.secrets_role_binding
            raise ClusterConfigError(
                f"the operator may not read Secret {namespace}/{name}: RoleBinding {namespace}/{binding} is "
                f"missing, or its Role does not grant get on Secrets (RBAC grants the operator Secrets only in "
                f"the namespaces bound to it; with Helm, add {namespace} to clusterNamespaces)",
                Reason.SECRET_FORBIDDEN,
            ) from None
    return secrets


def classify_failure(error: Exception) -> tuple[Reason, str]:
    """The Ready reason and the metrics label of a failed connection."""
    match error:
        case ClusterConfigError():
            return error.reason, "config"
        case ClusterMismatchError():
            return Reason.CLUSTER_MISMATCH, "config"
        case AdminSettingsError():
            return Reason.INVALID, "config"
        case BrokersRefusedCredentialsError() | BrokersTlsError():
            return Reason.AUTH_FAILED, "auth"
        case ZooKeeperAuthError():
            return Reason.AUTH_FAILED, "auth"
        case ZooKeeperChrootMissingError():
            return Reason.CHROOT_MISSING, "chroot_missing"
        case NotAKafkaClusterError():
            return Reason.NOT_A_KAFKA_CLUSTER, "not_a_kafka_cluster"
    return Reason.CLUSTER_UNAVAILABLE, "unavailable"


CLUSTER_FAILURES = (
    ClusterConfigError,
    ClusterMismatchError,
    ClusterAccessError,
    KazooException,
    ValueError,
)
"""What connecting to and reading a cluster may raise: each is the cluster's Ready=False, never the round's crash."""


def failed_verdict(ctx: OperatorContext, body: Mapping[str, Any], error: Exception) -> Verdict:
    """The KafkaCluster's verdict when connecting to or reading it failed: Ready=False with the reason of the
    failure, one Warning Event, the error counted, and a retry."""
    key = _key(body)
    label = f"{key[0]}/{key[1]}"
    reason, kind = classify_failure(error)
    if kind != "config":
        ctx.metrics.count_cluster_error(label, kind)
    ctx.metrics.connected.labels(label).set(0)
    message = f"{error}; retrying"
    ready = Condition(READY, False, reason, message)
    status = cluster_status(
        generation=(body.get("metadata") or {}).get("generation"),
        state=None,
        declared=(),
        ready=ready,
        previous=body.get("status"),
        now=ctx.clock(),
    )
    return Verdict(status, kind, (EventSpec("Warning", reason.value, message),), retry=message)


async def reconcile_cluster(
    ctx: OperatorContext, body: Mapping[str, Any], *, declared: Callable[[str], Collection[str]]
) -> Verdict:
    """Connect (keeping an unchanged session) and describe the cluster. ``declared(identity)`` gives the topic
    names KafkaTopics declare for the Kafka cluster of that identity (in any namespace)."""
    verdict, _ = await describe_cluster(ctx, body, declared=declared)
    return verdict


async def describe_cluster(
    ctx: OperatorContext, body: Mapping[str, Any], *, declared: Callable[[str], Collection[str]]
) -> tuple[Verdict, ClusterState | None]:
    """``reconcile_cluster``, with the cluster as it was read (None when it could not be): the round checks its
    KafkaTopics against that same state, where a read through the brokers costs a request per few hundred
    topics. Only the declared topics' overrides are read."""
    key = _key(body)
    label = f"{key[0]}/{key[1]}"
    generation = (body.get("metadata") or {}).get("generation")
    previous = body.get("status")
    now = ctx.clock()
    try:
        handle = await connect_cluster(ctx, body)
        if (
            not handle.alive
        ):  # kazoo is reconnecting: reading would wait for it; the session keeper watches it
            raise ClusterUnavailableError(f"the connection to {handle.address} is lost; reconnecting")
        names = declared(handle.identity)
        state = await handle.run(lambda: handle.state_for(names))
    except CLUSTER_FAILURES as error:
        return failed_verdict(ctx, body, error), None
    message = (
        f"Connected to {handle.address}: cluster {state.cluster_id}, {len(state.brokers)} brokers, "
        f"{len(state.topics)} topics"
    )
    unreadable = len(state.unreadable_znodes) + len(state.unreadable_topics)
    if unreadable:
        message += f"; {unreadable} znodes not in Kafka's format, listed in status.unreadable"
    release = kafka_release_status(
        handle.spec.kafka_version, state, declared=handle.spec.kafka_version_declared
    )
    if release is not None and "warning" in release:
        message += f"; {release['warning']}"
    choice = state.writer
    if state.kraft_migration is not None:
        message += f"; migrating to KRaft, so nothing is written to it: {state.kraft_migration}"
        if choice is not None:
            message += f"; stage {choice.stage}: {choice.why}"
        ready = Condition(READY, False, Reason.KRAFT_MIGRATION, message)
    else:
        if choice is not None and state.migration is not None:
            message += f"; migrating to KRaft, stage {choice.stage}: {choice.why}"
        ready = Condition(READY, True, Reason.CONNECTED, message)
    # The status walks every topic of the cluster (which of them no KafkaTopic declares): at 50,000 topics that
    # held the event loop for tens of milliseconds, so it is built in a worker thread from the state read (not
    # the cluster's own thread, which a drift check may keep busy and a closing session shuts).
    status = await asyncio.to_thread(
        cluster_status,
        generation=generation,
        state=state,
        declared=names,
        ready=ready,
        previous=previous,
        now=now,
        kafka_version=handle.spec.kafka_version,
        kafka_version_declared=handle.spec.kafka_version_declared,
    )
    ctx.metrics.unmanaged_topics.labels(label).set(status["topics"]["unmanaged"])
    events: tuple[EventSpec, ...] = (
        () if handle.announced else (EventSpec("Normal", Reason.CONNECTED.value, message),)
    )
    handle.announced = True  # the handler and the session keeper may both connect it first: one Event
    moved = writer_moved(handle.writer, choice)
    if moved is not None:
        logger.info("KafkaCluster %s: %s", label, moved)
        events += (EventSpec("Normal", Reason.WRITER_CHANGED.value, moved),)
    handle.writer = choice
    if choice is not None:
        ctx.metrics.record_writer(label, choice.stage, choice.writer.value)
    return Verdict(status, "connected", events), state


def writer_moved(before: WriterChoice | None, now: WriterChoice | None) -> str | None:
    """The one line saying the migration moved to another stage or writer since ``before``; None when it did
    not, or when nothing was reported before (the Connected Event says where it stands)."""
    if before is None or now is None or (before.stage, before.writer) == (now.stage, now.writer):
        return None
    return (
        f"the migration to KRaft moved from stage {before.stage} (writes through {before.writer.value}) to "
        f"stage {now.stage}: writes now go through {now.writer.value}: {now.why}"
    )


async def forget_cluster(ctx: OperatorContext, body: Mapping[str, Any]) -> None:
    """The KafkaCluster is gone: close its session. Its KafkaTopics report ClusterUnavailable from then on."""
    key = _key(body)
    ctx.cluster_bodies.pop(key, None)
    ctx.cluster_statuses.pop(key, None)
    ctx.session_heartbeats.pop(key, None)
    await ctx.clusters.remove(key)
    ctx.metrics.forget_cluster(f"{key[0]}/{key[1]}")
