"""A decrease is rejected exactly as Kafka rejects it, and nothing else of that topic is written."""

from harness.states import cluster_state, existing, spec
from topic_operator.kafka.errors import InvalidPartitionsError
from topic_operator.plan import Change, TopicStatus, plan, plan_topic

FOUR = {0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 4), 3: (3, 4, 5)}


def test_decrease_is_kafkas_invalid_partitions_error() -> None:
    result = plan_topic(spec("orders", 2, 3, {"retention.ms": "5"}), cluster_state(existing("orders", FOUR)))
    assert result.status is TopicStatus.REJECTED
    [error] = result.rejections
    assert isinstance(error, InvalidPartitionsError)
    assert str(error) == (
        "The number of partitions for a topic can only be increased. Topic orders currently has 4 partitions, "
        "2 would not be an increase."
    )
    assert error.kafka_class == "org.apache.kafka.common.errors.InvalidPartitionsException"
    assert result.actions == ()  # the config change is not written either
    assert Change("partitions", 4, 2) in result.changes
    assert Change("config.retention.ms", None, "5") in result.changes


def test_another_topics_rejection_does_not_block_it() -> None:
    state = cluster_state(existing("orders", FOUR), existing("other", {0: (0, 1, 2)}))
    result = plan([spec("orders", 2), spec("other", 2)], state)
    assert result.for_topic("orders").status is TopicStatus.REJECTED  # type: ignore[union-attr]
    assert result.for_topic("other").status is TopicStatus.CHANGE  # type: ignore[union-attr]
