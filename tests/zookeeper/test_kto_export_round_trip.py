"""``kto export`` against a real ZooKeeper: for hypothesis-generated clusters, ``kto plan -f`` of the
export exits 0 with no action for every exported topic, with and without ``--with-assignment``; internal topics,
topics marked for deletion and the topics a team already declares are left out with a note; topics kto plan
will refuse carry a comment saying why."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

from harness.cli import kto
from harness.kafka_cluster import make_kafka_cluster
from harness.zookeeper import ZkChroot, create_chroot, new_client
from topic_operator.zookeeper.znodes import TopicConfigZNode, TopicZNode, TopicZNodeData

pytestmark = pytest.mark.zookeeper

BROKERS = (0, 1, 2, 3, 4, 5)
CONFIGS = {
    "retention.ms": st.integers(-1, 10**12).map(str),
    "cleanup.policy": st.sampled_from(["delete", "compact", "compact,delete"]),
    "min.insync.replicas": st.integers(1, 3).map(str),
    "compression.type": st.sampled_from(["producer", "lz4", "zstd"]),
    "max.message.bytes": st.integers(0, 10**7).map(str),
    "unclean.leader.election.enable": st.sampled_from(["true", "false"]),
}
_names = st.text(st.sampled_from("abcdefXYZ0123456789-_"), min_size=1, max_size=30).filter(
    lambda n: not n.startswith("__")
)


@st.composite
def _topic(draw: st.DrawFn) -> tuple[dict[int, tuple[int, ...]], dict[str, str]]:
    partitions = draw(st.integers(1, 6))
    factor = draw(st.integers(1, 3))
    assignment = {
        p: tuple(draw(st.permutations(BROKERS))[:factor]) for p in range(partitions)
    }  # any placement: a cluster made by hand or by scripts
    keys = draw(st.lists(st.sampled_from(sorted(CONFIGS)), unique=True, max_size=3))
    return assignment, {key: draw(CONFIGS[key]) for key in keys}


_clusters = st.dictionaries(_names, _topic(), min_size=1, max_size=8)
"""No '.' in the names: two names differing only in '.' and '_' cannot both exist in Kafka."""


@pytest.fixture
def fresh_chroots(zk_chroot: ZkChroot) -> Iterator[Iterator[tuple[str, KazooClient]]]:
    """A new chroot (under the test's own, deleted with it) per hypothesis example, made to look like a Kafka
    cluster."""
    admin = new_client(zk_chroot.server_hosts)
    admin.start(10)
    clients: list[KazooClient] = []

    def chroots() -> Iterator[tuple[str, KazooClient]]:
        for number in itertools.count():
            path = f"{zk_chroot.path}/c{number}"
            create_chroot(admin, path)
            client = new_client(f"{zk_chroot.server_hosts}{path}")
            client.start(10)
            clients.append(client)
            make_kafka_cluster(client)
            yield f"{zk_chroot.server_hosts}{path}", client

    yield chroots()
    for client in clients:
        client.stop()
        client.close()
    admin.stop()
    admin.close()


def _write_topics(
    client: KazooClient, topics: dict[str, tuple[dict[int, tuple[int, ...]], dict[str, str]]]
) -> None:
    """Topics as a hand or a script would have made them: the two znodes Kafka's admin tools write."""
    for name, (assignment, config) in topics.items():
        client.create(TopicConfigZNode.path(name), TopicConfigZNode.encode(config), makepath=True)
        client.create(TopicZNode.path(name), TopicZNode.encode(TopicZNodeData(assignment)), makepath=True)


def _tree(client: KazooClient, path: str = "/") -> dict[str, tuple[bytes, int]]:
    """Every znode's data and modification zxid: any write changes it."""
    data, stat = client.get(path)
    found = {path: (data, stat.mzxid)}
    for child in client.get_children(path):
        found |= _tree(client, f"{path.rstrip('/')}/{child}")
    return found


@pytest.mark.timeout(120)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(topics=_clusters, with_assignment=st.booleans())
def test_plan_of_an_export_changes_nothing(
    fresh_chroots: Iterator[tuple[str, KazooClient]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    topics: dict[str, tuple[dict[int, tuple[int, ...]], dict[str, str]]],
    with_assignment: bool,
) -> None:
    connect, client = next(fresh_chroots)
    _write_topics(client, topics)
    before = _tree(client)
    out = tmp_path / "export"
    shutil.rmtree(out, ignore_errors=True)
    flags = ["--with-assignment"] if with_assignment else []
    code, _, err = kto(capsys, "export", "--zookeeper", connect, *flags, "-o", str(out))
    assert code == 0, err
    assert _tree(client) == before  # export never writes
    assert len(list(out.glob("*.yaml"))) == len(topics) + 1  # and the KafkaCluster
    code, plan, err = kto(capsys, "plan", "-f", str(out), "--zookeeper", connect, "-o", "json")
    assert code == 0, plan + err
    planned = json.loads(plan)
    assert all(not t["actions"] for t in planned["topics"]), plan
    assert {t["topic"] for t in planned["topics"]} == set(topics)


def test_what_is_left_out_and_what_plan_will_refuse_is_said(
    fresh_chroots: Iterator[tuple[str, KazooClient]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    connect, client = next(fresh_chroots)
    _write_topics(
        client,
        {
            "__consumer_offsets": ({0: (0, 1, 2)}, {"cleanup.policy": "compact"}),
            "going": ({0: (0,)}, {}),
            "mixed": ({0: (0, 1), 1: (2,)}, {}),
            "orders": ({0: (0, 1), 1: (1, 2)}, {"retention.ms": "1000"}),
            "payments": ({0: (3,)}, {}),
        },
    )
    client.create("/admin/delete_topics/going", makepath=True)
    client.create(TopicZNode.path("broken"), b"{not json", makepath=True)
    declared = tmp_path / "declared"
    declared.mkdir()
    (declared / "payments.yaml").write_text(
        "apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {name: payments}\n"
        "spec: {cluster: team, partitions: 1, replicas: 1}\n"
    )
    code, stream, err = kto(
        capsys,
        "export",
        "--zookeeper",
        connect,
        "--cluster",
        "team",
        "--unmanaged-from",
        str(declared),
        "-o",
        "-",
    )
    assert code == 0, err
    assert "note: topic __consumer_offsets: not exported: a Kafka internal topic" in err
    assert "note: topic going: not exported: marked for deletion" in err
    assert "topic mixed: its partitions have replication factors 1, 2; exported with partition 0's (2)" in err
    assert "kto plan will refuse topic broken: its znode cannot be read" in err
    assert "payments" not in stream  # declared already
    assert "kind: KafkaCluster" not in stream  # --cluster names one declared elsewhere
    documents = [d for d in stream.split("---\n") if d.strip()]
    comments = sorted(d.splitlines()[0] for d in documents if d.startswith("#"))
    assert len(comments) == 2
    assert comments[0].startswith("# kto plan will refuse topic broken: its znode cannot be read")
    assert comments[1].startswith("# topic mixed: its partitions have replication factors 1, 2")
    assert sum("kind: KafkaTopic" in d for d in documents) == 2  # mixed and orders


def test_bad_filters_and_outputs_are_one_line_and_write_nothing(
    zk_chroot: ZkChroot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = kto(capsys, "export", "--zookeeper", zk_chroot.connect_string, "--include", "(", "-o", "-")
    assert code == 1
    assert err.count("\n") == 1
    assert "is not a regular expression" in err
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = kto(capsys, "export", "--zookeeper", zk_chroot.connect_string, "-o", str(blocker))
    assert (code, err.count("\n")) == (1, 1)
    code, _, err = kto(capsys, "export", "--zookeeper", zk_chroot.connect_string, "-o", str(tmp_path / "out"))
    assert code == 1  # the test's chroot is empty: not a Kafka cluster
    assert "not a Kafka cluster" in err or "cluster/id" in err
    assert not (tmp_path / "out").exists()
