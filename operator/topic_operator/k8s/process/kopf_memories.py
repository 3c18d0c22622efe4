"""kopf's per-object memories, kept only for the objects that need one.

kopf remembers something about every object it has seen, for as long as the object exists: a throttle for its
own errors, daemons' state, a copy of the operator's memo, whether it was handled once since the first list. About
1 KB and seven objects for the garbage collector to walk, per object. The operator needs none of it for a
KafkaTopic that has no finalizer: its watch handler hands the KafkaTopic to ``TopicWork``, which keeps what it
needs itself, and kopf runs no daemon, timer or resume handler for KafkaTopics. At 50,000 KafkaTopics that was
50 MB held for nothing. A KafkaTopic with a finalizer (``deletionPolicy: Delete``: kopf's on-delete handler runs
its deletion over several events) or being deleted keeps kopf's memory as before, and so does every other kind.

kopf takes its memories as an argument of ``kopf.operator`` but does not export their class: this builds on
kopf's own, and when a kopf release no longer has it, ``memories()`` gives None and kopf makes its default
(``tests/unit/test_kopf_memories.py`` then fails, so the loss is seen).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["memories", "needs_memory"]


def needs_memory(raw_body: Mapping[str, Any]) -> bool:
    """Whether kopf should remember the object: anything but a KafkaTopic with no finalizer, not being
    deleted."""
    if raw_body.get("kind") != "KafkaTopic" or not str(raw_body.get("apiVersion", "")).startswith("kto.dev/"):
        return True
    metadata = raw_body.get("metadata")
    if not isinstance(metadata, Mapping):
        return True
    return bool(metadata.get("finalizers") or metadata.get("deletionTimestamp"))


def memories() -> Any:
    """kopf's memories that forget what ``needs_memory`` says needs none; None when kopf has no such class."""
    try:
        from kopf._core.reactor.inventory import ResourceMemories, ResourceMemory
    except ImportError:
        return None

    class ForgetfulMemories(ResourceMemories):
        async def recall(
            self,
            raw_body: Any,
            *,
            memobase: Any = None,
            noticed_by_listing: bool = False,
            ephemeral: bool = False,
        ) -> ResourceMemory:
            if not ephemeral and not needs_memory(raw_body) and self._build_key(raw_body) not in self._items:
                ephemeral = True  # made for this event, and not kept
            return await super().recall(
                raw_body, memobase=memobase, noticed_by_listing=noticed_by_listing, ephemeral=ephemeral
            )

    return ForgetfulMemories()
