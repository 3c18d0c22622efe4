"""``kto demo``: Kafka's topic rules at work on a simulated 6-broker, 3-rack cluster, with no I/O.

The foundation demo: placement of a new topic, growth that continues Kafka's placement, a rejected decrease,
configs turned into the strings written to ZooKeeper, and rejections in Kafka's words. Later issues extend it to a
local ZooKeeper. Everything printed is computed by ``topic_operator.kafka``; nothing is hard-coded.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

from topic_operator.kafka.assignment import (
    BrokerMetadata,
    RackAwareMode,
    assign_new_partitions,
    assign_replicas_to_brokers,
    get_broker_metadatas,
)
from topic_operator.kafka.errors import KafkaError
from topic_operator.kafka.topic_configs import validate_topic_config
from topic_operator.kafka.topic_names import validate_no_collision, validate_topic_name

CLUSTER = [BrokerMetadata(i, f"rack-{'abc'[i % 3]}") for i in range(6)]
SEED = 20261121


def _show_assignment(
    out: TextIO, assignment: Mapping[int, Sequence[int]], racks: Mapping[int, str | None]
) -> None:
    for partition in sorted(assignment):
        replicas = assignment[partition]
        spread = ", ".join(str(racks[b]) for b in replicas)
        out.write(
            f"    partition {partition:>2}: replicas {list(replicas)!s:<12} leader {replicas[0]}  racks: {spread}\n"
        )


def _show_balance(out: TextIO, assignment: Mapping[int, Sequence[int]]) -> None:
    leaders = Counter(replicas[0] for replicas in assignment.values())
    holdings = Counter(b for replicas in assignment.values() for b in replicas)
    per_broker = ", ".join(f"{b}: {holdings[b]}/{leaders[b]}" for b in sorted(holdings))
    out.write(f"    replicas/leaders per broker: {per_broker}\n")


def _expect_rejection(out: TextIO, what: str, attempt: Callable[[], object]) -> None:
    try:
        attempt()
    except KafkaError as error:
        ours = " (a stricter rule of ours; Kafka would accept it)" if error.stricter_than_kafka else ""
        out.write(f"  ! {what}\n    rejected: {error.kafka_class.rsplit('.', 1)[-1]}: {error}{ours}\n")
        return
    raise AssertionError(f"the demo expected a rejection for: {what}")


def run_demo(out: TextIO) -> None:
    """Print the demo to ``out``; raises if any rule did not behave as the demo says."""
    racks = {b.id: b.rack for b in CLUSTER}
    out.write("kafka-topic-operator demo: Kafka's topic rules, ported (no cluster is touched)\n")
    layout = ", ".join(f"{b.id}@{b.rack}" for b in CLUSTER)
    out.write(f"simulated cluster: 6 brokers in 3 racks ({layout})\n\n")

    brokers = get_broker_metadatas(CLUSTER, RackAwareMode.ENFORCED)
    orders = assign_replicas_to_brokers(brokers, 6, 3, rng=random.Random(SEED))
    out.write(
        "+ create topic 'orders': 6 partitions, replication factor 3, rack-aware (seeded random start)\n"
    )
    _show_assignment(out, orders, racks)
    _show_balance(out, orders)

    grown = assign_new_partitions(orders, brokers, 9, topic="orders")
    out.write("\n~ grow 'orders' to 9 partitions: new partitions continue Kafka's placement\n")
    _show_assignment(out, grown, racks)

    out.write("\n")
    _expect_rejection(
        out,
        "shrink 'orders' to 4 partitions",
        lambda: assign_new_partitions(orders, brokers, 4, topic="orders"),
    )
    _expect_rejection(
        out, "create 'payments' with replication factor 7", lambda: assign_replicas_to_brokers(brokers, 3, 7)
    )

    config = {"cleanup.policy": "compact, delete", "retention.ms": 604800000, "min.insync.replicas": " 2 ",
              "unclean.leader.election.enable": False}  # fmt: skip
    out.write(f"\n~ topic config as declared: {config}\n")
    out.write(f"  written to ZooKeeper as:   {validate_topic_config(config)}\n\n")
    _expect_rejection(
        out, "config min.insync.replicas: 0", lambda: validate_topic_config({"min.insync.replicas": 0})
    )
    _expect_rejection(out, "config retention.ms: 7d", lambda: validate_topic_config({"retention.ms": "7d"}))
    _expect_rejection(
        out,
        "config min.compaction.lag.ms above max.compaction.lag.ms",
        lambda: validate_topic_config({"min.compaction.lag.ms": 10, "max.compaction.lag.ms": 5}),
    )
    _expect_rejection(out, "topic name 'orders/eu'", lambda: validate_topic_name("orders/eu"))
    _expect_rejection(
        out,
        "create 'orders_v1' while 'orders.v1' exists",
        lambda: validate_no_collision("orders_v1", ["orders.v1"]),
    )
    out.write("\ndemo finished: every rule behaved as Kafka's own code does\n")
