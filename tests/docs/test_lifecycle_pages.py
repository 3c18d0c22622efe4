"""The lifecycle pages say what the files say: the supported versions as ``pyproject.toml``, the chart and the
release catalogue state them, and the names and paths the upgrade and uninstall steps use as the product has them.
A page that drifts from its source fails here, naming the fact."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from topic_operator.k8s.handlers import FINALIZER
from topic_operator.k8s.kafkatopics.admission import CONFIGURATION
from topic_operator.kafka.releases import ALL_KAFKA_VERSIONS, KAFKA_VERSIONS, KRAFT_MIGRATION, format_version

ROOT = Path(__file__).resolve().parents[2]
LIFECYCLE = ROOT / "docs" / "lifecycle"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

pytestmark = pytest.mark.timeout(30)


def _row(label: str) -> str:
    """The supported-versions table's row for ``label``, its cells joined."""
    for line in (LIFECYCLE / "compatibility.md").read_text().splitlines():
        if line.startswith(f"| {label} |"):
            return line
    raise AssertionError(f"no row {label!r} in compatibility.md")


def _requirement(name: str) -> str:
    (found,) = [d for d in PROJECT["dependencies"] if re.match(rf"{re.escape(name)}(\[.*\])?[<>=]", d)]
    return found


def test_python_and_the_libraries_are_those_of_pyproject() -> None:
    assert PROJECT["requires-python"] == ">=3.11"
    assert "| 3.11 and later |" in _row("Python")
    assert _requirement("kafka-python") == "kafka-python>=3.0.12,<3.1"
    assert "| 3.0.12 to 3.0.x " in _row("kafka-python")
    assert _requirement("kazoo") == "kazoo[sasl]>=2.11"
    assert "| 2.11 and later |" in _row("kazoo")
    assert _requirement("kopf") == "kopf>=1.37"
    assert "| 1.37 and later |" in _row("kopf")


def test_kubernetes_is_what_the_chart_and_the_crds_need() -> None:
    chart = yaml.safe_load((ROOT / "helm" / "kafka-topic-operator" / "Chart.yaml").read_text())
    assert chart["kubeVersion"] == ">=1.28.0-0"
    assert "| 1.28 and later (the CRDs' validation rules use `reason` and `fieldPath`)" in _row("Kubernetes")
    crds = "".join(path.read_text() for path in (ROOT / "crds").glob("*.yaml"))
    assert "fieldPath:" in crds
    assert (
        "reason:" in crds
    )  # Kubernetes 1.28's fields of a validation rule: an older API server refuses the CRD
    policy = (ROOT / "manifests" / "admission-policy" / "policy.yaml").read_text()
    assert (
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy" in policy
    )  # GA in 1.30
    assert "the admission policy needs 1.30" in _row("Kubernetes")


def test_kafka_is_the_catalogues() -> None:
    first, last = format_version(ALL_KAFKA_VERSIONS[0]), format_version(ALL_KAFKA_VERSIONS[-1])
    zookeeper_last = format_version(KAFKA_VERSIONS[-1])
    row = _row("Apache Kafka")
    assert f"| {first} to {last}: ZooKeeper mode {first} to {zookeeper_last}," in row
    assert f"the migration {format_version(KRAFT_MIGRATION)} to {zookeeper_last}" in row


def test_the_upgrade_and_uninstall_steps_name_what_the_product_has() -> None:
    upgrade = (LIFECYCLE / "upgrade.md").read_text()
    uninstall = (LIFECYCLE / "uninstall.md").read_text()
    for path in re.findall(r"(?:manifests|helm)/[\w./-]+", upgrade + uninstall):
        assert (ROOT / path.rstrip(".")).exists(), path
    assert f"`{FINALIZER}`" in uninstall
    assert f"mutatingwebhookconfiguration {CONFIGURATION}" in uninstall
    assert f"mutatingwebhookconfiguration {CONFIGURATION}" in upgrade
    crd_names = sorted(
        yaml.safe_load(p.read_text())["metadata"]["name"] for p in (ROOT / "crds").glob("*.yaml")
    )
    assert f"kubectl delete crd {' '.join(reversed(crd_names))}" in uninstall
