"""KafkaTopics as the operator's first run leaves them (created, with the status it writes), made through the real
API server in bulk; and whether a ``kto run`` process has gone idle. For the tests that restart the operator over
thousands of settled KafkaTopics."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import ssl
import time
from pathlib import Path
from typing import Any

import aiohttp

from harness.kto_objects import KTO_API
from harness.operator_process import Operator
from harness.real_apiserver import RealApiServer
from topic_operator.k8s.conditions import READY, Condition, Reason
from topic_operator.k8s.status import topic_status

__all__ = ["create_settled", "operator_idle", "settled_status"]


def settled_status(body: dict[str, Any], state: Any, now: datetime.datetime) -> dict[str, Any]:
    """What the operator's first run left on a KafkaTopic it created: its status (kopf keeps no record of a
    KafkaTopic: ``topic_work``)."""
    ready = Condition(READY, True, Reason.CREATED, f"Created topic {body['metadata']['name']}")
    return topic_status(generation=body["metadata"]["generation"], topic=body["metadata"]["name"],
                        state=state, ready=ready, now=now)  # fmt: skip


async def create_settled(
    apiserver: RealApiServer, namespace: str, bodies: list[dict[str, Any]], states: Any
) -> None:
    """Create every KafkaTopic, then write its status, 32 requests at a time over kept-alive connections."""
    context = ssl.create_default_context(cafile=str(apiserver.credentials.ca_file))
    headers = {"Authorization": f"Bearer {apiserver.credentials.admin_token}"}
    base = f"{apiserver.url}/apis/{KTO_API}/namespaces/{namespace}/kafkatopics"
    gate = asyncio.Semaphore(32)
    now = datetime.datetime.now(datetime.UTC)
    connector = aiohttp.TCPConnector(limit=32, ssl=context)
    async with aiohttp.ClientSession(headers=headers, connector=connector) as session:

        async def one(body: dict[str, Any]) -> None:
            async with gate:
                async with session.post(base, json=body) as answer:
                    created = await answer.json()
                    assert answer.status == 201, created
                status = settled_status(created, states[created["metadata"]["name"]], now)
                async with session.patch(f"{base}/{created['metadata']['name']}/status",
                                         data=json.dumps({"status": status}),
                                         headers={"Content-Type": "application/merge-patch+json"}) as answer:  # fmt: skip
                    assert answer.status == 200, await answer.text()

        await asyncio.gather(*(one(body) for body in bodies))


def operator_idle(operator: Operator, window: float = 2.0) -> bool:
    """Less than 5 % of a core over ``window`` seconds (kopf has resumed every object)."""

    def cpu() -> float:
        fields = Path(f"/proc/{operator.process.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before = cpu()
    time.sleep(window)
    return cpu() - before < 0.05 * window
