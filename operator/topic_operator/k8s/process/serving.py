"""Metrics and readiness over HTTP, served from kopf's event loop (aiohttp, which kopf already depends on).

``/metrics``: the Prometheus text format. ``/readyz``: 200 once ``ready()`` says so (see ``readiness``: logged
in, and kopf's first list of each kind received), else 503 with what it waits for. ``/healthz`` (on the health
port): 200 unless ``alive()`` says a cluster is stuck (see ``liveness``); like any handler of the event loop it
stops answering when the loop is stuck.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from topic_operator.k8s.process.metrics import Metrics

__all__ = ["build_app", "build_health_app", "serve", "serve_health"]


Ready = Callable[[], Awaitable[tuple[bool, str]]]
"""Whether the operator is ready, and if not, what it waits for (if it is, a note such as "standby", or '')."""


def build_app(metrics: Metrics, ready: Ready) -> web.Application:
    async def metrics_view(_: web.Request) -> web.Response:
        return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def ready_view(_: web.Request) -> web.Response:
        is_ready, waiting_for = await ready()
        if is_ready:  # a standby is ready too, and says so
            return web.Response(text=f"ready: {waiting_for}\n" if waiting_for else "ready\n")
        return web.Response(status=503, text=f"waiting for {waiting_for}\n")

    app = web.Application()
    app.router.add_get("/metrics", metrics_view)
    app.router.add_get("/readyz", ready_view)
    return app


Alive = Callable[[], tuple[bool, dict[str, Any]]]
"""Whether the operator is alive, and the details for the answer."""


def build_health_app(alive: Alive) -> web.Application:
    async def health_view(_: web.Request) -> web.Response:
        ok, details = alive()
        return web.json_response(details, status=200 if ok else 503)

    app = web.Application()
    app.router.add_get("/healthz", health_view)
    return app


class ListenError(Exception):
    """An endpoint cannot listen on its address (the port is taken, the address is not this host's): the
    message names the endpoint, the address and the system's reason, in one line."""


async def serve_health(alive: Alive, *, host: str, port: int) -> web.AppRunner:
    """Start serving ``/healthz``; the caller calls ``runner.cleanup()`` at shutdown."""
    return await _listening(web.AppRunner(build_health_app(alive), access_log=None), host, port, "/healthz")


async def serve(metrics: Metrics, ready: Ready, *, host: str, port: int) -> web.AppRunner:
    """Start serving; the caller calls ``runner.cleanup()`` at shutdown."""
    runner = web.AppRunner(build_app(metrics, ready), access_log=None)
    return await _listening(runner, host, port, "/metrics and /readyz")


async def _listening(runner: web.AppRunner, host: str, port: int, what: str) -> web.AppRunner:
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as error:
        await runner.cleanup()
        reason = (
            os.strerror(error.errno) if error.errno else str(error)
        )  # asyncio's own text repeats the address
        raise ListenError(f"cannot listen on {host}:{port} for {what}: {reason}") from None
    return runner
