"""Metrics and readiness over HTTP, served from kopf's event loop (aiohttp, which kopf already depends on).

``/metrics``: the Prometheus text format. ``/readyz``: 200 once kopf has run its start-up and filled its indices
(its ``ready_flag``), 503 before. Liveness is kopf's own endpoint (``/healthz`` on the health port), which stops
answering if the event loop is stuck.
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from topic_operator.k8s.metrics import Metrics

__all__ = ["build_app", "serve"]


def build_app(metrics: Metrics, ready: asyncio.Event) -> web.Application:
    async def metrics_view(_: web.Request) -> web.Response:
        return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def ready_view(_: web.Request) -> web.Response:
        if ready.is_set():
            return web.Response(text="ready\n")
        return web.Response(status=503, text="starting\n")

    app = web.Application()
    app.router.add_get("/metrics", metrics_view)
    app.router.add_get("/readyz", ready_view)
    return app


async def serve(metrics: Metrics, ready: asyncio.Event, *, host: str, port: int) -> web.AppRunner:
    """Start serving; the caller calls ``runner.cleanup()`` at shutdown."""
    runner = web.AppRunner(build_app(metrics, ready), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
