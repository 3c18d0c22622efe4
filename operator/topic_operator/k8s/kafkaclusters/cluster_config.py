"""A KafkaCluster and its Secrets -> ``ZooKeeperSettings`` (its ZooKeeper) or ``AdminSettings`` (its brokers,
``bootstrapServers`` with ``tls`` and ``sasl``): credentials and TLS material, checked and fingerprinted.

Secrets are read by the caller (through the injectable ``KubernetesApi``) and passed in as plain Secret bodies, so
this module needs no API server to test. TLS material is written to files (kazoo reads certificates from paths)
under ``material_dir/<namespace>/<name>/`` with mode 0600 in a 0700 directory. The fingerprint covers everything
that matters for a session (connect string, credentials, certificate bytes), so a rotated Secret reconnects the
cluster and an unchanged one keeps its session. The policy fields (``allowDelete``, ``allowedTopicPrefixes``,
``kafkaVersion``, ``reassignment``) are not part of it: they reach the ``ClusterSpec`` through the manifest loader
(``load_objects``), and a change of them alone keeps the session (``ClusterHandle.update_policy``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topic_operator.admin.client_settings import AdminSettings, parse_bootstrap_servers
from topic_operator.admin.errors import AdminSettingsError
from topic_operator.connect_string import ConnectStringError
from topic_operator.k8s.conditions import Reason
from topic_operator.zookeeper.settings import DigestAuth, SaslAuth, Secret, TlsSettings, ZooKeeperSettings

__all__ = [
    "ClusterConfig",
    "ClusterConfigError",
    "cluster_config",
    "declares_both",
    "reaches_brokers",
    "secret_names",
    "secret_value",
]


class ClusterConfigError(Exception):
    """The KafkaCluster cannot be turned into connection settings; ``reason`` goes into its Ready condition."""

    def __init__(self, message: str, reason: Reason = Reason.INVALID) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    settings: ZooKeeperSettings | AdminSettings
    """How the cluster is reached: its ZooKeeper, or (declared with ``bootstrapServers`` alone) its brokers."""
    fingerprint: str
    """Changes exactly when a new session is needed."""
    brokers: AdminSettings | None = None
    """Its brokers too, when the KafkaCluster declares both (a cluster migrating to KRaft): which of the two
    writes is decided by the migration's stage (``access.staged``)."""


def _zookeeper(body: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = body.get("spec") or {}
    zookeeper = spec.get("zookeeper") if isinstance(spec, Mapping) else None
    return zookeeper if isinstance(zookeeper, Mapping) else {}


def _spec(body: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = body.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def reaches_brokers(body: Mapping[str, Any]) -> bool:
    """Whether the KafkaCluster is reached through its brokers alone: ``bootstrapServers`` without ``zookeeper``
    (with both, see ``declares_both``)."""
    spec = _spec(body)
    return bool(spec.get("bootstrapServers")) and not _zookeeper(body)


def declares_both(body: Mapping[str, Any]) -> bool:
    """Whether the KafkaCluster names both its ZooKeeper and its brokers: the stage of a migration to KRaft
    decides which of them is written (``kafka.kraft_migration.choose_writer``)."""
    return bool(_spec(body).get("bootstrapServers")) and bool(_zookeeper(body))


def secret_names(body: Mapping[str, Any]) -> list[str]:
    """The Secrets (same namespace) a KafkaCluster refers to, TLS first, without duplicates."""
    zookeeper = _zookeeper(body)
    brokers: tuple[object, ...] = (_spec(body).get("tls"), _spec(body).get("sasl"))
    sections = brokers if reaches_brokers(body) else (zookeeper.get("tls"), zookeeper.get("auth"))
    if declares_both(body):
        sections = (*sections, *brokers)
    names = [section.get("secretName") for section in sections if isinstance(section, Mapping)]
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))


def secret_value(secret: Mapping[str, Any], key: str) -> bytes | None:
    """A key's bytes: ``stringData`` as written by hand, else base64 ``data`` as the API serves it."""
    string_data = secret.get("stringData") or {}
    if isinstance(string_data, Mapping) and isinstance(string_data.get(key), str):
        return str(string_data[key]).encode()
    data = secret.get("data") or {}
    value = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ClusterConfigError(f"Secret key {key} is not valid base64", Reason.INVALID) from None


def _secret(secrets: Mapping[str, Mapping[str, Any] | None], name: str, namespace: str) -> Mapping[str, Any]:
    secret = secrets.get(name)
    if secret is None:
        raise ClusterConfigError(f"Secret {namespace}/{name} does not exist", Reason.SECRET_MISSING)
    return secret


def _required(secret: Mapping[str, Any], name: str, key: str) -> str:
    value = secret_value(secret, key)
    if value is None:
        raise ClusterConfigError(f"Secret {name} has no key {key}", Reason.SECRET_MISSING)
    return value.decode()


def _tls_files(
    secret: Mapping[str, Any],
    secret_name: str,
    tls: Mapping[str, Any],
    directory: Path,
    prefix: str,
    digest: Any,
) -> dict[str, Path]:
    """The CA and, for mutual TLS, the client pair a ``tls`` section names in its Secret, written 0600 as
    ``<prefix><role>.pem`` (role ``ca``, ``cert``, ``key``) and added to the fingerprint ``digest``."""
    files: dict[str, Path] = {}
    for role, key_field, default in (("ca", "caKey", "ca.crt"), ("cert", "certKey", "tls.crt"), ("key", "keyKey", "tls.key")):  # fmt: skip
        content = secret_value(secret, str(tls.get(key_field, default)))
        if content is not None:
            files[role] = _write_private(directory, f"{prefix}{role}.pem", content)
            digest.update(b"\0" + role.encode() + b"\0" + content)
    if ("cert" in files) != ("key" in files):
        raise ClusterConfigError(
            f"Secret {secret_name} holds only half of a client certificate pair (certKey and keyKey go together)",
            Reason.SECRET_MISSING,
        )
    return files


def _write_private(directory: Path, filename: str, content: bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / filename
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(content)
    return path


def cluster_config(
    body: Mapping[str, Any],
    secrets: Mapping[str, Mapping[str, Any] | None],
    *,
    material_dir: Path,
    connection_timeout: float,
    session_timeout: float = 18.0,
) -> ClusterConfig:
    """Settings for the KafkaCluster ``body``; ``secrets`` maps each of ``secret_names(body)`` to its Secret body
    (None: not found)."""
    metadata = body.get("metadata") or {}
    namespace, name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
    if reaches_brokers(body):
        return _brokers_config(body, secrets, material_dir / namespace / name, namespace)
    zookeeper = _zookeeper(body)
    connect = zookeeper.get("connect")
    if not isinstance(connect, str) or not connect:
        raise ClusterConfigError("spec.zookeeper.connect is missing")
    digest = hashlib.sha256(connect.encode())
    auth = zookeeper.get("auth")
    digest_auth: DigestAuth | None = None
    sasl_auth: SaslAuth | None = None
    if isinstance(auth, Mapping):
        secret_name = str(auth.get("secretName"))
        secret = _secret(secrets, secret_name, namespace)
        user = _required(secret, secret_name, str(auth.get("usernameKey", "username")))
        password = _required(secret, secret_name, str(auth.get("passwordKey", "password")))
        digest.update(f"\0{auth.get('type')}\0{user}\0{password}".encode())
        try:
            if auth.get("type") == "SASL":
                sasl_auth = SaslAuth(mechanism="DIGEST-MD5", username=user, password=Secret(password))
            else:
                digest_auth = DigestAuth(user=user, password=Secret(password))
        except ValueError as error:
            raise ClusterConfigError(f"spec.zookeeper.auth: {error}") from None
    tls: TlsSettings | None = None
    tls_spec = zookeeper.get("tls")
    if isinstance(tls_spec, Mapping):
        secret_name = str(tls_spec.get("secretName"))
        secret = _secret(secrets, secret_name, namespace)
        files = _tls_files(secret, secret_name, tls_spec, material_dir / namespace / name, "", digest)
        tls = TlsSettings(ca_file=files.get("ca"), cert_file=files.get("cert"), key_file=files.get("key"))
    try:
        settings = ZooKeeperSettings(
            connect=connect,
            connection_timeout=connection_timeout,
            session_timeout=session_timeout,
            digest=digest_auth,
            sasl=sasl_auth,
            tls=tls,
        )
    except (ConnectStringError, ValueError) as error:
        raise ClusterConfigError(str(error)) from None
    if declares_both(body):
        brokers, fingerprint = _brokers_settings(body, secrets, material_dir / namespace / name, namespace)
        digest.update(b"\0brokers\0" + fingerprint.encode())
        return ClusterConfig(settings, digest.hexdigest(), brokers=brokers)
    return ClusterConfig(settings, digest.hexdigest())


def _brokers_config(
    body: Mapping[str, Any], secrets: Mapping[str, Mapping[str, Any] | None], directory: Path, namespace: str
) -> ClusterConfig:
    return ClusterConfig(*_brokers_settings(body, secrets, directory, namespace))


def _brokers_settings(
    body: Mapping[str, Any], secrets: Mapping[str, Mapping[str, Any] | None], directory: Path, namespace: str
) -> tuple[AdminSettings, str]:
    """``AdminSettings`` (and their fingerprint) from ``bootstrapServers``, ``tls`` (CA, and a client pair for mutual TLS) and ``sasl``
    (PLAIN or SCRAM, user and password from the Secret): SASL_SSL with both, SSL or SASL_PLAINTEXT with one."""
    spec = _spec(body)
    servers = str(spec.get("bootstrapServers", ""))
    try:
        bootstrap = parse_bootstrap_servers(servers, where="spec.bootstrapServers")
    except AdminSettingsError as error:
        raise ClusterConfigError(str(error)) from None
    digest = hashlib.sha256(f"brokers\0{servers}".encode())
    sasl, tls = spec.get("sasl"), spec.get("tls")
    mechanism = username = password = None
    if isinstance(sasl, Mapping):
        secret_name = str(sasl.get("secretName"))
        secret = _secret(secrets, secret_name, namespace)
        mechanism = str(sasl.get("mechanism"))
        username = _required(secret, secret_name, str(sasl.get("usernameKey", "username")))
        password = _required(secret, secret_name, str(sasl.get("passwordKey", "password")))
        digest.update(f"\0{mechanism}\0{username}\0{password}".encode())
    files: dict[str, Path] = {}
    verify = True
    if isinstance(tls, Mapping):
        secret_name = str(tls.get("secretName"))
        secret = _secret(secrets, secret_name, namespace)
        files = _tls_files(secret, secret_name, tls, directory, "brokers-", digest)
        verify = tls.get("verifyHostname", True) is not False
        digest.update(b"\0verify" if verify else b"\0no-verify")
    protocol = {(True, True): "SASL_SSL", (True, False): "SSL", (False, True): "SASL_PLAINTEXT"}.get(
        (isinstance(tls, Mapping), isinstance(sasl, Mapping)), "PLAINTEXT"
    )
    metadata = body.get("metadata") or {}
    settings = AdminSettings(
        bootstrap_servers=bootstrap,
        security_protocol=protocol,
        sasl_mechanism=mechanism,
        username=username,
        password=password,
        ca_file=str(files["ca"]) if "ca" in files else None,
        certificate_file=str(files["cert"]) if "cert" in files else None,
        key_file=str(files["key"]) if "key" in files else None,
        check_hostname=verify,
        client_id=f"kafka-topic-operator/{namespace}/{metadata.get('name', '')}",
    )
    return settings, digest.hexdigest()
