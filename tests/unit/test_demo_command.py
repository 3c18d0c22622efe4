"""``kto demo`` runs through the real entry point and shows each rule it promises, computed by the port."""

import subprocess
import sys

from topic_operator.demo import CLUSTER
from topic_operator.kafka.assignment import RackAwareMode, assign_replicas_to_brokers, get_broker_metadatas


def test_demo_runs_as_a_module_and_shows_every_step() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "topic_operator.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "+ create topic 'orders'" in out
    assert "~ grow 'orders' to 9 partitions" in out
    assert (
        "rejected: InvalidPartitionsException: The number of partitions for a topic can only be increased."
        in out
    )
    assert "rejected: ConfigException: Invalid value 0 for configuration min.insync.replicas" in out
    assert "'cleanup.policy': 'compact,delete'" in out
    assert out.rstrip().endswith("demo finished: every rule behaved as Kafka's own code does")


def test_demo_cluster_placement_spans_all_three_racks() -> None:
    brokers = get_broker_metadatas(CLUSTER, RackAwareMode.ENFORCED)
    racks = {b.id: b.rack for b in brokers}
    for replicas in assign_replicas_to_brokers(brokers, 6, 3, fixed_start_index=0).values():
        assert len({racks[b] for b in replicas}) == 3
