"""KafkaCluster handlers against a real ZooKeeper: connected and described (brokers, racks, controller, topic
counts, unmanaged topics), or refused with a reason that says what to fix."""

from __future__ import annotations

from typing import Any

import kopf
import pytest
from k8s_world import World, kafka_cluster, kafka_topic, ready
from kazoo.client import KazooClient

from harness.kafka_cluster import CLUSTER_ID
from harness.states import cluster_spec, spec
from harness.zookeeper import ZkChroot
from topic_operator.reconcile import Reconciler
from topic_operator.zookeeper.store import ZooKeeperStore
from topic_operator.zookeeper.znodes import MigrationZNode

pytestmark = pytest.mark.zookeeper


def test_a_connected_cluster_reports_itself(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    Reconciler(ZooKeeperStore(kafka_zk), cluster_spec()).apply([spec("legacy", 1, 1), spec("orders", 1, 1)])
    orders = kafka_topic("orders", partitions=1, replicas=1)

    async def scenario() -> None:
        world.add(orders)
        await world.cluster_changed(cluster)

    world.run(scenario)
    status = cluster["status"]
    assert status["connected"] is True
    assert (status["clusterId"], status["controller"], status["brokerCount"]) == (CLUSTER_ID, 0, 6)
    assert status["racks"] == ["rack-a", "rack-b", "rack-c"]
    assert status["brokers"][:2] == [{"id": 0, "rack": "rack-a"}, {"id": 1, "rack": "rack-b"}]
    assert status["topics"] == {"managed": 1, "unmanaged": 1}
    assert status["unmanagedTopics"] == ["legacy"]
    assert (ready(cluster)["status"], ready(cluster)["reason"]) == ("True", "Connected")
    assert world.kube.events_of("main") == [("Normal", "Connected")]
    assert world.ctx.metrics.value("kto_unmanaged_topics", cluster="team-a/main") == 1


def test_a_path_that_is_not_a_kafka_cluster_is_refused(
    world: World, zk_chroot: ZkChroot, zk: KazooClient
) -> None:
    """The chroot exists but no broker ever registered there (a typo of the chroot, say)."""
    empty = kafka_cluster("empty", zk_chroot.connect_string)

    async def scenario() -> None:
        with pytest.raises(kopf.TemporaryError):
            await world.cluster_changed(empty)

    world.run(scenario)
    assert empty["status"]["connected"] is False
    assert (ready(empty)["status"], ready(empty)["reason"]) == ("False", "NotAKafkaCluster")
    for name in ("kto_cluster_errors_total", "kto_zookeeper_errors_total"):  # the second: its deprecated name
        assert world.ctx.metrics.value(name, cluster="team-a/empty", kind="not_a_kafka_cluster") == 1, name


def test_a_missing_chroot_is_refused(world: World, zk_chroot: ZkChroot) -> None:
    typo = kafka_cluster("typo", f"{zk_chroot.server_hosts}/no-such-chroot")

    async def scenario() -> None:
        with pytest.raises(kopf.TemporaryError):
            await world.cluster_changed(typo)

    world.run(scenario)
    assert ready(typo)["reason"] == "ChrootMissing"


def test_a_missing_secret_is_reported(world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient) -> None:
    secured = kafka_cluster(
        "secured",
        zk_chroot.connect_string,
        zookeeper={"connect": zk_chroot.connect_string, "auth": {"type": "Digest", "secretName": "zk-creds"}},
    )

    async def scenario() -> None:
        with pytest.raises(kopf.TemporaryError, match="Secret team-a/zk-creds does not exist"):
            await world.cluster_changed(secured)
        world.kube.add_secret("team-a", "zk-creds", username="kafka", password="s3cret")
        await world.cluster_changed(secured)

    world.run(scenario)
    assert (ready(secured)["status"], ready(secured)["reason"]) == ("True", "Connected")
    assert [r for _, r in world.kube.events_of("secured")] == ["SecretMissing", "Connected"]


def test_an_unreadable_broker_registration_is_listed_and_named_where_it_matters(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    """Someone else's malformed broker registration is listed in the cluster status, not fatal; a topic whose
    rack-aware placement needs that broker's rack is refused naming the znode, and nothing is written."""
    kafka_zk.create("/brokers/ids/9", b"{not json")
    orders = kafka_topic("orders", partitions=1, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        world.add(orders)
        await world.topic_changed(orders)

    world.run(scenario)
    status = cluster["status"]
    assert [entry["znode"] for entry in status["unreadable"]] == ["/brokers/ids/9"]
    assert "not JSON" in status["unreadable"][0]["problem"]
    assert 9 not in [broker["id"] for broker in status["brokers"]]
    assert (ready(cluster)["status"], ready(cluster)["reason"]) == ("True", "Connected")
    assert "listed in status.unreadable" in ready(cluster)["message"]
    assert (ready(orders)["status"], ready(orders)["reason"]) == ("False", "Invalid")
    assert "/brokers/ids/9" in ready(orders)["message"]
    assert kafka_zk.exists("/brokers/topics/orders") is None


def test_a_cluster_migrating_to_kraft_is_not_ready_and_gets_no_write(
    world: World, cluster: dict[str, Any], kafka_zk: KazooClient
) -> None:
    """Znodes written during a migration are not seen by the KRaft metadata (semantics §15): the cluster turns
    not Ready with the reason, and a topic declared on it is refused with ZooKeeper left as it was."""
    kafka_zk.create(MigrationZNode.path, MigrationZNode.encode(3000, 1))
    orders = kafka_topic("orders", partitions=1, replicas=1)

    async def scenario() -> None:
        await world.cluster_changed(cluster)
        world.add(orders)
        await world.topic_changed(orders)  # refused, not retried: the status says why

    world.run(scenario)
    status = cluster["status"]
    assert status["unreadable"] == []
    assert "3000" in status["kraftMigration"]
    assert (ready(cluster)["status"], ready(cluster)["reason"]) == ("False", "KRaftMigration")
    assert (ready(orders)["status"], ready(orders)["reason"]) == ("False", "KRaftMigration")
    assert "KRaft" in ready(orders)["message"]
    assert kafka_zk.exists("/brokers/topics/orders") is None
    assert kafka_zk.exists("/config/topics/orders") is None


def test_the_release_zookeeper_shows_is_reported_with_a_warning_when_it_contradicts(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    """The simulated brokers register as 3.9 brokers do (/controller version 2): a KafkaCluster declaring 3.3 is
    told, in its status and its Ready message, with both releases."""
    declared_old = kafka_cluster("old", zk_chroot.connect_string, kafkaVersion="3.3")
    matching = kafka_cluster("match", zk_chroot.connect_string, kafkaVersion="3.9")

    async def scenario() -> None:
        await world.cluster_changed(declared_old)
        await world.cluster_changed(matching)

    world.run(scenario)
    release = declared_old["status"]["kafkaRelease"]
    assert (release["declared"], release["seen"], release["writtenAs"]) == ("3.3", "3.4 or later", "3.3")
    assert release["warning"].startswith(
        "kafkaVersion 3.3 is declared, but ZooKeeper shows Kafka 3.4 or later"
    )
    assert (
        "/controller is version 2 with kraftControllerEpoch, written by Kafka 3.4 or later"
        in release["clues"]
    )
    assert release["warning"] in ready(declared_old)["message"]
    assert ready(declared_old)["status"] == "True"  # a warning, not a refusal
    assert "warning" not in matching["status"]["kafkaRelease"]
    assert matching["status"]["kafkaRelease"]["writtenAs"] == "3.9"


def test_secrets_that_rbac_keeps_from_the_operator_name_the_missing_role_binding(
    world: World, zk_chroot: ZkChroot, kafka_zk: KazooClient
) -> None:
    """The operator reads Secrets only where a RoleBinding lets it: elsewhere the KafkaCluster is Ready=False
    SecretForbidden naming the RoleBinding, its other clusters are served, and the grant is picked up on retry."""
    secured = kafka_cluster(
        "secured",
        zk_chroot.connect_string,
        zookeeper={"connect": zk_chroot.connect_string, "auth": {"type": "Digest", "secretName": "zk-creds"}},
    )
    plain = kafka_cluster("plain", zk_chroot.connect_string)
    world.kube.add_secret("team-a", "zk-creds", username="kafka", password="s3cret")
    world.kube.secrets_forbidden_in.add("team-a")

    async def scenario() -> None:
        with pytest.raises(
            kopf.TemporaryError, match="RoleBinding team-a/kafka-topic-operator-secrets is missing"
        ):
            await world.cluster_changed(secured)
        await world.cluster_changed(plain)
        world.kube.secrets_forbidden_in.clear()  # the RoleBinding created
        await world.cluster_changed(secured)

    world.run(scenario)
    assert [r for _, r in world.kube.events_of("secured")] == ["SecretForbidden", "Connected"]
    assert (ready(plain)["status"], ready(plain)["reason"]) == ("True", "Connected")
    assert (ready(secured)["status"], ready(secured)["reason"]) == ("True", "Connected")
