"""``kto drift`` reads the clusters of a live fleet at once, however few its worker processes: a live read mostly
waits on its cluster, so a cluster must not wait for another's read to end. Held to an event, not to a time: each
cluster is reached through its own proxy that lets nothing through until every cluster has connected. Read one
after another, the first read would wait for the others for ever and fail at ``--connect-timeout``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import yaml
from kazoo.client import KazooClient

from harness.tcp_proxy import TcpProxy
from harness.zookeeper import ZkChroot
from topic_operator.drift.command import main as drift
from topic_operator.drift.processes import LIVE_READERS

pytestmark = pytest.mark.timeout(120)

NAMES = ("blue", "green", "red")


@pytest.fixture
def held_proxies(kafka_zk: KazooClient, zk_chroot: ZkChroot) -> Iterator[dict[str, TcpProxy]]:
    """A proxy per cluster to the test's Kafka-like chroot, all held until each has a client."""
    release = threading.Event()
    with ExitStack() as stack:
        proxies = {name: stack.enter_context(TcpProxy(zk_chroot.server.port, hold=release)) for name in NAMES}

        def release_when_all_connected() -> None:
            for proxy in proxies.values():
                if not proxy.connected.wait(60):
                    return
            release.set()

        watcher = threading.Thread(target=release_when_all_connected, daemon=True)
        watcher.start()
        yield proxies
        release.set()
        watcher.join(5)


def test_a_fleet_of_more_clusters_than_processes_is_read_at_once(
    held_proxies: dict[str, TcpProxy], zk_chroot: ZkChroot, tmp_path: Path
) -> None:
    assert len(NAMES) <= LIVE_READERS
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump_all(
            [
                {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": {"name": name},
                 "spec": {"zookeeper": {"connect": f"127.0.0.1:{proxy.port}{zk_chroot.path}"}}}
                for name, proxy in held_proxies.items()
            ]
        )
    )  # fmt: skip
    out = tmp_path / "out"
    code = drift(["--desired", str(fleet), "--clusters", str(fleet), "--out", str(out), "--engine", "processes",
                  "--processes", "1", "--connect-timeout", "10", "-q"])  # fmt: skip
    assert code in (0, 2)
    summary = json.loads((out / "summary.json").read_text())
    observed = {c["name"]: (c["observed"], c.get("unobserved_reason")) for c in summary["clusters"]}
    assert observed == dict.fromkeys(NAMES, (True, None))


def test_the_fleet_page_states_how_many_clusters_are_read_at_once() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "drift-across-a-fleet.md"
    assert f"up to {LIVE_READERS} clusters at once" in page.read_text()
