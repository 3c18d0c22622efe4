"""``kto convert``: manifests of any format kto reads -> KafkaTopics of one format, so a team migrates once.

Reads what ``kto plan`` reads (kto.dev KafkaTopics, Strimzi KafkaTopics of every version, topicctl topic files),
with every check; any error is printed, one line each, and nothing is written. Each topic becomes one document
(``topic_documents``); KafkaCluster documents are not rewritten (they are kto's already, credentials included).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register"]

EXIT_OK, EXIT_ERROR = 0, 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto convert`` to ``kto``'s sub-commands."""
    from topic_operator.manifests.topic_documents import FORMATS

    convert = commands.add_parser(
        "convert",
        help="rewrite Strimzi KafkaTopics and topicctl topic files as kto.dev KafkaTopics (or Strimzi ones)",
        description="Read manifests of any format kto reads (kto.dev and Strimzi KafkaTopics of every version, "
        "topicctl topic files), check them as kto plan does, and write one KafkaTopic per topic in one format. "
        "Any error: every one is printed and nothing is written. Object names that a Kafka topic name cannot be "
        "are derived from it (with a hash), the topic name kept in spec.topicName. KafkaCluster documents are "
        "not rewritten; topics of clusters no document declares are named on stderr.",
    )
    convert.add_argument("-f", "--filename", dest="paths", action="append", required=True, metavar="PATH",
                         help="a manifest file, a directory of them, or - (repeatable)")  # fmt: skip
    convert.add_argument("--to", choices=FORMATS, default="kto", help="the format written (default: kto)")
    convert.add_argument("-o", "--output", required=True, metavar="DIR",
                         help="a directory (one file per topic, under a directory per cluster), or - for stdout")  # fmt: skip
    convert.set_defaults(handler=_convert)


def _convert(args: argparse.Namespace) -> int:
    import yaml

    from topic_operator.manifests.loader import load_manifests
    from topic_operator.manifests.topic_documents import topic_documents
    from topic_operator.message_text import one_line

    manifests = load_manifests(args.paths)
    for warning in manifests.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for error in manifests.errors:
        print(str(error), file=sys.stderr)
    converted = topic_documents(manifests.topics, args.to)
    for problem in converted.problems:
        print(one_line(f"kto convert: {problem}"), file=sys.stderr)
    if manifests.errors or converted.problems:
        count = len(manifests.errors) + len(converted.problems)
        print(f"kto convert: nothing written ({count} error{'' if count == 1 else 's'})", file=sys.stderr)
        return EXIT_ERROR
    declared = {c.name for c in manifests.clusters}
    for cluster in sorted({t.cluster for t in manifests.topics} - declared):
        print(
            f"kto convert: no KafkaCluster document declares cluster {cluster!r}: write one for it",
            file=sys.stderr,
        )
    if args.output == "-":
        yaml.safe_dump_all(converted.documents, sys.stdout, sort_keys=False, explicit_start=True)
        return EXIT_OK
    try:
        _write(Path(args.output), converted.documents)
    except OSError as error:
        print(
            one_line(f"kto convert: cannot write to {args.output}: {error.strerror or error}"),
            file=sys.stderr,
        )
        return EXIT_ERROR
    print(f"kto convert: {len(converted.documents)} KafkaTopics written to {args.output}", file=sys.stderr)
    return EXIT_OK


def _write(directory: Path, documents: tuple[dict[str, Any], ...]) -> None:
    """One file per document, ``<cluster>/<object name>.yaml``. Object names are safe file names (no ``/``, no
    ``..``); a cluster name need not be, so its folder is named as an object would be."""
    import yaml

    from topic_operator.manifests.topic_documents import object_name

    for document in documents:
        spec, metadata = document["spec"], document["metadata"]
        cluster = spec.get("cluster") or metadata.get("labels", {}).get("strimzi.io/cluster")
        folder = directory / object_name(str(cluster))
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / f"{metadata['name']}.yaml").open("w", encoding="utf-8") as out:
            yaml.safe_dump(document, out, sort_keys=False, explicit_start=True)
