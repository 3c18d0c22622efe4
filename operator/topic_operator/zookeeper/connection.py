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
import logging
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

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

from topic_operator.connect_string import Host, parse_connect_string
from topic_operator.zookeeper.errors import (
    ZooKeeperAuthError,
    ZooKeeperChrootMissingError,
    ZooKeeperUnavailableError,
)
from topic_operator.zookeeper.poll_handler import PollingThreadingHandler
from topic_operator.zookeeper.settings import ZooKeeperSettings

__all__ = ["KAFKA_SECURE_ACL", "close_client", "connected", "open_client"]

KAFKA_SECURE_ACL: tuple[Any, ...] = (*CREATOR_ALL_ACL, *READ_ACL_UNSAFE)
"""What Kafka puts on the znodes it creates with ``zookeeper.set.acl=true``: creator-all plus world-read (none of
the paths this project writes is one of Kafka's sensitive paths, semantics §5.10)."""


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
