"""With ``acl=KAFKA_SECURE_ACL`` every znode the writer creates is creator-all plus world-read, as Kafka's own
znodes are on a cluster run with ``zookeeper.set.acl=true``: brokers and tools without credentials can still read
the cluster, but only the writer's identity can change it.

"Creator" is the digest identity the server saw, not the session: another client with the same credentials may
write too, a client without them may only read, and an unauthenticated writer is refused with nothing written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import InvalidACLError, NoAuthError
from kazoo.security import ACL, ANYONE_ID_UNSAFE, Id, Permissions, make_digest_acl_credential

from harness.kafka_cluster import CLUSTER_ID, SIX_BROKERS_THREE_RACKS
from harness.zookeeper import ZkChroot, close_client, connected, new_client
from topic_operator.plan import AlterConfig, CreateTopic, DeleteTopic
from topic_operator.testing.simulated_brokers import register_brokers
from topic_operator.zookeeper.errors import WriteRefusedError
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import KAFKA_SECURE_ACL, Outcome, ZooKeeperWriter
from topic_operator.zookeeper.znodes import BrokerIdsZNode, ClusterIdZNode

USER, PASSWORD = "kto", "secret"
CREDENTIALS = [("digest", f"{USER}:{PASSWORD}")]
EXPECTED_ACL = {
    ACL(Permissions.ALL, Id("digest", make_digest_acl_credential(USER, PASSWORD))),
    ACL(Permissions.READ, ANYONE_ID_UNSAFE),
}
"""What the server stores for ``KAFKA_SECURE_ACL`` written by ``kto:secret``: the "auth" scheme is replaced by the
authenticated digest id."""

ORDERS = CreateTopic("orders", {0: (0, 1, 2), 1: (1, 2, 3)}, {"retention.ms": "1000"})


@pytest.fixture
def secure(zk_chroot: ZkChroot) -> Iterator[KazooClient]:
    """A digest-authenticated client on a cluster that has only what brokers register (``/cluster/id`` and
    ``/brokers/ids``), so the writer creates every parent it needs, and with its ACLs."""
    client = new_client(zk_chroot.connect_string, auth_data=CREDENTIALS)
    try:
        client.create(ClusterIdZNode.path, ClusterIdZNode.encode(CLUSTER_ID), makepath=True)
        client.ensure_path(BrokerIdsZNode.path)
        register_brokers(client, SIX_BROKERS_THREE_RACKS)
        yield client
        # Only these credentials may delete what the writer created; the chroot fixture then removes the rest.
        for child in client.get_children("/"):
            client.delete(f"/{child}", recursive=True)
    finally:
        close_client(client)


def write_everything(client: KazooClient) -> list[str]:
    """Create a topic, change its config, mark it for deletion; returns every path the writer created."""
    writer = ZooKeeperWriter(client, acl=KAFKA_SECURE_ACL)
    writer.apply(ORDERS)
    writer.apply(AlterConfig("orders", {"retention.ms": "2000"}, expected_version=0))
    writer.apply(DeleteTopic("orders"))
    [notification] = client.get_children("/config/changes")
    return [
        "/config",
        "/config/topics",
        "/config/topics/orders",
        "/brokers/topics",
        "/brokers/topics/orders",
        "/config/changes",
        f"/config/changes/{notification}",
        "/admin",
        "/admin/delete_topics",
        "/admin/delete_topics/orders",
    ]


def test_created_znodes_are_creator_all_and_world_read(secure: KazooClient) -> None:
    for path in write_everything(secure):
        acls, _ = secure.get_acls(path)
        assert set(acls) == EXPECTED_ACL, path
        assert len(acls) == len(EXPECTED_ACL), path


def test_without_credentials_the_cluster_is_readable_but_not_writable(
    secure: KazooClient, zk_chroot: ZkChroot
) -> None:
    paths = write_everything(secure)
    with connected(zk_chroot.connect_string) as anonymous:
        for path in paths:
            assert anonymous.get(path)[0] == secure.get(path)[0], path
            with pytest.raises(NoAuthError):
                anonymous.set(path, b"{}")
            with pytest.raises(NoAuthError):
                anonymous.create(f"{path}/intruder")
            with pytest.raises(NoAuthError):
                anonymous.set_acls(path, [ACL(Permissions.ALL, ANYONE_ID_UNSAFE)])
        for path in paths:
            parent = path.rsplit("/", 1)[0]
            if parent in paths:  # deleting needs DELETE on the parent; /, /brokers are not the writer's
                with pytest.raises(NoAuthError):
                    anonymous.delete(path)
        # What an operator without credentials sees is the whole cluster.
        orders = read_cluster(anonymous).topics["orders"]
        assert orders.config == {"retention.ms": "2000"}
        assert orders.marked_for_deletion


@pytest.mark.parametrize(
    ("acl", "create_error"),
    [
        pytest.param(None, NoAuthError, id="open-acl"),
        # "creator" means an authenticated id; without one the server refuses the ACL itself.
        pytest.param(KAFKA_SECURE_ACL, InvalidACLError, id="secure-acl"),
    ],
)
def test_a_writer_without_credentials_is_refused_and_writes_nothing(
    secure: KazooClient, zk_chroot: ZkChroot, acl: Sequence[ACL] | None, create_error: type[Exception]
) -> None:
    write_everything(secure)
    before = {p: secure.get(p)[0] for p in ("/config/topics/orders", "/brokers/topics/orders")}
    notifications = secure.get_children("/config/changes")
    with connected(zk_chroot.connect_string) as anonymous:
        change, create = ZooKeeperWriter(anonymous, acl=acl).apply_all(
            [
                AlterConfig("orders", {"retention.ms": "3"}, expected_version=1),
                CreateTopic("other", {0: (0,)}),
            ]
        )
    assert (change.outcome, create.outcome) == (Outcome.REJECTED, Outcome.REJECTED)
    assert isinstance(change.error, WriteRefusedError)
    assert isinstance(change.error.__cause__, NoAuthError)  # kazoo's answer, behind the worded refusal
    assert isinstance(create.error, WriteRefusedError)
    assert isinstance(create.error.__cause__, create_error)
    assert (change.error.path, create.error.path) == ("/config/topics/orders", "/config/topics/other")
    assert {p: secure.get(p)[0] for p in before} == before
    assert secure.get_children("/config/changes") == notifications  # rolled back with the refused set
    assert secure.exists("/config/topics/other") is None
    assert secure.exists("/brokers/topics/other") is None


def test_the_same_credentials_in_another_session_may_write(secure: KazooClient, zk_chroot: ZkChroot) -> None:
    write_everything(secure)
    with connected(zk_chroot.connect_string, auth_data=CREDENTIALS) as colleague:
        writer = ZooKeeperWriter(colleague, acl=KAFKA_SECURE_ACL)
        result = writer.apply(AlterConfig("orders", {"retention.ms": "4000"}, expected_version=1))
        assert result.outcome is Outcome.APPLIED
        assert read_cluster(colleague).topics["orders"].config == {"retention.ms": "4000"}
    assert len(secure.get_children("/config/changes")) == 2
