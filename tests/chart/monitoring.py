"""What the alerts and the dashboard may name, and what they do name.

``exported_series`` reads the operator's own ``Metrics`` (on a fresh registry), never a list written again by
hand: a metric renamed in ``k8s/process/metrics.py`` without its alert fails the tests. ``metric_names`` parses PromQL
with promql-parser (a Rust port of Prometheus' parser) and lists the metrics its selectors name.
"""

from __future__ import annotations

import re
from typing import Final

import promql_parser
from prometheus_client import CollectorRegistry

from topic_operator.k8s.process.metrics import Metrics

_SERIES_SUFFIXES: Final = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_count", "_sum")}

GRAFANA_INTERVALS: Final = re.compile(
    r"\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}"
)
"""Grafana's interval variables, which stand where PromQL wants a duration: replaced by one to parse."""


def exported_families() -> dict[str, frozenset[str]]:
    """Each metric family of the operator with the series names it exposes (a counter's ``_total``, a
    histogram's buckets, count and sum)."""
    families = {}
    for family in Metrics(CollectorRegistry()).registry.collect():
        suffixes = _SERIES_SUFFIXES.get(family.type)
        assert suffixes is not None, f"{family.name} is a {family.type}: say which series that type exposes"
        families[family.name] = frozenset(family.name + suffix for suffix in suffixes)
    return families


def deprecated_families() -> frozenset[str]:
    """The families kept under an earlier name (their help says ``Deprecated:``): not shown, not alerted on."""
    return frozenset(
        family.name
        for family in Metrics(CollectorRegistry()).registry.collect()
        if family.documentation.startswith("Deprecated:")
    )


def process_wide_families() -> frozenset[str]:
    """The families with no ``cluster`` label, which measure the operator's process as a whole: on a fresh
    registry a labelled family has no child yet and exports no sample, an unlabelled one exports its own."""
    return frozenset(
        family.name for family in Metrics(CollectorRegistry()).registry.collect() if family.samples
    )


def exported_series() -> frozenset[str]:
    return frozenset().union(*exported_families().values())


def selectors(expr: str) -> list[promql_parser.VectorSelector]:
    """The vector selectors of ``expr`` (Grafana's interval variables made durations); raises ``ValueError``
    when it does not parse."""
    found: list[promql_parser.VectorSelector] = []

    def visit(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            found.append(node)

    promql_parser.walk(promql_parser.parse(GRAFANA_INTERVALS.sub("5m", expr)), visit)
    return found


def metric_names(expr: str) -> frozenset[str]:
    """The metrics ``expr`` selects; raises ``ValueError`` when it does not parse, or selects by no name."""
    found = selectors(expr)
    unnamed = [str(selector) for selector in found if not selector.name]
    if unnamed:
        raise ValueError(f"{expr}: selects no metric by name ({', '.join(unnamed)})")
    return frozenset(selector.name for selector in found if selector.name)
