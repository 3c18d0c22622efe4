"""What several ``kto`` commands share: the exit codes, the one-line usage error, the options they have in
common (manifests, the cluster's address, ``--kafka-version``, ``--deadline``), and the collector's pause for the
long one-shot commands."""

from __future__ import annotations

import argparse
import functools
import gc
import os
from collections.abc import Callable, Sequence
from typing import TextIO

from topic_operator.cli.stores import add_bootstrap_options

__all__ = [
    "DEADLINE_VARIABLE",
    "EXIT_CHANGES",
    "EXIT_ERROR",
    "EXIT_OK",
    "UsageError",
    "add_cluster_address",
    "add_deadline_option",
    "add_kafka_version_option",
    "add_manifest_options",
    "deadline_seconds",
    "default_deadline",
    "kafka_version_flag",
    "known_line",
    "one_shot",
    "print_errors",
    "version_text",
]


EXIT_OK, EXIT_ERROR, EXIT_CHANGES = 0, 1, 2


class UsageError(Exception):
    """A command line that cannot be carried out as given; printed as one line, exit 1."""


DEADLINE_VARIABLE = "KTO_ZK_DEADLINE"


def default_deadline() -> str:
    """``$KTO_ZK_DEADLINE`` or 60, as text: argparse checks a default given as text like a value given."""
    from topic_operator.zookeeper.bounded import DEFAULT_DEADLINE

    return os.environ.get(DEADLINE_VARIABLE, f"{DEFAULT_DEADLINE:g}")


def deadline_seconds(text: str) -> float:
    """``--deadline``: seconds, positive and finite."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} (or ${DEADLINE_VARIABLE}) is not a number of seconds"
        ) from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} (or ${DEADLINE_VARIABLE}): the deadline must be positive")
    return value


def kafka_version_flag(text: str) -> tuple[int, int]:
    """``--kafka-version``: a release line kto knows, "2.0" to "3.9", or "4.0" and "4.1" for a cluster reached
    through its brokers (refused with ``--zookeeper`` by ``read_declared``)."""
    from topic_operator.kafka.releases import UnknownKafkaVersionError, parse_kafka_version

    try:
        return parse_kafka_version(text, kraft=True)
    except UnknownKafkaVersionError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def known_line(version: tuple[int, int] | None) -> tuple[int, int] | None:
    """``version`` when it is a release line kto knows (the brokers may run a newer one)."""
    from topic_operator.kafka.releases import ALL_KAFKA_VERSIONS

    return version if version in ALL_KAFKA_VERSIONS else None


def version_text(version: tuple[int, int] | None) -> tuple[str, ...]:
    """``--kafka-version`` as text, or nothing when not given (the callee's default)."""
    return () if version is None else (f"{version[0]}.{version[1]}",)


def add_kafka_version_option(command: argparse.ArgumentParser, what: str, *, default: bool = True) -> None:
    note = " (default 3.4)" if default else ""
    command.add_argument("--kafka-version", type=kafka_version_flag, metavar="X.Y",
                         help=f"the brokers' Kafka release line, 2.0 to 3.9 (4.0 and 4.1 through --bootstrap-server), "
                         f"{what}{note}")  # fmt: skip


def print_errors(errors: Sequence[str], stream: TextIO) -> None:
    for error in errors:
        print(f"error: {error}", file=stream)


def one_shot(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` run with Python's cycle collector paused, and resumed after it (as it was).

    A plan or an apply of 50,000 topics builds millions of objects that live until the command ends, none of
    them garbage, and the collector walks them over and over as they are made: a fifth of the command's time.
    When the process ends with the command (``kto`` run from its own command line), what the command left is
    frozen before the collector is resumed: otherwise the collector's pass at the interpreter's exit walks all
    of it once more, which took 0.3 s after the command was done. A process that goes on after a command (a
    test calling ``main`` with its arguments) gets the collector back as it was, nothing frozen, so no
    reference cycle the command left outlives it. ``kto run`` and the other commands are left alone.
    """

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return command(args)
        finally:
            if collecting:
                if getattr(args, "process_ends_with_the_command", False):
                    gc.freeze()
                gc.enable()

    return run


def add_manifest_options(command: argparse.ArgumentParser, outputs: Sequence[str] = ("text", "json")) -> None:
    command.add_argument("-f", "--file", dest="files", action="append", required=True, metavar="PATH",
                         help="a manifest file or directory, or - for standard input (repeatable)")  # fmt: skip
    command.add_argument("--zookeeper", metavar="CONNECT",
                         help="ZooKeeper connect string with optional chroot, e.g. zk-0:2181,zk-1:2181/kafka "
                         "(default: the KafkaCluster's spec.zookeeper.connect)")  # fmt: skip
    add_bootstrap_options(command)
    command.add_argument("--cluster", metavar="NAME", help="which declared cluster (needed when several are)")
    add_kafka_version_option(command, "when no KafkaCluster among the manifests declares the cluster")
    command.add_argument("-o", "--output", choices=outputs, default="text")
    command.add_argument(
        "--seed", type=int, default=0, help="seed of the placement of new topics (default 0)"
    )
    add_deadline_option(command)


def add_cluster_address(command: argparse.ArgumentParser) -> None:
    """``--zookeeper`` or ``--bootstrap-server`` (one of them), and ``--command-config``."""
    where = command.add_mutually_exclusive_group(required=True)
    where.add_argument("--zookeeper", metavar="CONNECT", help="the cluster's ZooKeeper, with its chroot")
    add_bootstrap_options(command, group=where)


def add_deadline_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--deadline", type=deadline_seconds, default=default_deadline(), metavar="SECONDS",
                         help="how long ZooKeeper may keep the command waiting before it gives up, reporting what "
                         f"was done (default: ${DEADLINE_VARIABLE}, else 60)")  # fmt: skip
