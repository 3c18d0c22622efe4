"""How every manifest and chart rendering is checked: built-in kinds against Kubernetes' own OpenAPI schemas
(kubernetes-validate, strict: unknown fields are errors), kto.dev objects against our CRDs' schemas (jsonschema,
as the API server's structural validation), and nothing accepted unchecked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import helm_python as helm
import jsonschema
import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "kafka-topic-operator"
KUBERNETES_VERSION = "1.30.0"
"""The release the chart objects are validated against: 1.30, the first with every object the chart renders (the admission policy; Chart.yaml says >=1.28, where the CRDs' validation rules gained reason and fieldPath)."""

_CRDS = {
    doc["spec"]["names"]["kind"]: doc
    for path in sorted((ROOT / "crds").glob("*.yaml"))
    for doc in [yaml.safe_load(path.read_text())]
}


def crd_schema(kind: str) -> Mapping[str, Any]:
    version = next(v for v in _CRDS[kind]["spec"]["versions"] if v["storage"])
    schema: Mapping[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def _structural(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The CRD schema as jsonschema reads it: unknown fields refused where the API server would prune them, the
    preserve-unknown-fields nodes left open, and metadata (validated by the API server itself) left open."""
    out: dict[str, Any] = {
        k: v for k, v in schema.items() if not k.startswith("x-kubernetes-") and k != "default"
    }
    if "properties" in schema:
        out["properties"] = {k: _structural(v) for k, v in schema["properties"].items()}
        if not schema.get("x-kubernetes-preserve-unknown-fields") and "additionalProperties" not in schema:
            out["additionalProperties"] = False
    if isinstance(schema.get("additionalProperties"), Mapping):
        out["additionalProperties"] = _structural(schema["additionalProperties"])
    if isinstance(schema.get("items"), Mapping):
        out["items"] = _structural(schema["items"])
    return out


def problems(document: Mapping[str, Any]) -> list[str]:
    """Why ``document`` would be refused (empty: it validates)."""
    api_version, kind = document.get("apiVersion", ""), document.get("kind", "")
    if api_version == "kto.dev/v1alpha1":
        validator = jsonschema.Draft4Validator(_structural(crd_schema(kind)))
        return [
            f"{kind} {'.'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(dict(document))
        ]
    if api_version == "monitoring.coreos.com/v1" and kind == "PrometheusRule":
        return _prometheus_rule_problems(document)
    if api_version == "monitoring.coreos.com/v1":
        return _service_monitor_problems(document)
    try:
        kubernetes_validate.validate(dict(document), KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{kind} {'.'.join(map(str, error.path))}: {error.message}"]
    except kubernetes_validate.SchemaNotFoundError as error:
        return [f"{api_version} {kind}: no schema to validate against ({error})"]
    return []


def _service_monitor_problems(document: Mapping[str, Any]) -> list[str]:
    """prometheus-operator's CRD is not built in: check the fields a ServiceMonitor needs to select our Service."""
    spec = document.get("spec") or {}
    found = []
    if document.get("kind") != "ServiceMonitor":
        found.append(f"unexpected kind {document.get('kind')}")
    if not (spec.get("selector") or {}).get("matchLabels"):
        found.append("ServiceMonitor spec.selector.matchLabels is required")
    if not all(isinstance(e, Mapping) and e.get("port") for e in spec.get("endpoints") or [None]):
        found.append("ServiceMonitor spec.endpoints need a port")
    return found


def _prometheus_rule_problems(document: Mapping[str, Any]) -> list[str]:
    """The shape prometheus-operator needs around the rules; the rules themselves are promtool's to check
    (tests/chart/test_monitoring_alerts.py)."""
    groups = (document.get("spec") or {}).get("groups")
    if not isinstance(groups, list) or not groups:
        return ["PrometheusRule spec.groups must be a list of rule groups"]
    return [
        f"PrometheusRule spec.groups.{i}: a group needs a name and a list of rules"
        for i, group in enumerate(groups)
        if not isinstance(group, Mapping) or not group.get("name") or not isinstance(group.get("rules"), list)
    ]


def documents(texts: Iterable[str]) -> list[dict[str, Any]]:
    return [doc for text in texts for doc in yaml.safe_load_all(text) if doc]


def render(values: dict[str, Any] | None = None) -> dict[str, str]:
    """The chart's templates rendered by Helm's own library, by file name."""
    with helm.Chart.load(CHART) as chart:
        return chart.render(values, name="kto", namespace="kafka-topic-operator", is_install=True)


def rendered_documents(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return documents(text for name, text in render(values).items() if name.endswith((".yaml", ".yml")))
