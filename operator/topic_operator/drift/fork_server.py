"""The server the processes engine forks its workers from, started before the engine is imported.

Starting it is slow: the server imports the engine (pyarrow, orjson, the planner) and, for a run that reads
clusters live, the stores (kazoo, kafka-python), about half a second on two cores. Its first workers wait for
that. Started by ``kto drift`` before the driver imports the engine itself, the two imports run side by side,
and the workers are ready when the run reaches its first task instead of half a second later. This module imports
nothing heavy for that reason.

There is one fork server per program: the first start fixes what it imports (a later list applies only if none
has run yet, and a worker then imports what it lacks on first use).
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext

from topic_operator.access.stores import STORE_MODULES

__all__ = ["fork_context", "start_fork_server"]

ENGINE_MODULE = "topic_operator.drift.processes"


def fork_context(*, reads_live: bool) -> ForkServerContext:
    """The fork server's context, with the modules it imports before forking any worker: the engine, and the
    stores for a run that reads clusters live."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([ENGINE_MODULE, *(STORE_MODULES if reads_live else ())])
    return context


def start_fork_server(*, reads_live: bool) -> None:
    """Start the server now, without waiting for its imports: ``ensure_running`` returns once the process is
    launched, and a worker asked for meanwhile waits in its queue."""
    fork_context(reads_live=reads_live)
    forkserver.ensure_running()
