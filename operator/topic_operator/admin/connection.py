"""One Admin client on a cluster's brokers, made from ``AdminSettings``, with every failure to reach them turned
into one of ``admin.errors``' messages.

kafka-python runs its network I/O on a thread of its own and its calls block the caller: every call is bounded
by ``request_timeout_ms``, and bootstrapping by ``bootstrap_timeout_ms``, both the deadline the caller gives. So
no call waits longer than that, whatever the brokers do; the operator runs calls in a worker thread, never on its
event loop.
"""

from __future__ import annotations

import contextlib
import logging
import re
import ssl
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import kafka.errors as kafka_errors
from kafka.admin import KafkaAdminClient
from kafka.net import KafkaNetClient

from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.errors import (
    AdminClientError,
    AdminRequestError,
    AdminSettingsError,
    BrokersRefusedCredentialsError,
    BrokersTlsError,
    BrokersUnavailableError,
)

__all__ = ["connected", "open_admin", "reaching", "ssl_context_of"]

logger = logging.getLogger(__name__)


_UNREACHABLE_KINDS = (
    kafka_errors.KafkaTimeoutError,
    kafka_errors.KafkaConnectionError,
    kafka_errors.NodeNotReadyError,
    kafka_errors.RequestTimedOutError,
    kafka_errors.MetadataEmptyBrokerList,
    kafka_errors.UnknownBrokerIdError,
    kafka_errors.RetriableError,
    ConnectionError,
    TimeoutError,
)
"""kafka-python's ways (and the socket's) of saying no broker answered in time."""


def ssl_context_of(settings: AdminSettings) -> ssl.SSLContext | None:
    """The TLS context the settings describe (None without TLS): the CA certificates given, else the system's;
    the client's key and certificate when given; the host name checked unless it was turned off."""
    if not settings.uses_tls:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = settings.check_hostname
    try:
        if settings.ca_file is None and settings.ca_pem is None:
            context.load_default_certs()
        if settings.ca_file is not None:
            context.load_verify_locations(cafile=settings.ca_file)
        if settings.ca_pem is not None:
            context.load_verify_locations(cadata=settings.ca_pem)
        if settings.certificate_file is not None:
            context.load_cert_chain(settings.certificate_file, settings.key_file, settings.key_password)
    except (OSError, ssl.SSLError, ValueError) as error:
        raise AdminSettingsError(f"the TLS certificates or key cannot be loaded: {_reason(error)}") from None
    return context


def open_admin(
    settings: AdminSettings, *, deadline: float, bootstrap_timeout: float | None = None
) -> KafkaAdminClient:
    """A client whose bootstrap succeeded within ``bootstrap_timeout`` seconds (default: ``deadline``), each of
    whose requests waits at most ``deadline`` (else ``BrokersUnavailableError`` and the others of
    ``admin.errors``, with the reason kafka-python gave for the last failed attempt)."""
    milliseconds = max(int(deadline * 1000), 1)
    bootstrap = bootstrap_timeout if bootstrap_timeout is not None else deadline
    options: dict[str, Any] = {
        "bootstrap_servers": list(settings.bootstrap_servers),
        "client_id": settings.client_id,
        "security_protocol": settings.security_protocol,
        "request_timeout_ms": milliseconds,
        "bootstrap_timeout_ms": max(int(bootstrap * 1000), 1),
        "reconnect_backoff_max_ms": 1000,
    }
    context = ssl_context_of(settings)
    if context is not None:
        options["ssl_context"] = context
    if settings.uses_sasl:
        options |= {
            "sasl_mechanism": settings.sasl_mechanism,
            "sasl_plain_username": settings.username,
            "sasl_plain_password": settings.password,
        }
    _quiet_kafka_logs()
    failures = _BootstrapFailures(f"kafka-io-{settings.client_id}")
    made: list[KafkaNetClient] = []

    def make_network_client(**configs: Any) -> KafkaNetClient:
        client = KafkaNetClient(**configs)
        made.append(client)
        failures.ends_bootstrap_of(client)
        return client

    options["kafka_client"] = make_network_client
    manager = logging.getLogger("kafka.net.manager")
    manager.addHandler(failures)
    try:
        with reaching(settings, bootstrap, failures.telling):
            return KafkaAdminClient(**options)
    except AdminClientError:
        # the Admin client raised from its constructor, so nobody else can close its network thread
        for client in made:
            with contextlib.suppress(Exception):
                client.close()
        raise
    finally:
        manager.removeHandler(failures)


class _BootstrapFailures(logging.Handler):
    """Why kafka-python's bootstrap attempts failed: it logs the reason (refused SASL credentials, a TLS
    handshake, a closed socket) and raises only a time-out, so the reason is taken from its log records, those
    of this client's I/O thread.

    A refusal that another attempt cannot change (the credentials, or a certificate not trusted) ends the
    bootstrap there, as Kafka's own clients treat an authentication failure as fatal: retrying until the deadline
    would only delay the same answer, and on a loaded machine could end on a time-out that hides it."""

    _LINE = re.compile(
        r"^Bootstrap connection to \S+ failed: (?P<reason>.*?)(?: \(backoff [0-9.]+ secs\))?$", re.S
    )
    _FINAL = ("SaslAuthenticationFailed", "CERTIFICATE_VERIFY_FAILED")

    def __init__(self, thread_name: str) -> None:
        super().__init__(logging.WARNING)
        self._thread_name = thread_name
        self._reasons: deque[str] = deque(maxlen=16)
        self._lock = threading.Lock()
        self._client: KafkaNetClient | None = None

    def ends_bootstrap_of(self, client: KafkaNetClient) -> None:
        """The network client whose bootstrap a final refusal ends."""
        self._client = client

    def emit(self, record: logging.LogRecord) -> None:
        if record.threadName != self._thread_name:
            return
        match = self._LINE.match(record.getMessage())
        if match is None:
            return
        reason = match["reason"]
        with self._lock:
            self._reasons.append(reason)
        if any(final in reason for final in self._FINAL) and self._is_of_client(record):
            # closing the connection manager ends its bootstrap loop, which then raises its time-out at once
            assert self._client is not None
            self._client._manager.close()

    def _is_of_client(self, record: logging.LogRecord) -> bool:
        """Whether the record comes from this client's own I/O thread: another client given the same id (so
        the same thread name) must not end this one's bootstrap."""
        if self._client is None:
            return False
        thread = getattr(self._client._net, "_io_thread", None)
        return thread is not None and record.thread == thread.ident

    def telling(self) -> str | None:
        """The reason that tells most: a refusal of the credentials, else a TLS failure, else the last one."""
        with self._lock:
            reasons = list(self._reasons)
        for telling in ("SaslAuthenticationFailed", "CERTIFICATE", "SSL"):
            found = next((r for r in reversed(reasons) if telling in r), None)
            if found is not None:
                return found
        return reasons[-1] if reasons else None


@contextlib.contextmanager
def connected(
    settings: AdminSettings, *, deadline: float, bootstrap_timeout: float | None = None
) -> Iterator[KafkaAdminClient]:
    """``open_admin``, closed at the end."""
    admin = open_admin(settings, deadline=deadline, bootstrap_timeout=bootstrap_timeout)
    try:
        yield admin
    finally:
        with contextlib.suppress(Exception):
            admin.close()


@contextlib.contextmanager
def reaching(
    settings: AdminSettings, deadline: float, why_not: Callable[[], str | None] | None = None
) -> Iterator[None]:
    """Turn what kafka-python raises when the brokers cannot be reached or refuse us into ``admin.errors``;
    ``why_not`` gives the reason it logged for its last failed attempt, when it raised only a time-out."""
    servers = settings.servers_text
    try:
        yield
    except AdminClientError:
        raise
    except kafka_errors.SaslAuthenticationFailedError as error:
        raise _refused(settings, _reason(error)) from None
    except (
        kafka_errors.ClusterAuthorizationFailedError,
        kafka_errors.TopicAuthorizationFailedError,
    ) as error:
        raise BrokersRefusedCredentialsError(
            f"the brokers {servers} do not authorize this principal: {_reason(error)}"
        ) from None
    except ssl.SSLError as error:
        raise BrokersTlsError(f"TLS with the brokers {servers} failed: {_reason(error)}") from None
    except _UNREACHABLE_KINDS as error:
        logged = why_not() if why_not is not None else None
        if logged is not None and "SaslAuthenticationFailed" in logged:
            raise _refused(settings, logged) from None
        if logged is not None and _is_tls(logged):
            raise BrokersTlsError(f"TLS with the brokers {servers} failed: {logged}") from None
        hint = _hint(settings) if why_not is not None else ""
        raise BrokersUnavailableError(
            f"no broker of {servers} answered within {deadline:g} s ({logged or _reason(error)})" + hint
        ) from None
    except kafka_errors.KafkaError as error:  # any other answer or state of the client: this request failed
        raise AdminRequestError(f"a request to the brokers {servers} failed: {_reason(error)}") from None
    except (
        Exception
    ) as error:  # kafka-python's own failures (a KeyError, a ValueError) end the call, not the process
        logger.debug("kafka-python failed on a request to %s", servers, exc_info=True)
        raise AdminRequestError(
            f"the Admin client failed on a request to the brokers {servers}: {type(error).__name__}: {_reason(error)}"
        ) from None


def _refused(settings: AdminSettings, reason: str) -> BrokersRefusedCredentialsError:
    return BrokersRefusedCredentialsError(
        f"the brokers {settings.servers_text} refused the SASL {settings.sasl_mechanism} credentials of user "
        f"{settings.username!r}: {reason}"
    )


def _is_tls(reason: str) -> bool:
    return any(word in reason for word in ("SSL", "CERTIFICATE", "certificate", "TLS", "handshake"))


def _hint(settings: AdminSettings) -> str:
    """A bootstrap that failed may come from a protocol mismatch (a TLS port spoken to in plain text reads as an
    invalid frame), so say what was spoken."""
    return (
        f"; check that the servers are up and that they speak {settings.security_protocol}"
        + (f" with SASL {settings.sasl_mechanism} and these credentials" if settings.uses_sasl else "")
        + (" and trust these certificates" if settings.uses_tls else "")
    )


def _reason(error: BaseException) -> str:
    text = str(error).strip()
    return text or type(error).__name__


def _quiet_kafka_logs() -> None:
    """kafka-python logs every failed connection attempt at ERROR; the failure reaches the user once, as an
    ``admin.errors`` message, so its records go to no handler of the application's unless it set one up on the
    ``kafka`` logger (records are still made: ``_BootstrapFailures`` reads the reasons from them)."""
    logger = logging.getLogger("kafka")
    if logger.propagate and all(isinstance(h, logging.NullHandler) for h in logger.handlers):
        # kafka-python adds a NullHandler of its own on import: that is not the application asking for its lines
        logger.propagate = False
