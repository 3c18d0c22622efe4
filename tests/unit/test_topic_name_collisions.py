"""'.' and '_' collide in metric names, so Kafka refuses a topic whose unified name already exists (§3.3, §6)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topic_operator.kafka.errors import InvalidTopicError, TopicExistsError
from topic_operator.kafka.topic_names import (
    TopicNameIndex,
    colliding_topics,
    has_collision,
    has_collision_chars,
    is_internal,
    unify_collision_chars,
    validate_no_collision,
)


@pytest.mark.parametrize(
    ("a", "b"), [(".topic", "_topic"), ("to.pic", "to_pic"), ("same", "same"), ("a.b_c", "a_b.c")]
)
def test_collisions(a: str, b: str) -> None:
    assert has_collision(a, b)
    assert has_collision(b, a)


@pytest.mark.parametrize(("a", "b"), [("topic", "topic2"), ("to-pic", "to_pic"), ("to.pic", "topic")])
def test_no_collision(a: str, b: str) -> None:
    assert not has_collision(a, b)


def test_collision_chars_and_unification() -> None:
    assert has_collision_chars("a.b")
    assert has_collision_chars("a_b")
    assert not has_collision_chars("a-b")
    assert unify_collision_chars("a.b.c_d") == "a_b_c_d"


def test_internal_topics_are_exactly_kafkas_two() -> None:
    assert is_internal("__consumer_offsets")
    assert is_internal("__transaction_state")
    assert is_internal("__share_group_state")  # from 3.9: share groups' state (4.x)
    assert not is_internal("__cluster_metadata")
    assert not is_internal("_consumer_offsets")


def test_existing_topic_is_reported_as_existing_before_collisions() -> None:
    with pytest.raises(TopicExistsError) as caught:
        validate_no_collision("to.pic", ["to.pic", "to_pic"])
    assert str(caught.value) == "Topic 'to.pic' already exists."
    assert caught.value.error_code == 36


def test_existing_topic_without_collision_chars_is_reported_as_existing() -> None:
    with pytest.raises(TopicExistsError, match=r"^Topic 'orders' already exists\.$"):
        validate_no_collision("orders", {"orders"})


def test_collision_lists_every_colliding_topic_sorted() -> None:
    with pytest.raises(InvalidTopicError) as caught:
        validate_no_collision("a.b.c", ["a_b_c", "a_b.c", "other", "a.b_c"])
    assert str(caught.value) == "Topic 'a.b.c' collides with existing topics: a.b_c, a_b.c, a_b_c"


def test_names_without_collision_chars_never_collide() -> None:
    validate_no_collision("orders", ["orders2", "order_s"])
    assert colliding_topics("orders", ["orders"]) == []


def test_index_catches_collisions_between_planned_topics() -> None:
    index = TopicNameIndex(["existing"])
    validate_no_collision("new.topic", index)
    index.add("new.topic")
    assert "new.topic" in index
    assert "new_topic" not in index
    with pytest.raises(InvalidTopicError, match=r"collides with existing topics: new\.topic$"):
        validate_no_collision("new_topic", index)


@given(
    existing=st.sets(st.text(alphabet="ab._", min_size=1, max_size=14), max_size=30),
    added=st.lists(st.text(alphabet="ab._", min_size=1, max_size=14), max_size=5),
    name=st.text(alphabet="ab._", min_size=1, max_size=14),
)
def test_the_index_finds_exactly_the_names_that_unify(
    existing: set[str], added: list[str], name: str
) -> None:
    """Spelled-out lookups (few '.'/'_') and the unified index (many) agree with the definition of a collision."""
    index = TopicNameIndex(existing)
    for new in added:
        index.add(new)
    expected = sorted(t for t in existing | set(added) if t != name and has_collision(t, name))
    assert index.colliding(name) == expected


def test_kafka_s_own_topics_are_never_in_the_unmanaged_inventory() -> None:
    from topic_operator.kafka.topic_names import undeclared_topics

    existing = ["orders", "__consumer_offsets", "__share_group_state", "__transaction_state", "audit", "_x"]
    assert undeclared_topics(existing, {"orders"}) == ["_x", "audit"]
