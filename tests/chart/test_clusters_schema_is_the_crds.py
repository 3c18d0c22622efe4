"""The chart's ``clusters`` value is checked as the KafkaCluster CRD checks a spec (``values.schema.json``'s entry
is made from the CRD: ``tools/docs_reference/chart_schema.py``): every field the CRD declares is a field the chart
takes, and the file holds what the CRD makes now."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tools.docs_reference.chart_schema import CRD, VALUES_SCHEMA, clusters_schema, values_schema

REPOSITORY = Path(__file__).resolve().parents[2]


def test_the_committed_schema_is_what_the_crd_makes() -> None:
    assert (REPOSITORY / VALUES_SCHEMA).read_text() == values_schema(REPOSITORY), (
        "values.schema.json's clusters entry is stale: run make docs-reference"
    )


def test_every_spec_field_of_the_crd_is_a_chart_field() -> None:
    crd = yaml.safe_load((REPOSITORY / CRD).read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    taken = clusters_schema(REPOSITORY)["items"]["properties"]
    assert set(spec) <= set(taken)
    assert taken["kafkaVersion"]["enum"] == spec["kafkaVersion"]["enum"]
    assert "x-kubernetes" not in json.dumps(taken)
