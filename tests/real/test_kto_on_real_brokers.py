"""``kto`` against three real Kafka brokers of every distribution found (3.3.1 and 3.9.0 in ``../shared/servers``).

What ZooKeeper-only tests cannot show: that the brokers take what kto writes. Every partition of a created topic
gets a leader and carries records; growth keeps the topic's id in each log directory's ``partition.metadata``;
a config change is processed by every broker (its log says so, and DescribeConfigs answers it); a replication
factor change is carried out by the real controller under the throttles kto sets, which are removed afterwards;
an export of the real cluster plans nothing; and kto keeps working when the controller moves.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.kafka_clients import partitions, round_trip, topic_config, wait_for_leaders
from harness.real_kafka import KafkaBrokers
from harness.waiting import eventually
from harness.zookeeper import connected
from topic_operator.zookeeper.znodes import TopicConfigZNode, TopicZNode

pytestmark = pytest.mark.timeout(240)

KTO = str(Path(sys.executable).parent / "kto")


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _manifests(path: Path, kafka: KafkaBrokers, topics: dict[str, dict[str, Any]], **cluster: Any) -> Path:
    """A KafkaCluster ``real`` of this Kafka's release line and one KafkaTopic per entry."""
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "kto.dev/v1alpha1",
            "kind": "KafkaCluster",
            "metadata": {"name": "real"},
            "spec": {
                "zookeeper": {"connect": kafka.connect_string},
                "kafkaVersion": kafka.distribution.line,
                **cluster,
            },
        }
    ]
    for name, spec in topics.items():
        documents.append(
            {
                "apiVersion": "kto.dev/v1alpha1",
                "kind": "KafkaTopic",
                "metadata": {"name": name},
                "spec": {"cluster": "real", **spec},
            }
        )
    path.write_text(yaml.safe_dump_all(documents))
    return path


def kto(*argv: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KTO, *argv], capture_output=True, text=True, timeout=timeout, check=False)


def _apply(manifests: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = kto("apply", "-f", str(manifests), "--yes", *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _overrides(kafka: KafkaBrokers, broker_id: int, entity: str) -> list[str]:
    """The configs (as the broker logs them) of every change notification of ``entity`` that this broker
    processed, in order: ``Processing override for entityPath: topics/t with config: HashMap(k -> v)``."""
    marker = f"Processing override for entityPath: {entity} with config: "
    return [line.split(marker, 1)[1] for line in kafka.log_lines(broker_id, marker)]


def _processed_by(kafka: KafkaBrokers, entity: str, needle: str) -> set[int]:
    """The brokers that processed a change of ``entity`` whose config carries ``needle``."""
    return {
        b.id for b in kafka.brokers if any(needle in config for config in _overrides(kafka, b.id, entity))
    }


def test_created_topics_get_a_leader_on_every_partition_and_carry_records(
    kafka: KafkaBrokers, tmp_path: Path
) -> None:
    wide, narrow = _name("orders"), _name("audit")
    manifests = _manifests(tmp_path / "topics.yaml", kafka, {
        wide: {"partitions": 6, "replicas": 3, "config": {"retention.ms": 3600000}},
        narrow: {"partitions": 3, "replicas": 2, "config": {"cleanup.policy": "compact"}},
    })  # fmt: skip
    _apply(manifests)

    for topic, count, factor in ((wide, 6, 3), (narrow, 3, 2)):
        served = wait_for_leaders(kafka.bootstrap_servers, topic, count)
        with connected(kafka.connect_string) as zk:
            written = TopicZNode.decode(topic, zk.get(TopicZNode.path(topic))[0])
        assert {p: info.replicas for p, info in served.items()} == {
            p: tuple(r) for p, r in written.partitions.items()
        }
        assert all(len(info.replicas) == factor for info in served.values())
        # Rack-aware placement: each partition's replicas span distinct racks (a, b, c).
        racks = {b.id: b.rack for b in kafka.brokers}
        assert all(len({racks[r] for r in info.replicas}) == factor for info in served.values())
        round_trip(kafka.bootstrap_servers, topic, count)
    assert topic_config(kafka.bootstrap_servers, wide) == {"retention.ms": "3600000"}
    assert topic_config(kafka.bootstrap_servers, narrow) == {"cleanup.policy": "compact"}


def _topic_ids_on_disk(kafka: KafkaBrokers, topic: str) -> dict[str, str]:
    """``<broker>/<partition dir>`` -> the ``topic_id`` of its ``partition.metadata`` (written by 2.8+ brokers)."""
    found = {}
    for broker in kafka.brokers:
        for metadata in broker.log_dir.glob(f"{topic}-*/partition.metadata"):
            fields = dict(line.split(": ", 1) for line in metadata.read_text().splitlines() if ": " in line)
            found[f"{broker.id}/{metadata.parent.name}"] = fields["topic_id"]
    return found


def test_growth_keeps_the_topic_id_in_every_log_directory(kafka: KafkaBrokers, tmp_path: Path) -> None:
    topic = _name("grow")
    _apply(_manifests(tmp_path / "v1.yaml", kafka, {topic: {"partitions": 3, "replicas": 3}}))
    wait_for_leaders(kafka.bootstrap_servers, topic, 3)
    with connected(kafka.connect_string) as zk:
        topic_id = TopicZNode.decode(topic, zk.get(TopicZNode.path(topic))[0]).topic_id
    assert topic_id
    before = eventually(lambda: _topic_ids_on_disk(kafka, topic) if len(_topic_ids_on_disk(kafka, topic)) == 9
                        else None, timeout=30, what="partition.metadata of 3 partitions on 3 brokers")  # fmt: skip
    assert set(before.values()) == {topic_id}

    _apply(_manifests(tmp_path / "v2.yaml", kafka, {topic: {"partitions": 6, "replicas": 3}}))
    wait_for_leaders(kafka.bootstrap_servers, topic, 6)
    after = eventually(lambda: _topic_ids_on_disk(kafka, topic) if len(_topic_ids_on_disk(kafka, topic)) == 18
                       else None, timeout=30, what="partition.metadata of 6 partitions on 3 brokers")  # fmt: skip
    assert set(after.values()) == {topic_id}, "a new partition got another topic id"
    with connected(kafka.connect_string) as zk:
        assert TopicZNode.decode(topic, zk.get(TopicZNode.path(topic))[0]).topic_id == topic_id
    round_trip(kafka.bootstrap_servers, topic, 6)


def test_a_config_change_is_processed_by_every_broker(kafka: KafkaBrokers, tmp_path: Path) -> None:
    topic = _name("conf")
    _apply(_manifests(tmp_path / "v1.yaml", kafka, {topic: {"partitions": 3, "replicas": 3,
                                                            "config": {"retention.ms": 3600000}}}))  # fmt: skip
    wait_for_leaders(kafka.bootstrap_servers, topic, 3)
    with connected(kafka.connect_string) as zk:
        notifications = set(zk.get_children("/config/changes"))

    _apply(_manifests(tmp_path / "v2.yaml", kafka, {topic: {"partitions": 3, "replicas": 3,
                                                            "config": {"retention.ms": 7200000}}}))  # fmt: skip
    with connected(kafka.connect_string) as zk:
        assert len(set(zk.get_children("/config/changes")) - notifications) == 1, "one notification"
        assert TopicConfigZNode.decode(topic, zk.get(TopicConfigZNode.path(topic))[0]) == {
            "retention.ms": "7200000"
        }
    every = {b.id for b in kafka.brokers}
    eventually(lambda: _processed_by(kafka, f"topics/{topic}", "retention.ms -> 7200000") == every, timeout=30,
               what=f"every broker's log processing the new retention.ms of {topic}")  # fmt: skip
    assert topic_config(kafka.bootstrap_servers, topic) == {"retention.ms": "7200000"}


def test_a_partition_decrease_is_refused_in_kafkas_words_and_nothing_is_written(
    kafka: KafkaBrokers, tmp_path: Path
) -> None:
    topic = _name("shrink")
    _apply(_manifests(tmp_path / "v1.yaml", kafka, {topic: {"partitions": 4, "replicas": 2}}))
    wait_for_leaders(kafka.bootstrap_servers, topic, 4)
    with connected(kafka.connect_string) as zk:
        before = zk.get(TopicZNode.path(topic))
        notifications = zk.get_children("/config/changes")

    refused = kto("apply", "-f", str(_manifests(tmp_path / "v2.yaml", kafka, {topic: {"partitions": 2, "replicas": 2}})),
                  "--yes")  # fmt: skip
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert (
        "InvalidPartitionsException: The number of partitions for a topic can only be increased. "
        f"Topic {topic} currently has 4 partitions, 2 would not be an increase."
    ) in refused.stdout
    with connected(kafka.connect_string) as zk:
        assert zk.get(TopicZNode.path(topic)) == before
        assert zk.get_children("/config/changes") == notifications
    assert len(partitions(kafka.bootstrap_servers, topic)) == 4


def test_a_replication_factor_change_is_carried_out_by_the_controller_under_throttles_then_cleared(
    kafka: KafkaBrokers, tmp_path: Path
) -> None:
    topic = _name("rf")
    throttle = 10485760
    cluster = {"reassignment": {"enabled": True, "throttleBytesPerSecond": throttle}}
    _apply(_manifests(tmp_path / "v1.yaml", kafka, {topic: {"partitions": 3, "replicas": 1}}, **cluster))
    wait_for_leaders(kafka.bootstrap_servers, topic, 3)
    before = round_trip(kafka.bootstrap_servers, topic, 3)

    done = _apply(
        _manifests(tmp_path / "v2.yaml", kafka, {topic: {"partitions": 3, "replicas": 3}}, **cluster),
        "--wait", "--wait-timeout", "120",
    )  # fmt: skip
    served = wait_for_leaders(kafka.bootstrap_servers, topic, 3)
    assert all(len(info.replicas) == 3 for info in served.values()), served
    with connected(kafka.connect_string) as zk:
        assert not zk.exists("/admin/reassign_partitions")
        config = TopicConfigZNode.decode(topic, zk.get(TopicConfigZNode.path(topic))[0])
        assert not {k for k in config if "throttled" in k}, f"throttles left on the topic: {config}"
        for broker in kafka.brokers:
            path = f"/config/brokers/{broker.id}"
            if zk.exists(path):
                left = json.loads(zk.get(path)[0])["config"]
                assert not {k for k in left if "throttled" in k}, (
                    f"throttles left on broker {broker.id}: {left}"
                )
    # The throttles were set while it ran, then removed, and every broker processed both: the replica lists on
    # the topic, and the rate on each broker (all three are involved when one replica grows to three).
    every = {b.id for b in kafka.brokers}
    assert _processed_by(kafka, f"topics/{topic}", "follower.replication.throttled.replicas") == every, (
        done.stdout
    )
    for broker in kafka.brokers:
        rates = _overrides(kafka, broker.id, f"brokers/{broker.id}")
        assert any(f"leader.replication.throttled.rate -> {throttle}" in c for c in rates), rates

        def cleared(broker_id: int = broker.id) -> bool:
            """The broker's last processed change of the topic and of itself carries no throttle."""
            last = (
                _overrides(kafka, broker_id, f"topics/{topic}")[-1],
                _overrides(kafka, broker_id, f"brokers/{broker_id}")[-1],
            )
            assert not [change for change in last if "throttled" in change], last
            return True

        # The removal reaches the brokers as change notifications, which each broker processes on its own: a
        # moment after kto apply returns, not before.
        eventually(cleared, timeout=20, what=f"broker {broker.id} processing the throttles' removal")
    # The records written before the change are still there, now on three replicas each.
    after = round_trip(kafka.bootstrap_servers, topic, 3)
    assert all(after[p][: len(before[p])] == before[p] for p in before), (before, after)


def test_an_export_of_the_real_cluster_plans_nothing(kafka: KafkaBrokers, tmp_path: Path) -> None:
    topic = _name("export")
    _apply(_manifests(tmp_path / "v1.yaml", kafka, {topic: {"partitions": 5, "replicas": 2,
                                                            "config": {"max.message.bytes": 2000000}}}))  # fmt: skip
    wait_for_leaders(kafka.bootstrap_servers, topic, 5)
    out = tmp_path / "export"
    exported = kto("export", "--zookeeper", kafka.connect_string, "-o", str(out), "--with-assignment")
    assert exported.returncode == 0, exported.stdout + exported.stderr
    planned = kto("plan", "-f", str(out), "--zookeeper", kafka.connect_string, "-o", "json")
    assert planned.returncode == 0, planned.stdout + planned.stderr  # 0: nothing to change
    document = json.loads(planned.stdout)
    statuses = {t["topic"]: t["status"] for t in document["topics"]}
    assert statuses[topic] == "unchanged", document
    assert set(statuses.values()) == {"unchanged"}, document
    assert document["summary"]["change"] == document["summary"]["create"] == 0


def test_kto_keeps_working_when_the_controller_moves(kafka: KafkaBrokers, tmp_path: Path) -> None:
    with connected(kafka.connect_string) as zk:
        first = json.loads(zk.get("/controller")[0])["brokerid"]
    kafka.stop_broker(first)  # a controlled shutdown: the controller resigns, another broker is elected
    try:

        def elected() -> int | None:
            with connected(kafka.connect_string) as zk:
                data = zk.exists("/controller") and json.loads(zk.get("/controller")[0])["brokerid"]
                return data if data and data != first and not zk.exists(f"/brokers/ids/{first}") else None

        second = eventually(elected, timeout=60, what=f"a controller other than broker {first}", interval=0.3)
        topic = _name("failover")
        _apply(_manifests(tmp_path / "v1.yaml", kafka, {topic: {"partitions": 4, "replicas": 2}}))
        served = wait_for_leaders(kafka.bootstrap_servers, topic, 4)
        assert all(first not in info.replicas for info in served.values()), "placed on the stopped broker"
        round_trip(kafka.bootstrap_servers, topic, 4)
        assert second != first
    finally:
        kafka.start_broker(first)
