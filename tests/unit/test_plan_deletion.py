"""Deletion happens only for deletionPolicy Delete on a cluster that allows it; Retain never touches Kafka."""

from harness.states import cluster_spec, cluster_state, existing, spec
from topic_operator.kafka.errors import AdminOperationError, TopicDeletionDisabledError
from topic_operator.model import DeletionPolicy
from topic_operator.plan import DeleteTopic, TopicStatus, plan

STATE = cluster_state(existing("t", {0: (0, 1, 2)}), existing("__consumer_offsets", {0: (0,)}))
DELETE = DeletionPolicy.DELETE


def test_retain_is_the_default_and_does_nothing() -> None:
    result = plan([], STATE, cluster_spec(allow_delete=True), deleting=[spec("t")]).topics[0]
    assert (result.status, result.actions) == (TopicStatus.RETAINED, ())


def test_delete_when_allowed() -> None:
    result = plan([], STATE, cluster_spec(allow_delete=True), deleting=[spec("t", deletion=DELETE)]).topics[0]
    assert result.actions == (DeleteTopic("t"),)
    assert result.status is TopicStatus.DELETE


def test_delete_refused_when_the_cluster_disallows_it() -> None:
    [error] = plan([], STATE, cluster_spec(), deleting=[spec("t", deletion=DELETE)]).topics[0].rejections
    assert isinstance(error, TopicDeletionDisabledError)
    assert "allowDelete: false" in str(error)


def test_internal_topics_are_never_deleted() -> None:
    declared = spec("__consumer_offsets", deletion=DELETE)
    [error] = plan([], STATE, cluster_spec(allow_delete=True), deleting=[declared]).topics[0].rejections
    assert isinstance(error, AdminOperationError)
    assert str(error) == (
        "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion."
    )


def test_absent_or_already_marked_topics_need_nothing() -> None:
    marked = cluster_state(existing("t", {0: (0,)}, marked=True))
    for state in (cluster_state(), marked):
        result = plan(
            [], state, cluster_spec(allow_delete=True), deleting=[spec("t", deletion=DELETE)]
        ).topics[0]
        assert (result.status, result.actions) == (TopicStatus.UNCHANGED, ())


def test_a_declaration_still_present_wins_over_its_removal() -> None:
    result = plan(
        [spec("t", 1)], STATE, cluster_spec(allow_delete=True), deleting=[spec("t", deletion=DELETE)]
    )
    assert [t.status for t in result.topics] == [TopicStatus.UNCHANGED]
