"""KafkaCluster + Secret bodies -> ZooKeeper settings: digest and SASL credentials, TLS material written 0600,
and a fingerprint that changes exactly when the session must (not for a policy such as spec.reassignment)."""

from __future__ import annotations

import base64
import stat
from pathlib import Path
from typing import Any

import pytest
from k8s_world import World, kafka_cluster
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.k8s.conditions import Reason
from topic_operator.k8s.kafkaclusters.cluster_config import ClusterConfigError, cluster_config, secret_names
from topic_operator.manifests.loader import load_objects
from topic_operator.model import ReassignmentPolicy


def cluster(**zookeeper: Any) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": "main"},
        "spec": {"zookeeper": {"connect": "zk-0:2181/kafka", **zookeeper}},
    }


def secret(**values: str) -> dict[str, Any]:
    return {"data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()}}


def test_digest_and_sasl_credentials(tmp_path: Path) -> None:
    digest = cluster(auth={"type": "Digest", "secretName": "creds"})
    config = cluster_config(
        digest,
        {"creds": secret(username="kafka", password="pw")},
        material_dir=tmp_path,
        connection_timeout=5,
    )
    assert config.settings.digest is not None
    assert (config.settings.digest.user, config.settings.digest.password.reveal()) == ("kafka", "pw")
    assert "pw" not in repr(config.settings)
    sasl = cluster(auth={"type": "SASL", "secretName": "creds", "usernameKey": "u", "passwordKey": "p"})
    config = cluster_config(
        sasl,
        {"creds": {"stringData": {"u": "admin", "p": "pw2"}}},
        material_dir=tmp_path,
        connection_timeout=5,
    )
    assert config.settings.sasl is not None
    assert config.settings.sasl.kazoo_options()["username"] == "admin"
    rotated = cluster_config(
        sasl,
        {"creds": {"stringData": {"u": "admin", "p": "pw3"}}},
        material_dir=tmp_path,
        connection_timeout=5,
    )
    assert rotated.fingerprint != config.fingerprint


def test_tls_material_is_written_privately(tmp_path: Path) -> None:
    body = cluster(tls={"secretName": "zk-tls"})
    assert secret_names(body) == ["zk-tls"]
    config = cluster_config(body, {"zk-tls": secret(**{"ca.crt": "CA", "tls.crt": "CERT", "tls.key": "KEY"})},
                            material_dir=tmp_path, connection_timeout=5)  # fmt: skip
    tls = config.settings.tls
    assert tls is not None
    assert tls.ca_file == tmp_path / "ns" / "main" / "ca.pem"
    assert tls.key_file is not None
    assert tls.key_file.read_text() == "KEY"
    assert stat.S_IMODE(tls.key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "ns" / "main").stat().st_mode) == 0o700
    ca_only = cluster_config(
        body, {"zk-tls": secret(**{"ca.crt": "CA2"})}, material_dir=tmp_path, connection_timeout=5
    )
    assert ca_only.settings.tls is not None
    assert ca_only.settings.tls.cert_file is None
    assert ca_only.fingerprint != config.fingerprint


def test_problems_carry_their_reason(tmp_path: Path) -> None:
    body = cluster(auth={"type": "Digest", "secretName": "creds"})
    with pytest.raises(ClusterConfigError, match="Secret ns/creds does not exist") as missing:
        cluster_config(body, {"creds": None}, material_dir=tmp_path, connection_timeout=5)
    assert missing.value.reason is Reason.SECRET_MISSING
    with pytest.raises(ClusterConfigError, match="has no key password"):
        cluster_config(body, {"creds": secret(username="kafka")}, material_dir=tmp_path, connection_timeout=5)
    half = cluster(tls={"secretName": "t"})
    with pytest.raises(ClusterConfigError, match="half of a client certificate pair"):
        cluster_config(half, {"t": secret(**{"tls.crt": "C"})}, material_dir=tmp_path, connection_timeout=5)
    bad = {"metadata": {"namespace": "ns", "name": "x"}, "spec": {"zookeeper": {"connect": "zk-0:99999"}}}
    with pytest.raises(ClusterConfigError, match="port"):
        cluster_config(bad, {}, material_dir=tmp_path, connection_timeout=5)


def test_the_reassignment_policy_reaches_the_cluster_spec_and_not_the_fingerprint(tmp_path: Path) -> None:
    """The operator reads a KafkaCluster's policy with the manifest loader (``connect_cluster``); the policy is
    no part of the session's fingerprint, so turning reassignment on or changing its throttle keeps the session."""
    plain = {**cluster(), "apiVersion": "kto.dev/v1alpha1", "kind": "KafkaCluster"}
    on = {
        **plain,
        "spec": {**plain["spec"], "reassignment": {"enabled": True, "throttleBytesPerSecond": 10485760}},
    }
    slower = {
        **plain,
        "spec": {**plain["spec"], "reassignment": {"enabled": True, "throttleBytesPerSecond": 1024}},
    }
    specs = [load_objects([body]).clusters for body in (plain, on, slower)]
    assert [[c.reassignment for c in found] for found in specs] == [
        [ReassignmentPolicy()],
        [ReassignmentPolicy(True, 10485760)],
        [ReassignmentPolicy(True, 1024)],
    ]
    fingerprints = {
        cluster_config(body, {}, material_dir=tmp_path, connection_timeout=5).fingerprint
        for body in (plain, on, slower)
    }
    assert len(fingerprints) == 1


@pytest.mark.zookeeper
def test_a_change_of_the_reassignment_policy_alone_keeps_the_session(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    """End to end through the KafkaCluster handler: same handle, same kazoo client, the new policy planned with."""
    body = kafka_cluster("main", zk_chroot.connect_string)

    async def scenario() -> None:
        await world.cluster_changed(body)
        before = world.ctx.clusters.get(("team-a", "main"))
        assert before is not None
        assert before.spec.reassignment == ReassignmentPolicy()
        client, reconciler = before.link.client, before.reconciler
        world.edit(body, reassignment={"enabled": True, "throttleBytesPerSecond": 10485760})
        await world.cluster_changed(body)
        after = world.ctx.clusters.get(("team-a", "main"))
        assert after is before
        assert after.link.client is client
        assert after.spec.reassignment == ReassignmentPolicy(True, 10485760)
        assert after.reconciler is not reconciler

    world.run(scenario)
    assert world.kube.events_of("main") == [("Normal", "Connected")]
