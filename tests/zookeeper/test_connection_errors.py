"""Opening a client: rooted at the chroot when all is well, one clear error naming the connect string when not.

Every failure path must also leave no kazoo thread behind: the operator retries opening for as long as it runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss
from kazoo.retry import RetryFailedError

from harness.zookeeper import ZkChroot
from topic_operator.testing.local_server import free_port
from topic_operator.zookeeper.connection import connected, open_client
from topic_operator.zookeeper.errors import (
    ZooKeeperChrootMissingError,
    ZooKeeperUnavailableError,
)
from topic_operator.zookeeper.settings import ZooKeeperSettings


@pytest.fixture
def no_leaked_threads() -> Iterator[None]:
    """Fails the test if it leaves a thread running that was not there before it started."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 2.0
    while (leaked := set(threading.enumerate()) - before) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not leaked, f"threads left running: {sorted(thread.name for thread in leaked)}"


@pytest.mark.usefixtures("no_leaked_threads")
def test_unreachable_servers_give_a_clear_error_within_the_timeout() -> None:
    connect = f"127.0.0.1:{free_port()},127.0.0.1:{free_port()}/kafka"  # nobody listens on either
    started = time.monotonic()
    with pytest.raises(ZooKeeperUnavailableError) as failure:
        open_client(ZooKeeperSettings(connect=connect, connection_timeout=1.0))
    elapsed = time.monotonic() - started
    message = str(failure.value)
    assert message.startswith(f"cannot reach ZooKeeper at {connect} within 1 s"), message
    assert "Connection refused" in message  # kazoo's own reason, which it otherwise only logs
    assert 0.9 <= elapsed < 3.0, f"gave up after {elapsed:.2f} s, expected about 1 s"


@pytest.mark.usefixtures("no_leaked_threads")
def test_spent_connect_retries_end_the_wait_before_the_timeout() -> None:
    connect = f"127.0.0.1:{free_port()}"
    settings = ZooKeeperSettings(connect=connect, connection_timeout=10.0, connect_max_tries=2)
    started = time.monotonic()
    with pytest.raises(ZooKeeperUnavailableError, match=f"cannot reach ZooKeeper at {connect}"):
        open_client(settings)
    assert time.monotonic() - started < 2.0, "kazoo gave up after two rounds; waiting on was pointless"


@pytest.mark.usefixtures("no_leaked_threads")
def test_missing_chroot_is_reported_and_never_created(zk: KazooClient, zk_chroot: ZkChroot) -> None:
    zk.create("/kafka")
    connect = f"{zk_chroot.connect_string}/kafak"  # the typo the check is for
    with pytest.raises(ZooKeeperChrootMissingError) as failure:
        open_client(ZooKeeperSettings(connect=connect, connection_timeout=5.0))
    assert f"ZooKeeper at {connect} has no znode {zk_chroot.path}/kafak" in str(failure.value)
    assert zk.exists("/kafak") is None, "the missing chroot was created"
    assert zk.get_children("/") == ["kafka"]


def test_client_is_rooted_at_the_chroot(zk: KazooClient, zk_chroot: ZkChroot) -> None:
    zk.create("/kafka/brokers/ids", makepath=True)
    with connected(ZooKeeperSettings(connect=f"{zk_chroot.connect_string}/kafka")) as client:
        assert client.chroot == f"{zk_chroot.path}/kafka"
        assert client.get_children("/") == ["brokers"]
        client.create("/cluster/id", b'{"version":"1","id":"c1"}', makepath=True)
    assert zk.get("/kafka/cluster/id")[0] == b'{"version":"1","id":"c1"}'


def test_a_dead_host_in_the_list_is_skipped(zk: KazooClient, zk_chroot: ZkChroot) -> None:
    dead = f"127.0.0.1:{free_port()}"
    connect = f"{dead},{zk_chroot.server_hosts}{zk_chroot.path}"
    with connected(ZooKeeperSettings(connect=connect, connection_timeout=10.0)) as client:
        assert client.get_children("/") == []


def test_without_a_chroot_the_client_sees_the_whole_tree(zk_chroot: ZkChroot) -> None:
    with connected(ZooKeeperSettings(connect=zk_chroot.server_hosts)) as client:
        assert client.chroot == ""
        assert zk_chroot.path.lstrip("/") in client.get_children("/")


@pytest.mark.usefixtures("no_leaked_threads")
def test_commands_retry_a_bounded_number_of_times(zk_chroot: ZkChroot) -> None:
    settings = ZooKeeperSettings(connect=zk_chroot.connect_string, command_max_tries=3, retry_delay=0.01)
    calls: list[float] = []

    def always_lost() -> None:
        calls.append(time.monotonic())
        raise ConnectionLoss

    with connected(settings) as client, pytest.raises(RetryFailedError):
        client.retry(always_lost)
    assert len(calls) == 3  # three tries in all, the first included
