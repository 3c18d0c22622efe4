"""The whole path: a KafkaTopic applied to the real API server becomes, through ``kto run``, a topic on real
Kafka brokers (every distribution found) that takes records on every partition, and a config change declared
on the KafkaTopic is processed by every broker, while a config key the KafkaCluster leaves to another writer is
never drift, and adopting a topic keeps the overrides the declarations do not own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from harness.kafka_clients import admin_client, round_trip, settled, topic_config, wait_for_leaders
from harness.kto_objects import (
    KTO_API,
    events_of,
    kafka_cluster,
    kafka_topic,
    ready,
    wait_cluster_ready,
    wait_topic,
)
from harness.kube_client import KubeClient
from harness.operator_process import Operator
from harness.real_kafka import KafkaBrokers
from harness.waiting import eventually
from harness.zookeeper import connected
from topic_operator.zookeeper.znodes import TopicZNode

pytestmark = pytest.mark.timeout(180)


def test_a_kafkatopic_becomes_a_topic_on_real_brokers_that_takes_records(
    kube: KubeClient, namespace: str, kafka: KafkaBrokers, operators: Callable[..., Operator], tmp_path: Path
) -> None:
    operator = operators(KTO_DRIFT_INTERVAL="1")
    operator.wait_ready()
    # min.insync.replicas is another tool's (managedTopicConfig), and never the KafkaTopics'
    kube.create("kafkaclusters", kafka_cluster(namespace, "main", kafka.connect_string,
                                               kafkaVersion=kafka.distribution.line,
                                               managedTopicConfig={"allBut": ["min.insync.replicas"]}))  # fmt: skip
    cluster = wait_cluster_ready(kube, namespace)
    assert sorted(b["id"] for b in cluster["status"]["brokers"]) == [b.id for b in kafka.brokers]

    topic = f"orders-{namespace}"
    kube.create("kafkatopics", kafka_topic(namespace, "orders", topicName=topic, partitions=6,
                                           config={"retention.ms": 3600000}))  # fmt: skip
    wait_topic(kube, namespace, "orders", 1, "Created")
    wait_for_leaders(kafka.bootstrap_servers, topic, 6)
    round_trip(kafka.bootstrap_servers, topic, 6)
    with connected(kafka.connect_string) as zk:
        topic_id = TopicZNode.decode(topic, zk.get(TopicZNode.path(topic))[0]).topic_id
    assert topic_id, "the controller gives every topic an id"

    kube.patch(KTO_API, "kafkatopics", namespace, "orders", {"spec": {"config": {"retention.ms": 7200000}}})
    wait_topic(kube, namespace, "orders", 2, "Updated")
    marker = f"Processing override for entityPath: topics/{topic} with config: "
    eventually(
        lambda: all(any("7200000" in line for line in kafka.log_lines(b.id, marker)) for b in kafka.brokers),
        timeout=30,
        what="every broker processing the new retention.ms",
    )
    assert topic_config(kafka.bootstrap_servers, topic) == {"retention.ms": "7200000"}

    # another writer sets the key the KafkaTopics leave alone, through the brokers (which write ZooKeeper):
    # through three drift checks, nothing is reverted and nothing is reported as drift
    with admin_client(kafka.bootstrap_servers) as other_tool:
        other_tool.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, configs={"min.insync.replicas": "2"})]
        )
    shared = {"retention.ms": "7200000", "min.insync.replicas": "2"}
    assert settled(lambda: topic_config(kafka.bootstrap_servers, topic), shared.__eq__) == shared
    checks = operator.metric("kto_drift_check_duration_seconds_count", cluster=f"{namespace}/main") or 0.0
    eventually(
        lambda: (
            (operator.metric("kto_drift_check_duration_seconds_count", cluster=f"{namespace}/main") or 0)
            >= checks + 3
        ),
        timeout=60,
        what="three drift checks after the other writer's change",
    )
    assert topic_config(kafka.bootstrap_servers, topic) == shared
    assert ("Warning", "DriftDetected") not in events_of(kube, namespace, "orders")
    assert not kube.get(KTO_API, "kafkatopics", namespace, "orders")["status"].get("drift")

    # adoption keeps the overrides the declarations do not own: the cluster's min.insync.replicas, the KafkaTopic's
    # own unmanagedConfig segment.ms; the owned max.message.bytes it does not declare goes
    legacy = f"legacy-{namespace}"
    with admin_client(kafka.bootstrap_servers) as other_tool:
        other_tool.create_topics([NewTopic(legacy, 2, 3, topic_configs={
            "retention.ms": "60000", "min.insync.replicas": "2", "segment.ms": "3600000",
            "max.message.bytes": "100000"})])  # fmt: skip
    wait_for_leaders(kafka.bootstrap_servers, legacy, 2)
    kube.wait_for(  # the operator has seen it as a topic nobody declares: the KafkaTopic then adopts it
        lambda: (
            legacy
            in (kube.get(KTO_API, "kafkaclusters", namespace, "main").get("status") or {}).get(
                "unmanagedTopics", []
            )
        ),
        timeout=30,
        what=f"{legacy} among the KafkaCluster's unmanaged topics",
    )
    kube.create("kafkatopics", kafka_topic(namespace, "legacy", topicName=legacy, partitions=2,
                                           config={"retention.ms": 120000}, unmanagedConfig=["segment.ms"]))  # fmt: skip
    # Ready says Adopted, or Created when the operator takes the topic for one a lost attempt of its own made: the
    # overrides kept are what is checked here
    kube.wait_for(lambda: ready(kube.get(KTO_API, "kafkatopics", namespace, "legacy")).get("status") == "True",
                  timeout=30, what="the adopted KafkaTopic Ready")  # fmt: skip
    adopted = {"retention.ms": "120000", "min.insync.replicas": "2", "segment.ms": "3600000"}
    assert settled(lambda: topic_config(kafka.bootstrap_servers, legacy), adopted.__eq__) == adopted
    assert operator.stop() == 0
