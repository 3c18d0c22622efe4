"""What the fault tests of the writer share: the batches they write, a fresh read afterwards, and the checks
that every write is whole and reported truthfully (tests/zookeeper/test_writes_survive_*.py)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from kazoo.client import KazooClient, TransactionRequest

from harness.kafka_cluster import SIX_BROKERS_THREE_RACKS
from harness.zookeeper import connected
from topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from topic_operator.model import ClusterState
from topic_operator.plan import AlterConfig, CreateTopic
from topic_operator.zookeeper.errors import WriteConflictError, ZooKeeperUnavailableError
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import Outcome, WriteResult
from topic_operator.zookeeper.znodes import ConfigChangeZNode


class RecordedTransaction(TransactionRequest):  # type: ignore[misc]  # kazoo is untyped
    """A real transaction that also records each commit's answer, so a test can count what was sent."""

    def __init__(self, client: KazooClient, log: list[Any]) -> None:
        super().__init__(client)
        self._log = log

    def commit_async(self) -> Any:
        answer = super().commit_async()
        self._log.append(answer)
        return answer


def creations(count: int, seed: int = 7) -> list[CreateTopic]:
    """Rack-aware RF 3 topics over the six registered brokers, each with its own config values."""
    brokers = [BrokerMetadata(i, rack) for i, rack in enumerate(SIX_BROKERS_THREE_RACKS)]
    rng = random.Random(seed)
    actions = []
    for i in range(count):
        assignment = assign_replicas_to_brokers(brokers, 6, 3, rng=rng)
        actions.append(
            CreateTopic(
                f"events-{i:03d}",
                {p: tuple(replicas) for p, replicas in assignment.items()},
                {"retention.ms": str(3_600_000 + i), "cleanup.policy": "delete", "min.insync.replicas": "2"},
            )
        )
    return actions


def new_config(i: int) -> dict[str, str]:
    return {"retention.ms": str(86_400_000 + i), "cleanup.policy": "compact", "segment.bytes": "104857600"}


def config_changes(topics: Sequence[CreateTopic], before: ClusterState) -> list[AlterConfig]:
    return [
        AlterConfig(t.topic, new_config(i), before.topics[t.topic].config_znode_version)
        for i, t in enumerate(topics)
    ]


def fresh_read(connect_string: str) -> tuple[ClusterState, Counter[str]]:
    """The cluster and the notifications per entity path, read by a client that saw none of the fault."""
    with connected(connect_string) as reader:
        reader.sync("/")
        state = read_cluster(reader)
        names = reader.get_children(ConfigChangeZNode.path)
        answers = {n: reader.get_async(f"{ConfigChangeZNode.path}/{n}") for n in names}
        notified: Counter[str] = Counter()
        for name, answer in answers.items():
            entity = ConfigChangeZNode.decode(f"{ConfigChangeZNode.path}/{name}", answer.get()[0])
            assert entity is not None, f"unreadable notification {name}"
            notified[entity] += 1
    return state, notified


def assert_truthful_failures(results: Sequence[WriteResult], landed: set[str]) -> None:
    """APPLIED exactly for the writes that landed; the others carry a conflict or unavailable error."""
    for result in results:
        if result.action.topic in landed:
            assert result.outcome is Outcome.APPLIED, f"false failure for a write that landed: {result}"
            assert result.error is None, result
        else:
            assert result.outcome is not Outcome.APPLIED, f"reported applied, not there: {result}"
            assert isinstance(result.error, WriteConflictError | ZooKeeperUnavailableError), result


def assert_creations_whole(
    state: ClusterState,
    notified: Counter[str],
    actions: Sequence[CreateTopic],
    results: Sequence[WriteResult],
) -> None:
    """Each topic is all there (topic and config znode, as written) or absent, and results say which."""
    assert state.unreadable_topics == {}
    assert state.orphan_configs == {}, "a config znode without its topic: a creation was half-applied"
    for action in actions:
        topic = state.topics.get(action.topic)
        if topic is None:
            continue
        assert topic.partitions == dict(action.assignment)
        assert topic.config == dict(action.config)
        assert (topic.topic_znode_version, topic.config_znode_version) == (0, 0)
    assert notified == Counter(), "creating a topic announces no config change"
    assert_truthful_failures(results, set(state.topics))


def assert_config_changes_whole(
    state: ClusterState,
    notified: Counter[str],
    topics: Sequence[CreateTopic],
    changes: Sequence[AlterConfig],
    results: Sequence[WriteResult],
) -> set[str]:
    """Each config is the new one with exactly one notification, or the old one with none; results say which.
    Returns the topics whose change landed."""
    applied = set()
    for i, (created, change) in enumerate(zip(topics, changes, strict=True)):
        topic = state.topics[change.topic]
        assert topic.partitions == dict(created.assignment)
        if topic.config == new_config(i):
            assert topic.config_znode_version == 1
            assert notified[f"topics/{change.topic}"] == 1, f"{change.topic}: applied once, announced twice?"
            applied.add(change.topic)
        else:
            assert topic.config == dict(created.config), f"{change.topic}: neither old nor new config"
            assert topic.config_znode_version == 0
            assert notified[f"topics/{change.topic}"] == 0, f"{change.topic}: announced but not applied"
    assert sum(notified.values()) == len(applied), f"notifications for other entities: {notified}"
    assert_truthful_failures(results, applied)
    return applied
