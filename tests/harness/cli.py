"""``kto`` run in the test's own process, and the manifests the CLI tests give it: the KafkaCluster ``test`` and
its KafkaTopics."""

from __future__ import annotations

from pathlib import Path

import pytest

from topic_operator.cli.main import main

CLUSTER_DOCUMENT = (
    "apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {name: test}\n"
    "spec: {zookeeper: {connect: '127.0.0.1:1/unused'}}\n"
)
"""Its connect string points nowhere: the tests pass ``--zookeeper``."""


def kafka_topic(name: str, partitions: int, replicas: int = 3, **spec: object) -> str:
    """A KafkaTopic of cluster ``test``; further spec fields as YAML flow text (``config="{retention.ms: 1}"``)."""
    fields = {"cluster": "test", "partitions": partitions, "replicas": replicas, **spec}
    body = ", ".join(f"{key}: {value}" for key, value in fields.items())
    return f"apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {{name: {name}}}\nspec: {{{body}}}\n"


def write_manifests(path: Path, *topics: str) -> Path:
    """The KafkaCluster and ``topics`` as one multi-document file at ``path``."""
    path.write_text("---\n".join([CLUSTER_DOCUMENT, *topics]))
    return path


def kto(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one ``kto`` command."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
