"""``kto validate``: manifests checked offline, against the CRD schema, its CEL rules and Kafka's rules."""

from __future__ import annotations

import argparse

from topic_operator.cli.options import (
    EXIT_ERROR,
    EXIT_OK,
    add_kafka_version_option,
)

__all__ = ["register", "run"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto validate`` to ``kto``'s sub-commands."""
    validate = commands.add_parser(
        "validate",
        help="check manifests offline: CRD schema, CEL rules and Kafka's rules; exit 1 on any error",
        description="Check KafkaTopic/KafkaCluster (and Strimzi KafkaTopic) manifests without a cluster: the "
        "CRD schema, the CRD's CEL rules and Kafka's topic rules. Directories are read recursively "
        "(*.yaml, *.yml); - reads standard input. Input is read within limits (KTO_MANIFEST_* environment "
        "variables, listed in the documentation's settings reference). Prints one line per error and a summary; exits 1 on any error.",
    )
    validate.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a manifest file, a directory of them, or - for standard input",
    )
    add_kafka_version_option(
        validate,
        "that checks the configs of topics whose cluster no KafkaCluster among the manifests declares",
    )
    validate.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from topic_operator.kafka.releases import DEFAULT_KAFKA_VERSION
    from topic_operator.manifests.loader import TenantRules, load_manifests

    manifests = load_manifests(
        args.paths,
        check_cel=True,
        kafka_version=args.kafka_version or DEFAULT_KAFKA_VERSION,
        tenant_rules=TenantRules.ALL,
    )
    for error in manifests.errors:
        print(error)
    for warning in manifests.warnings:
        print(f"warning: {warning}")
    print(manifests.summary())
    return EXIT_OK if manifests.ok else EXIT_ERROR
