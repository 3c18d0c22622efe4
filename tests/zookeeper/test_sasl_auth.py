"""SASL DIGEST-MD5 against a real server whose JAAS ``Server`` section holds the users, as Kafka's docs set it up.

Two servers: one enforcing SASL (``enforce.auth.enabled=true``: anonymous and failed logins have their session
closed) and one that only offers it (a failed login is refused, an anonymous client is served). kazoo reports
the two refusals differently (``AUTH_FAILED`` state; a ``SessionClosedRequireSaslError`` raised inside its
connection thread, which kills the thread); both must end as ``ZooKeeperAuthError``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from kazoo.security import make_acl

from topic_operator.testing.local_server import LocalZooKeeper, ServerSasl
from topic_operator.zookeeper.connection import connected, open_client
from topic_operator.zookeeper.errors import ZooKeeperAuthError
from topic_operator.zookeeper.settings import SaslAuth, Secret, ZooKeeperSettings

USERS = {"kafka": "sasl-pw-kafka-93c1", "other": "sasl-pw-other-4e07"}

# With enforcement, kazoo 2.11 does not handle the server's SESSIONCLOSEDREQUIRESASLAUTH reply to a failed
# login: its connection thread dies with that exception (which open_client reads from kazoo's log records).
_THREAD_DEATH = "ignore::pytest.PytestUnhandledThreadExceptionWarning"


@pytest.fixture(scope="module", params=[True, False], ids=["enforced", "offered"])
def sasl_enforced(request: pytest.FixtureRequest) -> bool:
    enforced: bool = request.param
    return enforced


@pytest.fixture(scope="module")
def sasl_server(sasl_enforced: bool) -> Iterator[LocalZooKeeper]:
    # Spelled out although it is the default: "offered" relies on failed logins being refused, not let in.
    refuse_failed_logins = {"zookeeper.allowSaslFailedClients": "false"}
    sasl = ServerSasl(USERS, required=sasl_enforced)
    with LocalZooKeeper(sasl=sasl, system_properties=refuse_failed_logins) as server:
        yield server


def _settings(connect: str, user: str = "kafka", password: str | None = None) -> ZooKeeperSettings:
    sasl = SaslAuth(mechanism="DIGEST-MD5", username=user, password=Secret(password or USERS[user]))
    return ZooKeeperSettings(connect=connect, sasl=sasl, connection_timeout=5.0)


@pytest.fixture
def kafka_tree(sasl_server: LocalZooKeeper, request: pytest.FixtureRequest) -> Iterator[str]:
    """A chroot only SASL user ``kafka`` may use; deleted afterwards."""
    path = f"/sasl-{request.node.name.split('[')[0][-40:]}"
    with connected(_settings(sasl_server.connect_string)) as admin:
        admin.create(path, b"", acl=[make_acl("sasl", "kafka", all=True)])
    yield f"{sasl_server.connect_string}{path}"
    with connected(_settings(sasl_server.connect_string)) as admin:
        admin.delete(path, recursive=True)


def test_right_credentials_connect_and_can_read_and_write(kafka_tree: str) -> None:
    with connected(_settings(kafka_tree)) as client:
        client.create("/brokers/ids", b"", makepath=True)
        client.set("/brokers", b"v1")
        assert client.get("/brokers")[0] == b"v1"
        assert client.get_children("/") == ["brokers"]


@pytest.mark.filterwarnings(_THREAD_DEATH)
@pytest.mark.parametrize("user", ["kafka", "nobody"])
def test_wrong_password_is_refused_naming_the_connect_string_not_the_password(
    kafka_tree: str, user: str
) -> None:
    threads_before = set(threading.enumerate())
    with pytest.raises(ZooKeeperAuthError) as failure:
        open_client(_settings(kafka_tree, user=user, password="wrong-pw-0x7"))
    message = str(failure.value)
    assert message == (f"ZooKeeper at {kafka_tree} refused SASL DIGEST-MD5 user {user!r} (SASL login failed)")
    assert "wrong-pw-0x7" not in message
    assert not set(threading.enumerate()) - threads_before, "a failed login left kazoo threads running"


def test_another_sasl_user_may_not_read_the_tree(kafka_tree: str) -> None:
    with pytest.raises(ZooKeeperAuthError, match="does not let SASL DIGEST-MD5 user 'other' read"):
        open_client(_settings(kafka_tree, user="other"))


def test_anonymous_clients_are_refused_only_where_sasl_is_enforced(
    sasl_server: LocalZooKeeper, sasl_enforced: bool
) -> None:
    settings = ZooKeeperSettings(connect=sasl_server.connect_string, connection_timeout=5.0)
    if not sasl_enforced:
        with connected(settings) as anonymous:  # SASL only offered: anonymous clients get in, ACLs decide
            assert "zookeeper" in anonymous.get_children("/")
        return
    with pytest.raises(ZooKeeperAuthError) as failure:
        open_client(settings)
    assert str(failure.value) == (
        f"ZooKeeper at {sasl_server.connect_string} requires SASL authentication and none is configured"
    )
