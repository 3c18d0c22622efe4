"""The event loop behind a thread that computes: how late it runs at CPython's switch interval and at the
operator's (``k8s/process/lock_handoff.py``).

One asyncio loop keeps ``--connections`` loopback TCP exchanges going (a write and a read each turn, as the
operator's HTTP traffic does) and times a 10 ms sleep over and over; one thread runs Python without pause beside
it (as a cluster's thread does while it plans over every topic). For each switch interval, the sleep's lateness:
median, 99th percentile and worst, and the exchanges done. The operator's target: the loop never held up for
more than 100 ms.

Run: ``.venv/bin/python bench/lock_handoff.py [--seconds 5] [--connections 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import threading
import time

from topic_operator.k8s.process.lock_handoff import LOOP_SWITCH_INTERVAL

CPYTHON_SWITCH_INTERVAL = 0.005


def _compute(stop: threading.Event) -> None:
    total = 0
    while not stop.is_set():
        for i in range(10_000):
            total += i * i


async def _echo(ended: asyncio.Semaphore, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The server's side of one exchange, until the client closes it; then ``ended`` is released once."""
    try:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()
        ended.release()


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stop: threading.Event, done: list[int]
) -> None:
    while not stop.is_set():
        writer.write(b"x" * 100)
        await writer.drain()
        await reader.readexactly(100)
        done[0] += 1


async def _measure(interval: float, seconds: float, connections: int) -> dict[str, float]:
    sys.setswitchinterval(interval)
    ended = asyncio.Semaphore(0)  # the measurement waits for every echo to end before its loop closes
    server = await asyncio.start_server(functools.partial(_echo, ended), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    streams = [await asyncio.open_connection("127.0.0.1", port) for _ in range(connections)]
    stop, done = threading.Event(), [0]
    computing = threading.Thread(target=_compute, args=(stop,))
    computing.start()
    exchanges = [asyncio.create_task(_exchange(r, w, stop, done)) for r, w in streams]
    lateness: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        asked = time.monotonic()
        await asyncio.sleep(0.01)
        lateness.append(time.monotonic() - asked - 0.01)
    stop.set()
    computing.join()
    await asyncio.gather(*exchanges)
    for _, writer in streams:
        writer.close()
    for _ in streams:
        await ended.acquire()
    server.close()
    await server.wait_closed()
    lateness.sort()
    return {
        "median ms": 1000 * statistics.median(lateness),
        "p99 ms": 1000 * lateness[int(0.99 * (len(lateness) - 1))],
        "worst ms": 1000 * lateness[-1],
        "exchanges a second": done[0] / seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="per switch interval (default 5)")
    parser.add_argument(
        "--connections", type=int, default=20, help="loopback exchanges kept going (default 20)"
    )
    args = parser.parse_args()
    original = sys.getswitchinterval()
    print(
        f"one loop with {args.connections} loopback exchanges, one thread computing beside it, {args.seconds:g} s each"
    )
    try:
        for name, interval in (
            ("CPython's", CPYTHON_SWITCH_INTERVAL),
            ("the operator's", LOOP_SWITCH_INTERVAL),
        ):
            figures = asyncio.run(_measure(interval, args.seconds, args.connections))
            print(
                f"  switch interval {1000 * interval:g} ms ({name}): a 10 ms sleep late by "
                f"{figures['median ms']:.1f} ms (median), {figures['p99 ms']:.1f} ms (p99), "
                f"{figures['worst ms']:.1f} ms (worst); {figures['exchanges a second']:,.0f} exchanges a second"
            )
    finally:
        sys.setswitchinterval(original)
    return 0


if __name__ == "__main__":
    sys.exit(main())
