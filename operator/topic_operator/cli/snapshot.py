"""``kto snapshot``: the cluster as JSON lines, the drift job's input, written whole or not at all."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from topic_operator.cli.declared import (
    note_release,
    warn_about,
)
from topic_operator.cli.options import (
    EXIT_OK,
    add_cluster_address,
    add_deadline_option,
    add_kafka_version_option,
)
from topic_operator.cli.output_files import check_writable, write_whole
from topic_operator.cli.stores import store_for

__all__ = ["register", "run"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto snapshot`` to ``kto``'s sub-commands."""
    snapshot = commands.add_parser("snapshot", help="write the cluster as JSON lines (the drift job's input)")
    add_cluster_address(snapshot)
    snapshot.add_argument("--cluster", required=True, metavar="NAME", help="the name rows carry")
    snapshot.add_argument("-o", "--output", required=True, metavar="FILE", help="a file, or - for stdout")
    add_kafka_version_option(
        snapshot,
        "to compare with the release ZooKeeper shows (which the header records anyway)",
        default=False,
    )
    add_deadline_option(snapshot)
    snapshot.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from topic_operator.snapshot_rows import rows_from_cluster

    output = None if args.output == "-" else Path(args.output)
    if output is not None:
        check_writable(output)
    with store_for(args) as store:
        state = store.read_cluster(partition_states=True, deadline=args.deadline)
    warn_about(state, args.cluster, declared=args.kafka_version)
    if args.kafka_version is not None:
        note_release(state)
    taken_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    rows = rows_from_cluster(args.cluster, state, taken_at)
    lines = "".join(json.dumps(row, separators=(",", ":"), sort_keys=True) + "\n" for row in rows)
    if output is None:
        sys.stdout.write(lines)
    else:
        write_whole(output, lines)
        print(
            f"snapshot: {len(state.topics)} topics, {len(state.brokers)} brokers of {args.cluster} -> {args.output}"
        )
    return EXIT_OK
