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


def test_demo_says_what_is_missing_and_starts_nothing() -> None:
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = "/nonexistent"
    completed = run_demo(env)
    assert completed.returncode == 1
    assert "kto demo needs Java and Debian's zookeeper package; nothing was started." in completed.stdout
    assert "no 'java' executable on PATH" in completed.stdout
