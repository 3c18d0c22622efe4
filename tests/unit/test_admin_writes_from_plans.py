"""What the Admin-protocol writer sends for a plan, and how it reads the brokers' answers: pure parts, without
brokers (the real ones answer in tests/real)."""

from __future__ import annotations

from kafka.admin import AlterConfigOp

from topic_operator.access.interface import Outcome
from topic_operator.admin.writer import _by_topic, _from_answers, config_operations
from topic_operator.kafka.errors import InvalidConfigurationError, PolicyViolationError, TopicExistsError
from topic_operator.model import Broker
from topic_operator.plan import AlterConfig, CreateTopic


def test_a_config_change_sends_only_the_keys_that_change() -> None:
    previous = {"retention.ms": "1000", "cleanup.policy": "delete", "segment.ms": "5"}
    wanted = {"retention.ms": "2000", "segment.ms": "5", "max.message.bytes": "2000000"}
    assert config_operations(previous, wanted) == {
        "max.message.bytes": (AlterConfigOp.SET, "2000000"),
        "retention.ms": (AlterConfigOp.SET, "2000"),
        "cleanup.policy": (AlterConfigOp.DELETE, None),
    }
    assert config_operations(wanted, wanted) == {}


def test_per_topic_answers_become_outcomes_in_the_brokers_words() -> None:
    actions = [CreateTopic(t, {0: (1,)}) for t in ("ok", "exists", "policy", "moving", "silent")]
    answers = {
        "ok": (0, None),
        "exists": (36, "Topic 'exists' already exists."),
        "policy": (44, "Topic replication factor must be 3"),
        "moving": (41, "The controller is in pre-migration mode."),
    }
    results = _by_topic(actions, answers, field="topicName")
    assert results["ok"].outcome is Outcome.APPLIED
    assert results["exists"].outcome is Outcome.CONFLICT  # re-read and planned again
    assert isinstance(results["exists"].error, TopicExistsError)
    assert results["policy"].outcome is Outcome.REJECTED
    assert isinstance(results["policy"].error, PolicyViolationError)
    assert str(results["policy"].error) == "Topic replication factor must be 3"
    assert results["moving"].outcome is Outcome.NOT_WRITTEN
    assert "silent" not in results  # the caller reports it as unknown


def test_config_answers_join_every_refusal_of_one_topic() -> None:
    action = AlterConfig("t", {"foo.bar": "1"}, None)
    result = _from_answers(
        action,
        [
            "[Error 40] InvalidConfigurationError: Unknown topic config name: foo.bar",
            "[Error 40] InvalidConfigurationError: broker 2: no",
        ],
        field="config",
    )
    assert result.outcome is Outcome.REJECTED
    assert isinstance(result.error, InvalidConfigurationError)
    assert str(result.error) == "Unknown topic config name: foo.bar; broker 2: no"
    assert _from_answers(action, [], field="config").outcome is Outcome.APPLIED


def test_the_cluster_s_own_refusals_turn_planned_changes_into_rejections() -> None:
    from topic_operator.kafka.errors import PolicyViolationError
    from topic_operator.model import ClusterState, TopicSpec
    from topic_operator.plan import TopicStatus, plan, refused

    state = ClusterState("c", {1: Broker(1, "a")}, {})
    planned = plan([TopicSpec("c", "a", 1, 1), TopicSpec("c", "b", 1, 1)], state)
    refusal = PolicyViolationError("Topic b must have 3 replicas")
    checked = refused(planned, {"b": refusal})
    a, b = checked.topics
    assert (a.status, len(a.actions)) == (TopicStatus.CREATE, 1)
    assert (b.status, b.actions, b.rejections) == (TopicStatus.REJECTED, (), (refusal,))
    assert b.changes == planned.topics[1].changes
    assert refused(planned, {}) is planned
