"""Every page's marked examples run as written (``<!-- test: kto -->``, ``<!-- test: operator -->``; see
``docs/development/docs-site.md``), and every output a page shows is what the product prints.

``kto`` steps run against Debian's real ZooKeeper; ``operator`` steps against the real kube-apiserver and the same
ZooKeeper; ``kraft`` steps against the real kube-apiserver and a real KRaft cluster (Kafka 3.9) whose clients
speak SASL_SSL with SCRAM-SHA-512, the page's bootstrap servers, password and ``ca.pem`` standing for its own. The ZooKeeper chroot is made to look like a running cluster of six brokers in three racks, registered as
brokers register (``harness.kafka_cluster``), and after each command the simulated controller brings new
partitions online as Kafka's controller would, so ``describe`` shows leaders. The pages run from a directory that
holds the repository's ``crds/`` and ``manifests/``, as a reader's clone does.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.docs_blocks import blocks_of, markdown_pages
from harness.docs_page_run import PageRun, run_page
from harness.kraft_cluster import SECURED_PASSWORD, KRaftCluster
from harness.kto_objects import remove_kto_objects
from harness.real_apiserver import Credentials, RealApiServer
from harness.zookeeper import ZkChroot
from topic_operator.testing.simulated_brokers import bring_partitions_online
from topic_operator.zookeeper.snapshot import read_cluster

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE_CONNECT = "127.0.0.1:2181/kafka"
"""The connect string the pages show, standing for the test's own ZooKeeper and chroot."""
PAGE_BOOTSTRAP = "localhost:9093"
PAGE_PASSWORD = "change-me"
"""The KRaft pages' client listener and SCRAM password, standing for the test cluster's."""
KINDS = ("kto", "operator", "kraft")

MARKED = sorted(
    {
        (page, block.test_kind)
        for page in markdown_pages(DOCS)
        for block in blocks_of(page)
        if block.mark == "test"
    }
)


def _id(case: tuple[Path, str]) -> str:
    return f"{case[0].relative_to(DOCS)}:{case[1]}"


def _controller(client: KazooClient) -> Callable[[], object]:
    return lambda: bring_partitions_online(client, read_cluster(client))


def _reader_directory(directory: Path) -> Path:
    for name in ("crds", "manifests"):
        (directory / name).symlink_to(DOCS.parent / name)
    return directory


@pytest.mark.timeout(90)
@pytest.mark.parametrize("case", [c for c in MARKED if c[1] == "kto"], ids=_id)
def test_a_page_runs_its_kto_steps(
    case: tuple[Path, str], tmp_path: Path, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    run = PageRun(
        _reader_directory(tmp_path),
        substitutions={PAGE_CONNECT: zk_chroot.connect_string},
        after_command=_controller(kafka_zk),
    )
    assert run_page(case[0], run, "kto") >= 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", [c for c in MARKED if c[1] == "operator"], ids=_id)
def test_a_page_runs_its_operator_steps(
    case: tuple[Path, str],
    tmp_path: Path,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    docs_apiserver: RealApiServer,
) -> None:
    run = PageRun(
        _reader_directory(tmp_path),
        substitutions={PAGE_CONNECT: zk_chroot.connect_string},
        after_command=_controller(kafka_zk),
        apiserver=docs_apiserver,
        kubeconfig=docs_apiserver.kubeconfig(tmp_path / "kubeconfig"),
    )
    assert run_page(case[0], run, "operator") >= 1


@pytest.mark.timeout(150)
@pytest.mark.parametrize("case", [c for c in MARKED if c[1] == "kraft"], ids=_id)
def test_a_page_runs_its_kraft_steps(
    case: tuple[Path, str],
    tmp_path: Path,
    docs_apiserver: RealApiServer,
    docs_kraft: tuple[KRaftCluster, Credentials],
) -> None:
    cluster, credentials = docs_kraft
    directory = _reader_directory(tmp_path)
    shutil.copyfile(credentials.ca_file, directory / "ca.pem")
    run = PageRun(
        directory,
        substitutions={PAGE_BOOTSTRAP: cluster.client_bootstrap_servers, PAGE_PASSWORD: SECURED_PASSWORD},
        apiserver=docs_apiserver,
        kubeconfig=docs_apiserver.kubeconfig(tmp_path / "kubeconfig"),
    )
    kube = docs_apiserver.client()
    try:
        assert run_page(case[0], run, "kraft") >= 1
    finally:  # the API server is the session's: the page's namespace must not hold its objects for the next page
        for namespace in kube.list("v1", "namespaces"):
            remove_kto_objects(kube, namespace["metadata"]["name"])


@pytest.mark.timeout(10)
def test_every_mark_is_one_the_tests_run() -> None:
    """A mistyped mark, or an output block with no test block before it on its page, would be skipped silently."""
    wrong = []
    for page in markdown_pages(DOCS):
        tested = False
        for block in blocks_of(page):
            if block.mark == "test":
                tested = True
                if block.test_kind not in KINDS:
                    wrong.append(f"{block.where}: no such test kind {block.test_kind!r} (one of {KINDS})")
            elif block.mark == "output" and not tested:
                wrong.append(f"{block.where}: an output block with no test block before it")
            elif block.mark == "file" and not block.argument.strip():
                wrong.append(f"{block.where}: a file block without a file name")
    assert not wrong, "\n".join(wrong)


@pytest.mark.timeout(10)
def test_the_getting_started_pages_are_among_the_pages_run() -> None:
    names = {_id(case) for case in MARKED}
    assert {
        "getting-started/setup.md:kto",
        "getting-started/first-topic-kto.md:kto",
        "getting-started/first-topic-operator.md:operator",
        "getting-started/first-topic-kraft.md:kraft",
    } <= names, names
