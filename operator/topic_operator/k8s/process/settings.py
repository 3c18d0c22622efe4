"""The operator's settings: one frozen dataclass, each field with its environment variable and why it exists.

``kto run`` reads every option from the environment first (the Deployment sets them) and lets a command-line
flag override it, so the same image runs from a manifest, from Helm values and from a laptop. Parsing is pure and
strict: a bad value fails at start-up naming the variable, never at the first reconcile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Final

__all__ = [
    "LOG_FORMATS",
    "LOG_LEVELS",
    "WEBHOOK_FAILURE_POLICIES",
    "OperatorSettings",
    "SettingsError",
    "env_name",
    "environment_variables",
    "settings_from_env",
]

LOG_LEVELS: Final = ("debug", "info", "warning", "error")
LOG_FORMATS: Final = ("json", "plain")
WEBHOOK_FAILURE_POLICIES: Final = ("Ignore", "Fail")


def _env(name: str) -> dict[str, str]:
    return {"env": name}


class SettingsError(ValueError):
    """A setting that cannot be right; the message names the environment variable or flag."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorSettings:
    """What ``kto run`` is configured with. Defaults suit one operator for a few clusters and 10,000 topics."""

    namespaces: tuple[str, ...] = field(default=(), metadata=_env("KTO_WATCH_NAMESPACES"))
    """Namespaces whose KafkaTopics and KafkaClusters are handled (comma-separated); empty: all namespaces."""
    drift_interval: float = field(default=300.0, metadata=_env("KTO_DRIFT_INTERVAL"))
    """Seconds between drift checks of each KafkaCluster's topics (the KafkaCluster timer). A check re-reads
    only what ZooKeeper watches reported as changed, so a short interval costs little."""
    kraft_poll_interval: float = field(default=5.0, metadata=_env("KTO_KRAFT_POLL_INTERVAL"))
    """Seconds between two drift checks of a KafkaCluster written through its brokers (a KRaft cluster, or one
    migrated to KRaft), when ``drift_interval`` is longer: the Admin protocol has no watch, so only a read tells
    that a topic was changed behind the operator's back. A check then waits at least three times as long as the
    last one took, so a large cluster's brokers spend at most a quarter of their time answering it."""
    revert_drift: bool = field(default=True, metadata=_env("KTO_REVERT_DRIFT"))
    """Whether out-of-band changes are reverted (forward-only, by the engine) or only reported in status.drift."""
    batch_linger: float = field(default=0.5, metadata=_env("KTO_BATCH_LINGER"))
    """Seconds a cluster's batch waits for more events before planning: many KafkaTopic events, one plan."""
    batch_max_size: int = field(default=500, metadata=_env("KTO_BATCH_MAX_SIZE"))
    """At most this many topics per plan/apply; the rest go in the next batch."""
    queue_size: int = field(default=20_000, metadata=_env("KTO_QUEUE_SIZE"))
    """At most this many distinct topics waiting per cluster. Beyond it a handler waits ``queue_wait`` seconds
    for room, then is retried ``retry_delay`` later (back-pressure, never a crash). Large enough for a burst of
    10,000 new KafkaTopics: a waiting entry is a spec and a future, while an overflow costs a retry."""
    worker_limit: int = field(default=2000, metadata=_env("KTO_WORKER_LIMIT"))
    """At most this many objects handled at once (kopf's ``queueing.worker_limit``, and the KafkaTopic reconciles
    running at once: ``topic_work``; 0: no limit). In a burst of
    10,000 changes, the objects beyond it wait as their raw watch events, not as running handlers with their
    copies of the body: the burst's memory is bounded, not its throughput (a batch holds at most
    ``batch_max_size`` topics)."""
    api_connections: int = field(default=16, metadata=_env("KTO_API_CONNECTIONS"))
    """At most this many connections to the API server, kept alive and reused (0: kopf's own, unbounded): a
    burst of status patches and Events queues in the operator instead of opening a connection (and a TLS
    handshake) each, and meets the server's priority and fairness at a pace it takes. The two watch streams
    hold two of them."""
    queue_wait: float = field(default=5.0, metadata=_env("KTO_QUEUE_WAIT"))
    retry_delay: float = field(default=30.0, metadata=_env("KTO_RETRY_DELAY"))
    """Seconds before a KafkaTopic reconcile that met an unreachable cluster, a full queue, a write conflict or a
    refused status patch runs again (``topic_work``; at once when the KafkaTopic changes meanwhile), and before
    kopf retries a KafkaCluster or deletion handler that failed the same way."""
    cluster_wait: float = field(default=10.0, metadata=_env("KTO_CLUSTER_WAIT"))
    """Seconds a KafkaTopic handler waits for its KafkaCluster's first connection (at start-up the two kinds
    are handled in no particular order) before reporting ClusterUnavailable."""
    deletion_timeout: float = field(default=600.0, metadata=_env("KTO_DELETION_TIMEOUT"))
    """Seconds a KafkaTopic with deletionPolicy Delete waits for its cluster (gone or unreachable) before its
    finalizer is released with a warning Event, leaving the Kafka topic in place: a namespace never wedges."""
    zk_connection_timeout: float = field(default=15.0, metadata=_env("KTO_ZK_CONNECTION_TIMEOUT"))
    """Seconds to wait for a ZooKeeper session when (re)connecting a cluster."""
    zk_session_timeout: float = field(default=18.0, metadata=_env("KTO_ZK_SESSION_TIMEOUT"))
    """Seconds without contact before ZooKeeper expires a cluster's session (Kafka's
    ``zookeeper.session.timeout.ms``). A cluster disconnected for longer gets a new session (``sessions``)."""
    zk_deadline: float = field(default=60.0, metadata=_env("KTO_ZK_DEADLINE"))
    """Seconds one batch of a cluster (plan, writes, the re-read) may take: a ZooKeeper outage shorter than this
    is ridden out; a longer one ends the batch with each topic's outcome (applied, not written, unknown) and a
    retry. The same variable bounds the ``kto`` commands."""
    stuck_grace: float = field(default=30.0, metadata=_env("KTO_STUCK_GRACE"))
    """Seconds past ``zk_deadline`` after which a batch still running counts as stuck: its KafkaTopics are
    retried, and liveness (``/healthz``) fails so that Kubernetes restarts the pod, saying so in the log."""
    listen_host: str = field(default="0.0.0.0", metadata=_env("KTO_LISTEN_HOST"))
    """The address ``/healthz``, ``/readyz`` and ``/metrics`` listen on: every interface in a pod, for the kubelet's
    probes and Prometheus; ``127.0.0.1`` for a developer's ``kto run`` and the tests."""
    health_port: int = field(default=8080, metadata=_env("KTO_HEALTH_PORT"))
    """The liveness endpoint (``/healthz``): fails when a cluster's batch is stuck past its deadline and grace."""
    metrics_port: int = field(default=9090, metadata=_env("KTO_METRICS_PORT"))
    """Prometheus metrics (``/metrics``) and readiness (``/readyz``); 0 disables both."""
    log_level: str = field(default="info", metadata=_env("KTO_LOG_LEVEL"))
    log_format: str = field(default="json", metadata=_env("KTO_LOG_FORMAT"))
    """``json`` (one object per line, for log collectors) or ``plain``."""
    peering: str = field(default="", metadata=_env("KTO_PEERING"))
    """A kopf peering object to join (the peering CRDs must be installed): kopf pauses this operator while a
    peer of higher priority lives, such as a developer's ``kto run`` on a laptop. Empty (the default): none.
    Replicas of the Deployment coordinate through the leader Lease (``leader_election``), not through this."""
    priority: int | None = field(default=None, metadata=_env("KTO_PRIORITY"))
    """This replica's peering priority; None: a random one, so that replicas differ (kopf pauses every
    operator that sees another with the same priority)."""
    leader_election: bool = field(default=True, metadata=_env("KTO_LEADER_ELECTION"))
    """Replicas elect the one that works through a ``coordination.k8s.io`` Lease (``leadership``); a standby
    waits. Off: this process works whatever other replicas do (one replica only)."""
    lease_name: str = field(default="kafka-topic-operator", metadata=_env("KTO_LEASE_NAME"))
    lease_namespace: str = field(default="", metadata=_env("KTO_LEASE_NAMESPACE"))
    """Where the Lease lives; empty: the pod's own namespace (the kubeconfig context's outside a cluster)."""
    lease_duration: float = field(default=10.0, metadata=_env("KTO_LEASE_DURATION"))
    """Seconds without a renewal after which a standby takes the Lease: how soon it acts after the leader died."""
    lease_renew_deadline: float = field(default=7.0, metadata=_env("KTO_LEASE_RENEW_DEADLINE"))
    """Seconds without a successful renewal after which the leader stops writing and exits (less than
    ``lease_duration``: it has stopped before anyone can take over)."""
    lease_retry_period: float = field(default=2.0, metadata=_env("KTO_LEASE_RETRY_PERIOD"))
    """Seconds between the leader's renewals (one API write each); a standby reads the Lease twice as often."""
    secrets_role_binding: str = field(
        default="kafka-topic-operator-secrets", metadata=_env("KTO_SECRETS_ROLE_BINDING")
    )
    """The RoleBinding that lets the operator read Secrets in a namespace holding KafkaClusters (one per such
    namespace, to a Role granting ``get`` on Secrets there): what a KafkaCluster whose Secrets it may not read
    names as missing. The chart sets it to its own name."""
    material_dir: Path = field(default=Path("/tmp/kto"), metadata=_env("KTO_MATERIAL_DIR"))
    """Where TLS material read from Secrets is written (0600) for kazoo, which reads certificates from files;
    an emptyDir in the Deployment, so the root filesystem stays read-only."""

    webhook_port: int = field(default=0, metadata=_env("KTO_WEBHOOK_PORT"))
    """The port of the validating admission webhook, which refuses at ``kubectl apply`` what a KafkaCluster's
    grants refuse (``spec.tenants``); 0 (the default): no webhook, and the operator alone judges."""
    webhook_listen: str = field(default="0.0.0.0", metadata=_env("KTO_WEBHOOK_LISTEN"))
    """The address the webhook listens on."""
    webhook_host: str = field(default="", metadata=_env("KTO_WEBHOOK_HOST"))
    """The host the API server calls the webhook at (``https://<host>:<port>``), outside a cluster: an API server
    on the same machine calls ``127.0.0.1``. Ignored when ``webhook_service`` is set."""
    webhook_service: str = field(default="", metadata=_env("KTO_WEBHOOK_SERVICE"))
    """``<namespace>/<name>`` of the Service the API server calls the webhook through, in a cluster."""
    webhook_certificate_dir: str = field(default="", metadata=_env("KTO_WEBHOOK_CERTIFICATE_DIR"))
    """A directory holding ``tls.crt`` and ``tls.key`` (a Secret of type kubernetes.io/tls, mounted), which every
    replica serves the webhook with, standbys included, so that whichever replica the Service picks answers;
    the ValidatingWebhookConfiguration, with its CA, is then the installer's (the chart's). Empty (the default):
    the leader alone serves it, with a certificate it signs itself at each start, and keeps the configuration."""
    webhook_failure_policy: str = field(default="Ignore", metadata=_env("KTO_WEBHOOK_FAILURE_POLICY"))
    """What the API server does when the webhook cannot answer: ``Ignore`` (the default: an operator that is
    down never blocks an apply; the operator judges the object when it is back) or ``Fail``."""

    def __post_init__(self) -> None:
        for name in (
            "drift_interval",
            "kraft_poll_interval",
            "batch_linger",
            "queue_wait",
            "retry_delay",
            "zk_connection_timeout",
            "zk_session_timeout",
            "zk_deadline",
            "stuck_grace",
        ):
            if not getattr(self, name) > 0:
                raise SettingsError(f"{env_name(name)} must be positive, not {getattr(self, name)!r}")
        for name in ("cluster_wait", "deletion_timeout"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{env_name(name)} must not be negative, not {getattr(self, name)!r}")
        for name in ("batch_max_size", "queue_size"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{env_name(name)} must be at least 1, not {getattr(self, name)!r}")
        if self.api_connections != 0 and self.api_connections < 4:
            raise SettingsError(
                "KTO_API_CONNECTIONS must be 0 (no limit) or at least 4 (two are the watch streams), not "
                f"{self.api_connections!r}"
            )
        if self.worker_limit < 0:
            raise SettingsError(
                f"KTO_WORKER_LIMIT must not be negative (0: no limit), not {self.worker_limit!r}"
            )
        if self.webhook_failure_policy not in WEBHOOK_FAILURE_POLICIES:
            raise SettingsError(
                f"KTO_WEBHOOK_FAILURE_POLICY must be one of {', '.join(WEBHOOK_FAILURE_POLICIES)}, not "
                f"{self.webhook_failure_policy!r}"
            )
        if self.webhook_service and self.webhook_service.count("/") != 1:
            raise SettingsError(
                f"KTO_WEBHOOK_SERVICE must be <namespace>/<name>, not {self.webhook_service!r}"
            )
        if self.webhook_certificate_dir and not self.webhook_port:
            raise SettingsError("KTO_WEBHOOK_CERTIFICATE_DIR needs KTO_WEBHOOK_PORT: the webhook's port")
        for name in ("health_port", "metrics_port", "webhook_port"):
            if not 0 <= getattr(self, name) < 65536:
                raise SettingsError(f"{env_name(name)} must be a port (0-65535), not {getattr(self, name)!r}")
        if self.log_level not in LOG_LEVELS:
            raise SettingsError(
                f"KTO_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {self.log_level!r}"
            )
        if not 0 < self.lease_retry_period < self.lease_renew_deadline < self.lease_duration:
            raise SettingsError(
                "KTO_LEASE_RETRY_PERIOD < KTO_LEASE_RENEW_DEADLINE < KTO_LEASE_DURATION must hold (all positive), "
                f"not {self.lease_retry_period!r} < {self.lease_renew_deadline!r} < {self.lease_duration!r}"
            )
        if self.log_format not in LOG_FORMATS:
            raise SettingsError(
                f"KTO_LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, not {self.log_format!r}"
            )

    @property
    def clusterwide(self) -> bool:
        return not self.namespaces

    @property
    def stuck_after(self) -> float:
        """Seconds after which a running batch is stuck."""
        return self.zk_deadline + self.stuck_grace


def env_name(attribute: str) -> str:
    """The environment variable of a settings field (``drift_interval`` -> ``KTO_DRIFT_INTERVAL``)."""
    spec = next(f for f in fields(OperatorSettings) if f.name == attribute)
    return str(spec.metadata["env"])


def _parse(attribute: str, text: str) -> Any:
    """One environment value in the field's type; the error names the variable."""
    default = next(f for f in fields(OperatorSettings) if f.name == attribute).default
    name = env_name(attribute)
    text = text.strip()
    try:
        if attribute == "namespaces":
            return tuple(part.strip() for part in text.split(",") if part.strip())
        if attribute == "priority":
            return int(text) if text else None
        if attribute == "material_dir":
            return Path(text)
        if isinstance(default, bool):
            lowered = text.lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return lowered in ("true", "1", "yes")
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        raise SettingsError(f"{name}={text!r} is not a valid {type(default).__name__}") from None
    return text.lower() if attribute in ("log_level", "log_format") else text


def settings_from_env(environ: Mapping[str, str], **overrides: Any) -> OperatorSettings:
    """Defaults, then the environment, then ``overrides`` (command-line flags that were given)."""
    values: dict[str, Any] = {}
    for spec in fields(OperatorSettings):
        name = spec.metadata["env"]
        if name in environ:
            values[spec.name] = _parse(spec.name, environ[name])
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return OperatorSettings(**values)
    except TypeError as error:  # an unknown override: a programming error, said plainly
        raise SettingsError(str(error)) from None


def environment_variables() -> dict[str, str]:
    """Field -> environment variable, for the Deployment, the chart and the docs."""
    return {spec.name: str(spec.metadata["env"]) for spec in dataclasses.fields(OperatorSettings)}
