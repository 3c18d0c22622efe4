"""``kto export``: a KafkaTopic for each topic of a live cluster (``export_documents``), to bring it under
management."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from topic_operator.cli.declared import (
    warn_about,
)
from topic_operator.cli.options import (
    EXIT_OK,
    UsageError,
    add_cluster_address,
    add_deadline_option,
    add_kafka_version_option,
    known_line,
    print_errors,
    version_text,
)
from topic_operator.cli.output_files import write_whole
from topic_operator.cli.stores import store_for

__all__ = ["register", "run"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto export`` to ``kto``'s sub-commands."""
    export = commands.add_parser(
        "export",
        help="write a KafkaTopic for each topic of a live cluster, to bring it under management",
        description="Read a cluster and write one KafkaTopic per topic as it is: partitions, partition 0's "
        "replication factor, the config overrides as stored (and with --with-assignment every partition's "
        "replicas), so that kto plan -f of the export plans nothing. Kafka's internal topics and topics marked "
        "for deletion are left out with a note. Without --cluster, the KafkaCluster document is written too, "
        "named after the chroot.",
    )
    add_cluster_address(export)
    export.add_argument("--cluster", metavar="NAME",
                        help="the KafkaCluster the topics name, declared elsewhere (its document is not written)")  # fmt: skip
    export.add_argument("--format", choices=("kto", "strimzi"), default="kto")
    add_kafka_version_option(export, "written as the exported KafkaCluster's spec.kafkaVersion")
    export.add_argument("--with-assignment", action="store_true", help="declare every partition's replicas")
    export.add_argument("--include", metavar="REGEX", help="only topics whose whole name matches")
    export.add_argument("--exclude", metavar="REGEX", help="not the topics whose whole name matches")
    export.add_argument("--unmanaged-from", metavar="DIR",
                        help="only the topics the manifests in DIR do not declare (for their cluster), and, when "
                             "they declare its KafkaCluster, only the config keys its managedTopicConfig lets "
                             "KafkaTopics own")  # fmt: skip
    export.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="a directory (a file per topic), or - for one YAML stream on stdout")  # fmt: skip
    add_deadline_option(export)
    export.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import re

    import yaml

    from topic_operator.cli.export_documents import TopicFilter, cluster_document, export_cluster
    from topic_operator.connect_string import ConnectStringError, parse_connect_string
    from topic_operator.manifests.loader import load_manifests
    from topic_operator.manifests.topic_documents import object_name
    from topic_operator.model import ALL_CONFIG_MANAGED

    if args.format == "strimzi" and args.with_assignment:
        raise UsageError(
            "--with-assignment: a Strimzi KafkaTopic has no replica assignment; use --format kto"
        )
    try:
        wanted = TopicFilter(
            re.compile(args.include) if args.include is not None else None,
            re.compile(args.exclude) if args.exclude is not None else None,
        )
    except re.error as error:
        raise UsageError(
            f"--include/--exclude {error.pattern!r} is not a regular expression: {error}"
        ) from None
    cluster, write_cluster = args.cluster, args.cluster is None
    declared: set[str] = set()
    managed = ALL_CONFIG_MANAGED
    if args.unmanaged_from is not None:
        manifests = load_manifests([args.unmanaged_from])
        if manifests.errors:
            print_errors([str(e) for e in manifests.errors], sys.stderr)
            raise UsageError(
                f"--unmanaged-from {args.unmanaged_from}: the manifests have errors; nothing written"
            )
        named = sorted({t.cluster for t in manifests.topics} | {c.name for c in manifests.clusters})
        if cluster is None and len(named) == 1:
            cluster, write_cluster = named[0], manifests.cluster(named[0]) is None
        declared = {t.name for t in manifests.topics if t.cluster == cluster}
        settings = manifests.cluster(cluster) if cluster is not None else None
        if settings is not None:  # the keys it leaves to other tools are not exported
            managed = settings.managed_config
    if cluster is None and args.zookeeper is None:
        cluster = "kafka"
    if cluster is None:
        try:
            chroot = parse_connect_string(args.zookeeper)[1]
        except ConnectStringError:
            chroot = None  # refused with its reason when connecting
        cluster = object_name(chroot.strip("/").replace("/", "-")) if chroot else "kafka"
    if args.output != "-" and Path(args.output).exists() and not Path(args.output).is_dir():
        raise UsageError(f"cannot export to {args.output!r}: it exists and is not a directory")
    with store_for(args) as store:
        state = store.read_cluster(deadline=args.deadline)
    warn_about(state, cluster, skip_topics=True)
    exported = export_cluster(
        state, cluster=cluster, target=args.format, with_assignment=args.with_assignment, wanted=wanted,
        declared=declared, managed=managed,
    )  # fmt: skip
    for note in exported.notes:
        print(f"note: {note}", file=sys.stderr)
    files: list[tuple[str, str]] = []
    if write_cluster:
        files.append(
            (
                f"kafkacluster-{cluster}",
                yaml.safe_dump(
                    cluster_document(
                        cluster,
                        args.zookeeper,
                        # through the brokers, their own release when none is given (ApiVersions)
                        *version_text(args.kafka_version or known_line(state.broker_release)),
                        bootstrap_servers=args.bootstrap_server,
                    ),
                    sort_keys=False,
                ),
            )
        )
    for topic in exported.topics:
        comment = f"# {topic.comment}\n" if topic.comment else ""
        if topic.comment:
            print(f"warning: {topic.comment}", file=sys.stderr)
        body = yaml.safe_dump(topic.document, sort_keys=False) if topic.document is not None else ""
        files.append((topic.file_name, comment + body))
    if args.output == "-":
        sys.stdout.write("".join(f"---\n{text}" for _, text in files))
    else:
        directory = Path(args.output)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            for name, text in files:
                write_whole(directory / f"{name}.yaml", text)
        except OSError as error:
            raise UsageError(f"cannot write to {args.output!r}: {error.strerror or error}") from None
    written = sum(1 for t in exported.topics if t.document is not None)
    print(f"export: {written} topics of {cluster} -> {args.output}", file=sys.stderr)
    return EXIT_OK
