"""A real, throwaway, standalone ZooKeeper server started from Debian's ``zookeeper`` package.

The tests and ``kto demo`` need a ZooKeeper that behaves exactly like the one Kafka talks to, so this starts
the real server (``ZooKeeperServerMain``) in a JVM rather than faking one. It only starts and stops a process
and probes a socket with ZooKeeper's four-letter words, so it needs neither kazoo nor a Kafka installation.

Everything stays off the network: the client port is bound to 127.0.0.1, the admin (Jetty) server is off,
and the data directory is a temporary directory removed by :meth:`LocalZooKeeper.stop`.

For fault tests it fails the ways a production server does: :meth:`LocalZooKeeper.kill` is a crash (``kill -9``)
that keeps the data directory and port, :meth:`LocalZooKeeper.restart` brings the same server back on them, and
:meth:`LocalZooKeeper.pause` / :meth:`LocalZooKeeper.resume` freeze and thaw it (SIGSTOP / SIGCONT: connections stay
open, nothing answers).

It can also run the way secured Kafka clusters run their ZooKeeper, so the client's TLS and SASL paths are
tested against the real thing: a TLS client port (:class:`ServerTls`) and SASL DIGEST-MD5 users that every
client must authenticate as (:class:`ServerSasl`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Literal, Self

DEBIAN_JAVA_DIR = Path("/usr/share/java")
"""Where Debian's ``libzookeeper-java`` and its dependencies put their jars."""

INSTALL_HINT = "install Debian's zookeeper package: apt-get install zookeeper"

SERVER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"

LogBinding = Literal["simple", "log4j"]
"""Which SLF4J binding to put on the classpath (exactly one may be there, or ZooKeeper logs nothing).

``simple`` writes to stderr, which :class:`LocalZooKeeper` sends to its log file with no configuration file;
``log4j`` is what kazoo's test harness configures with its own ``log4j.properties``.
"""

_LOG_BINDING_JARS: dict[LogBinding, tuple[str, ...]] = {
    "simple": ("slf4j-simple.jar",),
    "log4j": ("slf4j-log4j12.jar", "log4j-1.2.jar"),
}

# zookeeper.jar's manifest Class-Path names every other dependency except netty-codec (Debian's manifest omits
# it, and the server's X509 utilities need it), so these are the only jars that must be named explicitly.
_SERVER_JARS = ("zookeeper.jar", "zookeeper-jute.jar", "netty-codec.jar")

DEFAULT_JVM_FLAGS: tuple[str, ...] = (
    # C1 only: a test server lives for seconds to minutes, so the optimising compiler costs more than it earns
    # (measured: ready in ~0.19 s instead of ~0.30 s).
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xss512k",
    "-Xmx256m",
    "-Djava.awt.headless=true",
    "-Dfile.encoding=UTF-8",
    # Silences a startup probe for log4j's JMX support that is absent with slf4j-simple.
    "-Dzookeeper.jmx.log4j.disable=true",
    # Timestamps let a failing test's events be matched with the server's log lines.
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
)


@dataclass(frozen=True)
class ServerTls:
    """A TLS client port (``secureClientPort``) beside the plain one, served by ZooKeeper's Netty connection
    factory (the NIO one has no TLS).

    The plain port stays open: the readiness probe and test set-up use it, as brokers do during a migration to
    TLS. ZooKeeper 3.8 reads PEM directly, so no keytool step is needed: with ``store_type="PEM"`` the key
    store is one file holding the server's PKCS#8 private key and its certificate chain, and the trust store
    holds the CA certificates that client certificates must chain to.
    """

    key_store: Path
    trust_store: Path
    store_type: Literal["PEM", "JKS", "PKCS12"] = "PEM"
    password: str | None = field(default=None, repr=False)
    """Of both stores (and of an encrypted PEM key); None for unencrypted PEM."""
    client_auth: Literal["need", "want", "none"] = "need"
    """``need``: a client without a certificate signed by the trust store's CA is refused during the handshake."""


@dataclass(frozen=True)
class ServerSasl:
    """SASL DIGEST-MD5 users, from a JAAS ``Server`` section, as Kafka's docs set up ZooKeeper authentication.

    With ``required`` (the default) the server enforces SASL (``enforce.auth.enabled=true`` with
    ``enforce.auth.schemes=sasl``, what ``sessionRequireClientSASLAuth=true`` means since 3.7): a client with
    no credentials or wrong ones has its session closed instead of being let in as an anonymous ``ip`` user.
    Without it, a failed SASL exchange is still refused (``AUTHFAILED``) but a client that does not try SASL
    is served.
    """

    users: Mapping[str, str] = field(repr=False)
    """User name -> password."""
    required: bool = True


class ZooKeeperNotInstalledError(RuntimeError):
    """Java or ZooKeeper's jars are missing: nothing can be started until the package is installed."""


class ZooKeeperStartError(RuntimeError):
    """The server process was started but never answered; the message carries the tail of its log."""


def find_java() -> str:
    """Return the ``java`` executable, preferring ``$JAVA_HOME`` so a deliberately chosen JDK wins."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise ZooKeeperNotInstalledError(f"no 'java' executable on PATH (or in $JAVA_HOME); {INSTALL_HINT}")
    return found


def zookeeper_classpath(java_dir: Path = DEBIAN_JAVA_DIR, logging: LogBinding = "simple") -> str:
    """Return the classpath that runs Debian's ZooKeeper server, raising a clear error when a jar is missing.

    Shared by :class:`LocalZooKeeper` and the tests' multi-server ensemble, so both run the same server build.
    """
    names = (*_SERVER_JARS, *_LOG_BINDING_JARS[logging])
    jars = [java_dir / name for name in names]
    missing = [jar.name for jar in jars if not jar.is_file()]
    if missing:
        raise ZooKeeperNotInstalledError(
            f"ZooKeeper jars not found in {java_dir}: {', '.join(missing)}; {INSTALL_HINT}"
        )
    return os.pathsep.join(str(jar) for jar in jars)


_HANDED_OUT: set[int] = set()
_LOWEST_PORT = 10_000


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port free on ``host`` right now, below the system's ephemeral range where one can be found.

    A port the kernel gives for ``bind(0)`` comes from the ephemeral range, the same range it gives every outgoing
    connection its local port from: with servers and clients busy on the machine, such a port was taken by a
    connection between being chosen here and being bound by the server it was chosen for. Below that range only
    a listener can take it. Each port is handed out once per process."""
    low, _ = _ephemeral_range()
    randomly = random.Random()
    for _ in range(200):
        port = randomly.randrange(_LOWEST_PORT, max(low, _LOWEST_PORT + 1))
        if port not in _HANDED_OUT and port_is_free(host, port):
            _HANDED_OUT.add(port)
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        found: int = sock.getsockname()[1]
        return found


def _ephemeral_range() -> tuple[int, int]:
    """Linux's ``ip_local_port_range``; IANA's 49152-65535 elsewhere."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 49_152, 65_535


def port_is_free(host: str, port: int) -> bool:
    """Whether ``port`` can be bound on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def four_letter_word(host: str, port: int, command: str, timeout: float = 1.0) -> str:
    """Send one of ZooKeeper's four-letter-word commands (``ruok``, ``srvr``, ...) and return the whole reply.

    Raises ``OSError`` when nothing listens; the server closes the connection after replying.
    """
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(command.encode("ascii"))
        chunks: list[bytes] = []
        while chunk := sock.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _parent_death_signal() -> Callable[[], None] | None:
    """Return a pre-exec hook that kills the JVM when its parent dies, so a killed test run leaks no servers.

    Linux only (``prctl(PR_SET_PDEATHSIG)``). The signal fires when the *thread* that started the server
    exits, so start servers from a thread that lives as long as they should (main thread).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # loaded before fork: the child only makes the system call
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def hook() -> None:
        prctl(pr_set_pdeathsig, signal.SIGKILL)

    return hook


def _cleanup(process: subprocess.Popen[bytes] | None, log_file: IO[bytes] | None, work_dir: Path) -> None:
    """Kill the server and delete its files; a module-level function so ``weakref.finalize`` can hold it.

    SIGKILL, not SIGTERM: the data is thrown away, and the JVM's orderly shutdown only adds ~0.4 s per stop.
    """
    try:
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait()
    finally:
        if log_file is not None:
            log_file.close()
        shutil.rmtree(work_dir, ignore_errors=True)


class LocalZooKeeper:
    """One standalone ZooKeeper server on 127.0.0.1, for a test session or a demo.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. Stop is idempotent, and also runs when
    the object is garbage-collected or the interpreter exits, so a forgotten server dies with its owner.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        start_timeout: float = 20.0,
        tick_time_ms: int = 500,
        max_session_timeout_ms: int = 60_000,
        classpath: str | None = None,
        java: str | None = None,
        jvm_flags: Sequence[str] = DEFAULT_JVM_FLAGS,
        tls: ServerTls | None = None,
        sasl: ServerSasl | None = None,
        extra_config: Sequence[str] = (),
        system_properties: Mapping[str, str] | None = None,
    ) -> None:
        """Describe the server; nothing starts before :meth:`start`.

        ``tick_time_ms`` is short so that tests can ask for session timeouts down to two ticks (1 s) and see
        expiries quickly; ``max_session_timeout_ms`` keeps long client timeouts from being cut to 20 ticks.
        A fixed ``port`` is tried once; without one a free port is chosen, and chosen again if another process
        takes it between the choice and the server's bind.
        ``extra_config`` lines are appended to ``zoo.cfg`` (so they win over the defaults) and
        ``system_properties`` become ``-D`` flags, for settings that exist only as Java properties.
        """
        self.host = host
        self._requested_port = port
        self._start_timeout = start_timeout
        self._tick_time_ms = tick_time_ms
        self._max_session_timeout_ms = max_session_timeout_ms
        self._classpath = classpath
        self._java = java
        self._jvm_flags = tuple(jvm_flags)
        self._tls = tls
        self._sasl = sasl
        self._extra_config = tuple(extra_config)
        self._system_properties = dict(system_properties or {})
        if sasl is not None:
            _check_jaas_strings(sasl.users)
        self._port: int | None = None
        self._secure_port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._work_dir: Path | None = None
        self._finalizer: weakref.finalize[..., LocalZooKeeper] | None = None
        self.startup_seconds: float | None = None
        """Wall time from launching the JVM to the first good answer, for the tests to report."""

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> Self:
        """Start the server and return once it serves clients; raise with the log's tail if it does not."""
        if self.running:
            return self
        classpath = self._classpath or zookeeper_classpath()
        java = self._java or find_java()
        attempts = 1 if self._requested_port is not None else 3
        for attempt in range(1, attempts + 1):
            port = self._requested_port if self._requested_port is not None else free_port(self.host)
            secure_port = free_port(self.host) if self._tls is not None else None
            try:
                self._launch(java, classpath, port, secure_port)
                self._wait_until_serving()
            except _PortTakenError:
                log = self.log_tail()
                self.stop()
                if attempt == attempts:
                    raise ZooKeeperStartError(
                        f"ZooKeeper could not bind {self.host}:{port} or its TLS port (address in use);"
                        f" log tail:\n{log}"
                    ) from None
            except BaseException:
                self.stop()
                raise
            else:
                return self
        raise AssertionError("unreachable")  # pragma: no cover

    def kill(self) -> None:
        """Crash the server (SIGKILL, as ``kill -9``), keeping its data directory and port for :meth:`restart`."""
        if self._process is None:
            raise RuntimeError("LocalZooKeeper is not started")
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()

    def restart(
        self, *, fresh_data: bool = False, sasl: ServerSasl | Literal["unchanged"] | None = "unchanged"
    ) -> Self:
        """Start a killed server again on the same port and data directory, as an operator restarting it would;
        returns once it serves clients (its sessions survive if they have not expired meanwhile).

        ``fresh_data``: on an empty data directory instead, as a server rebuilt from scratch (its zxids start
        again at 0, so it refuses clients that have seen later ones). ``sasl``: with other SASL users (or none),
        as a server whose authentication was reconfigured."""
        if self.running:
            return self
        if self._work_dir is None or self._port is None:
            raise RuntimeError("LocalZooKeeper is not started")
        if fresh_data:
            shutil.rmtree(self._work_dir / "data", ignore_errors=True)
        if sasl != "unchanged":
            if sasl is not None:
                _check_jaas_strings(sasl.users)
            self._sasl = sasl
        classpath = self._classpath or zookeeper_classpath()
        java = self._java or find_java()
        self._launch(java, classpath, self._port, self._secure_port, work_dir=self._work_dir)
        self._wait_until_serving()
        return self

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): its sockets stay open and nothing answers, as in a long GC pause."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw a paused server (SIGCONT)."""
        os.kill(self.pid, signal.SIGCONT)

    def stop(self) -> None:
        """Kill the server and remove its data directory; safe to call again, and after a failed start."""
        finalizer, self._finalizer = self._finalizer, None
        self._process = None
        self._work_dir = None
        self._port = None
        self._secure_port = None
        if finalizer is not None:
            finalizer()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what callers need -----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True while the server process is alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def port(self) -> int:
        """The client port; only meaningful once started."""
        if self._port is None:
            raise RuntimeError("LocalZooKeeper is not started")
        return self._port

    @property
    def connect_string(self) -> str:
        """``host:port`` for kazoo or Kafka's ``zookeeper.connect``; append a chroot to isolate a user."""
        return f"{self.host}:{self.port}"

    @property
    def secure_port(self) -> int:
        """The TLS client port; only there when started with ``tls``."""
        if self._secure_port is None:
            raise RuntimeError("LocalZooKeeper is not started with a TLS port")
        return self._secure_port

    @property
    def secure_connect_string(self) -> str:
        """``host:secure_port``: what a TLS client connects to."""
        return f"{self.host}:{self.secure_port}"

    @property
    def pid(self) -> int:
        """The JVM's process id, so tests can check that :meth:`stop` really ended it."""
        if self._process is None:
            raise RuntimeError("LocalZooKeeper is not started")
        return self._process.pid

    @property
    def log_path(self) -> Path:
        """The server's combined stdout/stderr; it is deleted by :meth:`stop`."""
        if self._work_dir is None:
            raise RuntimeError("LocalZooKeeper is not started")
        return self._work_dir / "zookeeper.log"

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the server log, or a note when there is none (for error reports)."""
        if self._work_dir is None:
            return "(no log: server not started)"
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            return f"(log unreadable: {error})"
        return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"

    def four_letter_word(self, command: str, timeout: float = 1.0) -> str:
        """Send a four-letter word (only ``ruok``, ``srvr``, ``stat``, ``mntr`` and ``cons`` are enabled)."""
        return four_letter_word(self.host, self.port, command, timeout)

    # -- internals -------------------------------------------------------------------------------------------

    def _launch(
        self, java: str, classpath: str, port: int, secure_port: int | None, work_dir: Path | None = None
    ) -> None:
        """Start the JVM; with ``work_dir`` (a restart) on that server's existing data, appending to its log."""
        if work_dir is not None and self._finalizer is not None:
            detached = self._finalizer.detach()  # the old process is dead; its files pass to the new one
            if detached is not None:
                _, _, (_, old_log, _), _ = detached
                old_log.close()
        work_dir = work_dir or Path(tempfile.mkdtemp(prefix="kto-zookeeper-"))
        data_dir = work_dir / "data"
        data_dir.mkdir(exist_ok=True)
        config = work_dir / "zoo.cfg"
        system_properties = dict(self._system_properties)
        security_lines: list[str] = []
        if self._tls is not None and secure_port is not None:
            security_lines += _tls_config(self._tls, self.host, secure_port)
        if self._sasl is not None:
            jaas = work_dir / "jaas.conf"
            jaas.write_text(_jaas_server_section(self._sasl.users), encoding="utf-8")
            system_properties.setdefault("java.security.auth.login.config", str(jaas))
            security_lines += _sasl_config(self._sasl)
        config.write_text(
            "\n".join(
                [
                    f"tickTime={self._tick_time_ms}",
                    f"maxSessionTimeout={self._max_session_timeout_ms}",
                    f"dataDir={data_dir}",
                    f"clientPort={port}",
                    f"clientPortAddress={self.host}",
                    "maxClientCnxns=0",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=ruok,srvr,stat,mntr,cons",
                    # The data lives in a temporary directory that stop() deletes: fsync buys nothing here
                    # and slows every write.
                    "forceSync=no",
                    *security_lines,
                    *self._extra_config,
                    "",
                ]
            ),
            encoding="utf-8",
        )
        log_file = (work_dir / "zookeeper.log").open("ab")
        process: subprocess.Popen[bytes] | None = None
        try:
            process = subprocess.Popen(
                [
                    java,
                    *self._jvm_flags,
                    *(f"-D{name}={value}" for name, value in system_properties.items()),
                    "-cp",
                    classpath,
                    SERVER_MAIN,
                    str(config),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                cwd=work_dir,
                # Not thread-safe in general, but the hook only makes one system call in the child.
                preexec_fn=_parent_death_signal(),
            )
        finally:
            self._finalizer = weakref.finalize(self, _cleanup, process, log_file, work_dir)
        self._process = process
        self._work_dir = work_dir
        self._port = port
        self._secure_port = secure_port

    def _wait_until_serving(self) -> None:
        assert self._process is not None
        started = time.monotonic()
        deadline = started + self._start_timeout
        while True:
            if self._process.poll() is not None:
                log = self.log_tail()
                if "Address already in use" in log:
                    raise _PortTakenError
                raise ZooKeeperStartError(
                    f"ZooKeeper exited with code {self._process.returncode} before serving; log tail:\n{log}"
                )
            if self._answers():
                self.startup_seconds = time.monotonic() - started
                return
            if time.monotonic() > deadline:
                raise ZooKeeperStartError(
                    f"ZooKeeper did not answer on {self.connect_string} within {self._start_timeout:.0f} s;"
                    f" log tail:\n{self.log_tail()}"
                )
            time.sleep(0.02)

    def _answers(self) -> bool:
        # `ruok` answers as soon as the port is open; `srvr` only reports a Mode once the database is loaded
        # and requests are served, which is what "ready" has to mean for the first client.
        with contextlib.suppress(OSError):
            if self.four_letter_word("ruok", timeout=0.5) == "imok":
                return "Mode:" in self.four_letter_word("srvr", timeout=0.5)
        return False


def _tls_config(tls: ServerTls, host: str, secure_port: int) -> list[str]:
    lines = [
        # Only the Netty factory serves TLS; it serves the plain port too, four-letter words included.
        "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
        f"secureClientPort={secure_port}",
        f"secureClientPortAddress={host}",
        f"ssl.keyStore.location={tls.key_store}",
        f"ssl.keyStore.type={tls.store_type}",
        f"ssl.trustStore.location={tls.trust_store}",
        f"ssl.trustStore.type={tls.store_type}",
        f"ssl.clientAuth={tls.client_auth}",
    ]
    if tls.password is not None:
        lines += [f"ssl.keyStore.password={tls.password}", f"ssl.trustStore.password={tls.password}"]
    return lines


def _sasl_config(sasl: ServerSasl) -> list[str]:
    lines = ["authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"]
    if sasl.required:
        lines += ["enforce.auth.enabled=true", "enforce.auth.schemes=sasl"]
    return lines


def _jaas_server_section(users: Mapping[str, str]) -> str:
    """The JAAS ``Server`` section ZooKeeper's ``DigestLoginModule`` reads its users from (``user_<name>``)."""
    entries = "".join(f'    user_{name}="{password}"\n' for name, password in users.items())
    return f"Server {{\n    org.apache.zookeeper.server.auth.DigestLoginModule required\n{entries};\n}};\n"


def _check_jaas_strings(users: Mapping[str, str]) -> None:
    """JAAS has its own quoting; a test server only needs plain names and passwords, so refuse the rest."""
    for name, password in users.items():
        if not name or not all(c.isalnum() or c in "_-." for c in name):
            raise ValueError(f"SASL user name {name!r}: use letters, digits, '_', '-' or '.'")
        if any(c in password for c in '"\\\n'):
            raise ValueError(f"SASL password of {name!r} contains a quote, backslash or newline")


class _PortTakenError(Exception):
    """The chosen port was taken between choosing it and the server's bind: choose another."""
