"""``kto``: the command-line face of the engine. Each sub-command is a thin shell over the library, in a module of
its own that adds its parser (``register``) and runs it (``run``): ``validate``, ``plan``, ``apply``,
``describe``, ``snapshot``, ``export``, ``demo`` and ``convert`` here; ``kto run`` and ``kto drift`` from
``k8s/`` and ``drift/``. What several share is in ``options``, ``declared``, ``stores`` and ``output_files``.

Exit codes: 0 success (for ``plan``: nothing to change), 2 ``plan`` found changes, 1 any error or rejection.
Errors go to stderr as one line each; results go to stdout (text by default, JSON with ``-o json``).

Every command that reads a cluster is bounded by ``--deadline`` (``KTO_ZK_DEADLINE``, default 60 s): how long its
ZooKeeper or its brokers may keep it waiting. A shorter outage is ridden out; a longer one ends the command,
``apply`` with each topic's outcome (applied, not written, unknown), and exits 1 with one line saying why.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from topic_operator import __version__
from topic_operator.cli.options import EXIT_ERROR, UsageError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """``kto`` and every sub-command, each added by its own module."""
    from topic_operator.cli import apply, convert, demo, describe, export, plan, snapshot, validate
    from topic_operator.drift.command import register as register_drift
    from topic_operator.k8s.command import register as register_run

    parser = argparse.ArgumentParser(
        prog="kto",
        description="Topics as code for Apache Kafka, KRaft and ZooKeeper-mode (kafka-topic-operator).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (validate, plan, apply, describe, snapshot, export, demo):
        command.register(commands)
    register_run(commands)
    register_drift(commands)
    convert.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``kto``: with no ``argv``, the process's own command line (the console script, which exits after)."""
    args = build_parser().parse_args(argv)
    args.process_ends_with_the_command = argv is None
    from topic_operator.access.interface import ClusterAccessError
    from topic_operator.manifests.limits import LimitSettingError
    from topic_operator.message_text import one_line

    try:
        return int(args.handler(args))
    except (UsageError, ClusterAccessError, LimitSettingError) as error:
        print(one_line(f"kto {args.command}: {error}"), file=sys.stderr)
        return EXIT_ERROR
