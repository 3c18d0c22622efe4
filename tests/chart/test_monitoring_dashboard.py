"""The Grafana dashboard: one JSON, shipped in the chart's opt-in ConfigMap that Grafana's sidecar loads
by its label and under manifests/monitoring/; held to Grafana's dashboard schema (grafana-foundation-sdk's model),
every query parsed as PromQL and naming only metrics the operator exports, every metric shown, per KafkaCluster."""

from __future__ import annotations

import json
from typing import Any

import pytest
from grafana_schema import schema_problems
from monitoring import (
    deprecated_families,
    exported_families,
    exported_series,
    metric_names,
    process_wide_families,
    selectors,
)
from validation import CHART, ROOT, problems, rendered_documents

SOURCE = CHART / "files" / "grafana-dashboard.json"
PLAIN = ROOT / "manifests" / "monitoring" / "dashboards" / "kafka-topic-operator.json"


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SOURCE.read_text())
    return loaded


def targets(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for panel in board["panels"] for t in panel.get("targets", ())]


def test_the_configmap_is_opt_in_and_carries_the_dashboard_with_the_sidecars_label() -> None:
    assert [d for d in rendered_documents() if d["kind"] == "ConfigMap"] == []
    (configmap,) = [
        d
        for d in rendered_documents({"metrics": {"grafanaDashboard": {"enabled": True}}})
        if d["kind"] == "ConfigMap"
    ]
    assert problems(configmap) == []
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert configmap["metadata"]["namespace"] == "kafka-topic-operator"
    assert configmap["data"] == {"kafka-topic-operator.json": SOURCE.read_text().rstrip("\n")}


def test_the_plain_copy_is_byte_identical() -> None:
    assert PLAIN.read_bytes() == SOURCE.read_bytes()


def test_the_dashboard_fits_grafanas_schema() -> None:
    assert schema_problems(dashboard()) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("graphTooltip",), 7),
        (("panels", 2, "gridPos", "h"), "tall"),
        (("panels", 2, "fieldConfig", "defaults", "custom", "drawStyle"), "zigzag"),
        (("panels", 2, "type"), "fancychart"),
        (("panels", 2, "tragets"), []),
    ],
)
def test_the_schema_check_refuses_what_grafanas_schema_does_not_have(
    path: tuple[Any, ...], value: Any
) -> None:
    board = dashboard()
    node = board
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert schema_problems(board) != []


def test_every_query_parses_and_names_only_exported_metrics() -> None:
    exported = exported_series()
    for target in targets(dashboard()):
        named = metric_names(target["expr"])
        assert named, target["expr"]
        assert named <= exported, (target["expr"], sorted(named - exported))


def test_every_metric_the_operator_exports_is_shown() -> None:
    """Every family but a deprecated one, which stays exported under its old name for dashboards written against
    it while this one shows its successor."""
    shown = {name for target in targets(dashboard()) for name in metric_names(target["expr"])}
    deprecated = deprecated_families()
    assert deprecated <= set(exported_families())
    assert {family for family, series in exported_families().items() if not series & shown} == deprecated


def test_every_query_is_per_kafkacluster() -> None:
    """Each selector keeps to the KafkaClusters chosen in the dashboard's ``cluster`` variable, and each series
    is named by its cluster; a metric of the process as a whole, which has no cluster, is drawn per operator
    process (Prometheus' ``instance``)."""
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert variables["cluster"]["multi"]
    assert variables["cluster"]["includeAll"]
    process_wide = {
        series
        for family, names in exported_families().items()
        if family in process_wide_families()
        for series in names
    }
    for target in targets(dashboard()):
        if metric_names(target["expr"]) <= process_wide:
            assert "{{instance}}" in target["legendFormat"], target["expr"]
            continue
        assert "{{cluster}}" in target["legendFormat"], target["expr"]
        for selector in selectors(target["expr"]):
            matchers = {(m.name, m.value) for m in selector.matchers.matchers}
            assert ("cluster", "$cluster") in matchers, target["expr"]


def test_only_the_event_loop_lag_is_process_wide() -> None:
    """The exemption above is for what truly has no cluster: a family that gains one loses it."""
    assert process_wide_families() == {"kto_event_loop_lag_seconds"}
