"""How ``kto run`` logs in to the API server: exactly where kopf's own default registry would.

kopf attaches its login handlers to its default registry only (``SmartOperatorRegistry``, not exported). The
operator builds a registry of its own (so tests inspect exactly what runs), and a bare registry has no login
handler: the operator then cannot authenticate anywhere and exits with "Ran out of valid credentials". So the same
choice is made here, with kopf's public login functions and in kopf's order:

- pykube-ng, when installed (it understands every kubeconfig, exec plugins included);
- the official ``kubernetes`` client, when installed, else ``kubernetes_asyncio``;
- otherwise kopf's own minimal logins: the kubeconfig (``KUBECONFIG``, else ``~/.kube/config``) and the in-cluster
  service account (``/var/run/secrets/kubernetes.io/serviceaccount``). kopf uses the credentials of highest
  priority among those that apply, so inside a pod the service account wins.

The container image installs neither client, so a Deployment logs in with its service account, and a developer's
``kto run`` with their kubeconfig. Errors are ignored per handler, as kopf does: a handler that does not apply
gives nothing, and only when none gives credentials does kopf report that it ran out of them. A handler that gives
credentials also tells the operator's readiness (``memo.kto.readiness``) that it has logged in.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable
from typing import Any

import kopf

__all__ = ["login_functions", "register_logins"]


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def login_functions() -> list[Callable[..., Any]]:
    """kopf's login functions that its default registry would use on this machine, in its order."""
    chosen: list[Callable[..., Any]] = []
    if _installed("pykube"):
        chosen.append(kopf.login_via_pykube)
    if _installed("kubernetes"):
        chosen.append(kopf.login_via_client)
    elif _installed("kubernetes_asyncio"):
        chosen.append(kopf.login_via_async_client)
    if not chosen:
        chosen += [kopf.login_with_kubeconfig, kopf.login_with_service_account]
    return chosen


def _telling_readiness(fn: Callable[..., Any]) -> Callable[..., Any]:
    # Not functools.wraps: kopf would follow __wrapped__ to the sync function and run this coroutine in a thread.
    async def login(**kwargs: Any) -> Any:
        credentials = fn(**kwargs)
        if inspect.isawaitable(credentials):
            credentials = await credentials
        readiness = getattr(getattr(kwargs.get("memo"), "kto", None), "readiness", None)
        if credentials is not None and readiness is not None:
            readiness.logged_in()
        return credentials

    return login


def register_logins(registry: kopf.OperatorRegistry) -> None:
    for fn in login_functions():
        kopf.on.login(registry=registry, id=fn.__name__, errors=kopf.ErrorsMode.IGNORED)(
            _telling_readiness(fn)
        )
