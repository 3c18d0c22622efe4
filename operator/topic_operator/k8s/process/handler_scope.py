"""Work that outlives a kopf handler starts outside the handler's context.

kopf runs each handler with the event's cause in context variables (``cause_var`` and its kin): the body as kopf
wraps it, its patch and logger, and the raw object the API server sent, ``managedFields`` included. asyncio copies
the current context into every task it starts and every callback it schedules, so a task started by a handler
holds that cause for as long as the task lives. A KafkaTopic's reconcile and its Events outlive the watch event
that started them; under a burst, thousands of them wait at once for the API server's bounded connections, each
holding a cause: some twenty-five objects in reference cycles and kilobytes of JSON. The heap upkeep's freezes
then took those cycles out of the collector's reach for good: 50,000 creates and then 50,000 updates sent
unpaced left the operator at 1.5 GB, three times what the same changes at a steady pace leave.

``outside_handler`` gives a copy of the current context without kopf's handler-scoped variables, and everything
else as it was (kopf's Event queue, its settings and credentials stay: ``kopf.event`` still works there).
kopf does not export its variables; when a kopf release no longer has them, nothing is left out and
``tests/unit/test_handler_scope.py`` fails, so the loss is seen.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["handler_scoped", "outside_handler", "start_outside_handler"]

T = TypeVar("T")


def handler_scoped() -> frozenset[contextvars.ContextVar[Any]]:
    """kopf's variables that hold one handler's call: its cause (the body), the handler, its sub-handlers."""
    try:
        from kopf._core.actions import execution
        from kopf._core.reactor import subhandling
    except ImportError:
        return frozenset()
    names = [
        (execution, "cause_var"),
        (execution, "handler_var"),
        (execution, "subrefs_var"),
        (execution, "sublifecycle_var"),
        (execution, "subsettings_var"),
        (subhandling, "subregistry_var"),
        (subhandling, "subexecuted_var"),
    ]
    found = (getattr(module, name, None) for module, name in names)
    return frozenset(var for var in found if isinstance(var, contextvars.ContextVar))


_HANDLER_SCOPED = handler_scoped()


def outside_handler() -> contextvars.Context:
    """The current context without the handler-scoped variables (the current context's copy when none is set)."""
    current = contextvars.copy_context()
    if not any(var in current for var in _HANDLER_SCOPED):
        return current
    clean = contextvars.Context()
    for var, value in current.items():
        if var not in _HANDLER_SCOPED:
            clean.run(var.set, value)
    return clean


def start_outside_handler(coro: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
    """A task of ``coro`` in the running loop, in ``outside_handler``'s context."""
    return asyncio.get_running_loop().create_task(coro, name=name, context=outside_handler())
