"""A small synchronous Kubernetes client for tests, and the kubeconfig a ``kto run`` subprocess logs in with.

It makes the calls kubectl makes (create, get, list, merge patch, server-side apply, delete) over plain
``urllib``, against kmock's emulator (``harness.kube_api``, plain HTTP) and the real kube-apiserver
(``harness.real_apiserver``, HTTPS with the test's own CA) alike, so that a scenario reads the same on both.
"""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from harness.waiting import eventually

__all__ = ["KubeApiError", "KubeClient", "write_kubeconfig"]


def write_kubeconfig(
    path: Path, server: str, token: str, namespace: str = "default", *, ca_file: Path | None = None
) -> Path:
    """A kubeconfig with one cluster, one token user and one context; with ``ca_file``, the server's CA inline
    (``certificate-authority-data``), as ``kubectl config view --raw --flatten`` writes it."""
    cluster: dict[str, Any] = {"server": server}
    if ca_file is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_file.read_bytes()).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "test",
        "clusters": [{"name": "test", "cluster": cluster}],
        "users": [{"name": "operator", "user": {"token": token}}],
        "contexts": [
            {"name": "test", "context": {"cluster": "test", "user": "operator", "namespace": namespace}}
        ],
    }
    path.write_text(yaml.safe_dump(config))
    return path


class KubeApiError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"{status}: {body[:500]}")
        self.status = status
        self.body = body

    @property
    def message(self) -> str:
        """The Status object's ``message``, as kubectl prints it."""
        with contextlib.suppress(ValueError, AttributeError):
            return str(json.loads(self.body).get("message", self.body))
        return self.body


class KubeClient:
    """A small synchronous client, as kubectl would make the same calls."""

    def __init__(
        self, server: str, token: str, *, ca_file: Path | None = None, timeout: float = 10.0
    ) -> None:
        self._server, self._token, self._timeout = server, token, timeout
        self._context = ssl.create_default_context(cafile=str(ca_file)) if ca_file is not None else None
        self._resources: dict[tuple[str, str], tuple[str, bool]] = {}

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        *,
        timeout: float | None = None,
    ) -> Any:
        """One request; the decoded answer, or ``KubeApiError`` with the status and body."""
        if body is None:
            data = None
        elif isinstance(body, bytes):
            data = body
        else:
            data = json.dumps(body).encode()
        request = urllib.request.Request(f"{self._server}{path}", data=data, method=method)
        request.add_header("Authorization", f"Bearer {self._token}")
        request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(
                request, timeout=timeout or self._timeout, context=self._context
            ) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise KubeApiError(error.code, error.read().decode(errors="replace")) from None

    @staticmethod
    def path(api_version: str, plural: str, namespace: str | None, name: str | None = None) -> str:
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        ns = f"/namespaces/{namespace}" if namespace else ""
        return f"{base}{ns}/{plural}" + (f"/{name}" if name else "")

    def create(self, plural: str, body: Mapping[str, Any]) -> Any:
        metadata = body["metadata"]
        return self.call("POST", self.path(body["apiVersion"], plural, metadata.get("namespace")), body)

    def get(self, api_version: str, plural: str, namespace: str | None, name: str) -> Any:
        return self.call("GET", self.path(api_version, plural, namespace, name))

    def list(self, api_version: str, plural: str, namespace: str | None = None, **query: str) -> list[Any]:
        suffix = f"?{urllib.parse.urlencode(query)}" if query else ""
        items: list[Any] = self.call("GET", self.path(api_version, plural, namespace) + suffix)["items"]
        return items

    def patch(self, api_version: str, plural: str, namespace: str | None, name: str, patch: Any) -> Any:
        return self.call(
            "PATCH", self.path(api_version, plural, namespace, name), patch, "application/merge-patch+json"
        )

    def apply(self, plural: str, body: Mapping[str, Any], *, manager: str = "kto-tests") -> Any:
        """Server-side apply (``kubectl apply --server-side --force-conflicts``) of one object."""
        metadata = body["metadata"]
        path = self.path(body["apiVersion"], plural, metadata.get("namespace"), metadata["name"])
        query = urllib.parse.urlencode({"fieldManager": manager, "force": "true"})
        return self.call(
            "PATCH", f"{path}?{query}", json.dumps(body).encode(), "application/apply-patch+yaml"
        )

    def delete(self, api_version: str, plural: str, namespace: str | None, name: str) -> Any:
        return self.call("DELETE", self.path(api_version, plural, namespace, name))

    def delete_collection(
        self, api_version: str, plural: str, namespace: str, *, timeout: float = 120
    ) -> Any:
        """Every object of ``plural`` in ``namespace`` in one request (``kubectl delete --all``'s deletecollection:
        the server deletes them, with no round trip per object)."""
        return self.call("DELETE", self.path(api_version, plural, namespace), timeout=timeout)

    def resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        """A kind's plural and whether it is namespaced, from the server's discovery (as kubectl maps them)."""
        key = (api_version, kind)
        if key not in self._resources:
            base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
            for entry in self.call("GET", base)["resources"]:
                if "/" not in entry["name"]:
                    self._resources[(api_version, entry["kind"])] = (entry["name"], entry["namespaced"])
        if key not in self._resources:
            raise KubeApiError(404, f"the server has no {kind} in {api_version}")
        return self._resources[key]

    def apply_document(self, document: Mapping[str, Any], *, manager: str = "kto-tests") -> Any:
        """Server-side apply of a manifest document of any kind the server knows."""
        plural, namespaced = self.resource(document["apiVersion"], document["kind"])
        if namespaced and not document["metadata"].get("namespace"):
            document = {**document, "metadata": {**document["metadata"], "namespace": "default"}}
        return self.apply(plural, document, manager=manager)

    def wait_for(self, check: Callable[[], Any], *, timeout: float, what: str, interval: float = 0.1) -> Any:
        """Poll ``check`` until it returns something truthy; an API error or a refused connection is "not yet"."""
        return eventually(
            check, timeout=timeout, what=what, interval=interval, expected=(KubeApiError, OSError)
        )
