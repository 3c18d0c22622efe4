"""``kto run``: start the operator. Every option is also read from the environment (the Deployment's way).

Precedence: a flag given on the command line, then its environment variable, then the default
(``OperatorSettings``). ``cli/main.py`` calls ``register`` to add the sub-command; nothing here runs at import.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
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

__all__ = ["register", "run_operator", "settings_from_args"]

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
    ("--secrets-role-binding", "secrets_role_binding", str, "the RoleBinding that lets the operator read "
     "Secrets in a KafkaCluster's namespace, named when it is missing"),
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

    from topic_operator.k8s.operate import LeadershipLostError, StartupError, operate, replica_identity

    identity = (
        replica_identity()
    )  # one per process: a replica that stood down takes its own Lease back at once
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
