"""Prometheus metrics, in a registry of their own so tests read them without global state.

Names follow Prometheus conventions (``_total`` counters, ``_seconds`` durations). Labels are bounded: the
KafkaCluster (``namespace/name``), and a fixed set of results or error kinds, never a topic name (10,000 topics
would make 10,000 series).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from topic_operator.k8s.census import TopicCensus
from topic_operator.tenants.rules import TenantUsage

__all__ = ["Metrics"]


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.reconciles = Counter(
            "kto_topic_reconciles_total",
            "KafkaTopic reconciles by result (applied, unchanged, planned, rejected, conflict, paused, invalid, forbidden, "
            "cluster_not_found, cluster_unavailable, deleted, retained).",
            ["cluster", "result"],
            registry=self.registry,
        )
        self.batch_duration = Histogram(
            "kto_batch_duration_seconds",
            "Time of one plan/apply batch of a cluster, ZooKeeper reads and writes included.",
            ["cluster"],
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=self.registry,
        )
        self.batch_size = Histogram(
            "kto_batch_topics",
            "Topics per plan/apply batch.",
            ["cluster"],
            buckets=(1, 2, 5, 10, 50, 100, 500, 1000),
            registry=self.registry,
        )
        self.queue_depth = Gauge(
            "kto_batch_queue_depth", "Topics waiting for their cluster's next batch.", ["cluster"],
            registry=self.registry,
        )  # fmt: skip
        self.queue_overflows = Counter(
            "kto_batch_queue_overflows_total",
            "Handlers deferred (retried later) because their cluster's queue stayed full.",
            ["cluster"],
            registry=self.registry,
        )
        self.drifted_topics = Gauge(
            "kto_drifted_topics",
            "Topics of the cluster that differ from their KafkaTopic at the last drift check.",
            ["cluster"],
            registry=self.registry,
        )
        self.drift_detected = Counter(
            "kto_drift_detected_total",
            "Out-of-band changes found by the drift timer (one per topic and check).",
            ["cluster"],
            registry=self.registry,
        )
        self.drift_check_duration = Histogram(
            "kto_drift_check_duration_seconds",
            "Time of one drift check of a cluster's KafkaTopics (the plan, and the reconciles of what it found); "
            "its count rises by one per check, so a rate of 0 means the checks stopped.",
            ["cluster"],
            buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
            registry=self.registry,
        )
        self.event_loop_lag = Histogram(
            "kto_event_loop_lag_seconds",
            "How late the operator's event loop woke a task that asks to wake every 20 ms: the count above "
            "0.1 s is how often the loop was held up longer than that (kopf's watches, the handlers and the "
            "probes all wait meanwhile).",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5),
            registry=self.registry,
        )
        self.unmanaged_topics = Gauge(
            "kto_unmanaged_topics", "Topics in the cluster that no KafkaTopic declares.", ["cluster"],
            registry=self.registry,
        )  # fmt: skip
        self.cluster_errors = Counter(
            "kto_cluster_errors_total",
            "Failures reaching a cluster, its ZooKeeper or its brokers, by kind (unavailable, auth, chroot_missing, "
            "not_a_kafka_cluster, connection_lost).",
            ["cluster", "kind"],
            registry=self.registry,
        )
        self.zookeeper_errors = Counter(
            "kto_zookeeper_errors_total",
            "Deprecated: kto_cluster_errors_total under its earlier name (it counts the brokers' failures too), "
            "kept for dashboards and alerts written against it; to be removed in a later release.",
            ["cluster", "kind"],
            registry=self.registry,
        )
        self.connected = Gauge(
            "kto_cluster_connected",
            "1 while the operator holds a connection to the cluster: a ZooKeeper session, or brokers that answer.",
            ["cluster"], registry=self.registry,
        )  # fmt: skip
        self.drift_reverted = Counter(
            "kto_drift_reverted_total",
            "Drifted topics the drift timer wrote back to their KafkaTopic (one per topic and check).",
            ["cluster"],
            registry=self.registry,
        )
        self.topics = Gauge(
            "kto_topics",
            "KafkaTopics of the cluster by their Ready condition (ready: true, false or unknown; reason: the "
            "condition's reason, NoStatus before the first report), as of the last drift check.",
            ["cluster", "ready", "reason"],
            registry=self.registry,
        )
        self.reassignment_start = Gauge(
            "kto_reassignment_start_time_seconds",
            "Unix time the longest-running reassignment of the cluster's KafkaTopics began (when its Ready "
            "condition turned Reassigning); absent while none runs. As of the last drift check.",
            ["cluster"],
            registry=self.registry,
        )
        self.writer = Gauge(
            "kto_cluster_writer",
            "1 for the path the cluster's changes are written through (writer: ZooKeeper, AdminProtocol, or None "
            "while a migration to KRaft lets nothing be written) at the migration's stage (stage: ZooKeeper, "
            "QuorumWaiting, CopyingMetadata, DualWrite, BrokersOnKRaft, Reverted, KRaft, ...); one series per "
            "cluster.",
            ["cluster", "stage", "writer"],
            registry=self.registry,
        )
        self.tenant_topics = Gauge(
            "kto_tenant_topics",
            "Topics in Kafka that the KafkaTopics of a namespace (other than the KafkaCluster's own) declare on the "
            "cluster, as of the last drift check.",
            ["cluster", "namespace"],
            registry=self.registry,
        )
        self.tenant_partitions = Gauge(
            "kto_tenant_partitions",
            "Partitions in Kafka of those topics, as of the last drift check.",
            ["cluster", "namespace"],
            registry=self.registry,
        )
        self.tenant_quota_topics = Gauge(
            "kto_tenant_quota_topics",
            "The namespace's quota of topics on the cluster (spec.tenants[].quota.topics); absent: no quota.",
            ["cluster", "namespace"],
            registry=self.registry,
        )
        self.tenant_quota_partitions = Gauge(
            "kto_tenant_quota_partitions",
            "The namespace's quota of partitions on the cluster (spec.tenants[].quota.partitions); absent: no "
            "quota.",
            ["cluster", "namespace"],
            registry=self.registry,
        )
        self._census_labels: dict[str, set[tuple[str, str]]] = {}

    def count_cluster_error(self, cluster: str, kind: str) -> None:
        """One failure reaching ``cluster``: ``kto_cluster_errors_total``, and its deprecated earlier name."""
        self.cluster_errors.labels(cluster, kind).inc()
        self.zookeeper_errors.labels(cluster, kind).inc()

    def record_writer(self, cluster: str, stage: str, writer: str) -> None:
        """``kto_cluster_writer`` of ``cluster``: the one series of its stage and writer now, the previous gone."""
        if (
            self.registry.get_sample_value(
                "kto_cluster_writer", {"cluster": cluster, "stage": stage, "writer": writer}
            )
            != 1
        ):
            self.writer.remove_by_labels({"cluster": cluster})
            self.writer.labels(cluster, stage, writer).set(1)

    def record_census(self, cluster: str, census: TopicCensus) -> None:
        """Set ``kto_topics`` and ``kto_reassignment_start_time_seconds`` of ``cluster`` from a census: a
        (ready, reason) that no KafkaTopic has any more drops to 0 rather than keeping its last count."""
        counts: Mapping[tuple[str, str], int] = census.by_condition
        for ready, reason in self._census_labels.get(cluster, set()) - set(counts):
            self.topics.labels(cluster, ready, reason).set(0)
        for (ready, reason), count in counts.items():
            self.topics.labels(cluster, ready, reason).set(count)
        self._census_labels[cluster] = self._census_labels.get(cluster, set()) | set(counts)
        if census.reassigning_since is not None:
            self.reassignment_start.labels(cluster).set(census.reassigning_since)
        else:
            with contextlib.suppress(KeyError):  # none was running
                self.reassignment_start.remove(cluster)

    def record_tenants(self, cluster: str, rows: list[TenantUsage]) -> None:
        """The tenant gauges of ``cluster``, exactly its namespaces now: a namespace gone, or a quota lifted, loses
        its series rather than keeping its last value."""
        gauges = (
            self.tenant_topics,
            self.tenant_partitions,
            self.tenant_quota_topics,
            self.tenant_quota_partitions,
        )
        for gauge in gauges:
            gauge.remove_by_labels({"cluster": cluster})
        for row in rows:
            self.tenant_topics.labels(cluster, row.namespace).set(row.usage.topics)
            self.tenant_partitions.labels(cluster, row.namespace).set(row.usage.partitions)
            if row.quota.topics is not None:
                self.tenant_quota_topics.labels(cluster, row.namespace).set(row.quota.topics)
            if row.quota.partitions is not None:
                self.tenant_quota_partitions.labels(cluster, row.namespace).set(row.quota.partitions)

    def forget_cluster(self, cluster: str) -> None:
        """Drop every series of a deleted KafkaCluster: its last values would otherwise stay exported for as long
        as the operator runs (a ``kto_cluster_connected`` of 0 and a drift-check rate of 0, alerting for ever)."""
        for metric in vars(self).values():
            # the process-wide series (the event loop's lag) have no cluster label: nothing of theirs to drop
            if isinstance(metric, Counter | Gauge | Histogram) and "cluster" in metric._labelnames:
                metric.remove_by_labels({"cluster": cluster})
        self._census_labels.pop(cluster, None)

    def exposition(self) -> bytes:
        """The text format Prometheus scrapes."""
        return generate_latest(self.registry)

    def value(self, name: str, **labels: str) -> float:
        """One sample's value (0 when absent): for tests and the liveness probe's summary."""
        found = self.registry.get_sample_value(name, labels)
        return 0.0 if found is None else found
