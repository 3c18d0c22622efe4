"""The few ``kubectl`` commands the documentation shows, made through the harness' client as kubectl makes them.

kubectl is not a dependency of the tests (CI machines need not have it), so a page's ``kubectl`` line runs here:
``apply -f`` (server-side apply of each document), ``get`` (the server's own Table, printed with kubectl's
column rules: names in capitals, columns of priority 0, three spaces between them, ``NAMESPACE`` first with
``-A``), ``wait --for=condition=X``, ``create namespace`` and ``create secret generic`` (``--from-file`` and
``--from-literal``, as kubectl reads them). Anything else is refused with the line, so a page
cannot show a kubectl command that no test ran.
"""

from __future__ import annotations

import base64
import json
import shlex
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.kube_client import KubeApiError, KubeClient
from harness.real_apiserver import RealApiServer

__all__ = ["KubectlResult", "run_kubectl"]

_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@dataclass(frozen=True)
class KubectlResult:
    code: int
    output: str


@dataclass(frozen=True)
class _Resource:
    api_version: str
    plural: str
    kind: str
    namespaced: bool


def _resources(kube: KubeClient) -> dict[str, _Resource]:
    """Every name kubectl accepts for a resource (plural, singular, short names, kind), from discovery."""
    found: dict[str, _Resource] = {}
    for group_version in ("v1", "kto.dev/v1alpha1", "apiextensions.k8s.io/v1", "apps/v1"):
        base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
        for entry in kube.call("GET", base)["resources"]:
            if "/" in entry["name"]:
                continue
            resource = _Resource(group_version, entry["name"], entry["kind"], entry["namespaced"])
            group = group_version.split("/")[0] if "/" in group_version else ""
            names = [entry["name"], entry.get("singularName") or "", entry["kind"].lower()]
            names += entry.get("shortNames") or []
            for name in filter(None, names):
                found.setdefault(name, resource)
                if group:
                    found.setdefault(f"{name}.{group}", resource)
    return found


def _documents(paths: Sequence[str], directory: Path) -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    for given in paths:
        path = directory / given
        files = (
            sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml")) if path.is_dir() else [path]
        )
        for file in files:
            documents.extend(d for d in yaml.safe_load_all(file.read_text()) if d)
    return documents


def _apply(kube: KubeClient, arguments: list[str], directory: Path) -> KubectlResult:
    paths = [arguments[i + 1] for i, a in enumerate(arguments) if a == "-f"]
    resources = _resources(kube)
    lines = []
    for document in _documents(paths, directory):
        resource = resources[document["kind"].lower()]
        existed = True
        try:
            namespace = document["metadata"].get("namespace") or ("default" if resource.namespaced else None)
            kube.get(resource.api_version, resource.plural, namespace, document["metadata"]["name"])
        except KubeApiError as error:
            if error.status != 404:
                raise
            existed = False
        kube.apply_document(document, manager="kubectl")
        group = resource.api_version.split("/")[0] if "/" in resource.api_version else ""
        shown = f"{resource.kind.lower()}.{group}" if group else resource.kind.lower()
        lines.append(f"{shown}/{document['metadata']['name']} {'configured' if existed else 'created'}")
    return KubectlResult(0, "".join(f"{line}\n" for line in lines))


def _table(table: dict[str, Any], all_namespaces: bool, shown: Callable[[str], str]) -> str:
    columns = [(i, c["name"].upper()) for i, c in enumerate(table["columnDefinitions"]) if c["priority"] == 0]
    rows = [[name for _, name in columns]]
    if all_namespaces:
        rows[0].insert(0, "NAMESPACE")
    for row in table["rows"]:
        cells = ["<none>" if row["cells"][i] is None else shown(str(row["cells"][i])) for i, _ in columns]
        if all_namespaces:
            cells.insert(0, row["object"]["metadata"].get("namespace", ""))
        rows.append(cells)
    # Go's tabwriter as kubectl sets it up: minimum width 6, padding 3, the last column left unpadded.
    widths = [max(6, max(len(r[c]) for r in rows) + 3) for c in range(len(rows[0]))]
    return "".join(
        "".join(cell.ljust(widths[c]) for c, cell in enumerate(r[:-1])) + r[-1] + "\n" for r in rows
    )


def _server_table(server: RealApiServer, path: str) -> dict[str, Any]:
    """A list or an object as the server's Table (what kubectl asks for to print ``get``)."""
    request = urllib.request.Request(f"{server.url}{path}")
    request.add_header("Authorization", f"Bearer {server.credentials.admin_token}")
    request.add_header("Accept", _TABLE)
    try:
        with urllib.request.urlopen(request, timeout=10, context=server.ssl_context()) as response:
            table: dict[str, Any] = json.loads(response.read())
            return table
    except urllib.error.HTTPError as error:
        raise KubeApiError(error.code, error.read().decode(errors="replace")) from None


def _get(
    server: RealApiServer, kube: KubeClient, arguments: list[str], shown: Callable[[str], str]
) -> KubectlResult:
    options = _options(arguments)
    resource = _resources(kube)[options.positional[0]]
    namespace = None if options.all_namespaces or not resource.namespaced else options.namespace
    path = kube.path(resource.api_version, resource.plural, namespace)
    if len(options.positional) > 1:
        path += f"/{options.positional[1]}"
    table = _server_table(server, path)
    if not table["rows"]:
        where = f" in {namespace} namespace" if namespace else ""
        return KubectlResult(0, f"No resources found{where}.\n")
    return KubectlResult(0, _table(table, options.all_namespaces, shown))


def _wait(kube: KubeClient, arguments: list[str]) -> KubectlResult:
    options = _options(arguments)
    condition = options.flags["--for"].removeprefix("condition=")
    timeout = float(options.flags.get("--timeout", "30s").rstrip("s"))
    kind, name = options.positional[0].split("/", 1)
    resource = _resources(kube)[kind]
    deadline = time.monotonic() + timeout
    while True:
        body = kube.get(resource.api_version, resource.plural, options.namespace, name)
        conditions = (body.get("status") or {}).get("conditions") or []
        if any(c["type"] == condition and c["status"] == "True" for c in conditions):
            group = resource.api_version.split("/")[0]
            return KubectlResult(0, f"{resource.kind.lower()}.{group}/{name} condition met\n")
        if time.monotonic() > deadline:
            return KubectlResult(1, f"error: timed out waiting for the condition on {kind}/{name}\n")
        time.sleep(0.2)


def _create_secret(kube: KubeClient, arguments: list[str], directory: Path) -> KubectlResult:
    """``create secret generic NAME [-n NS] --from-file=KEY=PATH --from-literal=KEY=VALUE ...``: each
    ``--from-file`` key is the file's name unless given, its value the file's bytes; paths are the reader's,
    relative to the working directory."""
    name, namespace, data = "", "default", {}
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument in ("-n", "--namespace"):
            namespace = arguments[index + 1]
            index += 1
        elif argument.startswith("--from-literal="):
            key, _, value = argument.removeprefix("--from-literal=").partition("=")
            data[key] = value.encode()
        elif argument.startswith("--from-file="):
            given = argument.removeprefix("--from-file=")
            key, _, path = given.partition("=") if "=" in given else (Path(given).name, "", given)
            data[key] = (directory / path).read_bytes()
        elif argument.startswith("-"):
            raise ValueError(f"the tests have no equivalent of this kubectl flag: {argument}")
        else:
            name = argument
        index += 1
    kube.create(
        "secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace},
            "type": "Opaque",
            "data": {key: base64.b64encode(value).decode() for key, value in data.items()},
        },
    )
    return KubectlResult(0, f"secret/{name} created\n")


@dataclass
class _Options:
    positional: list[str]
    flags: dict[str, str]
    namespace: str
    all_namespaces: bool


def _options(arguments: list[str]) -> _Options:
    options = _Options([], {}, "default", False)
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument in ("-A", "--all-namespaces"):
            options.all_namespaces = True
        elif argument in ("-n", "--namespace"):
            options.namespace = arguments[index + 1]
            index += 1
        elif argument.startswith("--") and "=" in argument:
            key, value = argument.split("=", 1)
            options.flags[key] = value
        else:
            options.positional.append(argument)
        index += 1
    return options


def run_kubectl(
    server: RealApiServer, command: str, directory: Path, shown: Callable[[str], str] = str
) -> KubectlResult:
    """One ``kubectl ...`` line, as the admin's kubectl would run it against ``server`` from ``directory``.
    ``shown`` turns a table cell into what the reader's machine would show (the page's connect string for the
    test's), before the columns are laid out."""
    kube = server.client()
    words = shlex.split(command)
    if words[:1] != ["kubectl"] or len(words) < 2:
        raise ValueError(f"not a kubectl command: {command}")
    words = words[1:]
    leading: list[str] = []  # `kubectl -n NS VERB ...`: a namespace given before the verb, as kubectl allows
    while len(words) > 2 and words[0] in ("-n", "--namespace"):
        leading, words = [*leading, *words[:2]], words[2:]
    verb, arguments = words[0], [*words[1:], *leading]
    try:
        if verb == "apply":
            return _apply(kube, arguments, directory)
        if verb == "get":
            return _get(server, kube, arguments, shown)
        if verb == "wait":
            return _wait(kube, arguments)
        if verb == "create" and arguments[:1] == ["namespace"]:
            kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": arguments[1]}})
            return KubectlResult(0, f"namespace/{arguments[1]} created\n")
        if verb == "create" and arguments[:2] == ["secret", "generic"]:
            return _create_secret(kube, arguments[2:], directory)
    except KubeApiError as error:
        return KubectlResult(1, f"Error from server: {error.message}\n")
    raise ValueError(f"the tests have no equivalent of this kubectl command: {command}")
