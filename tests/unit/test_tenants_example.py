"""The worked example of the site's tenants guide is one a platform team can apply: its KafkaCluster and KafkaTopic pass
``kto validate`` (the CRDs' schema and CEL rules, and the KafkaCluster's grants to the KafkaTopic's namespace),
and the grants say what the prose around them says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from topic_operator.cli.main import main
from topic_operator.tenants.grants import read_tenancy

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "tenants.md"


def _example() -> list[dict[str, Any]]:
    text = GUIDE.read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)
    return [yaml.safe_load(block) for block in blocks]


def test_the_worked_example_passes_kto_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    documents = _example()
    assert [d["kind"] for d in documents] == ["KafkaCluster", "KafkaTopic"]
    (tmp_path / "example.yaml").write_text(yaml.safe_dump_all(documents))
    assert main(["validate", str(tmp_path)]) == 0, capsys.readouterr().out
    assert "OK: 1 file, 2 documents: 1 cluster and 1 topic valid" in capsys.readouterr().out


def test_the_worked_example_grants_what_the_guide_says() -> None:
    cluster, topic = _example()
    tenancy = read_tenancy(cluster["metadata"]["namespace"], cluster["spec"]["tenants"])
    assert tenancy.problems == ()
    assert tenancy.grant_for("payments", {}) is tenancy.grants[0]
    assert tenancy.grant_for("clickstream", {"kto.dev/tenant": "analytics"}) is tenancy.grants[1]
    assert tenancy.grant_for("clickstream", {}) is None
    assert topic["spec"]["cluster"] == f"{cluster['metadata']['namespace']}/{cluster['metadata']['name']}"


def test_a_topic_of_the_example_outside_its_grant_fails_kto_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same check refuses the example once its topic breaks a limit: the test above can fail."""
    cluster, topic = _example()
    topic["spec"]["partitions"] = 96
    (tmp_path / "example.yaml").write_text(yaml.safe_dump_all([cluster, topic]))
    assert main(["validate", str(tmp_path)]) == 1
    assert "partitions 96 is above the most allowed, 48 (spec.tenants[0].limits.max.partitions)" in (
        capsys.readouterr().out
    )
