"""Open a kazoo client on a Kafka cluster's ZooKeeper, or fail with one clear error that names the connect string.

kazoo on its own turns most problems into a silent wait: an unreachable ensemble, a certificate it does not
trust and a refused client certificate all look like "Connection time-out", a refused SASL login may surface as
a bare ``ConnectionLoss`` (or kill kazoo's connection thread), and a missing chroot is only a warning, after
which the first write grows a brand-new tree. Here each of those becomes one exception from
``topic_operator.zookeeper.errors`` whose message names the connect string (never a password):

- nothing answered within ``connection_timeout`` -> ``ZooKeeperUnavailableError`` (with kazoo's last reason);
- SASL refused, or the ensemble demands SASL we do not have, or our identity may not read the chroot
  -> ``ZooKeeperAuthError``;
- the chroot does not exist -> ``ZooKeeperChrootMissingError``. It is checked with an unchrooted request
  before ``client.chroot`` is set, and never created.

Writes refused by an ACL after a successful open raise kazoo's ``NoAuthError`` from the writer: opening only
proves that we may read the cluster.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    SessionClosedRequireSaslError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import KeeperState
from kazoo.retry import KazooRetry
from kazoo.security import CREATOR_ALL_ACL, READ_ACL_UNSAFE

from topic_operator.connect_string import ConnectStringError, Host, parse_connect_string
from topic_operator.zookeeper.bounded import DEFAULT_DEADLINE
from topic_operator.zookeeper.errors import (
    ZooKeeperAuthError,
    ZooKeeperChrootMissingError,
    ZooKeeperUnavailableError,
)
from topic_operator.zookeeper.poll_handler import PollingThreadingHandler

__all__ = [
    "KAFKA_SECURE_ACL",
    "ConnectStringError",
    "DigestAuth",
    "Host",
    "SaslAuth",
    "Secret",
    "TlsSettings",
    "ZooKeeperSettings",
    "close_client",
    "connected",
    "open_client",
    "parse_connect_string",
]

KAFKA_SECURE_ACL: tuple[Any, ...] = (*CREATOR_ALL_ACL, *READ_ACL_UNSAFE)
"""What Kafka puts on the znodes it creates with ``zookeeper.set.acl=true``: creator-all plus world-read (none of
the paths this project writes is one of Kafka's sensitive paths, semantics §5.10)."""


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


# -- opening a client ------------------------------------------------------------------------------------------

_POLL_SECONDS = 0.05
"""How often the start-up wait looks whether kazoo gave up: short, so a refusal is reported at once."""


class _KazooEvents(logging.LoggerAdapter[logging.Logger]):
    """kazoo's logger for one client: passes every record on to ``kazoo.client`` and remembers why connection
    attempts failed.

    kazoo tells nobody but its logger why it could not connect (refused, TLS verification, a SASL refusal
    raised inside its connection thread), and a client's ``logger`` is its public hook for that. Only exception
    objects are kept, never message text, so the classification does not depend on kazoo's wording. The last
    few *distinct* reasons are kept, because with several hosts the last one tried (in random order) may not be
    the one that explains the failure.
    """

    KEPT = 3

    def __init__(self) -> None:
        super().__init__(logging.getLogger("kazoo.client"), {})
        self._failures: dict[str, BaseException] = {}
        self._lock = threading.Lock()  # kazoo's connection thread writes while open_client reads

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        exc_info = kwargs.pop("exc_info", None)
        error = exc_info if isinstance(exc_info, BaseException) else sys.exc_info()[1] if exc_info else None
        if level >= logging.WARNING:
            self.note(error)
            for arg in args:
                if isinstance(arg, BaseException):
                    self.note(arg)
        if error is not None:  # one line, never a traceback: the reason is all an operator's log needs
            msg = f"{msg}: {_named(error)}"
        super().log(level, msg, *args, **kwargs)

    def note(self, error: BaseException | None) -> None:
        if error is None:
            return
        key = _describe(error)
        with self._lock:
            self._failures.pop(key, None)
            self._failures[key] = error
            while len(self._failures) > self.KEPT:
                del self._failures[next(iter(self._failures))]

    @property
    def reasons(self) -> list[str]:
        """Distinct failure reasons, oldest first."""
        with self._lock:
            return list(self._failures)

    @property
    def auth_refusal(self) -> BaseException | None:
        """The SASL refusal among the failures, if any: it explains everything else that followed."""
        with self._lock:
            errors = list(self._failures.values())
        refusals = [e for e in errors if isinstance(e, AuthFailedError | SessionClosedRequireSaslError)]
        return refusals[-1] if refusals else None


def _quiet_connection_thread_deaths() -> None:
    """kazoo 2.11's connection thread dies on a refused SASL login (``SessionClosedRequireSaslError`` or
    ``AuthFailedError`` escape its loop), and Python prints the whole traceback. The client is closed then, which
    the callers see (``client_gave_up``) and report in one line; so the death itself is one line too."""
    previous = threading.excepthook
    if getattr(previous, "kto_quiet", False):
        return

    def hook(args: threading.ExceptHookArgs) -> None:
        thread = args.thread
        if thread is not None and "zk_loop" in thread.name and isinstance(args.exc_value, KazooException):
            logging.getLogger("kazoo.client").warning(
                "kazoo's connection thread ended: %s", _named(args.exc_value)
            )
            return
        previous(args)

    hook.kto_quiet = True  # type: ignore[attr-defined]
    threading.excepthook = hook


def open_client(settings: ZooKeeperSettings) -> KazooClient:
    """A started client rooted at the settings' chroot, authenticated and proven able to read it.

    The caller owns it (:func:`close_client`, or use :func:`connected`). On any failure the client is stopped
    and closed before the error is raised, so no kazoo thread or socket outlives a failed open.
    """
    _quiet_connection_thread_deaths()
    hosts, chroot = parse_connect_string(settings.connect)
    events = _KazooEvents()
    client = KazooClient(**_client_options(settings, hosts, events))
    deadline = time.monotonic() + settings.connection_timeout
    try:
        _start(client, settings, events, deadline)
        _check_root(client, settings, chroot, events, deadline)
    except BaseException:
        close_client(client)
        raise
    client.chroot = chroot or ""
    return client


@contextlib.contextmanager
def connected(settings: ZooKeeperSettings) -> Iterator[KazooClient]:
    """:func:`open_client` for the length of a ``with`` block."""
    client = open_client(settings)
    try:
        yield client
    finally:
        close_client(client)


CLOSE_TIMEOUT = 2.0
"""Seconds :func:`close_client` waits for kazoo to end the session. kazoo's ``stop`` waits for its connection
thread, which may be inside a reconnection attempt or waiting for a frozen server's answer to the close request
(up to two thirds of the session timeout), and then joins it without a bound."""


def close_client(client: KazooClient, timeout: float = CLOSE_TIMEOUT) -> bool:
    """Stop (ending the session, so its ephemeral znodes go at once) and free the threads and sockets, waiting
    at most ``timeout`` seconds: against an ensemble that is away, the rest finishes in a daemon thread (kazoo's
    own threads are daemons too), so a command can still end on time. True if it finished in time."""
    done = threading.Event()

    def stop_and_close() -> None:
        try:
            client.stop()
            client.close()
        except Exception:  # a client that cannot stop cleanly is being abandoned anyway
            logging.getLogger(__name__).debug("closing a ZooKeeper client failed", exc_info=True)
        finally:
            done.set()

    threading.Thread(target=stop_and_close, name="kto-zookeeper-close", daemon=True).start()
    return done.wait(timeout)


def _client_options(
    settings: ZooKeeperSettings, hosts: tuple[Host, ...], events: _KazooEvents
) -> dict[str, object]:
    options: dict[str, object] = {
        "hosts": ",".join(str(host) for host in hosts),
        "timeout": settings.session_timeout,
        "read_only": settings.read_only,
        "connection_retry": _retry(settings, settings.connect_max_tries, settings.connect_retry_deadline),
        "command_retry": _retry(settings, settings.command_max_tries, settings.command_retry_deadline),
        "logger": events,
        "handler": PollingThreadingHandler(),
    }
    if settings.digest is not None:
        options["auth_data"] = [("digest", f"{settings.digest.user}:{settings.digest.password.reveal()}")]
    if settings.sasl is not None:
        options["sasl_options"] = settings.sasl.kazoo_options()
    if settings.tls is not None:
        options.update(settings.tls.kazoo_options())
    if settings.set_acl:
        options["default_acl"] = list(KAFKA_SECURE_ACL)
    return options


def _retry(settings: ZooKeeperSettings, max_tries: int, deadline: float | None) -> KazooRetry:
    return KazooRetry(
        max_tries=max_tries,
        delay=settings.retry_delay,
        max_delay=settings.retry_max_delay,
        deadline=deadline,
    )


def _start(client: KazooClient, settings: ZooKeeperSettings, events: _KazooEvents, deadline: float) -> None:
    """Wait for a session, but stop waiting as soon as kazoo gives up (retries spent, or auth refused)."""
    live: threading.Event = client.start_async()
    while not client.connected:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or _gave_up(client):
            break
        live.wait(min(remaining, _POLL_SECONDS))
    if client.connected:
        return
    if client.client_state == KeeperState.AUTH_FAILED or events.auth_refusal is not None:
        raise _auth_refused(settings, events)
    raise _unavailable(settings, events)


def _gave_up(client: KazooClient) -> bool:
    """True once kazoo's connection thread has ended: it will not try again.

    The one look inside kazoo: no public flag says so (``client_state`` reads CLOSED both before the thread's
    first attempt and after its last). Without the attribute this only costs waiting out the timeout.
    """
    routine = getattr(getattr(client, "_connection", None), "_connection_routine", None)
    return isinstance(routine, threading.Thread) and not routine.is_alive()


def _check_root(
    client: KazooClient,
    settings: ZooKeeperSettings,
    chroot: str | None,
    events: _KazooEvents,
    deadline: float,
) -> None:
    """Prove the chroot exists and that we may read it, before anything is rooted there.

    Both requests are unchrooted: a chrooted client cannot even ask whether its own root exists without
    kazoo's warning-and-carry-on. ``exists`` needs no permission, ``get_children`` needs READ, so NoAuth here
    means our identity (or lack of one) is not let in. These are also the first requests on the session, so
    they wait behind SASL and digest authentication and surface their refusal.
    """
    root = chroot or "/"
    try:
        if client.exists_async(root).get(timeout=_remaining(deadline)) is None:
            raise ZooKeeperChrootMissingError(
                f"ZooKeeper at {settings.connect} has no znode {root}: the chroot must exist (it is never"
                " created, so that a typo cannot grow a second, empty cluster)"
            )
        client.get_children_async(root).get(timeout=_remaining(deadline))
    except NoAuthError:
        raise ZooKeeperAuthError(
            f"ZooKeeper at {settings.connect} does not let {_identity(settings)} read {root}"
        ) from None
    except (AuthFailedError, SessionClosedRequireSaslError) as error:
        events.note(error)
        raise _auth_refused(settings, events) from None
    except (ConnectionLoss, ConnectionClosedError, SessionExpiredError, KazooTimeoutError):
        if events.auth_refusal is not None:
            raise _auth_refused(settings, events) from None
        raise _unavailable(settings, events) from None


def _remaining(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.001)


def _identity(settings: ZooKeeperSettings) -> str:
    if settings.sasl is not None:
        user = repr(settings.sasl.username) if settings.sasl.username else "(from the ticket cache)"
        return f"SASL {settings.sasl.mechanism} user {user}"
    if settings.digest is not None:
        return f"digest user {settings.digest.user!r}"
    return "an unauthenticated client (no digest or SASL credentials configured)"


def _auth_refused(settings: ZooKeeperSettings, events: _KazooEvents) -> ZooKeeperAuthError:
    if isinstance(events.auth_refusal, SessionClosedRequireSaslError) and settings.sasl is None:
        return ZooKeeperAuthError(
            f"ZooKeeper at {settings.connect} requires SASL authentication and none is configured"
        )
    how = " (SASL login failed)" if settings.sasl is not None else ""
    return ZooKeeperAuthError(f"ZooKeeper at {settings.connect} refused {_identity(settings)}{how}")


def _unavailable(settings: ZooKeeperSettings, events: _KazooEvents) -> ZooKeeperUnavailableError:
    reasons = events.reasons
    reason = f" (last error: {reasons[0]})" if len(reasons) == 1 else ""
    if len(reasons) > 1:
        reason = f" (last errors: {'; '.join(reasons)})"
    return ZooKeeperUnavailableError(
        f"cannot reach ZooKeeper at {settings.connect} within {settings.connection_timeout:g} s{reason}"
    )


def _named(error: BaseException) -> str:
    """``ErrorClass: reason``, or the class alone when it carries no text (kazoo's often do not)."""
    text = _describe(error)
    name = type(error).__name__
    return name if text == name else f"{name}: {text}"


def _describe(error: BaseException) -> str:
    """kazoo's reason, plus what to check when it was TLS (kazoo keeps the ``ssl`` error only as the context)."""
    text = str(error) or type(error).__name__
    cause = error.__cause__ or error.__context__
    if isinstance(cause, ssl.SSLCertVerificationError):
        return (
            f"{text}; the server's certificate is not trusted: check tls.ca_file and that the certificate"
            " names the host as written in the connect string"
        )
    reason = getattr(cause, "reason", None) or ""
    if isinstance(cause, ssl.SSLError) and "ALERT" in reason and ("CERTIFICATE" in reason or "CA" in reason):
        return f"{text}; the server refused our TLS client certificate: check tls.cert_file and tls.key_file"
    return text
