"""The chart's ``clusters`` value, checked as the KafkaCluster CRD checks a KafkaCluster's spec: its
``values.schema.json`` entry is made from the CRD, so a field the CRD gains (``bootstrapServers``, ``tls``,
``sasl``, ``tenants``, a release line) is a field the chart takes, and a value the API server would refuse is
refused by ``helm install`` first.

Each item is ``name``, an optional ``namespace`` (the release's by default) and the fields of ``spec`` as the CRD
declares them, with what JSON Schema has no words for left out (the ``x-kubernetes-*`` keys; their CEL rules are
the API server's), and no field the CRD does not declare. One rule is added that the CRD leaves to the operator: Kafka 4 has no ZooKeeper, so a cluster
that declares ``zookeeper`` cannot declare a 4.x ``kafkaVersion``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

CRD = Path("crds") / "kafkaclusters.kto.dev.yaml"
VALUES_SCHEMA = Path("helm") / "kafka-topic-operator" / "values.schema.json"

_NAME = {
    "type": "string",
    "description": "The KafkaCluster's name.",
    "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
}
_NAMESPACE = {"type": "string", "description": "The KafkaCluster's namespace (default: the release's)."}


def clusters_schema(repository: Path) -> dict[str, Any]:
    """The ``clusters`` entry of ``values.schema.json``, from the CRD."""
    crd = yaml.safe_load((repository / CRD).read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    fields = _json_schema(spec["properties"])
    without_zookeeper = [v for v in spec["properties"]["kafkaVersion"]["enum"] if int(v.split(".")[0]) >= 4]
    item: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["name"],
        "properties": {"name": _NAME, "namespace": _NAMESPACE, **fields},
        "anyOf": spec["anyOf"],
        "if": {"required": ["zookeeper"]},
        "then": {"properties": {"kafkaVersion": {"not": {"enum": without_zookeeper}}}},
    }
    return {"type": "array", "description": "KafkaCluster objects to create with the release.", "items": item}


def values_schema(repository: Path) -> str:
    """``values.schema.json`` with its ``clusters`` entry made from the CRD (the rest as written), as its file
    holds it."""
    schema = json.loads((repository / VALUES_SCHEMA).read_text())
    schema["properties"]["clusters"] = clusters_schema(repository)
    return json.dumps(schema, indent=2) + "\n"


def _json_schema(node: Any) -> Any:
    """``node`` without the keys JSON Schema does not know (``x-kubernetes-*``), every object with declared
    properties closed to others: the API server would drop an unknown field silently, and ``kubectl`` refuses it
    (strict field validation), so the chart refuses a misspelt key too."""
    if isinstance(node, dict):
        schema = {
            key: _json_schema(value) for key, value in node.items() if not key.startswith("x-kubernetes-")
        }
        if "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
        return schema
    if isinstance(node, list):
        return [_json_schema(value) for value in node]
    return node
