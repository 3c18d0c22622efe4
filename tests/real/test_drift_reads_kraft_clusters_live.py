"""``kto drift --clusters`` reads a KRaft cluster live through its brokers, as ``kto snapshot --bootstrap-server``
reads it, beside a cluster that cannot be reached: the fleet needs no snapshot files for its KRaft clusters."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.kraft_cluster import KRaftCluster
from topic_operator.access.address import ClusterAddress
from topic_operator.access.stores import opened_store
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.cli.main import main as kto
from topic_operator.drift.command import main as drift
from topic_operator.snapshot_rows import rows_from_cluster
from topic_operator.testing.local_server import free_port

pytestmark = pytest.mark.timeout(300)


def cluster(name: str, servers: str) -> dict[str, Any]:
    return {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster", "metadata": {"name": name},
            "spec": {"bootstrapServers": servers}}  # fmt: skip


def topic(name: str, partitions: int, config: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": {"name": name},
            "spec": {"cluster": "kraft-live", "partitions": partitions, "replicas": 3, "config": config}}  # fmt: skip


def untimed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({k: v for k, v in r.items() if k != "taken_at"} for r in rows), key=lambda r: r["topic"] or ""
    )


def test_a_fleet_with_a_kraft_cluster_is_read_live(
    kraft: KRaftCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suffix = uuid.uuid4().hex[:6]
    kept, changed, missing = f"live-kept-{suffix}", f"live-changed-{suffix}", f"live-missing-{suffix}"
    created = tmp_path / "created.yaml"
    created.write_text(yaml.safe_dump_all([
        cluster("kraft-live", kraft.bootstrap_servers),
        topic(kept, 2, {"retention.ms": "3600000"}),
        topic(changed, 1, {"retention.ms": "3600000"}),
    ]))  # fmt: skip
    assert kto(["apply", "-f", str(created), "--yes"]) == 0

    desired = tmp_path / "desired.yaml"
    desired.write_text(yaml.safe_dump_all([
        topic(kept, 2, {"retention.ms": "3600000"}),
        topic(changed, 1, {"retention.ms": "7200000"}),
        topic(missing, 1, {}),
    ]))  # fmt: skip
    inventory = tmp_path / "fleet.yaml"
    inventory.write_text(yaml.safe_dump_all([
        cluster("kraft-live", kraft.bootstrap_servers),
        cluster("gone", f"127.0.0.1:{free_port()}"),
    ]))  # fmt: skip
    out = tmp_path / "out"
    code = drift([
        "--desired", str(desired), "--clusters", str(inventory), "--out", str(out),
        "--engine", "processes", "--processes", "2", "--connect-timeout", "3", "-q",
    ])  # fmt: skip
    assert code == 2, capsys.readouterr().err

    summary = json.loads((out / "summary.json").read_text())
    by_name = {c["name"]: c for c in summary["clusters"]}
    assert by_name["kraft-live"]["observed"] is True
    assert by_name["gone"]["observed"] is False
    assert by_name["gone"]["unobserved_reason"]

    plan = json.loads((out / "plans" / "kraft-live.json").read_text())
    statuses = {t["topic"]: t["status"] for t in plan["topics"]}
    assert statuses[kept] == "unchanged"
    assert statuses[changed] == "change"
    assert statuses[missing] == "create"

    # The plan file is what kto plan prints against the snapshot the job saved, less its manifest errors: the
    # migration's writer included (a live read through the brokers decides it).
    saved_snapshot = next((out / "snapshots" / "cluster=kraft-live").glob("part-*"))
    capsys.readouterr()
    assert kto([
        "plan", "-f", str(inventory), "-f", str(desired), "--cluster", "kraft-live",
        "--snapshot", str(saved_snapshot), "-o", "json",
    ]) == 2  # changes to make  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert printed.pop("manifest_errors") == []
    assert printed["writes"] is not None
    assert plan == printed

    # What the job read is what the same way in reads for kto snapshot, row for row.
    address = ClusterAddress(
        brokers=AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    )
    with opened_store(address, deadline=30) as store:
        state = store.read_cluster(partition_states=True)
    saved = [
        json.loads(line)
        for part in sorted((out / "snapshots").glob("cluster=kraft-live/*"))
        for line in part.read_text().splitlines()
    ]
    mine = [r for r in saved if r["topic"] in (kept, changed, missing)]
    fresh = [r for r in rows_from_cluster("kraft-live", state, "t") if r["topic"] in (kept, changed, missing)]
    assert untimed(mine) == untimed(fresh)
    assert {r["topic"] for r in mine} == {kept, changed}
