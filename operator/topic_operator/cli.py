"""``kto``: the command-line face of the engine. Each sub-command is a thin shell over the library."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from topic_operator import __version__


def _demo(_: argparse.Namespace) -> int:
    from topic_operator.demo import run_demo

    run_demo(sys.stdout)
    return 0


def _validate(args: argparse.Namespace) -> int:
    from topic_operator.manifests import load_manifests

    manifests = load_manifests(args.paths, check_cel=True)
    for error in manifests.errors:
        print(error)
    for warning in manifests.warnings:
        print(f"warning: {warning}")
    print(manifests.summary())
    return 0 if manifests.ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kto", description="Topics as code for ZooKeeper-mode Apache Kafka (kafka-topic-operator)."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser("demo", help="show Kafka's topic rules at work on a simulated cluster")
    demo.set_defaults(handler=_demo)
    validate = commands.add_parser(
        "validate",
        help="check manifests offline: CRD schema, CEL rules and Kafka's rules; exit 1 on any error",
        description="Check KafkaTopic/KafkaCluster (and Strimzi KafkaTopic) manifests without a cluster: the "
        "CRD schema, the CRD's CEL rules and Kafka's topic rules. Directories are read recursively "
        "(*.yaml, *.yml). Prints one line per error and a summary; exits 1 on any error.",
    )
    validate.add_argument("paths", nargs="+", metavar="PATH", help="a manifest file or a directory of them")
    validate.set_defaults(handler=_validate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
