"""The webhook every replica serves: AdmissionReview in, the judge's answer out, one review per connection, and
input that is not a review refused without a traceback. Over TLS with the certificate a Secret would mount."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient, TestServer

from topic_operator.k8s.kafkatopics.admission import TenancyWebhookServer
from topic_operator.k8s.process.admission_serving import (
    AdmissionAnswer,
    build_admission_app,
    serve_admission,
    tls_context,
)
from topic_operator.testing.local_server import free_port


async def _judge(request: Mapping[str, Any]) -> AdmissionAnswer:
    name = request["object"]["metadata"]["name"]
    if name == "boom":
        raise RuntimeError("a judge that fails")
    if name.startswith("bad"):
        return AdmissionAnswer(f"Not authorized to access topics: [{name}]")
    return AdmissionAnswer(
        None, ("KafkaCluster a/b does not exist: the KafkaTopic waits for it (ClusterNotFound)",)
    )


def _review(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": f"uid-{name}",
            "operation": "CREATE",
            "namespace": "team",
            "object": {"metadata": {"name": name}},
        },
    }


def test_reviews_are_answered_as_the_api_server_reads_them() -> None:
    async def scenario() -> list[tuple[int, Any, str | None]]:
        async with TestClient(TestServer(build_admission_app(_judge))) as client:
            answers = []
            for body in (_review("good"), _review("bad-x"), _review("boom"), {"not": "a review"}, "[]"):
                response = await client.post("/validate-kafkatopics", data=json.dumps(body))
                answers.append((response.status, await response.json(), response.headers.get("Connection")))
            return answers

    good, bad, boom, shapeless, junk = asyncio.run(scenario())
    assert good == (
        200,
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {
                "uid": "uid-good",
                "allowed": True,
                "warnings": [
                    "KafkaCluster a/b does not exist: the KafkaTopic waits for it (ClusterNotFound)"
                ],
            },
        },
        "close",
    )
    assert bad[0] == 200
    assert bad[1]["response"] == {
        "uid": "uid-bad-x",
        "allowed": False,
        "status": {"code": 403, "reason": "Forbidden", "message": "Not authorized to access topics: [bad-x]"},
    }
    assert boom[:2] == (500, {"error": "the review could not be judged"})  # the failurePolicy decides
    assert shapeless[:2] == junk[:2] == (400, {"error": "not an AdmissionReview"})


def test_every_replica_serves_the_mounted_certificate(tmp_path: Path) -> None:
    certificate, key = TenancyWebhookServer.build_certificate(["127.0.0.1"])
    (tmp_path / "tls.crt").write_bytes(certificate)
    (tmp_path / "tls.key").write_bytes(key)
    trusted = ssl.create_default_context(cadata=certificate.decode())
    port = free_port()

    async def scenario() -> tuple[int, Any]:
        runner = await serve_admission(_judge, host="127.0.0.1", port=port, certificates=tmp_path)
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.post(
                    f"https://127.0.0.1:{port}/validate-kafkatopics", json=_review("bad-y"), ssl=trusted
                ) as response,
            ):
                return response.status, await response.json()
        finally:
            await runner.cleanup()

    status, body = asyncio.run(scenario())
    assert (status, body["response"]["allowed"]) == (200, False)
    assert tls_context(tmp_path).minimum_version is ssl.TLSVersion.TLSv1_2


def test_a_missing_certificate_is_refused_naming_the_directory(tmp_path: Path) -> None:
    from topic_operator.k8s.process.serving import ListenError

    async def scenario() -> str:
        try:
            await serve_admission(_judge, host="127.0.0.1", port=free_port(), certificates=tmp_path / "none")
        except ListenError as error:
            return str(error)
        return ""

    message = asyncio.run(scenario())
    assert message.startswith(
        f"cannot serve the admission webhook with the certificate in {tmp_path / 'none'}"
    )
