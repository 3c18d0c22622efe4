"""A real 3-server ensemble survives losing its leader, and a real session expiry drops ephemeral nodes.

These exercise the failover harness itself; they are ``slow`` (marked automatically through ``zk_ensemble``).
"""

from __future__ import annotations

import threading

from kazoo.protocol.states import KazooState
from kazoo.retry import KazooRetry

from harness.zookeeper import Ensemble, chroot_for, connected, expire_session, listening_addresses


def test_client_survives_leader_crash(zk_ensemble: Ensemble) -> None:
    states: list[str] = []
    suspended = threading.Event()

    def record(state: str) -> None:
        states.append(state)
        if state == KazooState.SUSPENDED:
            suspended.set()

    chroot = chroot_for("failover")
    with connected(zk_ensemble.connect_string) as admin:
        admin.create(chroot)
    with connected(zk_ensemble.connect_string + chroot) as client:
        client.add_listener(record)
        client.create("/topics/orders", b'{"partitions":3}', makepath=True)
        client.create("/owner", b"", ephemeral=True)
        session = client.client_id[0]

        old_leader = zk_ensemble.kill_leader()
        assert suspended.wait(15), f"client never noticed the leader's crash: {states}"

        retry = KazooRetry(max_tries=-1, deadline=30, max_delay=1)
        assert retry(client.get, "/topics/orders")[0] == b'{"partitions":3}'
        client.create("/topics/payments", b"{}")  # the remaining quorum accepts writes
        assert client.state == KazooState.CONNECTED
        assert client.client_id[0] == session, "the session should survive a leader election"
        assert client.exists("/owner") is not None
        new_leader = zk_ensemble.leader()
        assert new_leader is not old_leader

        # The crashed server comes back as a follower and catches up on what it missed.
        zk_ensemble.restart(old_leader)
        assert zk_ensemble.modes()[old_leader.server_info.server_id] == "follower"
    with connected(f"127.0.0.1:{old_leader.client_port}{chroot}") as direct:
        direct.sync("/")
        assert sorted(direct.get_children("/topics")) == ["orders", "payments"]


def test_session_expiry_removes_ephemeral_nodes(zk_ensemble: Ensemble) -> None:
    base = chroot_for("expiry")
    with (
        connected(zk_ensemble.connect_string) as client,
        connected(zk_ensemble.connect_string) as observer,
    ):
        client.ensure_path(base)
        client.create(f"{base}/broker-1", b"", ephemeral=True)
        assert observer.exists(f"{base}/broker-1") is not None
        old_session = client.client_id[0]

        expire_session(client, zk_ensemble.connect_string)

        assert client.client_id[0] != old_session
        observer.sync(base)
        assert observer.exists(f"{base}/broker-1") is None
        assert client.exists(base) is not None


def test_ensemble_listens_on_loopback_only(zk_ensemble: Ensemble) -> None:
    for server in zk_ensemble.servers:
        info = server.server_info
        for port in (info.client_port, info.secure_client_port, info.election_port):
            addresses = listening_addresses(port)
            assert addresses, f"server {info.server_id}: nothing listens on {port}"
            assert all(address.is_loopback for address in addresses), (info.server_id, port, addresses)
