"""Digest auth: a protected tree opens with the credentials and is refused without them; ACLs are Kafka's.

ZooKeeper accepts any digest identity at login and refuses *access*, through ACLs. So the refusal shows in two
places, both tested here: a tree we may not read fails ``open_client`` with ``ZooKeeperAuthError``; a tree we
may read but not write (Kafka's creator-all + world-read) opens, and the write raises kazoo's ``NoAuthError``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl, make_digest_acl_credential

from harness.zookeeper import ZkChroot
from topic_operator.zookeeper.connection import connected, open_client
from topic_operator.zookeeper.errors import ZooKeeperAuthError
from topic_operator.zookeeper.settings import DigestAuth, Secret, ZooKeeperSettings

USER = "kafka"
PASSWORD = "digest-pw-51d2"
KAFKA = DigestAuth(user=USER, password=Secret(PASSWORD))


def _settings(connect: str, digest: DigestAuth | None = KAFKA, *, set_acl: bool = False) -> ZooKeeperSettings:
    return ZooKeeperSettings(connect=connect, digest=digest, set_acl=set_acl, connection_timeout=5.0)


def _open_up(chroot: ZkChroot, *paths: str) -> None:
    """Give parents back to everyone, so the chroot fixture's unauthenticated client can delete the tree."""
    with connected(_settings(chroot.connect_string)) as owner:
        for path in paths:
            if owner.exists(path):
                owner.set_acls(path, OPEN_ACL_UNSAFE)


@pytest.fixture
def protected(zk: KazooClient, zk_chroot: ZkChroot) -> Iterator[str]:
    """``<chroot>/kafka``: all permissions for digest user kafka, none (not even read) for anyone else."""
    zk.create("/kafka", b"", acl=[make_digest_acl(USER, PASSWORD, all=True)])
    yield f"{zk_chroot.connect_string}/kafka"
    _open_up(zk_chroot, "/kafka")


def test_protected_tree_is_readable_and_writable_with_the_credentials(protected: str) -> None:
    with connected(_settings(protected)) as client:
        client.create("/brokers", b"")
        client.set("/brokers", b"v2")
        assert client.get("/brokers")[0] == b"v2"
        assert client.get_children("/") == ["brokers"]


def test_protected_tree_is_refused_without_credentials(protected: str) -> None:
    with pytest.raises(ZooKeeperAuthError) as failure:
        open_client(_settings(protected, digest=None))
    assert str(failure.value).startswith(f"ZooKeeper at {protected} does not let an unauthenticated client")


def test_protected_tree_is_refused_with_a_wrong_password(protected: str) -> None:
    wrong = DigestAuth(user=USER, password=Secret("not-the-password"))
    with pytest.raises(ZooKeeperAuthError) as failure:
        open_client(_settings(protected, digest=wrong))
    message = str(failure.value)
    assert message.startswith(f"ZooKeeper at {protected} does not let digest user 'kafka' read")
    assert "not-the-password" not in message
    assert PASSWORD not in message


def test_created_znodes_carry_kafkas_acls_and_others_may_only_read(
    zk: KazooClient, zk_chroot: ZkChroot
) -> None:
    zk.create("/kafka")
    connect = f"{zk_chroot.connect_string}/kafka"
    try:
        with connected(_settings(connect, set_acl=True)) as client:
            client.create("/config/topics/orders", b'{"version":1,"config":{}}', makepath=True)
            acls, _ = client.get_acls("/config/topics/orders")
            parent_acls, _ = client.get_acls("/config/topics")
        digest_id = make_digest_acl_credential(USER, PASSWORD)
        expected = {("digest", digest_id, 31), ("world", "anyone", 1)}  # creator ALL, everyone READ
        assert {(acl.id.scheme, acl.id.id, acl.perms) for acl in acls} == expected
        assert {(acl.id.scheme, acl.id.id, acl.perms) for acl in parent_acls} == expected  # makepath's too

        with connected(_settings(connect, digest=None)) as stranger:
            assert stranger.get("/config/topics/orders")[0] == b'{"version":1,"config":{}}'
            with pytest.raises(NoAuthError):
                stranger.set("/config/topics/orders", b"{}")
            with pytest.raises(NoAuthError):
                stranger.create("/config/topics/orders/x", b"")
    finally:
        _open_up(zk_chroot, "/kafka/config", "/kafka/config/topics")
