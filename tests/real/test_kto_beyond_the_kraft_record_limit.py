"""``kto apply`` and ``kto plan`` of more than a KRaft controller takes in one operation, on real brokers.

A KRaft controller refuses any single request that needs more than 10,000 metadata records ("Unable to perform
excessively large batch operation"), and a topic costs one record, one per partition and one per override. Here
2,000 topics of one partition and 12 overrides (28,000 records, the bound nearly three times over) are created by
one ``kto apply``, six overrides of each are then changed by another (12,000 records), and a plan afterwards has
nothing to do. A topic that alone needs more than the bound is refused in the plan in the controller's words,
and nothing of it is written. The topics are deleted at the end: the cluster is the session's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.kraft_cluster import KRaftCluster
from harness.kto_objects import write_manifests
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import connected
from topic_operator.admin.reader import read_cluster

pytestmark = pytest.mark.timeout(300)

KTO = str(Path(sys.executable).parent / "kto")
TOPICS = 2_000
CREATED = {
    "retention.ms": "3600000",
    "retention.bytes": "1073741824",
    "segment.ms": "600000",
    "segment.bytes": "16777216",
    "cleanup.policy": "compact",
    "max.message.bytes": "2097152",
    "flush.messages": "100000",
    "flush.ms": "60000",
    "delete.retention.ms": "3600000",
    "min.compaction.lag.ms": "1000",
    "file.delete.delay.ms": "30000",
    "index.interval.bytes": "8192",
}
CHANGED = {
    **CREATED,
    "retention.ms": "7200000",
    "segment.ms": "900000",
    "flush.messages": "200000",
    "flush.ms": "90000",
    "delete.retention.ms": "7200000",
    "min.compaction.lag.ms": "2000",
}


def _kto(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KTO, *arguments], capture_output=True, text=True, timeout=180, check=False)


def _manifest(path: Path, servers: str, topics: dict[str, dict[str, Any]]) -> Path:
    return write_manifests(path, "big", {"bootstrapServers": servers, "kafkaVersion": "3.9"}, topics)


@pytest.fixture
def names(kraft: KRaftCluster) -> Iterator[list[str]]:
    prefix = f"big-{uuid.uuid4().hex[:6]}"
    created = [f"{prefix}-{i:04d}" for i in range(TOPICS)]
    yield created
    settings = AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    with connected(settings, deadline=60) as admin:
        present = set(admin.list_topics())
        leftover = [n for n in created if n in present]
        for start in range(0, len(leftover), 500):
            admin.delete_topics(leftover[start : start + 500], timeout_ms=60_000)


def test_an_apply_larger_than_one_controller_operation_is_split_and_lands_whole(
    kraft: KRaftCluster, names: list[str], tmp_path: Path
) -> None:
    servers = kraft.bootstrap_servers
    declared = {n: {"partitions": 1, "replicas": 1, "config": dict(CREATED)} for n in names}
    created = _kto("apply", "-f", str(_manifest(tmp_path / "create.yaml", servers, declared)), "--yes")
    assert created.returncode == 0, created.stdout[-3000:] + created.stderr[-3000:]
    assert "excessively large" not in created.stdout + created.stderr

    changed_declaration = {n: {**spec, "config": dict(CHANGED)} for n, spec in declared.items()}
    manifest = _manifest(tmp_path / "change.yaml", servers, changed_declaration)
    changed = _kto("apply", "-f", str(manifest), "--yes")
    assert changed.returncode == 0, changed.stdout[-3000:] + changed.stderr[-3000:]

    # kto apply reports the controller's answers; each broker applies its records at its own pace, and the
    # brokers answer DescribeConfigs from their own copy: read until all agree, or 30 s.
    settings = AdminSettings(bootstrap_servers=tuple(servers.split(",")))
    give_up = time.monotonic() + 30
    with connected(settings, deadline=60) as admin:
        while True:
            state = read_cluster(admin, configs_of=names)
            missing = [n for n in names if n not in state.topics]
            wrong = {n: dict(state.topics[n].config) for n in names if n in state.topics}
            wrong = {n: config for n, config in wrong.items() if config != CHANGED}
            if (not missing and not wrong) or time.monotonic() >= give_up:
                break
            time.sleep(0.5)
    assert missing == []
    assert wrong == {}, f"{len(wrong)} topics hold other overrides, e.g. {next(iter(wrong.items()), None)}"

    planned = _kto("plan", "-f", str(manifest), "-o", "json")
    assert planned.returncode == 0, planned.stdout[-3000:] + planned.stderr[-3000:]
    topics = json.loads(planned.stdout)["topics"]
    assert len(topics) == TOPICS
    assert [t["name"] for t in topics if t["actions"]] == []


def test_a_topic_that_alone_exceeds_the_bound_is_refused_in_the_plan_and_not_written(
    kraft: KRaftCluster, tmp_path: Path
) -> None:
    name = f"huge-{uuid.uuid4().hex[:6]}"
    manifest = _manifest(
        tmp_path / "huge.yaml", kraft.bootstrap_servers, {name: {"partitions": 10_000, "replicas": 1}}
    )
    planned = _kto("plan", "-f", str(manifest), "-o", "json")
    assert planned.returncode != 0
    assert "Unable to perform excessively large batch operation" in planned.stdout + planned.stderr
    applied = _kto("apply", "-f", str(manifest), "--yes")
    assert applied.returncode != 0
    assert "Unable to perform excessively large batch operation" in applied.stdout + applied.stderr
    settings = AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    with connected(settings, deadline=60) as admin:
        assert name not in set(admin.list_topics())
