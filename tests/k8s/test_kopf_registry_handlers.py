"""The kopf registry ``kto run`` starts holds exactly the expected handlers, for the expected resources, with the
drift interval from the settings; and the operator's HTTP endpoints answer."""

from __future__ import annotations

import asyncio

import aiohttp

from topic_operator.k8s.handlers import FINALIZER, build_kopf_settings, build_registry
from topic_operator.k8s.process.metrics import Metrics
from topic_operator.k8s.process.serving import serve
from topic_operator.k8s.process.settings import OperatorSettings


def _handlers(registry, part: str) -> list[tuple[str, str | None, str | None]]:  # type: ignore[no-untyped-def]
    found = []
    for handler in getattr(registry, part).get_all_handlers():
        resource = handler.selector.any_name if getattr(handler, "selector", None) is not None else None
        reason = getattr(handler, "reason", None)
        found.append((handler.id, resource, reason.value if reason is not None else None))
    return sorted(found, key=str)


def test_the_registry_holds_the_expected_handlers() -> None:
    registry = build_registry(OperatorSettings(drift_interval=42))
    # KafkaTopics have no kopf index: kopf's per-object wait for it is O(N²) at start (see claim_index).
    # Namespaces are few, and their labels decide the grants that select them: kopf fills it before any handler.
    assert _handlers(registry, "_indexing") == [
        ("kto_cluster_identities", "kafkaclusters", None),
        ("kto_namespace_labels", "namespaces", None),
    ]
    assert _handlers(registry, "_watching") == [("topic-event", "kafkatopics", None)]
    assert _handlers(registry, "_changing") == sorted(
        [
            ("topic-delete/spec.deletionPolicy", "kafkatopics", "delete"),
            ("cluster", "kafkaclusters", None),
            ("cluster", "kafkaclusters", "create"),
            ("cluster", "kafkaclusters", "update"),
            ("cluster-delete", "kafkaclusters", "delete"),
        ],
        key=str,
    )
    (daemon,) = registry._spawning.get_all_handlers()  # the session keeper, which also runs the drift checks
    assert (daemon.id, daemon.selector.any_name) == ("session", "kafkaclusters")
    assert all(
        h.selector.group == ("" if h.id == "kto_namespace_labels" else "kto.dev")
        for part in ("_changing", "_indexing", "_watching", "_spawning")
        for h in getattr(registry, part).get_all_handlers()
    )
    assert sorted(h.id for h in registry._activities.get_all_handlers()) == [
        "cleanup",
        "login_with_kubeconfig",
        "login_with_service_account",
    ]


def test_kopf_settings_follow_ours() -> None:
    peered = build_kopf_settings(
        OperatorSettings(namespaces=("a",), peering="kafka-topic-operator"), priority=7
    )
    assert (peered.peering.name, peered.peering.priority, peered.peering.mandatory) == (
        "kafka-topic-operator",
        7,
        True,
    )
    assert not peered.peering.clusterwide
    assert peered.persistence.finalizer == FINALIZER
    assert peered.scanning.disabled
    standalone = build_kopf_settings(OperatorSettings(), priority=1)
    assert standalone.peering.standalone  # the default: replicas elect the working one through the Lease
    assert (peered.queueing.worker_limit, standalone.queueing.worker_limit) == (2000, 2000)
    unlimited = build_kopf_settings(OperatorSettings(worker_limit=0), priority=1)
    assert unlimited.queueing.worker_limit is None


def test_metrics_and_readiness_endpoints() -> None:
    metrics = Metrics()
    metrics.reconciles.labels("ns/main", "applied").inc()

    async def scenario() -> None:
        state = {"ready": False}

        async def ready() -> tuple[bool, str]:
            return state["ready"], "a test"

        runner = await serve(metrics, ready, host="127.0.0.1", port=0)
        port = runner.addresses[0][1]
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(f"http://127.0.0.1:{port}/readyz") as response:
                    assert response.status == 503
                    assert await response.text() == "waiting for a test\n"
                state["ready"] = True
                async with session.get(f"http://127.0.0.1:{port}/readyz") as response:
                    assert response.status == 200
                async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                    text = await response.text()
            assert 'kto_topic_reconciles_total{cluster="ns/main",result="applied"} 1.0' in text
        finally:
            await runner.cleanup()

    asyncio.run(scenario())
