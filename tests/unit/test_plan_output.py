"""Plans print as terraform-like text and serialise to a stable JSON document."""

import json

from harness.states import cluster_state, existing, spec
from topic_operator.plan import plan
from topic_operator.plan_output import plan_to_dict, render_plan_text

STATE = cluster_state(
    existing("grow", {0: (0, 1, 2)}, {"retention.ms": "1"}), existing("keep", {0: (1, 2, 3)})
)
DECLARED = [
    spec("new", 2, 2, {"cleanup.policy": "compact"}, source="a.yaml#0"),
    spec("grow", 2, 3, {"retention.ms": "2"}, source="a.yaml#1"),
    spec("keep", 1, 3, source="a.yaml#2"),
    spec("shrink", 1, 1, source="a.yaml#3"),
]


def result() -> object:
    state = cluster_state(*STATE.topics.values(), existing("shrink", {0: (0,), 1: (1,)}))
    return plan(DECLARED, state, seed=3)


def test_text_marks_creates_changes_and_rejections() -> None:
    text = render_plan_text(result())  # type: ignore[arg-type]
    lines = text.splitlines()
    assert lines[0] == "cluster main:"
    assert "~ topic grow: change  (a.yaml#1)" in lines
    assert "    config.retention.ms: '1' -> '2'" in lines
    assert "    partitions: 1 -> 2" in lines
    assert "+ topic new: create  (a.yaml#0)" in lines
    assert "! topic shrink: rejected  (a.yaml#3)" in lines
    assert (
        "    InvalidPartitionsException: The number of partitions for a topic can only be increased. "
        "Topic shrink currently has 2 partitions, 1 would not be an increase." in lines
    )
    assert not any("topic keep" in line for line in lines)
    assert (
        lines[-1]
        == "plan: 1 to create, 1 to change, 0 to delete, 1 rejected, 1 unchanged; 0 unmanaged topics in the cluster"
    )


def test_json_is_stable_and_complete() -> None:
    document = plan_to_dict(result())  # type: ignore[arg-type]
    assert json.dumps(document, sort_keys=True) == json.dumps(plan_to_dict(result()), sort_keys=True)  # type: ignore[arg-type]
    topics = {t["topic"]: t for t in document["topics"]}
    create = topics["new"]["actions"][0]
    assert create["type"] == "create"
    assert sorted(create["assignment"]) == ["0", "1"]
    assert create["config"] == {"cleanup.policy": "compact"}
    assert [a["type"] for a in topics["grow"]["actions"]] == ["add_partitions", "alter_config"]
    rejection = topics["shrink"]["rejections"][0]
    assert rejection["kafka_class"] == "org.apache.kafka.common.errors.InvalidPartitionsException"
    assert rejection["error_code"] == 37
    assert rejection["field"] == "partitions"
    assert document["summary"] == {
        "create": 1,
        "change": 1,
        "unchanged": 1,
        "delete": 0,
        "retained": 0,
        "rejected": 1,
    }
