"""Each release's rules against the real brokers of that release (3.3.1 and 3.9.0 in ``../shared/servers``): the
brokers decide.

- Topic configs: each case goes to the brokers as a CreateTopics request with ``validate_only`` (the controller
  runs Kafka's own topic-config checks and writes nothing) and to ``kto validate`` with the KafkaCluster's
  ``kafkaVersion`` of the brokers' line. The two must agree on what is accepted; where kto refuses something the
  brokers take, that must be a refusal the catalogue marks stricter than Kafka (none of these cases).
- The cluster's release as kto reads it from ZooKeeper: the bounds it shows contain the brokers' release, and a
  declaration the znodes contradict is warned about, naming both.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka.errors import KafkaError

from harness.kafka_clients import admin_client
from harness.real_kafka import KafkaBrokers

pytestmark = pytest.mark.timeout(240)

KTO = str(Path(sys.executable).parent / "kto")

CASES: dict[str, dict[str, str]] = {
    "gzip-level-9": {"compression.type": "gzip", "compression.gzip.level": "9"},  # a key of 3.8
    "gzip-level-10": {"compression.gzip.level": "10"},
    "zstd-level-22": {"compression.zstd.level": "22"},
    "lz4-level-18": {"compression.lz4.level": "18"},
    "remote-storage": {"remote.storage.enable": "true"},  # tiered storage is off on these brokers
    "remote-copy-disable": {"remote.log.copy.disable": "true"},  # a key of 3.9
    "remote-delete-on-disable": {"remote.log.delete.on.disable": "true"},
    "local-retention": {"local.retention.ms": "1000", "retention.ms": "500"},
    "format-3.0": {"message.format.version": "3.0"},
    "format-3.0-iv1": {"message.format.version": "3.0-IV1"},
    "format-0.10.0": {"message.format.version": "0.10.0"},
    "format-bogus": {"message.format.version": "9.9"},
    "min-isr-0": {"min.insync.replicas": "0"},
    "segment-13": {"segment.bytes": "13"},
    "segment-14": {"segment.bytes": "14"},
    "segment-index-3": {"segment.index.bytes": "3"},
    "retention-minus-2": {"retention.ms": "-2"},
    "retention-bytes-minus-1": {"retention.bytes": "-1"},
    "compact-delete": {"cleanup.policy": "compact,delete"},
    "cleanup-bogus": {"cleanup.policy": "bogus"},
    "compaction-lags-crossed": {"min.compaction.lag.ms": "2000", "max.compaction.lag.ms": "1000"},
    "throttled-star": {"leader.replication.throttled.replicas": "*"},
    "throttled-list": {"follower.replication.throttled.replicas": "0:1,1:2"},
    "throttled-bad": {"follower.replication.throttled.replicas": "0-1"},
    "timestamp-log-append": {"message.timestamp.type": "LogAppendTime"},
    "timestamp-bogus": {"message.timestamp.type": "WallClock"},
    "timestamp-before-max": {"message.timestamp.before.max.ms": "1000"},  # a key of 3.6
    "timestamp-difference": {"message.timestamp.difference.max.ms": "-1"},
    "unclean-yes": {"unclean.leader.election.enable": "yes"},
    "unknown-key": {"no.such.config": "1"},
    "preallocate": {"preallocate": "true"},
    "index-interval-negative": {"index.interval.bytes": "-1"},
    "down-conversion-off": {"message.downconversion.enable": "false"},
}


def _brokers_accept(kafka: KafkaBrokers) -> dict[str, str | None]:
    """Each case's answer from the brokers: None when accepted, else their error."""
    answers: dict[str, str | None] = {}
    with admin_client(kafka.bootstrap_servers) as admin:
        for case, config in CASES.items():
            topic = {"num_partitions": 1, "replication_factor": 3, "configs": config}
            try:
                admin.create_topics({f"case-{case}": topic}, validate_only=True, timeout_ms=30_000)
            except KafkaError as error:
                answers[case] = f"{type(error).__name__}: {error}"
            else:
                answers[case] = None
    return answers


def _manifest(path: Path, kafka: KafkaBrokers, declared: str) -> Path:
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "kto.dev/v1alpha1",
            "kind": "KafkaCluster",
            "metadata": {"name": "real"},
            "spec": {"zookeeper": {"connect": kafka.connect_string}, "kafkaVersion": declared},
        }
    ]
    documents += [
        {
            "apiVersion": "kto.dev/v1alpha1",
            "kind": "KafkaTopic",
            "metadata": {"name": f"case-{case}"},
            "spec": {"cluster": "real", "partitions": 1, "replicas": 3, "config": config},
        }
        for case, config in CASES.items()
    ]
    path.write_text(yaml.safe_dump_all(documents))
    return path


def _kto_refusals(manifest: Path) -> dict[str, str]:
    """Each refused case with kto's message (``kto validate`` prints one line per error, naming the object)."""
    done = subprocess.run(
        [KTO, "validate", str(manifest)], capture_output=True, text=True, timeout=60, check=False
    )
    refusals: dict[str, str] = {}
    for line in done.stdout.splitlines():
        found = re.search(r"KafkaTopic case-([\w.-]+): (.*)$", line)
        if found:
            refusals[found.group(1)] = found.group(2)
    assert refusals or done.returncode == 0, done.stdout + done.stderr
    return refusals


def test_kto_accepts_and_refuses_topic_configs_as_the_real_brokers_of_its_release_do(
    kafka: KafkaBrokers, tmp_path: Path
) -> None:
    brokers = _brokers_accept(kafka)
    kto = _kto_refusals(_manifest(tmp_path / "cases.yaml", kafka, kafka.distribution.line))
    disagreements = {
        case: {"brokers": brokers[case] or "accepted", "kto": kto.get(case, "accepted")}
        for case in CASES
        if (brokers[case] is None) != (case not in kto)
    }
    assert disagreements == {}, json.dumps(disagreements, indent=2)
    # Both sides refuse something: the cases test the rules, not an empty agreement.
    assert 0 < len(kto) < len(CASES)


def test_kto_reads_the_real_brokers_release_and_warns_about_a_declaration_they_contradict(
    kafka: KafkaBrokers, tmp_path: Path
) -> None:
    line = tuple(int(part) for part in kafka.distribution.line.split("."))
    # A topic kto writes, so that the topic znodes of this release are among the clues.
    created = _manifest(tmp_path / "one.yaml", kafka, kafka.distribution.line)
    documents = list(yaml.safe_load_all(created.read_text()))[:2]
    created.write_text(yaml.safe_dump_all([documents[0], {**documents[1], "spec": {
        "cluster": "real", "partitions": 1, "replicas": 3}}]))  # fmt: skip
    done = subprocess.run([KTO, "apply", "-f", str(created), "--yes"], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    planned = subprocess.run([KTO, "plan", "-f", str(created), "-o", "json"], capture_output=True, text=True,
                             timeout=60, check=False)  # fmt: skip
    assert planned.returncode == 0, planned.stdout + planned.stderr
    release = json.loads(planned.stdout)["kafka_release"]
    low, high = _bounds(release["seen"])
    assert low is not None, release
    assert low <= line, release
    assert high is None or line <= high, release
    assert release["warning"] is None, release

    # A declaration older than what the znodes show: warned about, naming both.
    declared = "2.3"
    stale = tmp_path / "stale.yaml"
    stale.write_text(created.read_text().replace(f"kafkaVersion: '{kafka.distribution.line}'",
                                                 f"kafkaVersion: '{declared}'"))  # fmt: skip
    assert f"kafkaVersion: '{declared}'" in stale.read_text()
    stale_plan = subprocess.run([KTO, "plan", "-f", str(stale)], capture_output=True, text=True, timeout=60,
                                check=False)  # fmt: skip
    assert f"kafkaVersion {declared} is declared, but ZooKeeper shows Kafka" in stale_plan.stderr, (
        stale_plan.stderr
    )


def _bounds(seen: str) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """("2.8 or later" | "3.3 or earlier" | "2.8 to 3.3" | "3.4" | "unknown") as (lowest, highest) release."""

    def line(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("."))

    if seen == "unknown":
        return None, None
    if seen.endswith(" or later"):
        return line(seen.removesuffix(" or later")), None
    if seen.endswith(" or earlier"):
        return None, line(seen.removesuffix(" or earlier"))
    low, _, high = seen.partition(" to ")
    return line(low), line(high or low)
