"""A write ZooKeeper refuses is reported with the znode and the reason, never as a bare "rejected".

A secured Kafka's ACLs may let a tool read ``/brokers/topics`` and ``/config/topics`` and not write them. Against
such a cluster ``kto apply`` printed ``t28: rejected`` and an empty line: kazoo's ``NoAuthError`` has no text.
Every error code kazoo knows now has words, and each refusal names the znode of the operation refused.
"""

from __future__ import annotations

from pathlib import Path

import kazoo.exceptions
import pytest
from kazoo.client import KazooClient
from kazoo.security import ACL, ANYONE_ID_UNSAFE, Permissions

from harness.cli import kafka_topic, kto, write_manifests
from harness.zookeeper import ZkChroot
from topic_operator.zookeeper.writer import WRITE_REFUSALS, write_refusal
from topic_operator.zookeeper.znodes import TopicZNode

READ_ONLY = [ACL(Permissions.READ, ANYONE_ID_UNSAFE)]


def test_every_error_code_kazoo_knows_has_words() -> None:
    known = set(kazoo.exceptions.EXCEPTIONS.values())
    assert known <= set(WRITE_REFUSALS), sorted(c.__name__ for c in known - set(WRITE_REFUSALS))
    for error_class in known:
        message = str(write_refusal("orders", "/config/topics/orders", error_class()))
        assert "/config/topics/orders" in message
        assert error_class.__name__ in message
        assert WRITE_REFUSALS[error_class] in message
        assert message.endswith("nothing of this change was written")


@pytest.mark.parametrize(
    "grow", [False, True], ids=["a new topic under read-only parents", "growth of a read-only topic znode"]
)
def test_kto_apply_names_the_znode_and_why_and_writes_nothing(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    zk_chroot: ZkChroot,
    kafka_zk: KazooClient,
    grow: bool,
) -> None:
    manifests = write_manifests(tmp_path / "a.yaml", kafka_topic("t28", 3))
    if grow:
        assert (
            kto(capsys, "apply", "-f", str(manifests), "--zookeeper", zk_chroot.connect_string, "--yes")[0]
            == 0
        )
        kafka_zk.set_acls("/brokers/topics/t28", READ_ONLY)
        manifests = write_manifests(tmp_path / "b.yaml", kafka_topic("t28", 6))
        refused_path = "/brokers/topics/t28"
    else:
        for parent in ("/brokers/topics", "/config/topics"):
            kafka_zk.ensure_path(parent)
            kafka_zk.set_acls(parent, READ_ONLY)
        refused_path = "/config/topics/t28"  # a creation's first operation: the config znode
    before = {path: kafka_zk.get(path)[1].mzxid for path in ("/brokers/topics", "/config/topics")}

    code, out, err = kto(
        capsys, "apply", "-f", str(manifests), "--zookeeper", zk_chroot.connect_string, "--yes"
    )

    assert code == 1, out + err
    report = out[out.index("t28: rejected") :]
    detail = report.splitlines()[1].strip()
    assert detail.startswith(
        f"topic 't28': ZooKeeper refused to write {refused_path} (NoAuthError): not authorized"
    )
    assert "nothing of this change was written" in detail
    assert {path: kafka_zk.get(path)[1].mzxid for path in before} == before
    if grow:
        assert len(TopicZNode.decode("t28", kafka_zk.get("/brokers/topics/t28")[0]).partitions) == 3
    else:
        assert kafka_zk.get_children("/brokers/topics") == []
