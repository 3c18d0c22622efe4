"""``kto describe`` prints what ``kafka-topics.sh --describe`` prints, with its two partition filters."""

from dataclasses import replace

from harness.states import cluster_state, existing
from topic_operator.cli.describe_lines import describe_lines
from topic_operator.model import PartitionState

TOPIC = replace(
    existing(
        "orders",
        {0: (1, 2, 3), 1: (2, 3, 4), 2: (3, 4, 5)},
        {"retention.ms": "1000", "cleanup.policy": "compact"},
    ),
    partition_states={
        0: PartitionState(1, (1, 2, 3), 0, 1),
        1: PartitionState(2, (2,), 3, 1),
        2: PartitionState(-1, (), 5, 1),
    },
)
STATE = cluster_state(TOPIC, existing("other", {0: (0,)}))


def test_full_description() -> None:
    assert list(describe_lines(STATE, ["orders"])) == [
        "Topic: orders\tTopicId: q3xFy1sLTyajJv4JTtj6qQ\tPartitionCount: 3\tReplicationFactor: 3\t"
        "Configs: cleanup.policy=compact,retention.ms=1000",
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3",
        "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3,4\tIsr: 2",
        "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 3,4,5\tIsr: ",
    ]


def test_filters_show_only_matching_partitions() -> None:
    assert [line.split("\t")[2] for line in describe_lines(STATE, under_replicated=True)] == [
        "Partition: 1",
        "Partition: 2",
    ]
    # 'other' has no partition state yet: unavailable until the controller brings it online.
    unavailable = list(describe_lines(STATE, unavailable=True))
    assert [line.split("\t")[1:3] for line in unavailable] == [
        ["Topic: orders", "Partition: 2"],
        ["Topic: other", "Partition: 0"],
    ]


def test_leader_on_a_dead_broker_is_unavailable() -> None:
    dead = replace(TOPIC, partition_states={0: PartitionState(9, (9,), 0, 1)})
    assert len(list(describe_lines(cluster_state(dead), unavailable=True))) == 3
