"""A KafkaTopic/KafkaCluster world for calling the kopf handlers directly, against a real ZooKeeper.

The cluster side is real: a chroot on the session's ZooKeeper made to look like a 6-broker Kafka cluster, and the
operator's own ``ClusterRegistry`` connecting to it through ``open_client``. Only the Kubernetes API is replaced,
at the seam the operator defines for it: ``FakeKubernetes`` stores the objects, serves Secrets and applies status
merge patches (``KubernetesApi``) and records Events (``EventSink``); the handlers get kopf's real ``Patch`` and
``Memo`` objects. Each scenario runs in one event loop (``World.run``), as the operator does.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import kopf

from topic_operator.k8s import handlers
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.process.kube_api import SecretForbiddenError
from topic_operator.model import ClusterState

API = "kto.dev/v1alpha1"
NOW = datetime.datetime(2025, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)
_created = itertools.count()


def merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    """JSON merge patch (RFC 7386), as the API server applies a status patch, and stores the result: without
    null fields at any depth (a real API server drops them from custom resources, in list items too)."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = _stored(copy.deepcopy(dict(value) if isinstance(value, Mapping) else value))


def _stored(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stored(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_stored(v) for v in value]
    return value


def kafka_cluster(
    name: str, connect: str, namespace: str = "team-a", *, allow_delete: bool = False, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "KafkaCluster",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": str(uuid.uuid4()),
            "generation": 1,
            "creationTimestamp": "2025-01-01T00:00:00Z",
        },
        "spec": {"zookeeper": {"connect": connect}, "allowDelete": allow_delete, **spec},
    }


def kafka_topic(
    name: str,
    cluster: str = "main",
    namespace: str = "team-a",
    *,
    partitions: int = 3,
    replicas: int = 3,
    config: Mapping[str, Any] | None = None,
    created: str | None = None,
    annotations: Mapping[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A KafkaTopic as the API server serves it; each new one is a second younger than the previous."""
    stamp = created or (NOW + datetime.timedelta(seconds=next(_created))).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": API,
        "kind": "KafkaTopic",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": str(uuid.uuid4()),
            "generation": 1,
            "creationTimestamp": stamp,
            "annotations": dict(annotations or {}),
        },
        "spec": {
            "cluster": cluster,
            "partitions": partitions,
            "replicas": replicas,
            **({"config": dict(config)} if config is not None else {}),
            **spec,
        },
    }


def ready(body: Mapping[str, Any]) -> dict[str, Any]:
    conditions = (body.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Ready"), {})


class RetryLaterError(Exception):
    """The operator scheduled a retry of a KafkaTopic (``TopicWork``): the message is the verdict's reason."""


@dataclass
class Event:
    name: str
    type: str
    reason: str
    message: str


@dataclass
class FakeKubernetes:
    """The API server as the operator sees it through its seam: objects, Secrets, status patches, Events."""

    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    secrets: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    status_patches: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    secrets_forbidden_in: set[str] = field(default_factory=set)
    """Namespaces where RBAC grants the operator no ``get`` on Secrets (the API server's 403)."""

    async def read_secret(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        if namespace in self.secrets_forbidden_in:
            raise SecretForbiddenError(namespace, name, f'secrets "{name}" is forbidden')
        return self.secrets.get((namespace, name))

    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    """Every Namespace's labels (the World's, shared)."""

    async def read_kafkacluster(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.objects.get(("kafkaclusters", namespace, name))

    async def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return self.namespaces.get(name)

    async def list_kafkatopics(self, namespace: str) -> list[Mapping[str, Any]]:
        return [
            b
            for (plural, where, _), b in self.objects.items()
            if plural == "kafkatopics" and where == namespace
        ]

    async def list_uids(self, plural: str, namespaces: tuple[str, ...]) -> set[str]:
        return {
            str(body["metadata"]["uid"])
            for (kind, namespace, _), body in self.objects.items()
            if kind == plural and (not namespaces or namespace in namespaces)
        }

    async def patch_status(self, plural: str, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        self.status_patches.append((plural, f"{namespace}/{name}", dict(status)))
        merge(self.objects[(plural, namespace, name)], {"status": dict(status)})

    def post(self, body: Mapping[str, Any], *, type: str, reason: str, message: str) -> None:
        self.events.append(Event(body["metadata"]["name"], type, reason, message))

    def events_of(self, name: str) -> list[tuple[str, str]]:
        return [(e.type, e.reason) for e in self.events if e.name == name]

    def add_secret(self, namespace: str, name: str, **values: str) -> None:
        data = {k: base64.b64encode(v.encode()).decode() for k, v in values.items()}
        self.secrets[(namespace, name)] = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                           "metadata": {"name": name, "namespace": namespace}, "data": data}  # fmt: skip


class World:
    """KafkaTopics and KafkaClusters, the operator's claims and kopf's index over them, and the handlers called as
    kopf would."""

    def __init__(self, ctx: OperatorContext, kube: FakeKubernetes) -> None:
        self.ctx = ctx
        self.kube = kube
        self.memo = kopf.Memo(kto=ctx)
        self.gone: list[Mapping[str, Any]] = []
        """Objects removed since the last handler call: their DELETED watch event is still to be delivered."""
        self.namespace_labels: dict[str, dict[str, str]] = kube.namespaces
        """Every Namespace's labels, as kopf's index of them holds them (built by the operator's function), and as
        the API server answers them."""

    # -- objects --------------------------------------------------------------------------------------------------

    def add(self, body: dict[str, Any]) -> dict[str, Any]:
        plural = "kafkatopics" if body["kind"] == "KafkaTopic" else "kafkaclusters"
        key = (plural, body["metadata"]["namespace"], body["metadata"]["name"])
        self.kube.objects[key] = body
        return body

    def remove(self, body: Mapping[str, Any]) -> None:
        plural = "kafkatopics" if body["kind"] == "KafkaTopic" else "kafkaclusters"
        self.kube.objects.pop((plural, body["metadata"]["namespace"], body["metadata"]["name"]), None)
        self.gone.append(body)

    def edit(self, body: dict[str, Any], **spec: Any) -> dict[str, Any]:
        """A spec change as the API server records it: the generation moves."""
        body["spec"].update(spec)
        body["metadata"]["generation"] += 1
        return body

    def _of(self, plural: str) -> list[dict[str, Any]]:
        return [b for (p, _, _), b in self.kube.objects.items() if p == plural]

    async def indices(self) -> dict[str, dict[Any, list[Any]]]:
        """Before a handler, as kopf would have it: the KafkaTopic watch events delivered (every object's latest
        version, and the DELETED of those removed), kopf's first list seen by readiness (listed through the
        operator's own API seam), and kopf's index over the KafkaClusters, built by the operator's function."""
        for body in self.gone:
            if body["kind"] == "KafkaTopic":
                await handlers.topic_event(body=body, memo=self.memo, type="DELETED")
        self.gone = []
        delivered = self._of("kafkatopics")
        for (
            body
        ) in delivered:  # their claims (the watch-event handler's first part; a change is delivered apart)
            handlers.keep_claim(self.ctx, body, "MODIFIED")
            self.ctx.readiness.seen("kafkatopics", body["metadata"]["uid"])
        readiness = self.ctx.readiness
        if not readiness.ready:  # the list is what was just delivered (other scenarios' coroutines add more)
            listed = {"kafkatopics": {b["metadata"]["uid"] for b in delivered}, "kafkaclusters": set()}

            async def list_uids(plural: str) -> set[str]:
                return listed[plural]

            readiness.started()
            readiness.logged_in()
            await asyncio.wait_for(readiness.run(list_uids), 10)
        found: dict[str, dict[Any, list[Any]]] = {"kto_cluster_identities": {}, "kto_namespace_labels": {}}
        for name, labels in self.namespace_labels.items():
            namespace = {"metadata": {"name": name, "labels": labels}}
            for key, value in (await handlers.kto_namespace_labels(body=namespace, name=name)).items():
                found["kto_namespace_labels"].setdefault(key, []).append(value)
        for body in self._of("kafkaclusters"):
            meta = body["metadata"]
            for key, value in (await handlers.kto_cluster_identities(body=body, memo=self.memo, namespace=meta["namespace"], name=meta["name"])).items():  # fmt: skip
                found["kto_cluster_identities"].setdefault(key, []).append(value)
        return found

    # -- handlers -------------------------------------------------------------------------------------------------

    def _apply(self, body: dict[str, Any], patch: kopf.Patch) -> None:
        merge(body, dict(patch))

    async def _changed(self, handler: Callable[..., Awaitable[None]], body: dict[str, Any]) -> kopf.Patch:
        """Call a change handler as kopf does (the body, the memo, a patch and the indices), then apply the patch."""
        self.add(body)
        patch = kopf.Patch()
        indices = await self.indices()
        try:
            await handler(body=body, memo=self.memo, patch=patch, **indices)
        finally:
            self._apply(body, patch)
        return patch

    async def cluster_changed(self, body: dict[str, Any]) -> kopf.Patch:
        return await self._changed(handlers.cluster_changed, body)

    async def cluster_deleted(self, body: dict[str, Any]) -> None:
        self.remove(body)
        await handlers.cluster_deleted(body=body, memo=self.memo)

    async def tick(self, body: dict[str, Any]) -> kopf.Patch:
        """The KafkaCluster's drift timer."""
        patch = kopf.Patch()
        indices = await self.indices()
        try:
            await handlers.cluster_timer(body=body, memo=self.memo, patch=patch, **indices)
        finally:
            self._apply(body, patch)
        return patch

    async def _topic(self, body: dict[str, Any], *, first_sight: bool) -> kopf.Patch:
        """Deliver the KafkaTopic's watch event as kopf does, and wait for the operator's work on it; a retry it
        scheduled (waiting ``retry_delay`` in production) runs at once when the event is no new work, as the
        next call of kopf's handler did. Returns the status written, as a patch; raises ``RetryLaterError`` when the
        operator scheduled a retry."""
        self.add(body)
        indices = await self.indices()
        work = handlers.topic_work(self.ctx)
        namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
        written = len(self.kube.status_patches)
        await handlers.topic_event(
            body=body, memo=self.memo, type=None if first_sight else "MODIFIED", **indices
        )
        if not work.busy_with(namespace, name):
            work.retry_now(namespace, name)
        verdict = await work.outcome(namespace, name)
        patch = kopf.Patch()
        for plural, key, status in self.kube.status_patches[written:]:
            if plural == "kafkatopics" and key == f"{namespace}/{name}":
                merge(patch.setdefault("status", {}), status)
        if work.retry_pending(namespace, name):
            raise RetryLaterError(verdict.retry if verdict is not None else "retrying")
        return patch

    async def topic_changed(self, body: dict[str, Any]) -> kopf.Patch:
        """A KafkaTopic created or changed: its watch event."""
        return await self._topic(body, first_sight=False)

    async def topic_resumed(self, body: dict[str, Any]) -> kopf.Patch:
        """kopf's first list of an existing KafkaTopic when the operator starts."""
        return await self._topic(body, first_sight=True)

    async def topic_deleted(self, body: dict[str, Any], *, requested: datetime.datetime = NOW) -> None:
        """kopf calls the delete handler (only for deletionPolicy Delete); returning releases the finalizer."""
        body["metadata"]["deletionTimestamp"] = requested.strftime("%Y-%m-%dT%H:%M:%SZ")
        indices = await self.indices()
        await handlers.topic_deleted(body=body, memo=self.memo, kto_cluster_identities=indices["kto_cluster_identities"])  # fmt: skip
        self.remove(body)

    def run(self, scenario: Callable[[], Awaitable[None]]) -> None:
        """Run a scenario in one event loop, closing every ZooKeeper session the operator opened at the end."""

        async def main() -> None:
            try:
                await scenario()
            finally:
                await self.ctx.clusters.remove_all()

        asyncio.run(main())


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime.datetime:
        return self.now


def wait_for_view(
    world: World, check: Callable[[ClusterState], bool], cluster: tuple[str, str] = ("team-a", "main")
) -> None:
    """Wait until the operator's watched view of ``cluster`` passes ``check``: watches fire asynchronously, so a
    change made behind the operator's back reaches its view a moment later (in production, the next check)."""
    handle = world.ctx.clusters.get(cluster)
    assert handle is not None
    deadline = time.monotonic() + 5
    while not check(handle.state()):
        assert time.monotonic() < deadline, "the watches never reported the change"
        handle.link.watched.wait_for_change(0.1)
