"""The processes engine's live reads: readers forked from ``kto drift`` itself, first thing once it knows the fleet.

A live read mostly waits, on its cluster's servers and the network between, and needs little in memory: the
stores, kazoo and kafka-python. The engine's workers come from a fork server that first imports the engine
(pyarrow, the planner), half a second or more on two cores before the first worker exists, and a read that waits
for them waits for imports it never uses. So the readers are not the engine's workers: ``kto drift`` loads the
stores once, forks the readers from its own process (which has started no thread yet; a process with threads
starts them from a fork server instead), and waits for them before it starts the engine's fork server and
imports the engine. The reads are the run's longest step; on two cores, the two imports of the engine beside
them (the driver's and the fork server's) made them take about twice as long.

Each reader writes its clusters' rows where the run reads snapshot files (``live.live_file``) and sends back, per
cluster, nothing or the reason it could not be read.
"""

from __future__ import annotations

import importlib
import multiprocessing
import shutil
import signal
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import ForkContext, ForkServerContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Final

from topic_operator.access.address import ClusterAddress
from topic_operator.access.stores import STORE_MODULES
from topic_operator.drift.live import collect_cluster, live_file

__all__ = ["LIVE_READERS", "read_live"]

LIVE_READERS: Final = 8
"""How many clusters are read live at once, at most, however few the cores. A live read mostly waits, so a
cluster must not wait for another's read to end while the cores are idle: on two cores, reading no more at once
than there were cores, the slowest of three clusters was read only once a quick one had been."""

_READER_MODULES: Final = (*STORE_MODULES, "topic_operator.snapshot_rows")
"""What a read uses, imported before the readers are forked so that they share it: imported by each reader
instead, it cost each of three readers a tenth of a second of CPU, beside the others."""


def read_live(
    clusters: Sequence[tuple[str, ClusterAddress]], directory: Path, *, timeout: float
) -> dict[str, str]:
    """Read ``clusters`` (name, address) into ``directory`` (emptied first), up to ``LIVE_READERS`` at once, each
    reader reading its share one cluster after another; the clusters that could not be read, with the reason.
    ``timeout``: how long connecting to a cluster may take. A reader that dies (killed for memory, say) is the
    reason for each of its clusters it had not reported."""
    for module in _READER_MODULES:
        importlib.import_module(module)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    context = _context()
    count = min(len(clusters), LIVE_READERS)
    readers: list[tuple[BaseProcess, Connection, list[str]]] = []
    try:
        for index in range(count):
            share = list(clusters[index::count])
            receiving, sending = context.Pipe(duplex=False)
            process = context.Process(
                target=_read_share,
                args=(share, directory, timeout, sending),
                name=f"kto-drift-read-{index}",
                daemon=True,
            )
            process.start()
            sending.close()  # the reader's end: once the reader exits, recv() below ends instead of waiting
            readers.append((process, receiving, [name for name, _ in share]))
        unread: dict[str, str] = {}
        for reader, answers, names in readers:
            unread.update(_reasons(reader, answers, names))
        return unread
    finally:  # a reader still running here (Ctrl-C in the driver) is stopped, not left behind
        for reader, answers, _ in readers:
            if reader.is_alive():
                reader.terminate()
            reader.join()
            answers.close()


def _context() -> ForkContext | ForkServerContext:
    """``fork`` from a process with one thread (``kto drift`` itself: the readers share its loaded stores), the
    fork server from one with more (a test's, a notebook's), where a fork may copy a lock another thread holds."""
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver")


def _reasons(process: BaseProcess, receiving: Connection, names: list[str]) -> dict[str, str]:
    pending = list(names)
    unread: dict[str, str] = {}
    while pending:
        try:
            name, reason = receiving.recv()
        except EOFError:
            process.join()
            return {
                **unread,
                **dict.fromkeys(pending, f"its reader process ended with exit code {process.exitcode}"),
            }
        pending.remove(name)
        if reason is not None:
            unread[name] = reason
    return unread


def _read_share(
    share: Sequence[tuple[str, ClusterAddress]], directory: Path, timeout: float, sending: Connection
) -> None:
    """In a reader: each cluster of ``share`` read into its file, and reported."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle, and it stops its readers
    with sending:
        for name, address in share:
            try:
                reason = _read_to_file(name, address, directory, timeout)
            # Its file not written (a full disk, say): the cluster's reason, no traceback.
            except Exception as error:
                reason = f"{type(error).__name__}: {error}"
            sending.send((name, reason))


def _read_to_file(name: str, address: ClusterAddress, directory: Path, timeout: float) -> str | None:
    lines: list[str] = []
    for _, value, error in collect_cluster(name, address, timeout):
        if error is not None:
            return error
        assert value is not None
        lines.append(value)
    path = live_file(directory, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return None
