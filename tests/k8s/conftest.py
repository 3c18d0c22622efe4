"""Fixtures of the handler tests (``kafka_zk`` comes from tests/conftest.py): the operator's settings and a ``World``
(see ``k8s_world``) whose Kubernetes API is the fake at the operator's seam."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from k8s_world import Clock, FakeKubernetes, World, kafka_cluster
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.process.settings import OperatorSettings


@pytest.fixture
def settings(tmp_path: Path) -> OperatorSettings:
    """Short linger and waits: a test's handlers run one after another, not 500 at once."""
    return OperatorSettings(
        batch_linger=0.01,
        cluster_wait=0.2,
        retry_delay=1.0,
        deletion_timeout=60.0,
        zk_connection_timeout=5.0,
        material_dir=tmp_path / "material",
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def world(settings: OperatorSettings, clock: Clock) -> Iterator[World]:
    kube = FakeKubernetes()
    return World(OperatorContext(settings, kube, kube, clock=clock), kube)


@pytest.fixture
def cluster(zk_chroot: ZkChroot, kafka_zk: KazooClient) -> dict[str, Any]:
    """KafkaCluster ``team-a/main`` pointing at the test's Kafka-looking chroot."""
    return kafka_cluster("main", zk_chroot.connect_string)
