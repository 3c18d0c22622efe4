"""``kto run``: start the operator. Every option is also read from the environment (the Deployment's way).

Precedence: a flag given on the command line, then its environment variable, then the default
(``OperatorSettings``). ``cli/main.py`` calls ``register`` to add the sub-command; nothing here runs at import.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import signal
import socket
import sys
import uuid
from pathlib import Path
from typing import Any, Final

from topic_operator.k8s.process.settings import (
    LOG_FORMATS,
    LOG_LEVELS,
    OperatorSettings,
    SettingsError,
    env_name,
    settings_from_env,
)
from topic_operator.message_text import error_line

__all__ = ["operate", "register", "run_operator", "settings_from_args"]

logger = logging.getLogger(__name__)

_FLAGS: tuple[tuple[str, str, type, str], ...] = (
    ("--drift-interval", "drift_interval", float, "seconds between drift checks of each KafkaCluster's topics"),
    ("--batch-linger", "batch_linger", float, "seconds a cluster's batch waits for more events before planning"),
    ("--batch-max-size", "batch_max_size", int, "at most this many topics per plan/apply"),
    ("--queue-size", "queue_size", int, "at most this many topics waiting per cluster (back-pressure beyond)"),
    ("--worker-limit", "worker_limit", int, "at most this many objects handled at once (0: no limit)"),
    ("--queue-wait", "queue_wait", float, "seconds a handler waits for room in a full queue before a retry"),
    ("--api-connections", "api_connections", int, "at most this many connections to the API server, reused "
     "(0: no limit)"),
    ("--retry-delay", "retry_delay", float, "seconds before retrying an unavailable cluster or a conflict"),
    ("--cluster-wait", "cluster_wait", float, "seconds a topic waits for its cluster's first connection"),
    ("--deletion-timeout", "deletion_timeout", float, "seconds before a Delete topic's finalizer is released "
     "when its cluster is gone or unreachable"),
    ("--zk-connection-timeout", "zk_connection_timeout", float, "seconds to wait for a ZooKeeper session"),
    ("--zk-session-timeout", "zk_session_timeout", float, "seconds without contact before ZooKeeper expires a "
     "session; a cluster disconnected for longer gets a new one"),
    ("--zk-deadline", "zk_deadline", float, "seconds one batch of a cluster may take (outages shorter than this "
     "are ridden out)"),
    ("--stuck-grace", "stuck_grace", float, "seconds past the deadline after which a running batch is stuck and "
     "liveness fails"),
    ("--listen-host", "listen_host", str, "address the probe and metrics endpoints listen on"),
    ("--health-port", "health_port", int, "port of the liveness endpoint /healthz"),
    ("--metrics-port", "metrics_port", int, "port of /metrics and /readyz (0: off)"),
    ("--lease-name", "lease_name", str, "the leader Lease the replicas elect the working one with"),
    ("--lease-namespace", "lease_namespace", str, "its namespace (default: the pod's own)"),
    ("--lease-duration", "lease_duration", float, "seconds without a renewal before a standby takes the Lease"),
    ("--lease-renew-deadline", "lease_renew_deadline", float, "seconds without a renewal before the leader stops "
     "writing and stands by again"),
    ("--lease-retry-period", "lease_retry_period", float, "seconds between the leader's renewals"),
    ("--peering", "peering", str, "a kopf peering object to join ('' (default): none)"),
    ("--priority", "priority", int, "kopf peering priority of this replica (default: random)"),
    ("--material-dir", "material_dir", Path, "where TLS material from Secrets is written"),
)  # fmt: skip


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto run`` to ``kto``'s sub-commands."""
    run = subcommands.add_parser(
        "run",
        help="run the Kubernetes operator (KafkaTopic and KafkaCluster resources)",
        description="Run the kopf operator in the foreground. Each option can also be set with the environment "
        "variable named in its help; a flag overrides the variable.",
    )
    run.add_argument("-n", "--namespace", dest="namespaces", action="append", metavar="NAMESPACE",
                     help=f"watch this namespace (repeatable; default all; env {env_name('namespaces')}, "
                     "comma-separated)")  # fmt: skip
    for flag, attribute, kind, text in _FLAGS:
        run.add_argument(flag, dest=attribute, type=kind, metavar=attribute.upper().replace("_", "-"),
                         help=f"{text} (env {env_name(attribute)})")  # fmt: skip
    run.add_argument("--revert-drift", dest="revert_drift", action=argparse.BooleanOptionalAction,
                     help=f"revert out-of-band changes, forward-only (env {env_name('revert_drift')})")  # fmt: skip
    run.add_argument("--leader-election", dest="leader_election", action=argparse.BooleanOptionalAction,
                     help="elect the working replica through a Lease; off only with one replica "
                     f"(env {env_name('leader_election')})")  # fmt: skip
    run.add_argument("--log-level", dest="log_level", choices=LOG_LEVELS, help=f"env {env_name('log_level')}")
    run.add_argument(
        "--log-format", dest="log_format", choices=LOG_FORMATS, help=f"env {env_name('log_format')}"
    )
    run.set_defaults(handler=_run)


def settings_from_args(args: argparse.Namespace, environ: Any = None) -> OperatorSettings:
    """The environment, overridden by the flags that were given."""
    overrides = {name: getattr(args, name, None) for name in (f[1] for f in _FLAGS)}
    overrides.update(
        revert_drift=args.revert_drift,
        leader_election=args.leader_election,
        log_level=args.log_level,
        log_format=args.log_format,
        namespaces=tuple(args.namespaces) if args.namespaces else None,
    )
    return settings_from_env(os.environ if environ is None else environ, **overrides)


def _run(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except SettingsError as error:
        print(f"kto run: {error}", file=sys.stderr)
        return 1
    return run_operator(settings)


def run_operator(settings: OperatorSettings) -> int:
    """Configure logging and run kopf until it is stopped (SIGTERM/SIGINT)."""
    import kopf

    kopf.configure(
        debug=settings.log_level == "debug",
        quiet=settings.log_level in ("warning", "error"),
        log_format=kopf.LogFormat.JSON if settings.log_format == "json" else kopf.LogFormat.FULL,
        log_refkey="k8s",
    )
    if settings.log_level == "error":
        logging.getLogger().setLevel(logging.ERROR)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_without_login_tracebacks)
        handler.addFilter(_refusals_at_admission_are_no_errors)
    # lightkube's HTTP client logs every request at INFO: a Lease renewal every 2 s, each drift-timer patch.
    for name in ("httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(name).setLevel(logging.WARNING)
    if settings.log_level != "debug":
        # kopf logs two or three INFO lines per object and change ("Handler 'topic' succeeded.", "Creation is
        # processed: ..."): 30,000 lines for a burst of 10,000 KafkaTopics, and their formatting on every event.
        # Their failures are WARNING or ERROR and stay; the operator's own INFO lines (connections, sessions,
        # the Lease) stay too.
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)
    from lightkube.core.exceptions import ConfigError

    identity = _identity()  # one per process: a replica that stood down takes its own Lease back at once
    stood_down = False
    try:
        while True:
            try:
                asyncio.run(operate(settings, identity=identity, granted_before=stood_down))
                break
            except LeadershipLostError as error:
                stood_down = True
                # Its writers stopped at the renew deadline and kopf stopped: wait as a standby again, in this
                # process (a pod restart would do the same, only slower).
                logger.warning("%s; waiting for the Lease again as a standby", error)
    except (kopf.LoginError, ConfigError) as error:
        # No credentials anywhere kopf looks (kubeconfig, service account, client libraries): one line, exit 1.
        print(f"kto run: cannot log in to the Kubernetes API: {error_line(error)}", file=sys.stderr)
        return 1
    except StartupError as error:
        print(f"kto run: {error}", file=sys.stderr)
        return 1
    return 0


def _without_login_tracebacks(record: logging.LogRecord) -> bool:
    """kopf logs a failed login with the traceback of every task it stops; the message says all there is to say
    (and ``kto run`` ends with one line saying it), so the traceback is left out."""
    import kopf

    if record.exc_info and isinstance(record.exc_info[1], kopf.LoginError):
        record.exc_info, record.exc_text = None, None
    return True


_REFUSED_AT_ADMISSION: Final = "Webhook 'tenancy' failed permanently: "


def _refusals_at_admission_are_no_errors(record: logging.LogRecord) -> bool:
    """kopf logs each refusal of its admission handler as an error of the operator ("failed permanently"); a
    KafkaTopic refused at apply is the webhook doing its job, said to whoever applied it: logged at INFO."""
    if record.levelno == logging.ERROR and str(record.msg).startswith(_REFUSED_AT_ADMISSION):
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        record.msg = "Refused at admission: " + str(record.msg).removeprefix(_REFUSED_AT_ADMISSION)
    return True


class StartupError(Exception):
    """The operator cannot start (the message says why, in one line)."""


async def operate(
    settings: OperatorSettings,
    stop_flag: asyncio.Event | None = None,
    registry: Any = None,
    *,
    identity: str | None = None,
    granted_before: bool = False,
) -> None:
    """What ``kto run`` runs in its event loop (the benchmark runs it too): until SIGTERM/SIGINT or ``stop_flag``.
    ``registry`` replaces the operator's handlers (the benchmark measures kopf's own floor with minimal ones).

    With leader election (the default), a replica serves its probes at once and waits, as a standby, until it
    holds the Lease; only then does kopf start. It keeps renewing; if it cannot for ``lease_renew_deadline``,
    its writers stop, kopf stops and ``LeadershipLostError`` says so (``kto run`` then waits as a standby again,
    in the same process, with the same identity, and ``granted_before``: a refusal to read the Lease is then
    retried a while, see ``LeaderElector.acquire``). A clean stop releases the Lease."""
    import kopf
    from lightkube.core.exceptions import ConfigError

    from topic_operator.k8s.context import OperatorContext
    from topic_operator.k8s.handlers import REPORTING_COMPONENT, build_kopf_settings, build_registry
    from topic_operator.k8s.process.garbage_collection import tune_garbage_collection
    from topic_operator.k8s.process.heap_upkeep import keep_heap
    from topic_operator.k8s.process.kube_api import KopfEvents, LightkubeApi, SessionEvents
    from topic_operator.k8s.process.leadership import (
        LeaderElector,
        LeaseAccessError,
        LeaseKeeper,
        LeaseTimings,
    )
    from topic_operator.k8s.process.liveness import Liveness
    from topic_operator.k8s.process.lock_handoff import hand_the_lock_back_sooner
    from topic_operator.k8s.process.loop_lag import watch_loop_lag
    from topic_operator.k8s.process.malloc_arenas import limit_malloc_arenas
    from topic_operator.k8s.process.serving import ListenError, serve, serve_health
    from topic_operator.manifests.limits import LimitSettingError, limits_from_environment

    limit_malloc_arenas()  # before the operator's threads start (see the module)
    tune_garbage_collection()
    hand_the_lock_back_sooner()  # before the clusters' threads start computing beside the loop
    priority = (
        settings.priority if settings.priority is not None else random.SystemRandom().randrange(1, 32768)
    )
    api = LightkubeApi()
    elector: LeaderElector | None = None
    if settings.leader_election:
        timings = LeaseTimings(
            settings.lease_duration, settings.lease_renew_deadline, settings.lease_retry_period
        )
        namespace = settings.lease_namespace or _pod_namespace() or api.default_namespace()
        elector = LeaderElector(
            api,
            namespace,
            settings.lease_name,
            identity or _identity(),
            timings,
            granted_before=granted_before,
        )
    if settings.peering:
        try:
            await api.ensure_peering(settings.peering, settings.namespaces)
        except ConfigError:
            raise
        except Exception as error:  # refused (credentials, RBAC, the peering CRD missing) or unreachable
            raise StartupError(
                f"cannot create the kopf peering object {settings.peering!r}: {error_line(error)}"
            ) from None
    try:
        limits = limits_from_environment()
    except LimitSettingError as error:
        raise StartupError(str(error)) from None
    events = SessionEvents(KopfEvents(), REPORTING_COMPONENT)
    context = OperatorContext(
        settings, api, events, manifest_limits=limits, may_write=elector.holds if elector else None
    )
    events.session_of = lambda: context.api_session
    readiness = context.readiness

    async def ready() -> tuple[bool, str]:
        if elector is not None and not elector.holds():
            if not elector.seen:
                return False, f"reading the leader Lease {elector.label}"
            return True, f"standby: the leader Lease {elector.label} is held by {elector.holder or 'nobody'}"
        return readiness.ready, readiness.waiting_for

    liveness = Liveness(settings.stuck_after)
    runners = []
    try:
        runners.append(await serve_health(lambda: liveness.check(context.clusters.handles(), context.session_heartbeats),
                                          host=settings.listen_host, port=settings.health_port))  # fmt: skip
        if settings.metrics_port:
            runners.append(
                await serve(context.metrics, ready, host=settings.listen_host, port=settings.metrics_port)
            )
    except ListenError as error:
        for runner in runners:
            await runner.cleanup()
        raise StartupError(f"{error} (--health-port, --metrics-port and --listen-host choose it)") from None
    logger.info(
        "starting kafka-topic-operator: %s, %s",
        "all namespaces" if settings.clusterwide else "namespaces " + ", ".join(settings.namespaces),
        f"leader election through the Lease {elector.label} as {elector.identity}"
        if elector is not None
        else "no leader election",
    )
    keeper: LeaseKeeper | None = None
    kopf_stop = stop_flag
    upkeep = asyncio.create_task(keep_heap(), name="heap upkeep")
    lag = asyncio.create_task(watch_loop_lag(context.metrics.event_loop_lag), name="loop lag")
    try:
        if elector is not None:
            try:
                if not await _standby(elector, stop_flag):
                    return
            except LeaseAccessError as error:
                raise StartupError(str(error)) from None
            kopf_stop = context.stop_flag = asyncio.Event()
            loop = asyncio.get_running_loop()
            # Lost: stop kopf (the writers stopped already).
            keeper = LeaseKeeper(elector, LightkubeApi, lambda: loop.call_soon_threadsafe(kopf_stop.set))
            keeper.start()
            if stop_flag is not None:
                _forward(stop_flag, kopf_stop)
        await _run_kopf(
            kopf, settings, registry, priority, context, api, kopf_stop, build_registry, build_kopf_settings
        )
    finally:
        upkeep.cancel()
        lag.cancel()
        lost = keeper is not None and keeper.lost
        if keeper is not None:
            await asyncio.to_thread(keeper.stop, release=not lost)
        for runner in runners:
            await runner.cleanup()
    if lost:
        raise LeadershipLostError(
            f"lost the leader Lease {elector.label if elector else ''}: not renewed for "
            f"{settings.lease_renew_deadline:g} s; this replica stopped writing"
        )


async def _run_kopf(
    kopf: Any,
    settings: OperatorSettings,
    registry: Any,
    priority: int,
    context: Any,
    api: Any,
    stop_flag: asyncio.Event | None,
    build_registry: Any,
    build_kopf_settings: Any,
) -> None:
    from topic_operator.k8s.process.kopf_memories import memories

    readiness = context.readiness
    first_lists = asyncio.create_task(
        readiness.run(lambda plural: api.list_uids(plural, settings.namespaces))
    )
    try:
        await kopf.operator(
            registry=registry if registry is not None else build_registry(settings),
            settings=build_kopf_settings(settings, priority=priority),
            clusterwide=settings.clusterwide,
            namespaces=settings.namespaces,
            memo=kopf.Memo(kto=context),
            memories=memories(),
            ready_flag=readiness.kopf_ready,
            stop_flag=stop_flag,
        )
    finally:
        first_lists.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first_lists


async def _standby(elector: Any, stop_flag: asyncio.Event | None) -> bool:
    """Wait for the Lease, or for SIGTERM/SIGINT (or ``stop_flag``): True once this replica holds it."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    signals = (signal.SIGTERM, signal.SIGINT)
    installed = []
    for number in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop.add_signal_handler(number, stopping.set)
            installed.append(number)
    if stop_flag is not None:
        _forward(stop_flag, stopping)
    try:
        acquiring = asyncio.create_task(elector.acquire())
        waiting = asyncio.create_task(stopping.wait())
        done, _ = await asyncio.wait({acquiring, waiting}, return_when=asyncio.FIRST_COMPLETED)
        for task in (acquiring, waiting):
            if task not in done:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if acquiring in done:
            acquiring.result()
            return True
        logger.info("stopped while a standby for the leader Lease %s", elector.label)
        return False
    finally:
        for number in installed:
            loop.remove_signal_handler(number)


def _forward(source: asyncio.Event, target: asyncio.Event) -> None:
    async def wait() -> None:
        await source.wait()
        target.set()

    task = asyncio.ensure_future(wait())
    _background.add(task)
    task.add_done_callback(_background.discard)


_background: set[asyncio.Future[None]] = set()
"""Tasks that only forward a flag: kept referenced until they end (asyncio holds only weak references)."""


def _pod_namespace() -> str:
    """The pod's namespace, from its service account's files (empty outside a pod)."""
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _identity() -> str:
    """This replica's name in the Lease: the pod's name (its host name) and a random part, as client-go's."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:10]}"


class LeadershipLostError(Exception):
    """The leader could not renew its Lease in time and stopped (the message says so, in one line)."""
