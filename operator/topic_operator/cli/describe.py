"""``kto describe``: topics described as ``kafka-topics.sh --describe`` prints them (``describe_lines``)."""

from __future__ import annotations

import argparse
import sys

from topic_operator.cli.declared import (
    note_release,
    warn_about,
)
from topic_operator.cli.options import (
    EXIT_ERROR,
    EXIT_OK,
    add_cluster_address,
    add_deadline_option,
    add_kafka_version_option,
)
from topic_operator.cli.stores import store_for

__all__ = ["register", "run"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto describe`` to ``kto``'s sub-commands."""
    describe = commands.add_parser("describe", help="describe topics as kafka-topics.sh --describe does")
    describe.add_argument("topics", nargs="*", metavar="TOPIC")
    add_cluster_address(describe)
    describe.add_argument("--under-replicated-partitions", action="store_true")
    describe.add_argument("--unavailable-partitions", action="store_true")
    add_kafka_version_option(
        describe, "to compare with the release ZooKeeper shows (which is then printed too)", default=False
    )
    add_deadline_option(describe)
    describe.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from topic_operator.cli.describe_lines import describe_lines
    from topic_operator.cli.stores import cluster_address

    with store_for(args) as store:
        state = store.read_cluster(partition_states=True, topics=args.topics or None, deadline=args.deadline)
    warn_about(state, cluster_address(args), skip_topics=True, declared=args.kafka_version)
    if args.kafka_version is not None:
        note_release(state)
    unreadable = sorted(t for t in state.unreadable_topics if not args.topics or t in args.topics)
    missing = sorted(set(args.topics) - set(state.topics) - set(unreadable))
    for line in describe_lines(
        state,
        args.topics,
        under_replicated=args.under_replicated_partitions,
        unavailable=args.unavailable_partitions,
    ):
        print(line)
    for topic in unreadable:
        print(f"error: Topic '{topic}' cannot be read: {state.unreadable_topics[topic]}", file=sys.stderr)
    for topic in missing:
        print(f"error: Topic '{topic}' does not exist as expected", file=sys.stderr)
    return EXIT_ERROR if missing or unreadable else EXIT_OK
