"""New topics: Kafka's creation checks in order, placement by the port, reproducible for a seed."""

import pytest

from harness.states import cluster_spec, cluster_state, existing, spec
from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.kafka.errors import (
    AdminOperationError,
    BrokerNotAvailableError,
    InvalidConfigurationError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidTopicError,
    TopicExistsError,
)
from topic_operator.plan import Change, CreateTopic, TopicStatus, plan, plan_topic

RACK_OF = {0: "rack-a", 1: "rack-b", 2: "rack-c", 3: "rack-a", 4: "rack-b", 5: "rack-c"}


def test_create_places_replicas_across_racks_and_keeps_canonical_config() -> None:
    result = plan_topic(spec("orders", 12, 3, {"retention.ms": "1000"}), cluster_state())
    assert result.status is TopicStatus.CREATE
    [action] = result.actions
    assert isinstance(action, CreateTopic)
    assert sorted(action.assignment) == list(range(12))
    assert all(len({RACK_OF[b] for b in replicas}) == 3 for replicas in action.assignment.values())
    assert action.config == {"retention.ms": "1000"}
    assert action.orphan_config_version is None
    assert Change("partitions", None, 12) in result.changes
    assert Change("config.retention.ms", None, "1000") in result.changes


def test_same_inputs_and_seed_give_the_same_plan_and_other_topics_do_not_matter() -> None:
    alone = plan([spec("orders", 12)], cluster_state(), seed=7)
    crowded = plan([spec("a", 1), spec("orders", 12), spec("z", 5)], cluster_state(), seed=7)
    assert alone.for_topic("orders") == crowded.for_topic("orders")
    assert plan([spec("orders", 12)], cluster_state(), seed=7) == alone
    other_seed = plan([spec("orders", 12)], cluster_state(), seed=8).for_topic("orders")
    assert other_seed is not None
    assert other_seed.actions != alone.topics[0].actions  # the seed picks a different random start


def test_an_orphan_config_is_overwritten_at_its_version() -> None:
    [action] = plan_topic(spec("orders"), cluster_state(orphan_configs={"orders": 4})).actions
    assert isinstance(action, CreateTopic)
    assert action.orphan_config_version == 4


def test_manual_assignment_is_used_as_declared() -> None:
    declared = {0: (0, 1, 2), 1: (3, 4, 5)}
    [action] = plan_topic(spec("m", 2, 3, assignment=declared), cluster_state()).actions
    assert isinstance(action, CreateTopic)
    assert action.assignment == declared


@pytest.mark.parametrize(
    ("declared", "cls", "message"),
    [
        (
            spec("m", 2, 3, assignment={0: (0, 1, 2)}),
            InvalidReplicaAssignmentError,
            "replicaAssignment lists 1 partitions with 3 replicas, but the topic declares 2 partitions with 3 replicas.",
        ),
        (
            spec("m", 1, 2, assignment={0: (0, 9)}),
            BrokerNotAvailableError,
            "Some brokers specified for partition id 0 are not available. Specified brokers: 0, 9, available "
            "brokers: 0, 1, 2, 3, 4, 5.",
        ),
        (
            spec("m", 1, 2, assignment={0: (1, 1)}),
            InvalidReplicaAssignmentError,
            "Duplicate replica assignment found: Map(0 -> List(1, 1))",
        ),
        (
            spec("m", 3, 7),
            InvalidReplicationFactorError,
            "Replication factor: 7 larger than available brokers: 6.",
        ),
        (spec("bad/name"), InvalidTopicError, None),
        (spec("__consumer_offsets"), InvalidRequestError, None),
        (spec("m", config={"retention.ms": "7d"}), InvalidConfigurationError, None),
    ],
)
def test_rejections_name_kafkas_rule_and_plan_nothing(declared, cls, message) -> None:  # type: ignore[no-untyped-def]
    result = plan_topic(declared, cluster_state())
    assert result.status is TopicStatus.REJECTED
    assert result.actions == ()
    [error] = result.rejections
    assert type(error) is cls or isinstance(error, cls)
    if message is not None:
        assert str(error) == message


def test_collisions_with_existing_and_with_planned_topics() -> None:
    state = cluster_state(existing("to.pic", {0: (0,)}))
    [error] = plan_topic(spec("to_pic", 1, 1), state).rejections
    assert str(error) == "Topic 'to_pic' collides with existing topics: to.pic"
    both = plan([spec("new.one", 1, 1), spec("new_one", 1, 1)], cluster_state())
    assert both.for_topic("new.one").status is TopicStatus.CREATE  # type: ignore[union-attr]
    assert str(both.for_topic("new_one").rejections[0]) == (  # type: ignore[union-attr]
        "Topic 'new_one' collides with existing topics: new.one"
    )


def test_a_topic_whose_marker_remains_is_not_created() -> None:
    [error] = plan_topic(spec("gone"), cluster_state(marked_for_deletion=frozenset({"gone"}))).rejections
    assert isinstance(error, TopicExistsError)
    assert str(error) == "Topic 'gone' is marked for deletion."


def test_rack_modes() -> None:
    mixed = cluster_state(racks=("a", "b", None, "a", "b", "c"))
    [enforced] = plan_topic(spec("t"), mixed).rejections
    assert isinstance(enforced, AdminOperationError)
    assert str(enforced).startswith("Not all brokers have rack information.")
    assert plan_topic(spec("t", rack_mode=RackAwareMode.SAFE), mixed).status is TopicStatus.CREATE


def test_prefixes_duplicates_and_unreadable_topics() -> None:
    limited = cluster_spec(allowed_topic_prefixes=("payments.",))
    [outside] = plan([spec("orders")], cluster_state(), limited).topics[0].rejections
    assert "outside the topic prefixes cluster main allows: payments." in str(outside)
    assert plan([spec("payments.in")], cluster_state(), limited).topics[0].status is TopicStatus.CREATE
    twice = plan([spec("t", source="a.yaml#0"), spec("t", source="b.yaml#1")], cluster_state()).topics
    assert len(twice) == 1
    assert (
        str(twice[0].rejections[0])
        == "Topic t is declared more than once for cluster main: a.yaml#0, b.yaml#1."
    )
    broken = plan_topic(spec("t"), cluster_state(unreadable={"t": "/brokers/topics/t: not JSON"}))
    assert "cannot be planned" in str(broken.rejections[0])


def test_unmanaged_topics_are_listed() -> None:
    state = cluster_state(existing("mine", {0: (0, 1, 2)}), existing("theirs", {0: (1, 2, 3)}))
    assert plan([spec("mine", 1)], state).unmanaged == ("theirs",)
