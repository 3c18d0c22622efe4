"""The getting-started pages run as written: the ``kto`` steps against Debian's real ZooKeeper, the operator's
against the real kube-apiserver and the same ZooKeeper, and every output a page shows is what the product prints.

The ZooKeeper chroot is made to look like a running cluster of six brokers in three racks, registered as brokers
register (``harness.kafka_cluster``), and after each command the simulated controller brings new partitions online
as Kafka's controller would, so ``describe`` shows leaders.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.docs_page_run import PageRun, run_page
from harness.real_apiserver import RealApiServer
from harness.zookeeper import ZkChroot
from topic_operator.zookeeper.simulated_brokers import bring_partitions_online
from topic_operator.zookeeper.snapshot import read_cluster

PAGE_CONNECT = "127.0.0.1:2181/kafka"
"""The connect string the pages show, standing for the test's own ZooKeeper and chroot."""


def _controller(client: KazooClient) -> object:
    return lambda: bring_partitions_online(client, read_cluster(client))


@pytest.mark.timeout(60)
def test_the_setup_page_demo_runs(docs_dir: Path, tmp_path: Path) -> None:
    """``kto demo`` starts and stops its own ZooKeeper."""
    assert run_page(docs_dir / "getting-started" / "setup.md", PageRun(tmp_path), "kto") == 1


@pytest.mark.timeout(90)
def test_the_first_topic_with_kto_runs_as_the_page_shows(
    docs_dir: Path, tmp_path: Path, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    run = PageRun(
        tmp_path,
        substitutions={PAGE_CONNECT: zk_chroot.connect_string},
        after_command=_controller(kafka_zk),
    )
    assert run_page(docs_dir / "getting-started" / "first-topic-kto.md", run, "kto") >= 4


@pytest.mark.timeout(120)
def test_the_first_topic_with_the_operator_runs_as_the_page_shows(
    docs_dir: Path,
    tmp_path: Path,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    docs_apiserver: RealApiServer,
) -> None:
    (tmp_path / "crds").symlink_to(docs_dir.parent / "crds")  # the page runs from a clone of the repository
    run = PageRun(
        tmp_path,
        substitutions={PAGE_CONNECT: zk_chroot.connect_string},
        after_command=_controller(kafka_zk),
        apiserver=docs_apiserver,
        kubeconfig=docs_apiserver.kubeconfig(tmp_path / "kubeconfig"),
    )
    assert run_page(docs_dir / "getting-started" / "first-topic-operator.md", run, "operator") >= 3
