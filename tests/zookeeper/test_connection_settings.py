"""Connect strings are parsed strictly, settings validate on construction, and no password is ever printed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from topic_operator.connect_string import ConnectStringError, Host, parse_connect_string
from topic_operator.zookeeper.settings import DigestAuth, SaslAuth, Secret, TlsSettings, ZooKeeperSettings

PASSWORDS = ("digest-pw-8f3a", "sasl-pw-1c9e", "key-pw-77b0")


@pytest.mark.parametrize(
    ("connect", "hosts", "chroot"),
    [
        ("zk-0:2181", [("zk-0", 2181)], None),
        ("zk-0", [("zk-0", 2181)], None),  # ZooKeeper's default port, as its own client assumes
        ("zk-0:2181,zk-1:2182/kafka", [("zk-0", 2181), ("zk-1", 2182)], "/kafka"),
        ("zk-0:2181/kafka/prod-eu", [("zk-0", 2181)], "/kafka/prod-eu"),
        ("zk-0:2181/", [("zk-0", 2181)], None),  # a bare '/' is no chroot, in ZooKeeper too
        ("[::1]:2181", [("::1", 2181)], None),
        ("[::1]", [("::1", 2181)], None),
        ("[fd00::5]:2181,10.0.0.7:2182/k", [("fd00::5", 2181), ("10.0.0.7", 2182)], "/k"),
        (
            " zk-0.ns.svc:2181 , zk-1.ns.svc:2181/kafka ",
            [("zk-0.ns.svc", 2181), ("zk-1.ns.svc", 2181)],
            "/kafka",
        ),
    ],
)
def test_connect_strings_split_into_hosts_and_chroot(
    connect: str, hosts: list[tuple[str, int]], chroot: str | None
) -> None:
    parsed_hosts, parsed_chroot = parse_connect_string(connect)
    assert [tuple(host) for host in parsed_hosts] == hosts
    assert parsed_chroot == chroot


def test_hosts_render_for_kazoo_with_ipv6_in_brackets() -> None:
    assert str(Host("::1", 2181)) == "[::1]:2181"
    assert str(Host("zk-0", 2181)) == "zk-0:2181"


@pytest.mark.parametrize(
    ("connect", "problem"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("/kafka", "no host"),
        ("zk-0:abc", "port 'abc'"),
        ("zk-0:0", "port '0'"),
        ("zk-0:65536", "port '65536'"),
        ("zk-0:", "port ''"),
        ("zk-0:2181kafka", "port '2181kafka'"),
        ("zk-0:2181,,zk-1:2181", "empty host"),
        ("zk-0:2181,", "empty host"),
        ("::1:2181", "brackets"),
        ("[zk-0]:2181", "IPv6"),
        ("zk 0:2181", "not a host name"),
        ("zk-0:2181/kafka/", "must not end with '/'"),
        ("zk-0:2181//kafka", "empty path element"),
        ("zk-0:2181/kafka/../other", "relative"),
        ("zk-0:2181/kafka prod", "whitespace"),
        ("zk-0:2181/kafka,zk-1:2181", "','"),
    ],
)
def test_bad_connect_strings_are_refused_with_the_reason(connect: str, problem: str) -> None:
    with pytest.raises(ConnectStringError) as failure:
        parse_connect_string(connect)
    message = str(failure.value)
    assert problem in message
    if connect.strip():
        assert repr(connect) in message, "the message must quote the connect string it refuses"


def test_settings_refuse_a_bad_connect_string_on_construction() -> None:
    with pytest.raises(ConnectStringError):
        ZooKeeperSettings(connect="zk-0:2181/kafka/")


def _settings_with_every_password() -> ZooKeeperSettings:
    digest_pw, sasl_pw, key_pw = (Secret(password) for password in PASSWORDS)
    return ZooKeeperSettings(
        connect="zk-0:2181/kafka",
        digest=DigestAuth(user="kafka", password=digest_pw),
        sasl=SaslAuth(username="kafka", password=sasl_pw),
        tls=TlsSettings(
            ca_file=Path("/tls/ca.pem"),
            cert_file=Path("/tls/client.pem"),
            key_file=Path("/tls/client.key"),
            key_password=key_pw,
        ),
        set_acl=True,
    )


def test_passwords_appear_in_no_repr_or_str() -> None:
    settings = _settings_with_every_password()
    shown = [
        repr(settings),
        str(settings),
        repr(settings.digest),
        repr(settings.sasl),
        repr(settings.tls),
        str(dataclasses.asdict(settings)),  # what a careless log line would print
        f"{settings.digest.password if settings.digest else ''}",
    ]
    for text in shown:
        for password in PASSWORDS:
            assert password not in text, f"password leaked in {text}"
    assert "zk-0:2181/kafka" in repr(settings)  # the rest is still there to debug with


def test_secrets_reveal_only_when_asked_and_compare_by_value() -> None:
    secret = Secret("s3cret")
    assert secret.reveal() == "s3cret"
    assert "s3cret" not in repr(secret)
    assert "s3cret" not in str(secret)
    assert secret == Secret("s3cret")
    assert secret != Secret("other")


def test_defaults_follow_kafka() -> None:
    settings = ZooKeeperSettings(connect="zk-0:2181")
    assert settings.session_timeout == 18.0  # zookeeper.session.timeout.ms
    assert settings.connection_timeout == settings.session_timeout  # zookeeper.connection.timeout.ms
    assert settings.tls is None
    assert settings.sasl is None
    assert settings.digest is None
    assert not settings.read_only
    assert not settings.set_acl


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"session_timeout": 0}, "session_timeout"),
        ({"connection_timeout": -1}, "connection_timeout"),
        ({"connect_max_tries": 0}, "connect_max_tries"),
        ({"command_max_tries": -2}, "command_max_tries"),
        ({"command_retry_deadline": 0}, "command_retry_deadline"),
        ({"set_acl": True}, "set_acl needs digest or SASL"),
    ],
)
def test_settings_refuse_impossible_values(options: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ZooKeeperSettings(connect="zk-0:2181", **options)  # type: ignore[arg-type]


def test_credential_groups_refuse_incomplete_values() -> None:
    with pytest.raises(ValueError, match="username and a password"):
        SaslAuth(mechanism="DIGEST-MD5", username="kafka")
    with pytest.raises(ValueError, match="DIGEST-MD5 or GSSAPI"):
        SaslAuth(mechanism="PLAIN", username="kafka", password=Secret("x"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="both cert_file and key_file"):
        TlsSettings(cert_file=Path("/tls/client.pem"))
    with pytest.raises(ValueError, match="verify_hostname needs verify_certificates"):
        TlsSettings(verify_certificates=False)
    with pytest.raises(ValueError, match="no ':'"):
        DigestAuth(user="kaf:ka", password=Secret("x"))
    SaslAuth(mechanism="GSSAPI")  # Kerberos takes its principal and key from the ticket cache
