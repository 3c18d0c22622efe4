"""A validating admission webhook served by every replica, over HTTPS with a certificate they share.

kopf serves a webhook only while it runs, so on the leader alone: a standby that the webhook's Service picks
cannot answer, and the API server then admits unjudged (``failurePolicy: Ignore``) or refuses everything
(``Fail``) until the leader answers. With a certificate mounted into every pod (a Secret the installer makes,
whose CA is the ValidatingWebhookConfiguration's ``caBundle``), each replica serves the webhook from its start,
standing by or leading, with the same judge; the judge itself chooses where it reads the KafkaClusters from.

This module knows the AdmissionReview protocol (``admission.k8s.io/v1``) and nothing of KafkaTopics: the judge
gets the review's request and returns the refusal, or None to admit.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from topic_operator.k8s.process.serving import ListenError

__all__ = [
    "AdmissionAnswer",
    "AdmissionJudge",
    "admission_response",
    "build_admission_app",
    "serve_admission",
    "tls_context",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AdmissionAnswer:
    """Why a review is refused (HTTP 403 to the client; None: admitted), and warnings ``kubectl`` prints either way."""

    refusal: str | None = None
    warnings: tuple[str, ...] = ()


AdmissionJudge = Callable[[Mapping[str, Any]], Awaitable[AdmissionAnswer]]
"""An AdmissionReview's ``request`` -> the answer."""

_LARGEST_REVIEW: Final = 8 * 1024 * 1024
"""The largest AdmissionReview read: an object holds at most the API server's 3 MiB request, twice (old and new)."""


def admission_response(uid: str, answer: AdmissionAnswer) -> dict[str, Any]:
    """The AdmissionReview answering request ``uid``: allowed, or refused with the refusal as Kafka's words go to
    whoever applied the object (``kubectl`` prints the message), with the answer's warnings."""
    response: dict[str, Any] = {"uid": uid, "allowed": answer.refusal is None}
    if answer.refusal is not None:
        response["status"] = {"code": 403, "reason": "Forbidden", "message": answer.refusal}
    if answer.warnings:
        response["warnings"] = list(answer.warnings)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def build_admission_app(judge: AdmissionJudge) -> web.Application:
    """One route, any path: the API server posts each review to the path of the configuration's clientConfig."""

    async def review(request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
            asked = body["request"]
            uid = str(asked["uid"])
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "not an AdmissionReview"}, status=400)
        try:
            answer = await judge(asked)
        except Exception:  # a judge that fails: the API server applies the configuration's failurePolicy
            logger.exception("admission review %s could not be judged", uid)
            return web.json_response({"error": "the review could not be judged"}, status=500)
        if answer.refusal is not None:
            logger.info("admission refused %s: %s", _object_name(asked), answer.refusal)
        response = web.json_response(admission_response(uid, answer))
        # One review per connection: the Service then spreads reviews over the replicas, and a replica being
        # replaced holds no connection the API server would keep sending to.
        response.force_close()
        return response

    app = web.Application(client_max_size=_LARGEST_REVIEW)
    app.router.add_post("/{tail:.*}", review)
    return app


def _object_name(request: Mapping[str, Any]) -> str:
    return f"{request.get('namespace', '')}/{request.get('name', '')}"


def tls_context(directory: Path) -> ssl.SSLContext:
    """The server side of TLS with ``tls.crt`` and ``tls.key`` of ``directory`` (a kubernetes.io/tls Secret)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(directory / "tls.crt", directory / "tls.key")
    return context


async def serve_admission(
    judge: AdmissionJudge, *, host: str, port: int, certificates: Path
) -> web.AppRunner:
    """Start serving reviews on ``host:port`` over TLS; the caller calls ``runner.cleanup()`` at shutdown."""
    try:
        context = tls_context(certificates)
    except (OSError, ssl.SSLError) as error:
        raise ListenError(
            f"cannot serve the admission webhook with the certificate in {certificates} (tls.crt, tls.key): "
            f"{error.strerror if isinstance(error, OSError) and error.strerror else error}"
        ) from None
    runner = web.AppRunner(build_admission_app(judge), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port, ssl_context=context).start()
    except OSError as error:
        await runner.cleanup()
        reason = os.strerror(error.errno) if error.errno else str(error)
        raise ListenError(f"cannot listen on {host}:{port} for the admission webhook: {reason}") from None
    return runner
