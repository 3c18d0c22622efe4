"""``kto drift`` reads the clusters of a live fleet at once, however few its worker processes: a live read mostly
waits on its cluster, so a cluster must not wait for another's read to end. Held to an event, not to a time: each
cluster is reached through its own proxy that lets nothing through until every cluster has connected. Read one
after another, the first read would wait for the others for ever and fail at ``--connect-timeout``. And a reader
that dies mid-read costs only its own cluster, reported with the reason; the others are read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import yaml
from kazoo.client import KazooClient

from harness.tcp_proxy import TcpProxy
from harness.zookeeper import ZkChroot
from topic_operator.drift.command import main as drift
from topic_operator.drift.live_readers import LIVE_READERS

pytestmark = pytest.mark.timeout(120)

NAMES = ("blue", "green", "red")


@pytest.fixture
def held(kafka_zk: KazooClient, zk_chroot: ZkChroot) -> Iterator[tuple[dict[str, TcpProxy], threading.Event]]:
    """A proxy per cluster to the test's Kafka-like chroot, each holding its connection until the event is set."""
    release = threading.Event()
    with ExitStack() as stack:
        proxies = {name: stack.enter_context(TcpProxy(zk_chroot.server.port, hold=release)) for name in NAMES}
        try:
            yield proxies, release
        finally:
            release.set()


def release_once_all_connected(
    proxies: dict[str, TcpProxy], release: threading.Event, before: Callable[[], None] = lambda: None
) -> threading.Thread:
    """A thread that, once every cluster has a client, runs ``before`` and lets the traffic through."""

    def watch() -> None:
        if all(proxy.connected.wait(60) for proxy in proxies.values()):
            before()
        release.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


def fleet_file(proxies: dict[str, TcpProxy], zk_chroot: ZkChroot, directory: Path) -> Path:
    fleet = directory / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump_all(
            [
                {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": {"name": name},
                 "spec": {"zookeeper": {"connect": f"127.0.0.1:{proxy.port}{zk_chroot.path}"}}}
                for name, proxy in proxies.items()
            ]
        )
    )  # fmt: skip
    return fleet


def observed(out: Path) -> dict[str, tuple[bool, str | None]]:
    summary = json.loads((out / "summary.json").read_text())
    return {c["name"]: (c["observed"], c.get("unobserved_reason")) for c in summary["clusters"]}


def test_a_fleet_of_more_clusters_than_processes_is_read_at_once(
    held: tuple[dict[str, TcpProxy], threading.Event], zk_chroot: ZkChroot, tmp_path: Path
) -> None:
    proxies, release = held
    assert len(NAMES) <= LIVE_READERS
    fleet = fleet_file(proxies, zk_chroot, tmp_path)
    watcher = release_once_all_connected(proxies, release)
    out = tmp_path / "out"
    code = drift(["--desired", str(fleet), "--clusters", str(fleet), "--out", str(out), "--engine", "processes",
                  "--processes", "1", "--connect-timeout", "10", "-q"])  # fmt: skip
    watcher.join(5)
    assert code in (0, 2)
    assert observed(out) == dict.fromkeys(NAMES, (True, None))


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, from ``/proc``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def test_a_reader_killed_mid_read_leaves_only_its_cluster_unread(
    held: tuple[dict[str, TcpProxy], threading.Event], zk_chroot: ZkChroot, tmp_path: Path
) -> None:
    """``kto drift`` as a user runs it, its own process: while every cluster's read waits on its proxy, the
    process's only children are its readers; one is killed, as the system kills one for memory."""
    proxies, release = held
    fleet = fleet_file(proxies, zk_chroot, tmp_path)
    out = tmp_path / "out"
    command = [str(Path(sys.executable).with_name("kto")), "drift", "--desired", str(fleet), "--clusters",
               str(fleet), "--out", str(out), "--engine", "processes", "--connect-timeout", "10", "-q"]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        killed: list[int] = []

        def kill_one_reader() -> None:
            readers = children(process.pid)
            if readers:
                os.kill(readers[0], signal.SIGKILL)
                killed.append(readers[0])

        watcher = release_once_all_connected(proxies, release, before=kill_one_reader)
        _, err = process.communicate(timeout=90)
        watcher.join(5)
    assert len(killed) == 1
    assert process.returncode in (0, 2), err
    assert "Traceback" not in err
    found = observed(out)
    unread = {name: reason for name, (seen, reason) in found.items() if not seen}
    assert list(unread.values()) == [f"its reader process ended with exit code {-signal.SIGKILL}"], found
    assert sorted(found) == sorted(NAMES)


def test_the_fleet_page_states_how_many_clusters_are_read_at_once() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "drift-across-a-fleet.md"
    assert f"up to {LIVE_READERS} clusters at once" in page.read_text()
