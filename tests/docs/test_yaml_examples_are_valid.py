"""Every fenced ``yaml`` block of the docs that declares a ``kto.dev`` object is a whole, valid object: it passes
``kto validate`` and the real kube-apiserver, with the CRDs installed, accepts it (server-side apply, dry run).

A fragment (a few fields to show one thing) carries no ``apiVersion`` line and is skipped. ``kto validate`` reads
each block on its own: a KafkaTopic whose KafkaCluster is not in the block is checked against Kafka 3.4's rules,
``kto validate``'s default release. A failure names the page and the line of the block.
"""

from __future__ import annotations

import contextlib
import io
import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.docs_blocks import Block, blocks_of, markdown_pages
from harness.kube_client import KubeApiError
from harness.real_apiserver import RealApiServer
from topic_operator.cli.main import main as kto

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _declares_kto_objects(block: Block) -> bool:
    return block.language in ("yaml", "yml") and "apiVersion: kto.dev/" in block.text


EXAMPLES = [b for page in markdown_pages(DOCS) for b in blocks_of(page) if _declares_kto_objects(b)]


def _where(block: Block) -> str:
    return f"docs/{block.page.relative_to(DOCS)}:{block.line}"


def _documents(block: Block) -> list[dict[str, Any]]:
    try:
        return [d for d in yaml.safe_load_all(block.text) if isinstance(d, dict)]
    except yaml.YAMLError as error:
        pytest.fail(f"{_where(block)}: the YAML example does not parse: {error}")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("block", EXAMPLES, ids=_where)
def test_a_yaml_example_passes_kto_validate(block: Block, tmp_path: Path) -> None:
    _documents(block)
    manifest = tmp_path / "example.yaml"
    manifest.write_text(block.text)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        code = kto(["validate", str(manifest)])
    assert code == 0, f"{_where(block)}: kto validate refuses the example:\n{printed.getvalue()}"


def _dry_run_apply(server: RealApiServer, document: dict[str, Any]) -> None:
    kube = server.client()
    plural, namespaced = kube.resource(document["apiVersion"], document["kind"])
    metadata = document.get("metadata") or {}
    namespace = (metadata.get("namespace") or "default") if namespaced else None
    if namespace is not None:
        kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    path = kube.path(document["apiVersion"], plural, namespace, metadata.get("name"))
    query = urllib.parse.urlencode({"fieldManager": "kto-docs", "force": "true", "dryRun": "All"})
    kube.call("PATCH", f"{path}?{query}", json.dumps(document).encode(), "application/apply-patch+yaml")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("block", EXAMPLES, ids=_where)
def test_a_yaml_example_is_accepted_by_the_api_server(block: Block, docs_apiserver: RealApiServer) -> None:
    for document in _documents(block):
        if not str(document.get("apiVersion", "")).startswith("kto.dev/"):
            continue
        try:
            _dry_run_apply(docs_apiserver, document)
        except KubeApiError as error:
            pytest.fail(f"{_where(block)}: the API server refuses {document.get('kind')}: {error.message}")


@pytest.mark.timeout(10)
def test_the_docs_have_yaml_examples_to_check() -> None:
    """The collection itself can fail: the getting-started pages declare KafkaClusters and KafkaTopics."""
    assert any("getting-started" in str(b.page) for b in EXAMPLES)
