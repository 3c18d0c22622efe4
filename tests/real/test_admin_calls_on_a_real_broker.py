"""Every kafka-python 3.0 call the Admin-protocol store relies on, made against real Kafka 3.9 KRaft brokers, with
the answer's shape the product reads: the reason kafka-python is the client (the only Python client with all of
them: reassignments, features, per-broker ApiVersions, topic ids, incremental configs; ``kraft.md`` §1)."""

from __future__ import annotations

import uuid

import pytest
from kafka import TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

from harness.kafka_clients import topic_config
from harness.kraft_cluster import KRaftCluster
from harness.waiting import eventually
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import connected
from topic_operator.admin.metadata_answers import metadata_request
from topic_operator.admin.raw_answers import answers_as_bytes
from topic_operator.admin.reader import TOPIC_OVERRIDE_SOURCE
from topic_operator.admin.release import broker_release, metadata_version
from topic_operator.admin.store import AdminStore
from topic_operator.kafka.errors import InvalidConfigurationError
from topic_operator.plan import AlterConfig, CreateTopic

pytestmark = pytest.mark.timeout(180)


def test_each_admin_call_the_store_needs(kraft: KRaftCluster) -> None:
    settings = AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    one, two = f"calls-{uuid.uuid4().hex[:6]}", f"calls-{uuid.uuid4().hex[:6]}"
    with connected(settings, deadline=30) as admin:
        # DescribeCluster: the brokers and their racks (fenced ones are not listed), the cluster id
        cluster = admin.describe_cluster()
        assert cluster["cluster_id"] == kraft.cluster_id
        assert sorted((b["broker_id"], b["rack"]) for b in cluster["brokers"]) == [
            (1, "a"),
            (2, "b"),
            (3, "c"),
        ]

        # ApiVersions per broker and DescribeFeatures: the release and metadata.version
        assert broker_release(admin, [1, 2, 3]) == (3, 9)
        assert metadata_version(admin, 30) == "3.9-IV0"

        # CreateTopics with explicit assignments: validate_only writes nothing, and a real create answers the id
        request = {
            one: {"num_partitions": -1, "replication_factor": -1, "assignments": {0: [3, 1], 1: [1, 2]},
                  "configs": {"retention.ms": "60000"}},
            two: {"num_partitions": -1, "replication_factor": -1, "assignments": {0: [2]}},
        }  # fmt: skip
        checked = admin.create_topics(request, validate_only=True, raise_errors=False)
        assert [t["error_code"] for t in checked["topics"]] == [0, 0]
        assert one not in admin.list_topics()
        created = admin.create_topics(request, raise_errors=False)
        ids = {t["name"]: t["topic_id"] for t in created["topics"]}
        assert all(ids.values())

        # Metadata (DescribeTopics): the same ids, replicas in the order given, leaders and ISRs
        def described() -> dict[str, dict[int, list[int]]] | None:
            """The replicas, once the answering broker lists every topic with its partitions (it applies the
            controller's records at its own pace: a topic may show up before its partitions do)."""
            found = {t["name"]: t for t in admin.describe_topics([one, two])}
            assert str(found[one]["topic_id"]) == str(ids[one])
            replicas = {
                n: {p["partition_index"]: p["replica_nodes"] for p in t["partitions"]}
                for n, t in found.items()
            }
            return replicas if all(replicas.values()) else None

        assert eventually(described, timeout=30, what="the new topics in the metadata") == {
            one: {0: [3, 1], 1: [1, 2]},
            two: {0: [2]},
        }

        # CreatePartitions with the new partitions' assignments
        grown = admin.create_partitions({one: {"count": 3, "assignments": [[2, 3]]}}, raise_errors=False)
        assert [r.error_code for r in grown.results] == [0]

        # DescribeConfigs: a topic's own override is DYNAMIC_TOPIC_CONFIG; defaults are another source
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, one)])["topic"][one]
        assert configs["retention.ms"]["config_source"] == TOPIC_OVERRIDE_SOURCE
        assert all(
            v["config_source"] != TOPIC_OVERRIDE_SOURCE for k, v in configs.items() if k != "retention.ms"
        )

        # IncrementalAlterConfigs: SET and DELETE for two topics in one request
        answered = admin.alter_configs(
            [
                ConfigResource(ConfigResourceType.TOPIC, one, configs={"retention.ms": (AlterConfigOp.DELETE, None),
                                                                     "cleanup.policy": (AlterConfigOp.SET, "compact")}),
                ConfigResource(ConfigResourceType.TOPIC, two, configs={"segment.ms": (AlterConfigOp.SET, "3600000")}),
            ],
            raise_on_unknown=False,
            incremental=True,
        )  # fmt: skip
        assert answered == {"topic": {one: "OK", two: "OK"}}

        def overrides() -> dict[str, str] | None:
            """The answering broker may not have applied the controller's config records yet: asked again."""
            after = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, one)])["topic"][one]
            found = {k: v["value"] for k, v in after.items() if v["config_source"] == TOPIC_OVERRIDE_SOURCE}
            return found if found == {"cleanup.policy": "compact"} else None

        assert eventually(overrides, timeout=30, what="the overrides set and deleted") == {
            "cleanup.policy": "compact"
        }

        # AlterPartitionReassignments, followed by ListPartitionReassignments until the controller is done
        moved = admin.alter_partition_reassignments({TopicPartition(two, 0): [2, 3, 1]})
        assert moved == {TopicPartition(two, 0): None}
        eventually(
            lambda: admin.list_partition_reassignments() == {}, timeout=60, what="the reassignment done"
        )
        assert described()[two] == {0: [2, 3, 1]}

        # validate_only through the store: the brokers' own verdict on what the planner would send, nothing written
        store = AdminStore(admin, settings, deadline=30)
        probe = f"calls-{uuid.uuid4().hex[:6]}"
        verdict = store.validate(
            [
                CreateTopic(probe, {0: (1, 2)}, {"no.such.config": "1"}),
                AlterConfig(one, {"retention.ms": "soon"}, None, previous={"cleanup.policy": "compact"}),
                AlterConfig(two, {"segment.ms": "7200000"}, None, previous={"segment.ms": "3600000"}),
            ]
        )
        assert {topic: (type(e), str(e)) for topic, e in verdict.items()} == {
            probe: (InvalidConfigurationError, "Unknown topic config name: no.such.config"),
            one: (InvalidConfigurationError, verdict[one].message),
        }
        assert "retention.ms" in str(verdict[one])
        assert probe not in admin.list_topics()
        assert topic_config(kraft.bootstrap_servers, two) == {"segment.ms": "3600000"}

        # a read that describes only the overrides a batch needs (the rest of the cluster read whole)
        partial = store.read_cluster(configs_of=[two])
        assert {one, two} <= set(partial.topics)
        assert (partial.topics[one].config, partial.topics[two].config) == ({}, {"segment.ms": "3600000"})
        assert store.read_cluster().topics[one].config == {"cleanup.policy": "compact"}

        # DeleteTopics
        deleted = admin.delete_topics([one, two], raise_errors=False)
        assert sorted((t["name"], t["error_code"]) for t in deleted["topics"]) == sorted([(one, 0), (two, 0)])
        eventually(lambda: not {one, two} & set(admin.list_topics()), timeout=30, what="the topics gone")


def test_more_requests_than_a_connection_carries_are_each_sent_once(kraft: KRaftCluster) -> None:
    """A read sends each broker more requests than kafka-python lets one connection carry at a time (it refuses
    the surplus as a paused node rather than queueing it): each is still sent exactly once, none is refused
    and sent again after a back-off, and every answer comes back."""
    settings = AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(",")))
    with connected(settings, deadline=30) as admin:
        brokers = sorted(int(b["broker_id"]) for b in admin.describe_cluster()["brokers"])
        per_connection = int(admin.config["max_in_flight_requests_per_connection"])
        requests = [metadata_request(None) for _ in range(3 * per_connection * len(brokers))]
        manager = admin._manager
        sent: list[int] = []
        send = manager.send

        def counted(request: object, node_id: int | None = None, **rest: object) -> object:
            sent.append(node_id if node_id is not None else -1)
            return send(request, node_id=node_id, **rest)

        manager.send = counted
        try:
            answered = [a.index for a in answers_as_bytes(admin, requests, brokers, deadline=30)]
        finally:
            manager.send = send
    assert sorted(answered) == list(range(len(requests)))
    assert len(sent) == len(requests), f"{len(sent) - len(requests)} requests were sent again"
    assert sorted(set(sent)) == brokers
