"""TLS to ZooKeeper's secure port, with certificates made here: a CA, a server certificate for 127.0.0.1 and
client certificates, as a Kafka cluster run with ``ssl.clientAuth=need`` would require.

Failures wait out ``connection_timeout`` (1 s here): kazoo retries every host, and in an ensemble another
server may well have a good certificate, so a TLS error is not a reason to stop early.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from topic_operator.testing.local_server import LocalZooKeeper, ServerTls
from topic_operator.zookeeper.connection import connected, open_client
from topic_operator.zookeeper.errors import ZooKeeperUnavailableError
from topic_operator.zookeeper.settings import Secret, TlsSettings, ZooKeeperSettings

KEY_PASSWORD = "key-pw-6a0f"


@dataclass(frozen=True)
class Pki:
    ca: Path
    server: Path
    """The server's key store: PKCS#8 key, its certificate, the CA's (ZooKeeper 3.8 reads PEM directly)."""
    client_cert: Path
    client_key: Path
    client_key_encrypted: Path
    stranger_cert: Path
    """A client certificate from a CA the server does not trust."""
    stranger_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: str, issuer: x509.Name, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


def _ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _builder(common_name, _name(common_name), key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _leaf(
    ca: tuple[ec.EllipticCurvePrivateKey, x509.Certificate],
    common_name: str,
    names: list[x509.GeneralName],
    usage: ExtendedKeyUsageOID,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _builder(common_name, ca[1].subject, key)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .sign(ca[0], hashes.SHA256())
    )
    return key, cert


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    out = tmp_path_factory.mktemp("pki")
    ca = _ca("kto-test-ca")
    # Only the IP address: the client connects to 127.0.0.1, and "localhost" must fail hostname verification.
    server_key, server_cert = _leaf(
        ca, "zookeeper", [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))], ExtendedKeyUsageOID.SERVER_AUTH
    )
    client_key, client_cert = _leaf(ca, "kto", [x509.DNSName("kto")], ExtendedKeyUsageOID.CLIENT_AUTH)
    other_ca = _ca("someone-elses-ca")
    stranger_key, stranger_cert = _leaf(
        other_ca, "kto", [x509.DNSName("kto")], ExtendedKeyUsageOID.CLIENT_AUTH
    )
    return Pki(
        ca=_write(out / "ca.pem", _pem(ca[1])),
        server=_write(out / "server.pem", _key_pem(server_key) + _pem(server_cert) + _pem(ca[1])),
        client_cert=_write(out / "client.pem", _pem(client_cert)),
        client_key=_write(out / "client.key", _key_pem(client_key)),
        client_key_encrypted=_write(out / "client-encrypted.key", _key_pem(client_key, KEY_PASSWORD)),
        stranger_cert=_write(out / "stranger.pem", _pem(stranger_cert)),
        stranger_key=_write(out / "stranger.key", _key_pem(stranger_key)),
    )


@pytest.fixture(scope="module")
def tls_server(pki: Pki) -> Iterator[LocalZooKeeper]:
    tls = ServerTls(key_store=pki.server, trust_store=pki.ca, client_auth="need")
    with LocalZooKeeper(tls=tls) as server:
        yield server


def _settings(connect: str, tls: TlsSettings | None, timeout: float = 5.0) -> ZooKeeperSettings:
    return ZooKeeperSettings(connect=connect, tls=tls, connection_timeout=timeout)


def test_ca_and_client_certificate_connect(tls_server: LocalZooKeeper, pki: Pki) -> None:
    tls = TlsSettings(ca_file=pki.ca, cert_file=pki.client_cert, key_file=pki.client_key)
    with connected(_settings(tls_server.secure_connect_string, tls)) as client:
        client.create("/kafka/brokers/ids", b"", makepath=True)
    with connected(_settings(f"{tls_server.secure_connect_string}/kafka", tls)) as client:
        assert client.get_children("/") == ["brokers"]
        client.set("/brokers", b"over TLS")
        assert client.get("/brokers")[0] == b"over TLS"


def test_an_encrypted_client_key_is_opened_with_its_password(tls_server: LocalZooKeeper, pki: Pki) -> None:
    tls = TlsSettings(
        ca_file=pki.ca,
        cert_file=pki.client_cert,
        key_file=pki.client_key_encrypted,
        key_password=Secret(KEY_PASSWORD),
    )
    with connected(_settings(tls_server.secure_connect_string, tls)) as client:
        assert "zookeeper" in client.get_children("/")


def test_a_client_without_the_ca_is_refused_with_a_clear_error(tls_server: LocalZooKeeper, pki: Pki) -> None:
    tls = TlsSettings(cert_file=pki.client_cert, key_file=pki.client_key)  # the system's CAs only
    connect = tls_server.secure_connect_string
    with pytest.raises(ZooKeeperUnavailableError) as failure:
        open_client(_settings(connect, tls, timeout=1.0))
    message = str(failure.value)
    assert message.startswith(f"cannot reach ZooKeeper at {connect} within 1 s")
    assert "CERTIFICATE_VERIFY_FAILED" in message
    assert "the server's certificate is not trusted: check tls.ca_file" in message


def test_a_client_without_a_certificate_is_refused(tls_server: LocalZooKeeper, pki: Pki) -> None:
    connect = tls_server.secure_connect_string
    with pytest.raises(ZooKeeperUnavailableError) as failure:
        open_client(_settings(connect, TlsSettings(ca_file=pki.ca), timeout=1.0))
    assert f"cannot reach ZooKeeper at {connect}" in str(failure.value)
    assert "the server refused our TLS client certificate" in str(failure.value)


def test_a_certificate_from_another_ca_is_refused(tls_server: LocalZooKeeper, pki: Pki) -> None:
    tls = TlsSettings(ca_file=pki.ca, cert_file=pki.stranger_cert, key_file=pki.stranger_key)
    with pytest.raises(ZooKeeperUnavailableError, match="refused our TLS client certificate"):
        open_client(_settings(tls_server.secure_connect_string, tls, timeout=1.0))


def test_the_host_name_is_verified_unless_turned_off(tls_server: LocalZooKeeper, pki: Pki) -> None:
    connect = f"localhost:{tls_server.secure_port}"  # the certificate names 127.0.0.1 only
    tls = TlsSettings(ca_file=pki.ca, cert_file=pki.client_cert, key_file=pki.client_key)
    with pytest.raises(ZooKeeperUnavailableError, match=r"(?i)hostname mismatch|doesn.t match|not valid for"):
        open_client(_settings(connect, tls, timeout=1.0))
    unchecked = TlsSettings(
        ca_file=pki.ca, cert_file=pki.client_cert, key_file=pki.client_key, verify_hostname=False
    )
    with connected(_settings(connect, unchecked)) as client:
        assert "zookeeper" in client.get_children("/")


def test_a_plain_client_on_the_tls_port_is_refused(tls_server: LocalZooKeeper) -> None:
    connect = tls_server.secure_connect_string
    with pytest.raises(ZooKeeperUnavailableError, match=f"cannot reach ZooKeeper at {connect} within 1 s"):
        open_client(_settings(connect, None, timeout=1.0))
