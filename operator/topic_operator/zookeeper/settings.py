"""How to reach one Kafka cluster's ZooKeeper: the connect string, time-outs and retries, and the credentials
(digest, SASL, TLS). Plain, validated records: the operator builds them from a KafkaCluster and its Secrets, ``kto``
from its flags; only ``access`` opens a client with them (``connection.open_client``)."""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from topic_operator.connect_string import parse_connect_string
from topic_operator.zookeeper.bounded import DEFAULT_DEADLINE

__all__ = [
    "DEFAULT_CONNECTION_TIMEOUT",
    "DigestAuth",
    "SaslAuth",
    "Secret",
    "TlsSettings",
    "ZooKeeperSettings",
]


DEFAULT_CONNECTION_TIMEOUT = 18.0
"""Seconds to wait for a first connection: Kafka's ``zookeeper.connection.timeout.ms`` default (the session's)."""


class Secret:
    """A password that cannot leak through ``repr``, ``str``, logs or error messages; ``reveal()`` is explicit."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(self._value)


# -- settings --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DigestAuth:
    """Credentials for ZooKeeper's ``digest`` scheme, sent with every (re)connection.

    ZooKeeper accepts any digest identity; what it refuses is access, through ACLs. So wrong credentials show up
    as ``NoAuth`` on the first read, which :func:`open_client` turns into ``ZooKeeperAuthError``.
    """

    user: str
    password: Secret = field(repr=False)

    def __post_init__(self) -> None:
        if not self.user or ":" in self.user:
            raise ValueError("digest user must be non-empty and contain no ':'")


@dataclass(frozen=True, slots=True, kw_only=True)
class SaslAuth:
    """SASL login (Kafka's JAAS ``Client`` section), done by kazoo through pure-sasl on every (re)connection."""

    mechanism: Literal["DIGEST-MD5", "GSSAPI"] = field(default="DIGEST-MD5")
    username: str | None = field(default=None)
    """DIGEST-MD5: the user of the servers' JAAS ``Server`` section. GSSAPI: the client principal (optional:
    the ticket cache's default)."""
    password: Secret | None = field(default=None, repr=False)
    """DIGEST-MD5 only; GSSAPI takes its key from the Kerberos ticket cache."""
    service_name: str = field(default="zookeeper")
    """The servers' Kerberos service (Kafka's ``zookeeper.sasl.client.username``)."""

    def __post_init__(self) -> None:
        if self.mechanism not in ("DIGEST-MD5", "GSSAPI"):
            raise ValueError(f"SASL mechanism {self.mechanism!r}: use DIGEST-MD5 or GSSAPI")
        if self.mechanism == "DIGEST-MD5" and (not self.username or self.password is None):
            raise ValueError("SASL DIGEST-MD5 needs a username and a password")

    def kazoo_options(self) -> dict[str, str]:
        options = {"mechanism": self.mechanism, "service": self.service_name}
        if self.username:
            options["username" if self.mechanism == "DIGEST-MD5" else "principal"] = self.username
        if self.password is not None:
            options["password"] = self.password.reveal()
        return options


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsSettings:
    """TLS to ZooKeeper's ``secureClientPort`` (Kafka's ``zookeeper.ssl.*``). Files are PEM.

    Without ``ca_file`` only the system's CAs are trusted. ``verify_hostname`` is on by default, as Kafka's
    ``zookeeper.ssl.endpoint.identification.algorithm=HTTPS`` is: a server must present a certificate for the
    name (or IP address) in the connect string.
    """

    ca_file: Path | None = field(default=None)
    cert_file: Path | None = field(default=None)
    """Client certificate, for servers run with ``ssl.clientAuth=need``."""
    key_file: Path | None = field(default=None)
    key_password: Secret | None = field(default=None, repr=False)
    verify_certificates: bool = field(default=True)
    verify_hostname: bool = field(default=True)

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("TLS client certificate and key go together: set both cert_file and key_file")
        if self.verify_hostname and not self.verify_certificates:
            raise ValueError("TLS verify_hostname needs verify_certificates")

    def kazoo_options(self) -> dict[str, object]:
        return {
            "use_ssl": True,
            "ca": str(self.ca_file) if self.ca_file else None,
            "certfile": str(self.cert_file) if self.cert_file else None,
            "keyfile": str(self.key_file) if self.key_file else None,
            "keyfile_password": self.key_password.reveal() if self.key_password else None,
            "verify_certs": self.verify_certificates,
            "check_hostname": self.verify_hostname,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ZooKeeperSettings:
    """How to reach one Kafka cluster's ZooKeeper. Defaults follow Kafka's broker settings where there is one.

    The operator takes them from each KafkaCluster's ``spec.zookeeper`` and its Secrets, the ``kto`` commands from
    their flags; no environment variable sets them. Validated on construction, so a bad value fails at start-up
    rather than at the first reconcile.
    """

    connect: str
    """Kafka's ``zookeeper.connect``: ``zk-0:2181,zk-1:2181/kafka``, hosts plus an optional chroot; IPv6 hosts in
    brackets (``[::1]:2181``)."""
    session_timeout: float = field(default=18.0)
    """Seconds without contact before the servers expire the session (Kafka's ``zookeeper.session.timeout.ms``)."""
    connection_timeout: float = field(default=DEFAULT_CONNECTION_TIMEOUT)
    """Seconds :func:`open_client` waits for a connected, authenticated, checked client (Kafka's
    ``zookeeper.connection.timeout.ms``, which defaults to the session timeout)."""
    connect_max_tries: int = field(default=10)
    """Rounds over every host, the first included, before kazoo gives up reconnecting (-1: no limit but the
    deadline). The budget is fresh after each successful connection: it bounds one outage, not the client's
    life."""
    connect_retry_deadline: float | None = field(default=60.0)
    """Seconds one outage may last before kazoo gives up reconnecting (None: only ``connect_max_tries``)."""
    command_max_tries: int = field(default=5)
    """Tries, the first included, of a request run through ``client.retry`` while the connection keeps dropping
    under it (-1: until the deadline)."""
    command_retry_deadline: float | None = field(default=30.0)
    deadline: float = field(default=DEFAULT_DEADLINE)
    """Seconds ZooKeeper may keep one command (``kto plan/apply/describe/snapshot``) or one operator batch
    waiting (``bounded.Patience``): a shorter outage is ridden out, a longer one ends the command with each
    topic's outcome. Give ``connect_max_tries``/``connect_retry_deadline`` room to reconnect within it."""
    retry_delay: float = field(default=0.1)
    """First back-off in seconds, doubled per try up to ``retry_max_delay``."""
    retry_max_delay: float = field(default=5.0)
    digest: DigestAuth | None = None
    """``digest`` scheme credentials (KTO_ZK_DIGEST_*)."""
    sasl: SaslAuth | None = None
    """SASL login (KTO_ZK_SASL_*)."""
    tls: TlsSettings | None = field(default=None)
    """TLS to the servers' secure port (KTO_ZK_TLS=true, then KTO_ZK_TLS_*); None: plain TCP."""
    read_only: bool = field(default=False)
    """Accept a server cut off from its quorum (reads only): for ``kto snapshot`` and drift, never for writes."""
    set_acl: bool = field(default=False)
    """Kafka's ``zookeeper.set.acl``: znodes this client creates get creator-all plus world-read, as Kafka's do.
    Needs digest or SASL credentials: "creator" means an authenticated identity."""

    def __post_init__(self) -> None:
        parse_connect_string(self.connect)
        for name in ("session_timeout", "connection_timeout", "retry_delay", "retry_max_delay", "deadline"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ZooKeeper {name} must be positive, not {getattr(self, name)!r}")
        for name in ("connect_max_tries", "command_max_tries"):
            # kazoo 2.11 counts the first try, and would read 0 as "no limit": refuse it rather than surprise.
            if getattr(self, name) != -1 and getattr(self, name) < 1:
                raise ValueError(
                    f"ZooKeeper {name} must be -1 (unbounded) or at least 1, not {getattr(self, name)}"
                )
        for name in ("connect_retry_deadline", "command_retry_deadline"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"ZooKeeper {name} must be positive or None, not {value!r}")
        if self.set_acl and self.digest is None and self.sasl is None:
            raise ValueError(
                "ZooKeeper set_acl needs digest or SASL credentials (creator ACLs name an identity)"
            )
