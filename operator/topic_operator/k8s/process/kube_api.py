"""The Kubernetes API calls kopf does not make for us, behind two small protocols the tests replace.

kopf watches, patches the handled object and posts Events; it does not read Secrets, and it patches only the
object a handler runs for. The operator also needs to read a KafkaCluster's Secrets, patch the status of a
KafkaCluster's KafkaTopics from its drift timer, and list the uids of each kind for readiness (``readiness``).
Those three verbs are ``KubernetesApi``; Events go through ``EventSink`` (kopf's poster in production).

Production client: lightkube. It is typed (``py.typed``, so ``mypy --strict`` checks our calls), async (it runs in
kopf's event loop without a thread per call), small (one HTTP client and generated models), maintained (Canonical
ships it in every Juju charm), and it reads in-cluster service-account credentials and kubeconfigs by itself. The
official ``kubernetes`` client is synchronous and untyped, ``kubernetes_asyncio`` is untyped too, and both pull a
large generated tree for the three calls needed here.
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, cast

import aiohttp

from topic_operator.k8s.process.handler_scope import start_outside_handler
from topic_operator.message_text import error_line

logger = logging.getLogger(__name__)

__all__ = [
    "EVENTS_WAITING",
    "EVENT_POSTERS",
    "ApiRefusedError",
    "EventSink",
    "KopfEvents",
    "KubernetesApi",
    "LightkubeApi",
    "SecretForbiddenError",
    "SessionEvents",
    "patch_status_over",
    "status_code",
]

GROUP: Final = "kto.dev"
VERSION: Final = "v1alpha1"
KINDS: Final = {"kafkatopics": "KafkaTopic", "kafkaclusters": "KafkaCluster"}


class KubernetesApi(Protocol):
    async def read_secret(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The Secret's body (``data`` base64, as served), or None when it does not exist;
        ``SecretForbiddenError`` when RBAC does not let the operator read Secrets in ``namespace``."""
        ...

    async def patch_status(self, plural: str, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        """Merge-patch ``status`` into a kto.dev object's status subresource (None values remove fields)."""
        ...

    async def read_kafkacluster(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """A KafkaCluster's body, or None when there is none (a list by name: the RBAC grants list, not get)."""
        ...

    async def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """A Namespace's labels, or None when there is no such Namespace."""
        ...

    async def list_kafkatopics(self, namespace: str) -> list[Mapping[str, Any]]:
        """The bodies of every KafkaTopic of ``namespace``."""
        ...

    async def list_uids(self, plural: str, namespaces: tuple[str, ...]) -> set[str]:
        """The uids of every kto.dev object of ``plural`` in ``namespaces`` (all namespaces when empty)."""
        ...


class EventSink(Protocol):
    def post(self, body: Mapping[str, Any], *, type: str, reason: str, message: str) -> None:
        """Post a Kubernetes Event about ``body`` (Normal or Warning)."""
        ...


class KopfEvents:
    """kopf's own poster: queued and sent in the background, retried, rate-limited by kopf."""

    def post(self, body: Mapping[str, Any], *, type: str, reason: str, message: str) -> None:
        import kopf

        kopf.event(cast(Any, dict(body)), type=type, reason=reason, message=message)


class SecretForbiddenError(Exception):
    """RBAC refused the operator ``get`` on a Secret: no RoleBinding grants it Secrets in that namespace. The
    operator reads Secrets only where KafkaClusters live, each namespace granted on its own (least privilege)."""

    def __init__(self, namespace: str, name: str, message: str) -> None:
        super().__init__(message)
        self.namespace = namespace
        self.name = name


class ApiRefusedError(Exception):
    """The API server refused a request made over kopf's session (``patch_status_over``)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


_EVENT_MESSAGE: Final = 1024
"""The longest Event message posted (kopf's cut, which the API server takes)."""


def event_body(
    body: Mapping[str, Any],
    *,
    type: str,
    reason: str,
    message: str,
    component: str,
    at: datetime.datetime | None = None,
) -> dict[str, Any]:
    """A core/v1 Event about ``body``, as kopf's poster writes one (its message cut to what the API takes), made
    ``at`` (default: now). Its times always carry their microseconds: ``eventTime`` is a MicroTime, which the API
    server refuses without them, and ``isoformat()`` leaves them out when they are zero (one Event in a million
    was refused with 400)."""
    metadata = body.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "default")
    if len(message) > _EVENT_MESSAGE:
        half = (_EVENT_MESSAGE - 5) // 2
        message = f"{message[:half]} ... {message[-half:]}"
    now = (at or datetime.datetime.now(datetime.UTC)).isoformat(timespec="microseconds")
    involved = {"apiVersion": body.get("apiVersion"), "kind": body.get("kind"), "name": metadata.get("name"),
                "uid": metadata.get("uid"), "namespace": namespace}  # fmt: skip
    return {
        "metadata": {"namespace": namespace, "generateName": "kto-event-"},
        "action": "Reconcile",
        "type": type,
        "reason": reason,
        "message": message,
        "reportingComponent": component,
        "reportingInstance": component,
        "source": {"component": component},
        "involvedObject": involved,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "eventTime": now,
    }


EVENT_POSTERS: Final = 4
"""Events posted at once over the session: a quarter of its default 16 connections. The rest stay for the status
patches, which carry the same facts and must land (an Event is best-effort, in Kubernetes as here)."""

EVENTS_WAITING: Final = 50_000
"""Events that may wait for a poster, each kept as its JSON text (about 600 bytes, nothing for the garbage
collector to walk); one more is dropped (and said in the log), as client-go's recorder drops what its queue of
1,000 cannot take. 50,000 KafkaTopics created at once, as fast as the API server took them, dropped 15,000 Events
from a queue of 10,000: four posters cannot keep up with an API server the users saturate. With 50,000 they
were all posted, after their statuses, rather than lost."""

_DROPS_PER_LOG_LINE: Final = 1_000


class SessionEvents:
    """Events posted over kopf's bounded session (``session_of``: the last login's, None before it), without
    kopf's per-Event lookups of its credentials vault (kopf's poster cost the operator more CPU per KafkaTopic
    change than the status patch itself). Before a login, and when ``session_of`` gives nothing, ``fallback``
    posts (kopf's poster).

    Events wait in a queue of their own and at most ``posters`` go out at once. One task per Event, as before,
    let a burst of changes start thousands of posts that waited together for the session's connections, ahead
    of the status patches, each holding its request, until the API server's 30 s passed and the Event was lost:
    777 Events lost, and 428 status patches retried, in 50,000 unpaced updates. Here an Event's 30 s start when
    it is sent; what cannot wait (``waiting`` full) is dropped and counted in ``dropped``."""

    def __init__(
        self,
        fallback: EventSink,
        component: str,
        session_of: Callable[[], Any] = lambda: None,
        *,
        posters: int = EVENT_POSTERS,
        waiting: int = EVENTS_WAITING,
    ) -> None:
        self.session_of = session_of
        self._fallback = fallback
        self._component = component
        self._posters = posters
        self._room = waiting
        self._waiting: collections.deque[tuple[Any, str, str]] = collections.deque()
        """(session, namespace, the Event as JSON text)."""
        self._sending: set[asyncio.Task[None]] = set()
        self.dropped = 0
        """Events dropped because ``waiting`` were already queued."""

    @property
    def waiting(self) -> int:
        """Events queued for a poster now."""
        return len(self._waiting)

    def post(self, body: Mapping[str, Any], *, type: str, reason: str, message: str) -> None:
        session = self.session_of()
        if session is None:
            self._fallback.post(body, type=type, reason=reason, message=message)
            return
        event = event_body(body, type=type, reason=reason, message=message, component=self._component)
        if len(self._waiting) >= self._room:
            self._drop(event)
            return
        self._waiting.append((session, event["metadata"]["namespace"], json.dumps(event)))
        # A poster that found the queue empty has returned, and is done, before its done-callback leaves
        # ``_sending``: counted as posting, it would leave this Event waiting for the next one.
        if sum(not task.done() for task in self._sending) < self._posters:
            task = start_outside_handler(self._post_waiting())  # the poster outlives the handler
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    def _drop(self, event: Mapping[str, Any]) -> None:
        if self.dropped % _DROPS_PER_LOG_LINE == 0:
            involved = event["involvedObject"]
            logger.warning(
                "Event %s about %s/%s dropped: %d Events already wait to be posted (%d dropped so far)",
                event["reason"],
                involved["namespace"],
                involved["name"],
                len(self._waiting),
                self.dropped + 1,
            )
        self.dropped += 1

    async def _post_waiting(self) -> None:
        """Post queued Events one after the other until none waits."""
        while self._waiting:
            session, namespace, event = self._waiting.popleft()
            await self._send(session, namespace, event)

    async def _send(self, session: Any, namespace: str, event: str) -> None:
        try:
            await request_over(session, "POST", f"/api/v1/namespaces/{namespace}/events", event)
        except Exception as error:  # an Event lost is said in the log, never fatal (Kubernetes allows it)
            about = json.loads(event)
            logger.warning(
                "Event %s about %s/%s not posted: %s",
                about["reason"],
                namespace,
                about["involvedObject"]["name"],
                error_line(error),
            )

    async def close(self) -> None:
        """Wait a moment for the Events still queued or being posted (they carry what happened), then drop the
        rest."""
        if self._sending:
            await asyncio.wait(list(self._sending), timeout=5.0)
        self._waiting.clear()
        for task in list(self._sending):
            task.cancel()


def status_code(error: Exception) -> int | None:
    """The HTTP status of a refused request. lightkube raises ``ApiError`` only when the answer's Content-Type is
    exactly ``application/json`` (the API server's); otherwise the bare ``HTTPStatusError`` it derives from."""
    if isinstance(error, ApiRefusedError):
        return error.code
    code = getattr(getattr(error, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


_MERGE_PATCH: Final = {"Content-Type": "application/merge-patch+json"}
_JSON: Final = {"Content-Type": "application/json"}
_REQUEST_TIMEOUT: Final = 30.0
"""Seconds a status patch or an Event may take, the wait for a connection of the bounded pool included: then the
patch is retried and the Event given up (a hung API server must not hold a KafkaTopic's work forever)."""


async def patch_status_over(
    session: Any, plural: str, namespace: str, name: str, status: Mapping[str, Any]
) -> None:
    """``KubernetesApi.patch_status`` over kopf's own bounded aiohttp session (``login``): the same kept-alive
    connections as kopf's watches and Events. The answer (the whole object) is read, so that the connection is
    reused, but not decoded: nothing in it is needed. On the real kube-apiserver, lightkube's HTTP client cost a
    quarter of the operator's CPU per KafkaTopic change for this one request (httpx, its TLS streams, and the
    object decoded into a model), and opened connections beyond its kept-alive pool in every burst."""
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/{plural}/{name}/status"
    payload = json.dumps({"status": dict(status)}, separators=(",", ":"))
    await request_over(session, "PATCH", path, payload, _MERGE_PATCH)


async def request_over(
    session: Any, method: str, path: str, payload: str, headers: Mapping[str, str] = _JSON
) -> None:
    """One request over kopf's session (a ``kopf.AiohttpSession``), bounded by ``_REQUEST_TIMEOUT``. The answer
    is read, so that the connection is reused, but not decoded; a refusal is an ``ApiRefusedError``."""
    url = f"{str(session.server).rstrip('/')}{path}"
    timeout = aiohttp.ClientTimeout(total=_REQUEST_TIMEOUT)
    async with session.aiohttp_session.request(
        method, url, data=payload, headers=dict(headers), timeout=timeout
    ) as response:
        answer = await response.read()
        if response.status >= 400:
            reason = answer[:300].decode("utf-8", "replace")
            raise ApiRefusedError(response.status, f"{method} {path}: {response.status} {reason}")


def _lease_error(error: Exception, verb: str, namespace: str, name: str) -> Exception:
    """401/403 as ``LeaseAccessError`` (it will not pass by waiting), anything else as it came."""
    from topic_operator.k8s.process.leadership import LeaseAccessError

    code = status_code(error)
    if code in (401, 403):
        reason = error_line(error)
        return LeaseAccessError(
            f"the API refused to {verb} the leader Lease {namespace}/{name} ({code}): {reason}"
        )
    return error


class LightkubeApi:
    """``KubernetesApi`` on a lightkube ``AsyncClient``, created on first use (in the running loop)."""

    def __init__(self, field_manager: str = "kafka-topic-operator") -> None:
        self._field_manager = field_manager
        self._client: Any = None

    def _lazy_client(self) -> Any:
        if self._client is None:
            from lightkube import AsyncClient

            self._client = AsyncClient(field_manager=self._field_manager)
        return self._client

    async def read_secret(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        from lightkube.resources.core_v1 import Secret

        try:
            secret = await self._lazy_client().get(Secret, name, namespace=namespace)
        except Exception as error:  # an HTTP refusal, by its status (below); the rest as it came
            if status_code(error) == 404:
                return None
            if status_code(error) == 403:
                raise SecretForbiddenError(namespace, name, str(error)) from error
            raise
        body: Mapping[str, Any] = secret.to_dict()
        return body

    async def patch_status(self, plural: str, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        from lightkube.generic_resource import create_namespaced_resource
        from lightkube.types import PatchType

        resource = create_namespaced_resource(GROUP, VERSION, KINDS[plural], plural)
        await self._lazy_client().patch(
            resource.Status, name, {"status": dict(status)}, namespace=namespace, patch_type=PatchType.MERGE
        )

    async def read_kafkacluster(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        from lightkube.generic_resource import create_namespaced_resource

        resource = create_namespaced_resource(GROUP, VERSION, KINDS["kafkaclusters"], "kafkaclusters")
        async for item in self._lazy_client().list(
            resource, namespace=namespace, fields={"metadata.name": name}
        ):
            found: Mapping[str, Any] = item.to_dict()
            return found
        return None

    async def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        from lightkube.resources.core_v1 import Namespace

        async for item in self._lazy_client().list(Namespace, fields={"metadata.name": name}):
            return dict(item.metadata.labels or {})
        return None

    async def list_kafkatopics(self, namespace: str) -> list[Mapping[str, Any]]:
        from lightkube.generic_resource import create_namespaced_resource

        resource = create_namespaced_resource(GROUP, VERSION, KINDS["kafkatopics"], "kafkatopics")
        return [
            item.to_dict()
            async for item in self._lazy_client().list(resource, namespace=namespace, chunk_size=500)
        ]

    async def list_uids(self, plural: str, namespaces: tuple[str, ...]) -> set[str]:
        from lightkube import ALL_NS
        from lightkube.generic_resource import create_namespaced_resource

        resource = create_namespaced_resource(GROUP, VERSION, KINDS[plural], plural)
        uids: set[str] = set()
        for namespace in namespaces or (ALL_NS,):
            async for item in self._lazy_client().list(resource, namespace=namespace, chunk_size=500):
                uids.add(str(item.metadata.uid))
        return uids

    async def ensure_peering(self, name: str, namespaces: tuple[str, ...]) -> None:
        """Create kopf's peering object(s) if missing: a ClusterKopfPeering when watching every namespace, a
        KopfPeering in each watched namespace otherwise. Done by the operator rather than the install manifests
        because a custom object cannot be applied in the same ``kubectl apply`` that creates its CRD."""
        from lightkube.generic_resource import create_global_resource, create_namespaced_resource

        client = self._lazy_client()
        if not namespaces:
            cluster_peering = create_global_resource(
                "kopf.dev", "v1", "ClusterKopfPeering", "clusterkopfpeerings"
            )
            targets: list[tuple[Any, str, str | None]] = [(cluster_peering, "ClusterKopfPeering", None)]
        else:
            peering = create_namespaced_resource("kopf.dev", "v1", "KopfPeering", "kopfpeerings")
            targets = [(peering, "KopfPeering", namespace) for namespace in namespaces]
        for resource, kind, namespace in targets:
            metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
            obj = resource(apiVersion="kopf.dev/v1", kind=kind, metadata=metadata)
            try:
                await client.create(obj, namespace=namespace) if namespace else await client.create(obj)
            except Exception as error:  # an HTTP refusal, by its status (below); the rest as it came
                if status_code(error) != 409:  # 409: it exists already, as it should
                    raise

    # -- the leader lease (``leadership.LeaseApi``) -------------------------------------------------------------

    async def get_lease(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        from lightkube.resources.coordination_v1 import Lease

        try:
            lease = await self._lazy_client().get(Lease, name, namespace=namespace)
        except Exception as error:  # an HTTP refusal, by its status (below); the rest as it came
            if status_code(error) == 404:
                return None
            if status_code(error) == 403:
                raise SecretForbiddenError(namespace, name, str(error)) from error
            raise _lease_error(error, "read", namespace, name) from None
        body: Mapping[str, Any] = lease.to_dict()
        return body

    async def create_lease(self, namespace: str, name: str, spec: Mapping[str, Any]) -> None:
        await self._write_lease(namespace, name, None, spec)

    async def replace_lease(
        self, namespace: str, name: str, resource_version: str, spec: Mapping[str, Any]
    ) -> None:
        await self._write_lease(namespace, name, resource_version, spec)

    async def _write_lease(
        self, namespace: str, name: str, resource_version: str | None, spec: Mapping[str, Any]
    ) -> None:
        from lightkube.resources.coordination_v1 import Lease

        from topic_operator.k8s.process.leadership import LeaseConflictError

        metadata = {"name": name, "namespace": namespace}
        if resource_version is not None:
            metadata["resourceVersion"] = resource_version
        lease = Lease.from_dict({"metadata": metadata, "spec": dict(spec)})
        client = self._lazy_client()
        try:
            if resource_version is None:
                await client.create(lease)
            else:
                await client.replace(lease)
        except Exception as error:  # an HTTP refusal, by its status (below); the rest as it came
            if status_code(error) == 409:
                raise LeaseConflictError(str(error)) from None
            raise _lease_error(error, "write", namespace, name) from None

    def default_namespace(self) -> str:
        """The namespace lightkube's configuration names: the pod's own in a cluster, the kubeconfig context's
        (else ``default``) outside."""
        return str(self._lazy_client().namespace)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
