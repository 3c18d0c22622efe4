"""KafkaCluster and KafkaTopic bodies as a user writes them, and what a client reads back: the Ready condition,
the generation the operator has seen, and the Events about an object."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from harness.kube_client import KubeApiError, KubeClient
from harness.waiting import eventually

__all__ = [
    "KTO_API",
    "events_of",
    "events_once_posted",
    "kafka_cluster",
    "kafka_topic",
    "ready",
    "remove_kto_objects",
    "wait_cluster_ready",
    "wait_topic",
    "write_manifests",
]

KTO_API = "kto.dev/v1alpha1"


def kafka_cluster(namespace: str, name: str, connect: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": KTO_API,
        "kind": "KafkaCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"zookeeper": {"connect": connect}, **spec},
    }


def kafka_topic(namespace: str, name: str, cluster: str = "main", **spec: Any) -> dict[str, Any]:
    """Three partitions, three replicas, unless ``spec`` says otherwise."""
    return {
        "apiVersion": KTO_API,
        "kind": "KafkaTopic",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"cluster": cluster, "partitions": 3, "replicas": 3, **spec},
    }


def write_manifests(
    path: Path, cluster: str, cluster_spec: Mapping[str, Any], topics: Mapping[str, Mapping[str, Any]]
) -> Path:
    """A manifest file for ``kto -f``: the KafkaCluster ``cluster`` with ``cluster_spec``, then a KafkaTopic of it
    for each name of ``topics`` with its spec, as a user keeps them in one file without namespaces."""
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": KTO_API,
            "kind": "KafkaCluster",
            "metadata": {"name": cluster},
            "spec": dict(cluster_spec),
        }
    ]
    documents += [
        {
            "apiVersion": KTO_API,
            "kind": "KafkaTopic",
            "metadata": {"name": name},
            "spec": {"cluster": cluster, **spec},
        }
        for name, spec in topics.items()
    ]
    path.write_text(yaml.safe_dump_all(documents))
    return path


def ready(body: dict[str, Any]) -> dict[str, Any]:
    """The Ready condition of a body (empty when there is none yet)."""
    conditions = (body.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Ready"), {})


def wait_topic(
    kube: KubeClient, namespace: str, name: str, generation: int, reason: str, timeout: float = 30
) -> dict[str, Any]:
    """Until the KafkaTopic's status is of ``generation`` with Ready's ``reason``; the body then. A timeout says
    what the status was instead."""
    seen: dict[str, Any] = {}

    def settled() -> dict[str, Any] | None:
        body: dict[str, Any] = kube.get(KTO_API, "kafkatopics", namespace, name)
        status = body.get("status") or {}
        seen.update(generation=status.get("observedGeneration"), ready=ready(body))
        done = status.get("observedGeneration") == generation and ready(body).get("reason") == reason
        return body if done else None

    try:
        result: dict[str, Any] = kube.wait_for(
            settled,
            timeout=timeout,
            what=f"KafkaTopic {namespace}/{name} {reason} at generation {generation}",
        )
    except AssertionError as error:
        raise AssertionError(f"{error}; its status was {seen}") from None
    return result


def wait_cluster_ready(
    kube: KubeClient, namespace: str, name: str = "main", status: str = "True", timeout: float = 30
) -> dict[str, Any]:
    def settled() -> dict[str, Any] | None:
        body: dict[str, Any] = kube.get(KTO_API, "kafkaclusters", namespace, name)
        return body if ready(body).get("status") == status else None

    result: dict[str, Any] = kube.wait_for(
        settled, timeout=timeout, what=f"KafkaCluster {namespace}/{name} Ready={status}"
    )
    return result


def events_of(kube: KubeClient, namespace: str, name: str, kind: str = "KafkaTopic") -> list[tuple[str, str]]:
    """(type, reason) of every Event about the object, oldest first, as ``kubectl describe`` lists them."""
    found = kube.list(
        "v1", "events", namespace, fieldSelector=f"involvedObject.name={name},involvedObject.kind={kind}"
    )
    # In order of writing: timestamps have whole seconds, etcd's revision (the resourceVersion) orders within.
    found.sort(key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [(e["type"], e["reason"]) for e in found]


def events_once_posted(
    kube: KubeClient, namespace: str, name: str, count: int, kind: str = "KafkaTopic", timeout: float = 15.0
) -> list[tuple[str, str]]:
    """``events_of``, once at least ``count`` (1 or more) Events are there, or as they are after ``timeout``
    seconds, for the caller's assertion to say what is missing: the operator posts an Event after the status it
    accompanies, so a test that has just seen the status may list the Events a moment too early."""

    def enough() -> list[tuple[str, str]] | None:
        found = events_of(kube, namespace, name, kind)
        return found if len(found) >= count else None

    with contextlib.suppress(AssertionError):
        found: list[tuple[str, str]] = eventually(
            enough, timeout=timeout, what=f"{count} Events about {namespace}/{name}", expected=()
        )
        return found
    return events_of(kube, namespace, name, kind)


def remove_kto_objects(kube: KubeClient, namespace: str) -> None:
    """Delete every KafkaTopic and KafkaCluster of ``namespace``, finalizers stripped first: their operator may be
    gone, and a later operator watching every namespace must not find them (their ZooKeeper is gone too). One
    deletecollection per kind: thousands of objects go in seconds, not one round trip each."""
    for plural in ("kafkatopics", "kafkaclusters"):
        for body in kube.list(KTO_API, plural, namespace):
            if body["metadata"].get("finalizers"):
                with contextlib.suppress(KubeApiError):
                    kube.patch(
                        KTO_API,
                        plural,
                        namespace,
                        body["metadata"]["name"],
                        {"metadata": {"finalizers": None}},
                    )
        kube.delete_collection(KTO_API, plural, namespace)
