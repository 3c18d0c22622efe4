"""``--command-config`` and a KafkaCluster's broker settings: Kafka's client properties read as its tools read
them, and every refusal naming the property, its value and the rule (never a password)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from pathlib import Path

import kafka.errors as kafka_errors
import pytest
from hypothesis import given
from hypothesis import strategies as st

from topic_operator.admin.client_settings import (
    AdminSettings,
    parse_bootstrap_servers,
    parse_properties,
    read_properties,
    settings_from_properties,
)
from topic_operator.admin.connection import open_admin, reaching
from topic_operator.admin.errors import (
    AdminRequestError,
    AdminSettingsError,
    BrokersRefusedCredentialsError,
    BrokersUnavailableError,
)

SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="kto" password="s3cr=t;x";'


def test_java_properties_are_read_as_kafka_s_tools_read_them() -> None:
    text = (
        "# a comment\n! another\n\nsecurity.protocol=SASL_SSL\nsasl.mechanism : SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="kto" \\\n    password="pw";\nclient.id kto-ci\nescaped\\=key=a\\tb\n'
    )
    assert parse_properties(text) == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="kto" password="pw";',
        "client.id": "kto-ci",
        "escaped=key": "a\tb",
    }


def test_scram_over_tls_gives_the_client_its_credentials_and_trust(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not read here")
    settings, ignored = settings_from_properties(
        "b-0:9093,b-1:9093",
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": SCRAM,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(ca),
            "ssl.endpoint.identification.algorithm": "",
            "linger.ms": "5",
        },
    )
    assert settings == AdminSettings(
        bootstrap_servers=("b-0:9093", "b-1:9093"),
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        username="kto",
        password="s3cr=t;x",
        ca_file=str(ca),
        check_hostname=False,
    )
    assert ignored == ("linger.ms",)
    assert "s3cr" not in repr(settings)


@pytest.mark.parametrize(
    ("properties", "words"),
    [
        ({"security.protocol": "SASL_TLS"}, "security.protocol 'SASL_TLS' is not one of PLAINTEXT, SSL"),
        ({"security.protocol": "SASL_SSL"}, "sasl.mechanism 'GSSAPI' is not supported"),
        (
            {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"},
            "sasl.mechanism PLAIN needs sasl.jaas.config",
        ),
        (
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": SCRAM},
            "names the login module 'org.apache.kafka.common.security.scram.ScramLoginModule'",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u";',
            },
            "has no password option",
        ),
        (
            {"security.protocol": "SSL", "ssl.truststore.location": "/etc/kafka/truststore.jks"},
            "ssl.truststore.location '/etc/kafka/truststore.jks' is a JKS trust store",
        ),
        (
            {
                "security.protocol": "SSL",
                "ssl.truststore.type": "PKCS12",
                "ssl.truststore.location": "/t.p12",
            },
            "ssl.truststore.type 'PKCS12' cannot be read here",
        ),
        (
            {"security.protocol": "SSL", "ssl.keystore.location": "/k.jks"},
            "ssl.keystore.type 'JKS (the default)' cannot be read here",
        ),
        (
            {"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"},
            "is not 'https' or empty",
        ),
    ],
    ids=[
        "protocol",
        "gssapi",
        "no-jaas",
        "wrong-module",
        "no-password",
        "jks",
        "pkcs12",
        "keystore",
        "algorithm",
    ],
)
def test_a_property_that_cannot_be_used_is_refused_by_name(properties: dict[str, str], words: str) -> None:
    with pytest.raises(AdminSettingsError) as refused:
        settings_from_properties("b:9092", properties, where="--command-config c.properties")
    assert words in str(refused.value)
    assert str(refused.value).startswith("--command-config c.properties: ")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "at least one host:port is needed"),
        ("broker", "'broker' is not host:port"),
        ("b:9092,,c:9092", "'' is not host:port"),
        ("b:99999", "port 99999 of 'b:99999' is not 1 to 65535"),
        ("http://b:9092", "'http://b:9092' is not host:port"),
    ],
)
def test_bootstrap_servers_are_host_port_lists(text: str, words: str) -> None:
    with pytest.raises(AdminSettingsError, match="bootstrap servers") as refused:
        parse_bootstrap_servers(text)
    assert words in str(refused.value)


def test_bootstrap_servers_take_ipv6_in_brackets_and_spaces() -> None:
    assert parse_bootstrap_servers(" [::1]:9092, b-1.kafka:9093") == ("[::1]:9092", "b-1.kafka:9093")


def test_a_missing_properties_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(AdminSettingsError, match=r"cannot read the client properties '.*nope\.properties'"):
        read_properties(tmp_path / "nope.properties")


@given(st.text(max_size=300))
def test_any_properties_text_reads_or_is_refused_in_one_line(text: str) -> None:
    properties = parse_properties(text)
    refusal = ""
    try:
        settings_from_properties("b:9092", properties)
    except AdminSettingsError as refused:
        refusal = str(refused)
    assert "\n" not in refusal.strip() or "\n" in text  # a refusal is one line, unless it quotes the input's


@pytest.mark.parametrize(
    ("raised", "expected", "words"),
    [
        (
            lambda: kafka_errors.UnknownBrokerIdError(2),
            BrokersUnavailableError,
            "no broker of b:9092 answered within 5 s",
        ),
        (
            lambda: kafka_errors.KafkaTimeoutError("Unable to bootstrap"),
            BrokersUnavailableError,
            "Unable to bootstrap",
        ),
        (
            lambda: kafka_errors.SaslAuthenticationFailedError("bad"),
            BrokersRefusedCredentialsError,
            "refused the SASL",
        ),
        (
            lambda: kafka_errors.PolicyViolationError("no"),
            AdminRequestError,
            "a request to the brokers b:9092 failed",
        ),
        (lambda: KeyError("assignments"), AdminRequestError, "the Admin client failed on a request"),
    ],
    ids=["unknown-broker", "timeout", "sasl", "error-answer", "client-bug"],
)
def test_whatever_the_client_raises_becomes_one_admin_error(
    raised: Callable[[], BaseException], expected: type[Exception], words: str
) -> None:
    settings = AdminSettings(bootstrap_servers=("b:9092",), sasl_mechanism="PLAIN", username="u")
    with pytest.raises(expected) as caught, reaching(settings, 5.0):
        raise raised()
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_admin_client_that_cannot_bootstrap_leaves_no_network_thread() -> None:
    """A cluster whose brokers are down is retried for as long as it stays down: each failed open must take its
    network thread with it, or the process gains one thread (and its sockets) per retry."""
    settings = AdminSettings(
        bootstrap_servers=(f"127.0.0.1:{_free_loopback_port()}",), client_id="kto-leak-probe"
    )
    for _ in range(3):
        with pytest.raises(BrokersUnavailableError, match=r"answered within 0\.5 s"):
            open_admin(settings, deadline=0.5)
    assert [t.name for t in threading.enumerate() if t.name == "kafka-io-kto-leak-probe"] == []
