"""kopf keeps no per-object memory for a KafkaTopic without a finalizer, and keeps it for everything else."""

from __future__ import annotations

import asyncio
from typing import Any

from topic_operator.k8s.process.kopf_memories import memories, needs_memory


def _topic(uid: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": {"uid": uid, **metadata}}


def test_only_kafkatopics_without_finalizers_go_unremembered() -> None:
    store = memories()
    assert store is not None, (
        "this kopf has no ResourceMemories to build on: kopf remembers every object again"
    )

    async def scenario() -> int:
        for body in (
            _topic("plain"),
            _topic("delete-policy", finalizers=["kto.dev/finalizer"]),
            _topic("deleting", deletionTimestamp="2026-11-27T00:00:00Z"),
            {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": {"uid": "cluster"}},
            {"apiVersion": "other.example/v1", "kind": "KafkaTopic", "metadata": {"uid": "someone-elses"}},
        ):
            memory = await store.recall(body, noticed_by_listing=True)
            assert memory.noticed_by_listing  # an unkept memory still serves the event it was made for
        kept = {id(m) for m in store.iter_all_memories()}
        # a KafkaTopic remembered while it had a finalizer keeps its memory once the finalizer is gone
        again = await store.recall(_topic("delete-policy"))
        assert id(again) in kept
        return len(kept)

    assert asyncio.run(scenario()) == 4


def test_a_body_that_is_not_a_kafkatopic_of_ours_needs_memory() -> None:
    assert not needs_memory(_topic("u"))
    assert needs_memory(_topic("u", finalizers=["x"]))
    assert needs_memory({"kind": "KafkaTopic", "apiVersion": "kto.dev/v1alpha1", "metadata": "not a mapping"})
    assert needs_memory({})
