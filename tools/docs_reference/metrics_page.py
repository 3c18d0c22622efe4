"""The metrics reference: every metric of the operator's Prometheus registry, walked from a fresh ``Metrics``."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase

from tools.docs_reference.markdown import code, generated_header, page, prose, table

_SERIES_SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
}
"""The series prometheus-client exposes for a family of each type (``_created``: the time the series began)."""


@dataclass(frozen=True, slots=True)
class MetricEntry:
    """One metric family as Prometheus scrapes it."""

    name: str
    """The name a query uses: a counter's with ``_total``, the family's otherwise."""
    family: str
    kind: str
    labels: tuple[str, ...]
    help: str
    buckets: tuple[float, ...]


def entries(registry: CollectorRegistry) -> list[MetricEntry]:
    """Every metric family of ``registry``, by name.

    Names, types and help come from the registry's public ``collect()``. Label names have no public accessor in
    prometheus-client, and a labelled metric with no series yet collects no sample to read them from, so they
    are read from each collector's ``_labelnames``, the attribute its own ``labels()`` checks against.
    """
    collectors = {
        collector
        for collector in registry._collector_to_names  # no public list of a registry's collectors
        if isinstance(collector, MetricWrapperBase)
    }
    found = []
    for collector in collectors:
        for family in collector.describe():
            name = family.name + "_total" if family.type == "counter" else family.name
            upper_bounds = getattr(collector, "_upper_bounds", ())
            found.append(
                MetricEntry(
                    name=name,
                    family=family.name,
                    kind=family.type,
                    labels=tuple(collector._labelnames),
                    help=family.documentation,
                    buckets=tuple(bound for bound in upper_bounds if bound != float("inf")),
                )
            )
    return sorted(found, key=lambda entry: entry.name)


def operator_registry() -> CollectorRegistry:
    """The registry ``kto run`` serves on ``/metrics``, as a fresh ``Metrics`` builds it."""
    from topic_operator.k8s.process.metrics import Metrics

    return Metrics().registry


def render() -> str:
    found = entries(operator_registry())
    lines = [
        generated_header("the operator's Prometheus registry (topic_operator.k8s.process.metrics.Metrics)"),
        "",
        "# Metrics",
        "",
        "Every metric `kto run` serves on `/metrics` (port `KTO_METRICS_PORT`, default 9090), read from the "
        "registry the operator builds. Labels are bounded: the KafkaCluster (`namespace/name`) and fixed sets of "
        "values, never a topic name.",
        "",
    ]
    lines += table(
        ["Metric", "Type", "Labels"],
        [
            [
                f"[{code(entry.name)}](#{entry.name})",
                entry.kind,
                ", ".join(code(label) for label in entry.labels),
            ]
            for entry in found
        ],
    )
    for entry in found:
        lines += ["", f"## {entry.name}", "", prose(entry.help), ""]
        lines.append(f"- Type: {entry.kind}")
        lines.append("- Labels: " + (", ".join(code(label) for label in entry.labels) or "none"))
        suffixes = _SERIES_SUFFIXES.get(entry.kind, ())
        if suffixes:
            lines.append("- Series: " + ", ".join(code(entry.family + suffix) for suffix in suffixes))
        if entry.buckets:
            lines.append("- Bucket upper bounds: " + ", ".join(f"{bound:g}" for bound in entry.buckets))
    return page(lines)
