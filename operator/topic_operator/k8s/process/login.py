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

Credentials become kopf's ``AiohttpSession`` with a bounded connection pool (``KTO_API_CONNECTIONS``, default 16):
kopf's own session has no limit, so a batch completing 500 KafkaTopics at once opened hundreds of connections, each
with its TLS handshake, and a real API server's priority and fairness answered the burst with 429 storms. With a
bound the requests queue in the operator, reuse kept-alive connections, and reach the server at a pace it takes.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable
from typing import Any

import aiohttp
import kopf

__all__ = ["bounded_session", "login_functions", "register_logins"]


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


def bounded_session(info: kopf.ConnectionInfo, connections: int) -> kopf.AiohttpSession:
    """kopf's session for ``info``, as kopf builds it, but with at most ``connections`` connections (kept alive)."""
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=connections, ssl=info.as_ssl_context()),
        headers=info.as_http_headers(),
        proxy=info.proxy_url,
        trust_env=info.trust_env,
    )
    return kopf.AiohttpSession(
        aiohttp_session=session,
        server=info.server,
        default_namespace=info.default_namespace,
        priority=info.priority,
        expiration=info.expiration,
    )


def _login(fn: Callable[..., Any], connections: int) -> Callable[..., Any]:
    """``fn`` telling readiness, and its credentials as a bounded session. The same credentials give the same
    session: kopf compares what a login gives with what the API refused, and stops ("ran out of valid
    credentials") only when nothing new comes; a fresh session object each time would look new forever."""
    last: list[tuple[kopf.ConnectionInfo, kopf.AiohttpSession]] = []

    # Not functools.wraps: kopf would follow __wrapped__ to the sync function and run this coroutine in a thread.
    async def login(**kwargs: Any) -> Any:
        credentials = fn(**kwargs)
        if inspect.isawaitable(credentials):
            credentials = await credentials
        readiness = getattr(getattr(kwargs.get("memo"), "kto", None), "readiness", None)
        if credentials is not None and readiness is not None:
            readiness.logged_in()
        if not isinstance(credentials, kopf.ConnectionInfo) or connections <= 0:
            return credentials
        if not last or last[0][0] != credentials:
            last[:] = [(credentials, bounded_session(credentials, connections))]
        ctx = getattr(kwargs.get("memo"), "kto", None)
        if ctx is not None:
            ctx.api_session = last[0][1]  # the operator's own requests go over it too (``OperatorContext``)
        return last[0][1]

    return login


def register_logins(registry: kopf.OperatorRegistry, *, connections: int = 0) -> None:
    """kopf's login functions on ``registry``; with ``connections`` > 0, each session bounded to that many."""
    for fn in login_functions():
        kopf.on.login(registry=registry, id=fn.__name__, errors=kopf.ErrorsMode.IGNORED)(
            _login(fn, connections)
        )
