"""The server the processes engine forks its workers from, started before the engine is imported.

Starting it is slow: the server imports the engine (pyarrow, orjson, the planner), about half a second on two
cores. Its first workers wait for that. Started by ``kto drift`` before the driver imports the engine itself, the
two imports run side by side, and the workers are ready when the run reaches its first task instead of half a
second later. This module imports nothing heavy for that reason.

A live fleet's reads need none of the engine, and do not wait for this server: ``live_readers`` forks them from
``kto drift`` itself.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext

__all__ = ["fork_context", "start_fork_server"]

ENGINE_MODULE = "topic_operator.drift.processes"


def fork_context() -> ForkServerContext:
    """The fork server's context, with the module it imports before forking any worker: the engine."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([ENGINE_MODULE])
    return context


def start_fork_server() -> None:
    """Start the server now, without waiting for its imports: ``ensure_running`` returns once the process is
    launched, and a worker asked for meanwhile waits in its queue."""
    fork_context()
    forkserver.ensure_running()
