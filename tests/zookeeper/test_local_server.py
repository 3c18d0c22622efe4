"""The single-server harness is real, fast, isolated per test, and leaves nothing running."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.states import ZnodeStat

from harness.zookeeper import ZkChroot, connected, drop_connection, expire_session, listening_addresses
from topic_operator.testing.local_server import (
    LocalZooKeeper,
    ZooKeeperNotInstalledError,
    zookeeper_classpath,
)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A reaped child is gone; a zombie would still answer signal 0, so check its state too.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _can_connect(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def test_server_starts_quickly_and_stops_completely() -> None:
    started = time.monotonic()
    server = LocalZooKeeper().start()
    elapsed = time.monotonic() - started
    print(
        f"LocalZooKeeper ready in {elapsed:.3f} s (JVM launch to first answer {server.startup_seconds:.3f} s)"
    )
    port, pid, work_dir = server.port, server.pid, server.log_path.parent
    try:
        assert server.four_letter_word("ruok") == "imok"
        assert "Mode: standalone" in server.four_letter_word("srvr")
        assert server.connect_string == f"127.0.0.1:{port}"
        assert elapsed < 5.0, f"ZooKeeper took {elapsed:.2f} s to start (expected well under 1 s)"
    finally:
        server.stop()
    assert not server.running
    assert not _process_exists(pid), f"ZooKeeper JVM {pid} still alive after stop()"
    assert not _can_connect(port), f"port {port} still accepts connections after stop()"
    with socket.socket() as sock:
        # Free again for a new server (which, like ZooKeeper, sets SO_REUSEADDR to bind past TIME_WAIT).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()
    assert not work_dir.exists(), f"{work_dir} left behind"
    server.stop()  # idempotent


def test_server_listens_on_loopback_only(zookeeper_server: LocalZooKeeper) -> None:
    config = (zookeeper_server.log_path.parent / "zoo.cfg").read_text()
    assert "clientPortAddress=127.0.0.1" in config
    assert "admin.enableServer=false" in config
    addresses = listening_addresses(zookeeper_server.port)
    assert addresses, f"nothing listens on {zookeeper_server.port}"
    assert all(address.is_loopback for address in addresses), addresses


def test_znode_round_trip(zk: KazooClient, zk_chroot: ZkChroot) -> None:
    zk.create("/brokers/ids/1", b'{"version":5}', makepath=True)
    data, stat = zk.get("/brokers/ids/1")
    assert data == b'{"version":5}'
    assert isinstance(stat, ZnodeStat)
    assert stat.version == 0
    zk.set("/brokers/ids/1", b"{}", version=0)
    assert zk.get("/brokers/ids/1")[1].version == 1
    # The client is rooted at the chroot: the same node is visible at the full path from the server's root.
    with connected(zk_chroot.server_hosts) as root_client:
        assert root_client.get(f"{zk_chroot.path}/brokers/ids/1")[0] == b"{}"


_isolated_chroots: list[str] = []


@pytest.mark.parametrize("writer", ["first", "second"])
def test_chroots_are_isolated(zk: KazooClient, zk_chroot: ZkChroot, writer: str) -> None:
    """Run twice: each run must find an empty chroot, whatever the other run wrote."""
    assert zk.get_children("/") == []
    zk.create("/brokers/ids/1", writer.encode(), makepath=True)
    assert zk_chroot.path.startswith("/t-test_chroots_are_isolated_")
    assert zk_chroot.path not in _isolated_chroots
    assert zk_chroot.connect_string.endswith(zk_chroot.path)
    _isolated_chroots.append(zk_chroot.path)


def test_chroots_are_deleted_after_their_tests(zookeeper_server: LocalZooKeeper) -> None:
    if not _isolated_chroots:
        pytest.skip("needs test_chroots_are_isolated to run first")
    with connected(zookeeper_server.connect_string) as root_client:
        assert [path for path in _isolated_chroots if root_client.exists(path)] == []


def test_expired_session_loses_its_ephemeral_nodes(zk: KazooClient, zk_chroot: ZkChroot) -> None:
    zk.create("/brokers/ids/7", b"{}", ephemeral=True, makepath=True)
    old_session = zk.client_id[0]
    expire_session(zk, zk_chroot.server_hosts)
    assert zk.client_id[0] != old_session
    assert zk.exists("/brokers/ids/7") is None
    assert zk.exists("/brokers/ids") is not None  # persistent parents survive


def test_dropped_connection_keeps_the_session(zk: KazooClient) -> None:
    zk.create("/owner", b"", ephemeral=True)
    session = zk.client_id[0]
    drop_connection(zk)
    assert zk.client_id[0] == session
    assert zk.exists("/owner") is not None


def test_missing_jars_name_the_debian_package(tmp_path: Path) -> None:
    with pytest.raises(ZooKeeperNotInstalledError, match=r"apt-get install zookeeper"):
        zookeeper_classpath(java_dir=tmp_path)


def test_failed_start_reports_the_log_and_cleans_up() -> None:
    server = LocalZooKeeper(jvm_flags=("-Xmx1k",), start_timeout=10)  # the JVM refuses a 1 KiB heap
    with pytest.raises(Exception, match=r"log tail") as failure:
        server.start()
    assert "heap" in str(failure.value).lower()
    assert not server.running
    server.stop()
