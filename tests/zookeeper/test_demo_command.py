"""``kto demo`` runs the whole engine against a real local ZooKeeper and stops what it started."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_demo(env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "topic_operator.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
        env=env,
    )


def test_demo_shows_plan_apply_describe_rejection_and_config_change() -> None:
    completed = run_demo()
    assert completed.returncode == 0, completed.stdout + completed.stderr
    out = completed.stdout
    assert "+ topic payments.transactions: create  (manifests/examples/payments.yaml#1)" in out
    assert "  payments.transactions: applied" in out
    assert "== kto describe payments.transactions" in out
    assert "  Topic: payments.transactions  Partition: 0  Leader: 0  Replicas: 0,2,4  Isr: 0,2,4" in out
    assert (
        "    InvalidPartitionsException: The number of partitions for a topic can only be increased. "
        "Topic payments.transactions currently has 12 partitions, 4 would not be an increase." in out
    )
    assert "topic znode version before 1, after 1: nothing was written" in out
    assert (
        '/config/changes/config_change_0000000000: {"version": 2, "entity_path": "topics/payments.transactions"}'
        in out
    )
    assert "  0 writes; 7 topics unchanged" in out
    assert out.rstrip().endswith("stopped ZooKeeper and removed its data; demo finished")


def test_demo_shows_a_replication_factor_change_by_a_throttled_reassignment() -> None:
    completed = run_demo()
    assert completed.returncode == 0, completed.stdout + completed.stderr
    out = completed.stdout
    step = out[
        out.index("== a replication factor change by partition reassignment") : out.index("== kto export")
    ]
    assert "is not supported: Kafka changes replicas only by partition reassignment" in step  # not enabled
    assert "    replicas: 1 -> 3\n" in step
    assert "    reassign 3 partitions (throttled at 10485760 B/s on brokers [0, 1, 2, 3, 4, 5]):" in step
    # the increase rule: the replica kept first, then new racks (5 is on rack-c, 3 on rack-a, 1 on rack-b)
    assert "      p0: [5] -> [5, 3, 1]\n" in step
    assert "      p1: [0] -> [0, 2, 4]\n" in step
    throttled = "follower.replication.throttled.rate=10485760, leader.replication.throttled.rate=10485760"
    assert f"  brokers 0, 1, 2, 3, 4, 5 (/config/brokers/<id>): {throttled}" in step
    moving, finished = step.split("== kto describe orders.replay once the controller has finished")
    assert "ReassignmentInProgress: true" in moving
    assert "Partition: 0  Leader: 5  Replicas: 5,3,1  Isr: 5  Adding Replicas: 3,1" in moving
    assert "  kto apply --yes meanwhile: 0 writes; the throttles stay while it runs" in moving
    assert "ReassignmentInProgress" not in finished
    assert "Partition: 0  Leader: 5  Replicas: 5,3,1  Isr: 5,3,1\n" in finished
    assert "    config.leader.replication.throttled.replicas: '0:5,1:0,2:1' -> (none)" in finished
    assert (
        "    the finished reassignment's throttle rates removed from brokers [0, 1, 2, 3, 4, 5]" in finished
    )
    removed = finished[finished.index("  orders.replay: applied") :]
    assert "throttled" not in removed  # neither the topic's lists nor the brokers' rates are left
    assert "ReplicationFactor: 3  Configs: \n" in removed
    assert removed.rstrip().endswith("  brokers 0, 1, 2, 3, 4, 5 (/config/brokers/<id>): no dynamic configs")
    assert "  ... 7 KafkaTopics in all" in out
    assert "  kto plan -f of the export: 7 topics, 0 actions" in out


def test_demo_says_what_is_missing_and_starts_nothing() -> None:
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = "/nonexistent"
    completed = run_demo(env)
    assert completed.returncode == 1
    assert "kto demo needs Java and Debian's zookeeper package; nothing was started." in completed.stdout
    assert "no 'java' executable on PATH" in completed.stdout
