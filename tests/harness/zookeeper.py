"""Real ZooKeeper for the tests: per-test chroots on the session's server, a 3-node ensemble, and fault helpers.

Follows kazoo's own harness: one server per session, a fresh chroot per test, helpers that break a connection or
expire a session the way production does, and the servers' logs shown when a test fails.
"""

from __future__ import annotations

import contextlib
import ipaddress
import random
import re
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError, NotEmptyError
from kazoo.protocol.states import KazooState

from topic_operator.testing.local_server import (
    LocalZooKeeper,
    four_letter_word,
    port_is_free,
    zookeeper_classpath,
)

CLIENT_TIMEOUT = 10.0
"""Session timeout asked for by test clients: long enough to ride out a leader election (a few seconds)."""


def new_client(hosts: str, **options: Any) -> KazooClient:
    """Start a kazoo client on ``hosts`` (which may end in a chroot); the caller stops and closes it."""
    options.setdefault("timeout", CLIENT_TIMEOUT)
    client = KazooClient(hosts=hosts, **options)
    try:
        client.start(timeout=CLIENT_TIMEOUT)
    except BaseException:
        client.close()  # a client that never connected still owns threads and sockets
        raise
    return client


def close_client(client: KazooClient) -> None:
    """Stop and close, tolerating a client that already lost its connection."""
    try:
        client.stop()
    finally:
        client.close()


@contextlib.contextmanager
def connected(hosts: str, **options: Any) -> Iterator[KazooClient]:
    """A started kazoo client for the duration of a ``with`` block."""
    client = new_client(hosts, **options)
    try:
        yield client
    finally:
        close_client(client)


# -- per-test chroots ----------------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def chroot_for(test_name: str) -> str:
    """A unique znode path naming the test, so a leftover tree in a shared server says who left it."""
    readable = _UNSAFE.sub("_", test_name).strip("_.")[:60] or "test"
    return f"/t-{readable}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class ZkChroot:
    """One test's private corner of the session's server; code under test sees it as the root."""

    server: LocalZooKeeper
    path: str

    @property
    def connect_string(self) -> str:
        """``127.0.0.1:PORT/t-...``: what a user would put in ``spec.zookeeper.connect``."""
        return f"{self.server.connect_string}{self.path}"

    @property
    def server_hosts(self) -> str:
        """The server without the chroot, for helpers that act on sessions (which are not chrooted)."""
        return self.server.connect_string


def create_chroot(admin: KazooClient, path: str) -> None:
    admin.create(path, makepath=True)


def delete_chroot(admin: KazooClient, path: str, attempts: int = 5) -> None:
    """Delete the tree, retrying while a client the test leaked is still adding or removing ephemeral nodes."""
    for attempt in range(attempts):
        try:
            admin.delete(path, recursive=True)
        except NoNodeError:
            return
        except NotEmptyError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2)
        else:
            return


# -- faults ----------------------------------------------------------------------------------------------------


def _wait_for_states(client: KazooClient, first: str, action: Any, timeout: float) -> None:
    """Run ``action`` and wait until ``client`` reports ``first`` and then CONNECTED again."""
    seen_first = threading.Event()
    back = threading.Event()

    def listener(state: str) -> bool:
        if state == first:
            seen_first.set()
        elif state == KazooState.CONNECTED and seen_first.is_set():
            back.set()
            return True  # kazoo removes a listener that returns True
        return False

    client.add_listener(listener)
    try:
        action()
        if not seen_first.wait(timeout):
            raise AssertionError(f"client never reported {first} within {timeout} s")
        if not back.wait(timeout):
            raise AssertionError(f"client did not reconnect within {timeout} s after {first}")
    finally:
        client.remove_listener(listener)


def expire_session(client: KazooClient, server_hosts: str, timeout: float = 20.0) -> None:
    """Expire ``client``'s session on the server, for real, and wait until it has a new one.

    A second client attaches to the same session id and password and closes it: the server then deletes the
    session's ephemeral nodes and the first client is told its session expired (kazoo's LOST), exactly what a
    long network partition does. ``server_hosts`` must not carry a chroot.
    """
    session_id, password = client.client_id

    def close_session() -> None:
        killer = KazooClient(hosts=server_hosts, client_id=(session_id, password), timeout=CLIENT_TIMEOUT)
        try:
            killer.start(timeout=CLIENT_TIMEOUT)
        finally:
            close_client(killer)  # closing, not just disconnecting, is what ends the session

    _wait_for_states(client, KazooState.LOST, close_session, timeout)
    if client.client_id[0] == session_id:
        raise AssertionError("session was not replaced after expiry")


def drop_connection(client: KazooClient, timeout: float = 20.0) -> None:
    """Break the client's TCP connection (kazoo harness's own trick) and wait until it resumes its session."""
    from kazoo.protocol.connection import _CONNECTION_DROP

    _wait_for_states(client, KazooState.SUSPENDED, lambda: client._call(_CONNECTION_DROP, None), timeout)


# -- sockets ---------------------------------------------------------------------------------------------------


def listening_addresses(port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every local address listening on TCP ``port``, read from /proc (Java listens on IPv6 sockets)."""
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as lines:
            for line in lines.readlines()[1:]:
                fields = line.split()
                address, port_hex = fields[1].split(":")
                if fields[3] != "0A" or int(port_hex, 16) != port:  # 0A: LISTEN
                    continue
                # The kernel prints each 32-bit word of the address in host (little-endian) byte order.
                raw = b"".join(bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8))
                ip = ipaddress.ip_address(raw)
                if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
                    found.append(ip.ipv4_mapped)
                else:
                    found.append(ip)
    return found


# -- ensemble --------------------------------------------------------------------------------------------------


def _free_port_block(host: str, size: int, span: int = 10, width: int = 5) -> int:
    """A base port such that ``base + i*span + j`` is free for every server i and j < width.

    kazoo's cluster lays out ports that way (client, election, leader, admin, secure client). Bases are drawn
    below Linux's ephemeral range (32768+) so a client socket cannot grab one between the check and the bind.
    """
    for _ in range(100):
        base = random.randrange(20_000, 32_000, span)
        ports = [base + i * span + j for i in range(size) for j in range(width)]
        if all(port_is_free(host, port) for port in ports):
            return base
    raise RuntimeError("no free block of ports for a ZooKeeper ensemble")


def _mode(host: str, port: int) -> str | None:
    """The server's role from ``srvr`` (leader, follower, standalone), or None when it is not serving."""
    with contextlib.suppress(OSError):
        match = re.search(r"^Mode: (\w+)", four_letter_word(host, port, "srvr"), re.MULTILINE)
        if match:
            return match.group(1)
    return None


class Ensemble:
    """A real multi-server ZooKeeper ensemble on 127.0.0.1, built on ``kazoo.testing.common.ZookeeperCluster``.

    kazoo's cluster is configured as its harness does for ``ZOOKEEPER_VERSION=3.8.0`` (four-letter words,
    reconfig, no local sessions) with Debian's classpath, plus what keeps it on loopback (client and TLS ports
    bound to 127.0.0.1, no admin server). kazoo's ``stop()`` forgets its servers, so this always uses
    ``terminate()``, which also deletes their directories.
    """

    host = "127.0.0.1"

    def __init__(self, size: int = 3) -> None:
        with warnings.catch_warnings():
            # kazoo makes its TLS test certificates with pyOpenSSL APIs that pyOpenSSL has deprecated.
            warnings.simplefilter("ignore", DeprecationWarning)
            self.cluster = self._make_cluster(size)
        self.size = size
        self.servers: list[Any] = list(self.cluster)
        self.startup_seconds: float | None = None

    def _make_cluster(self, size: int) -> Any:
        # Imported here: kazoo's testing module needs pyOpenSSL and pyjks, which only the ensemble tests use.
        try:
            import OpenSSL.crypto
            from kazoo.testing.common import ZookeeperCluster
        except ImportError as error:
            raise RuntimeError(
                f"kazoo's test cluster needs pyopenssl and pyjks (dev extras): {error}"
            ) from error
        if not hasattr(OpenSSL.crypto.X509, "add_extensions"):
            raise RuntimeError("kazoo's test cluster needs pyopenssl<26.2 (26.2 removed X509.add_extensions)")

        return ZookeeperCluster(
            classpath=zookeeper_classpath(logging="log4j"),
            size=size,
            port_offset=_free_port_block(self.host, size),
            configuration_entries=[
                "4lw.commands.whitelist=*",
                "reconfigEnabled=true",
                "localSessionsEnabled=false",
                "localSessionsUpgradingEnabled=false",
                f"clientPortAddress={self.host}",
                f"secureClientPortAddress={self.host}",
                "admin.enableServer=false",
            ],
            java_system_properties=["-XX:TieredStopAtLevel=1", "-Xmx256m", "-Dzookeeper.forceSync=no"],
        )

    @property
    def connect_string(self) -> str:
        return ",".join(f"{self.host}:{server.client_port}" for server in self.servers)

    def start(self, timeout: float = 60.0) -> None:
        started = time.monotonic()
        for server in reversed(self.servers):  # kazoo's order: clients prefer low ports, start those last
            server.run()
        self.wait_for_quorum(timeout)
        self.startup_seconds = time.monotonic() - started

    def stop(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # kazoo's Logger.warn on a killed server
            self.cluster.terminate()

    def modes(self) -> dict[int, str | None]:
        """Server id -> role, None for a server that is down or not serving."""
        return {
            server.server_info.server_id: _mode(self.host, server.client_port) if server.running else None
            for server in self.servers
        }

    def wait_for_quorum(self, timeout: float = 60.0) -> None:
        """Wait until every running server serves and exactly one leads."""
        deadline = time.monotonic() + timeout
        while True:
            modes = self.modes()
            running = [
                mode for server, mode in zip(self.servers, modes.values(), strict=True) if server.running
            ]
            if running and None not in running and running.count("leader") == 1:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"ZooKeeper ensemble not ready after {timeout:.0f} s: {modes}\n{self.logs()}"
                )
            time.sleep(0.1)

    def leader(self) -> Any:
        """The server currently leading (a kazoo ``ManagedZooKeeper``)."""
        for server in self.servers:
            if server.running and _mode(self.host, server.client_port) == "leader":
                return server
        raise AssertionError(f"no leader: {self.modes()}")

    def kill(self, server: Any) -> None:
        """SIGKILL one server, as a crash would (no orderly shutdown, no goodbye to the followers)."""
        server.process.kill()
        server.process.wait()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            server.stop()  # only records that it is down: the process is already gone

    def kill_leader(self) -> Any:
        leader = self.leader()
        self.kill(leader)
        return leader

    def restart(self, server: Any, timeout: float = 60.0) -> None:
        """Start a stopped server again on its old data; it rejoins and catches up from the leader."""
        server.run()
        self.wait_for_quorum(timeout)

    def heal(self) -> None:
        """Restart whatever an earlier test left down, so every test starts on a whole ensemble."""
        down = [server for server in self.servers if not server.running]
        for server in down:
            server.run()
        self.wait_for_quorum()

    def logs(self, lines: int = 60) -> str:
        """The tail of each server's log, labelled, for failure reports."""
        parts = []
        for server in self.servers:
            tail = "".join(server.get_logs(lines)) or "(empty)\n"
            parts.append(
                f"--- server {server.server_info.server_id} ({self.host}:{server.client_port}) ---\n{tail}"
            )
        return "".join(parts)
