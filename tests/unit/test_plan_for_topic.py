"""``Plan.for_topic`` finds a topic's plan by bisection, so a Plan must keep its topics sorted and unique."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.states import cluster_state, spec
from topic_operator.plan import Plan, TopicPlan, TopicStatus, plan

NAMES = st.text(alphabet="ab._-0", min_size=1, max_size=4)


@given(declared=st.sets(NAMES, max_size=12), asked=st.lists(NAMES, max_size=8))
def test_for_topic_answers_what_a_scan_of_the_plans_answers(declared: set[str], asked: list[str]) -> None:
    result = plan([spec(name, 1) for name in declared], cluster_state())
    for name in [*declared, *asked]:
        scanned = next((t for t in result.topics if t.topic == name), None)
        assert result.for_topic(name) == scanned
        assert (scanned is not None) == (name in declared)


@pytest.mark.parametrize("names", [("b", "a"), ("a", "a")], ids=["unsorted", "twice"])
def test_a_plan_whose_topics_are_unsorted_or_repeated_is_refused(names: tuple[str, ...]) -> None:
    topics = tuple(TopicPlan("main", name, TopicStatus.UNCHANGED) for name in names)
    with pytest.raises(ValueError, match="sorted by topic name, each once"):
        Plan("main", topics)
