"""A Kubernetes API server for ``kto run`` to talk to: kopf's own emulator (kmock) with the behaviours of a real API
server that the operator relies on, served on 127.0.0.1 from a thread of the test process.

kmock's ``KubernetesEmulator`` parses requests, serves discovery and records every request (``api.requests``); on
its own it stores objects as plain merged dicts. A real API server does more, and the operator depends on it, so
``ApiServer`` adds, for the kinds it is given (``resources``):

- identity and bookkeeping: ``uid``, ``creationTimestamp``, ``resourceVersion`` (one counter for the server, as
  etcd's revision), ``generation`` (bumped when anything but ``metadata`` and ``status`` changes, and when
  ``deletionTimestamp`` is set), ``generateName``;
- the status subresource: the main resource ignores ``status`` changes, ``/status`` ignores everything else;
- merge patches (RFC 7386) and JSON patches (RFC 6902, with ``test``), 404/409/422 as the API server answers;
- a no-op write changes nothing: no new ``resourceVersion``, no watch event (as the API server's no-op update);
- for custom resources with a schema (from the CRD files): defaulting, pruning of unknown fields, and schema
  validation, as the API server does on every write;
- finalizers: a delete sets ``deletionTimestamp``; the object goes when the last finalizer is removed;
- watches from a ``resourceVersion`` (list, then watch from the list's version; ``timeoutSeconds``; 410 Gone when
  the version is older than the kept history);
- bearer-token authentication: with ``token`` set, a request without ``Authorization: Bearer <token>`` gets 401,
  so a test proves the operator logged in with the kubeconfig it was given.

``ApiServer.run(...)`` serves it from a background thread; ``harness.kube_client`` has the synchronous client the
tests use and the kubeconfig a subprocess logs in with, for this server and the real one alike.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import copy
import datetime
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attrs
import jsonpatch
import jsonschema
import kmock
import yaml
from kmock._internal import apps, enums, parsing, rendering

__all__ = ["ApiServer", "Served", "crd_resources"]

_KEEP_EVENTS = 200_000
"""Watch history kept for resuming watches (a real API server keeps about five minutes of it)."""


@dataclass(frozen=True)
class Kind:
    """A resource the server stores: its discovery entry and, for custom resources, its schema."""

    resource: kmock.resource
    kind: str
    namespaced: bool = True
    status_subresource: bool = False
    schema: Mapping[str, Any] | None = None


def crd_resources(*paths: Path) -> list[Kind]:
    """The kinds declared by CRD files (every document of each file), with their storage version's schema."""
    kinds = []
    for path in paths:
        for crd in yaml.safe_load_all(path.read_text()):
            if not crd:
                continue
            spec = crd["spec"]
            for version in spec["versions"]:
                kinds.append(
                    Kind(
                        resource=kmock.resource(spec["group"], version["name"], spec["names"]["plural"]),
                        kind=spec["names"]["kind"],
                        namespaced=spec["scope"] == "Namespaced",
                        status_subresource="status" in (version.get("subresources") or {}),
                        schema=version.get("schema", {}).get("openAPIV3Schema"),
                    )
                )
    return kinds


_kmock_parse_path = parsing.parse_path


def _parse_path(path: str) -> parsing.ParsedPath:
    """kmock 0.8 reads ``/api/v1/namespaces`` (the list of Namespaces, which kopf watches for their labels) as a
    namespace with nothing after it, and fails; and ``/api/v1/namespaces/<name>`` as namespace ``<name>``. For
    the core group, a path of one or two segments under ``namespaces`` is the Namespaces resource itself."""
    parts = path.strip("/").split("/")
    if parts[:3] == ["api", "v1", "namespaces"] and len(parts) <= 4:
        return parsing.ParsedPath("", "v1", "namespaces", None, parts[3] if len(parts) == 4 else None, None)
    return _kmock_parse_path(path)


parsing.parse_path = _parse_path

CORE = [
    Kind(kmock.resource("", "v1", "events"), "Event"),
    Kind(kmock.resource("", "v1", "secrets"), "Secret"),
    Kind(kmock.resource("", "v1", "namespaces"), "Namespace", namespaced=False),
    Kind(kmock.resource("events.k8s.io", "v1", "events"), "Event"),
    Kind(kmock.resource("coordination.k8s.io", "v1", "leases"), "Lease"),
]


def _error(status: int, reason: str, message: str) -> kmock.KubernetesError:
    return kmock.KubernetesError(status=status, reason=reason, message=message, details={"causes": []})


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


def _defaulted_and_pruned(value: Any, schema: Mapping[str, Any]) -> Any:
    """The API server's defaulting and pruning of a custom resource (metadata and apiVersion/kind untouched)."""
    if isinstance(value, Mapping) and schema.get("type") == "object":
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        keep_unknown = schema.get("x-kubernetes-preserve-unknown-fields") is True
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in properties:
                out[key] = _defaulted_and_pruned(item, properties[key])
            elif isinstance(additional, Mapping):
                out[key] = _defaulted_and_pruned(item, additional)
            elif keep_unknown or additional is True:
                out[key] = item
        for key, sub in properties.items():
            if key not in out and "default" in sub:
                out[key] = _defaulted_and_pruned(copy.deepcopy(sub["default"]), sub)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_defaulted_and_pruned(item, schema["items"]) for item in value]
    return value


def _validator(schema: Mapping[str, Any]) -> jsonschema.Draft4Validator:
    def plain(node: Mapping[str, Any]) -> dict[str, Any]:
        out = {
            k: v
            for k, v in node.items()
            if not k.startswith("x-kubernetes-") and k not in ("default", "nullable")
        }
        if node.get("x-kubernetes-int-or-string"):
            out.pop("anyOf", None)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), Mapping):
                out[key] = plain(node[key])
        if isinstance(node.get("properties"), Mapping):
            out["properties"] = {k: plain(v) for k, v in node["properties"].items()}
            out["properties"].pop("metadata", None)
        return out

    return jsonschema.Draft4Validator(plain(schema))


@attrs.define(kw_only=True)
class ApiServer(kmock.KubernetesEmulator):
    """kmock's Kubernetes emulator with the API server's bookkeeping (see the module docstring)."""

    kinds: list[Kind] = attrs.field(factory=list)
    token: str | None = None

    _store: dict[tuple[Any, str | None, str], dict[str, Any]] = attrs.field(factory=dict, init=False)
    _by_resource: dict[Any, Kind] = attrs.field(factory=dict, init=False)
    _validators: dict[Any, jsonschema.Draft4Validator] = attrs.field(factory=dict, init=False)
    _revision: int = attrs.field(default=1, init=False)
    _history: list[tuple[int, Any, str | None, dict[str, Any]]] = attrs.field(factory=list, init=False)
    _history_revisions: list[int] = attrs.field(factory=list, init=False)
    _changed: asyncio.Condition | None = attrs.field(default=None, init=False)
    writes: list[tuple[str, str, str | None, str, str | None]] = attrs.field(factory=list, init=False)
    """Every write that changed something: (verb, plural, namespace, name, subresource)."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        for kind in [*CORE, *self.kinds]:
            self._by_resource[kind.resource] = kind
            self.resources[kind.resource] = kmock.ResourceInfo(
                kind=kind.kind,
                namespaced=kind.namespaced,
                verbs={"list", "watch", "get", "create", "patch", "update", "delete"},
                subresources={"status"} if kind.status_subresource else set(),
            )
            if kind.schema is not None:
                self._validators[kind.resource] = _validator(kind.schema)

    # -- reading, for tests (call from the server's loop, or through KubeClient) ----------------------------------

    def get(self, plural_or_resource: Any, namespace: str | None, name: str) -> dict[str, Any] | None:
        resource = self._resource(plural_or_resource)
        body = self._store.get((resource, namespace, name))
        return copy.deepcopy(body) if body is not None else None

    def _resource(self, plural_or_resource: Any) -> Any:
        if isinstance(plural_or_resource, str):
            return next(k.resource for k in [*self.kinds, *CORE] if k.resource.plural == plural_or_resource)
        return plural_or_resource

    # -- serving ----------------------------------------------------------------------------------------------------

    async def _handle(self, request: rendering.Request) -> Any:
        if self.token is not None and request.headers.get("Authorization") != f"Bearer {self.token}":
            raise _error(401, "Unauthorized", "Unauthorized")
        if request.resource is not None and request.resource in self._by_resource:
            handler = {
                enums.action.LIST: self._list,
                enums.action.FETCH: self._fetch,
                enums.action.CREATE: self._create,
                enums.action.UPDATE: self._update,
                enums.action.DELETE: self._delete,
            }.get(request.action)
            if handler is not None:
                return await self._respond(handler(request))
            if request.action == enums.action.WATCH:
                return await apps.RawHandler._handle(self, request)
        return await apps.RawHandler._handle(self, request)

    async def _respond(self, payload: Mapping[str, Any]) -> Any:
        import aiohttp.web

        return aiohttp.web.json_response(payload)

    def _kind(self, request: rendering.Request) -> Kind:
        return self._by_resource[request.resource]

    def _key(self, request: rendering.Request, name: str | None = None) -> tuple[Any, str | None, str]:
        kind = self._kind(request)
        return (request.resource, request.namespace if kind.namespaced else None, name or request.name or "")

    def _list(self, request: rendering.Request) -> dict[str, Any]:
        kind = self._kind(request)
        items = [  # no copies: stored bodies are never changed in place, and the response is serialised at once
            body
            for (resource, namespace, _), body in sorted(self._store.items(), key=lambda kv: str(kv[0]))
            if resource == request.resource and (request.namespace is None or namespace == request.namespace)
        ]
        group, version = request.resource.group, request.resource.version
        return {
            "apiVersion": f"{group}/{version}" if group else version,
            "kind": f"{kind.kind}List",
            "metadata": {"resourceVersion": str(self._revision)},
            "items": items,
        }

    def _fetch(self, request: rendering.Request) -> dict[str, Any]:
        body = self._store.get(self._key(request))
        if body is None:
            raise _error(404, "NotFound", f'{request.resource.plural} "{request.name}" not found')
        return body

    def _create(self, request: rendering.Request) -> dict[str, Any]:
        kind = self._kind(request)
        body = copy.deepcopy(request.data) if isinstance(request.data, Mapping) else None
        if body is None:
            raise _error(400, "BadRequest", "the body of a create must be an object")
        metadata = body.setdefault("metadata", {})
        if not metadata.get("name") and metadata.get("generateName"):
            metadata["name"] = f"{metadata['generateName']}{uuid.uuid4().hex[:10]}"
        if not metadata.get("name"):
            raise _error(422, "Invalid", "metadata.name: Required value: name or generateName is required")
        if kind.namespaced:
            metadata["namespace"] = request.namespace or metadata.get("namespace") or "default"
        key = (request.resource, metadata.get("namespace") if kind.namespaced else None, metadata["name"])
        if key in self._store:
            raise _error(
                409, "AlreadyExists", f'{request.resource.plural} "{metadata["name"]}" already exists'
            )
        group, version = request.resource.group, request.resource.version
        body["apiVersion"], body["kind"] = (f"{group}/{version}" if group else version), kind.kind
        if kind.status_subresource:
            body.pop("status", None)
        metadata.update(uid=str(uuid.uuid4()), creationTimestamp=_now(), generation=1)
        body = self._admit(kind, body)
        self._commit(key, body, "ADDED", ("create", request.resource.plural, key[1], key[2], None))
        return copy.deepcopy(body)

    def _update(self, request: rendering.Request) -> dict[str, Any]:
        kind = self._kind(request)
        key = self._key(request)
        old = self._store.get(key)
        if old is None:
            raise _error(404, "NotFound", f'{request.resource.plural} "{request.name}" not found')
        content_type = request.headers.get("Content-Type", "")
        try:
            if "json-patch" in content_type:
                new = jsonpatch.apply_patch(old, request.data)
            elif "merge-patch" in content_type:
                new = _merge_patch(old, request.data)
            elif request.method == enums.method.PUT:
                new = copy.deepcopy(request.data)
            else:
                raise _error(415, "UnsupportedMediaType", f"the patch type {content_type!r} is not supported")
        except (jsonpatch.JsonPatchTestFailed, jsonpatch.JsonPatchConflict) as error:
            raise _error(422, "Invalid", f"the JSON patch failed: {error}") from None
        subresource = request.subresource
        if kind.status_subresource and subresource == "status":
            new = {**copy.deepcopy(old), "status": new.get("status")}
            if new["status"] is None:
                new.pop("status")
        elif kind.status_subresource:
            new = {k: v for k, v in new.items() if k != "status"}
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
        new["metadata"] = {
            **new.get("metadata", {}),
            **{
                k: old["metadata"][k]
                for k in ("uid", "creationTimestamp", "namespace", "name")
                if k in old["metadata"]
            },
        }
        version = new["metadata"].get("resourceVersion")
        if (
            version is not None
            and version != old["metadata"]["resourceVersion"]
            and "json-patch" not in content_type
        ):
            raise _error(
                409,
                "Conflict",
                "the object has been modified; please apply your changes to the latest version",
            )
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        new = self._admit(kind, new)
        spec_of = lambda body: {k: v for k, v in body.items() if k not in ("metadata", "status")}  # noqa: E731
        if spec_of(new) != spec_of(old):
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        if new == old:
            return copy.deepcopy(old)  # a no-op: no new version, no watch event
        metadata = new["metadata"]
        if metadata.get("deletionTimestamp") and not metadata.get("finalizers"):
            self._remove(key, ("update", request.resource.plural, key[1], key[2], subresource))
            return copy.deepcopy(new)
        self._commit(key, new, "MODIFIED", ("update", request.resource.plural, key[1], key[2], subresource))
        return copy.deepcopy(new)

    def _delete(self, request: rendering.Request) -> dict[str, Any]:
        key = self._key(request)
        old = self._store.get(key)
        if old is None:
            raise _error(404, "NotFound", f'{request.resource.plural} "{request.name}" not found')
        write = ("delete", request.resource.plural, key[1], key[2], None)
        if old["metadata"].get("finalizers"):
            if old["metadata"].get("deletionTimestamp"):
                return copy.deepcopy(old)
            new = copy.deepcopy(old)
            new["metadata"]["deletionTimestamp"] = _now()
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
            self._commit(key, new, "MODIFIED", write)
            return copy.deepcopy(new)
        self._remove(key, write)
        return copy.deepcopy(old)

    def _admit(self, kind: Kind, body: dict[str, Any]) -> dict[str, Any]:
        """Default, prune and validate a custom resource, as the API server does on every write."""
        if kind.schema is None:
            return body
        metadata = body.get("metadata")
        body = _defaulted_and_pruned(body, kind.schema)
        body["metadata"] = metadata
        errors = sorted(self._validators[kind.resource].iter_errors(body), key=str)
        if errors:
            causes = "; ".join(
                f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors
            )
            raise _error(422, "Invalid", f'{kind.kind} "{metadata.get("name")}" is invalid: {causes}')
        return body

    def _commit(
        self, key: tuple[Any, str | None, str], body: dict[str, Any], event: str, write: tuple[Any, ...]
    ) -> None:
        self._revision += 1
        body["metadata"]["resourceVersion"] = str(self._revision)
        self._store[key] = body
        self._record(key, event, body, write)

    def _remove(self, key: tuple[Any, str | None, str], write: tuple[Any, ...]) -> None:
        body = self._store.pop(key)
        self._revision += 1
        body = copy.deepcopy(body)
        body["metadata"]["resourceVersion"] = str(self._revision)
        self._record(key, "DELETED", body, write)

    def _record(
        self, key: tuple[Any, str | None, str], event: str, body: dict[str, Any], write: tuple[Any, ...]
    ) -> None:
        self.writes.append(write)
        self._history.append((self._revision, key[0], key[1], {"type": event, "object": body}))
        self._history_revisions.append(self._revision)
        if len(self._history) > _KEEP_EVENTS:
            del self._history[: len(self._history) - _KEEP_EVENTS]
            del self._history_revisions[: len(self._history_revisions) - _KEEP_EVENTS]
        if self._changed is not None:
            changed = self._changed

            async def notify() -> None:
                async with changed:
                    changed.notify_all()

            asyncio.get_running_loop().create_task(notify())

    async def _serve_watch(self, request: rendering.Request) -> AsyncIterator[Any]:
        yield b""
        if request.resource not in self._by_resource:
            return
        if self._changed is None:
            self._changed = asyncio.Condition()
        since = int(request.params.get("resourceVersion") or 0)
        timeout = float(request.params.get("timeoutSeconds") or 0) or None
        deadline = time.monotonic() + timeout if timeout else None
        if since == 0:  # no version: the current objects first, as ADDED
            since = self._revision
            for (resource, namespace, _), body in list(self._store.items()):
                if resource == request.resource and request.namespace in (None, namespace):
                    yield {"type": "ADDED", "object": body}
        oldest = self._history[0][0] if self._history else self._revision
        if since < oldest - 1:
            yield {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                               "message": "too old resource version"}}  # fmt: skip
            return
        while deadline is None or time.monotonic() < deadline:
            start = bisect.bisect_right(self._history_revisions, since)
            for revision, resource, namespace, event in self._history[start:]:
                since = revision
                if resource == request.resource and request.namespace in (None, namespace):
                    yield event
            async with self._changed:
                if self._history and self._history[-1][0] > since:
                    continue
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), remaining)

    # -- running ----------------------------------------------------------------------------------------------------

    @classmethod
    @contextlib.contextmanager
    def run(cls, **options: Any) -> Iterator[Served]:
        """Serve on 127.0.0.1 from a background thread until the block ends."""
        served = Served()
        ready = threading.Event()
        stop: list[Callable[[], None]] = []

        async def main() -> None:
            api = cls(**options)
            async with api, kmock.Server(api) as server:
                served.api, served.url, served.loop = (
                    api,
                    str(server.url).rstrip("/"),
                    asyncio.get_running_loop(),
                )
                api._changed = asyncio.Condition()
                done = asyncio.Event()
                stop.append(lambda: served.loop.call_soon_threadsafe(done.set))
                ready.set()
                await done.wait()

        thread = threading.Thread(target=asyncio.run, args=(main(),), name="kube-api", daemon=True)
        thread.start()
        if not ready.wait(10):
            raise RuntimeError("the emulated API server did not start within 10 s")
        try:
            yield served
        finally:
            stop[0]()
            thread.join(10)


@dataclass
class Served:
    api: ApiServer = field(init=False)
    url: str = field(init=False)
    loop: asyncio.AbstractEventLoop = field(init=False)

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` in the server's loop (the store is only touched there) and return its result."""

        async def wrapped() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(wrapped(), self.loop).result(10)

    def writes(self) -> list[tuple[str, str, str | None, str, str | None]]:
        return list(self.call(lambda: list(self.api.writes)))


# -- serving from a process of its own (bench/operator_events.py) ----------------------------------------------------------


async def _serve_forever(kinds: list[Kind], token: str, port: int) -> None:
    api = ApiServer(kinds=kinds, token=token)

    async def stats(_: rendering.Request) -> dict[str, Any]:
        """What the API was asked to change: {"verb plural[/subresource]": count}."""
        counts: dict[str, int] = {}
        for verb, plural, _ns, _name, subresource in api.writes:
            key = f"{verb} {plural}" + (f"/{subresource}" if subresource else "")
            counts[key] = counts.get(key, 0) + 1
        return {"writes": counts, "requests": len(api._requests)}

    api.fallback["get /_kto/stats"] << stats
    async with api, kmock.Server(api, port=port) as server:
        api._changed = asyncio.Condition()
        print(str(server.url).rstrip("/"), flush=True)
        await asyncio.Event().wait()


def main() -> None:
    """``python -m harness.kube_api TOKEN PORT CRD...``: serve until killed; prints the URL when serving."""
    import sys

    token, port, *crds = sys.argv[1:]
    asyncio.run(_serve_forever(crd_resources(*map(Path, crds)), token, int(port)))


if __name__ == "__main__":
    main()
