"""The job's Python stage plans a cluster exactly as ``kto plan`` does, from rows as they travel through Spark."""

from __future__ import annotations

import json

from harness.states import cluster_state, existing, spec
from topic_operator.drift.desired_rows import spec_from_row, spec_to_row
from topic_operator.drift.outputs import plan_file_name
from topic_operator.drift.planning import (
    PLANNED_TOPIC_FIELDS,
    config_differences,
    plan_cluster,
)
from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.model import ClusterSpec, DeletionPolicy
from topic_operator.plan import plan
from topic_operator.plan_output import cluster_problems, plan_to_dict, writes_to_dict
from topic_operator.snapshot_rows import HEADER_FIELDS, cluster_from_rows, rows_from_cluster

STATE = cluster_state(
    existing("grow", {0: (0, 1, 2)}, {"retention.ms": "1"}),
    existing("keep", {0: (1, 2, 3)}),
    existing("legacy", {0: (4,)}),
    marked_for_deletion=frozenset({"ghost"}),
)
DECLARED = [
    spec("grow", 3, 3, {"retention.ms": "2"}),
    spec("keep", 1, 3),
    spec("new", 4, 3, assignment=None, rack_mode=RackAwareMode.SAFE, deletion=DeletionPolicy.DELETE),
    spec("ghost", 1, 1),
]


def test_specs_survive_the_row_form() -> None:
    manual = spec("m", 2, 2, assignment={0: (1, 2), 1: (2, 3)})
    for declared in [*DECLARED, manual]:
        assert spec_from_row(json.loads(json.dumps(spec_to_row(declared)))) == declared


def test_the_state_rebuilt_from_split_rows_plans_like_the_snapshot() -> None:
    rows = [json.loads(json.dumps(r)) for r in rows_from_cluster("main", STATE, "t")]
    header = {k: rows[0][k] for k in HEADER_FIELDS}
    topics = [{k: r.get(k) for k in PLANNED_TOPIC_FIELDS} for r in rows[1:]]
    assert plan(DECLARED, cluster_from_rows(header, topics), seed=4) == plan(DECLARED, STATE, seed=4)


def test_document_is_kto_plans_json_and_facts_cover_what_changes() -> None:
    result = plan_cluster(DECLARED, STATE, ClusterSpec("main", ""), seed=4)
    # kto plan -o json's document less manifest_errors (the drift guide, "Outputs"): the plan and the cluster's problems
    expected = plan_to_dict(plan(DECLARED, STATE, ClusterSpec("main", ""), seed=4))
    assert json.loads(result.document) == {
        **expected,
        **cluster_problems(STATE, (3, 4)),
        "writes": writes_to_dict(STATE),
    }
    facts = {f.topic: f for f in result.facts}
    assert set(facts) == {"grow", "new", "ghost"}  # keep is unchanged
    assert facts["grow"].actions == ("add_partitions", "alter_config")
    assert [(d.key, d.desired, d.actual) for d in facts["grow"].config_diffs] == [("retention.ms", "2", "1")]
    assert facts["ghost"].status == "rejected"
    assert facts["ghost"].rejections[0].kafka_class.endswith("TopicExistsException")


def test_config_differences_use_canonical_values() -> None:
    assert config_differences({"retention.ms": "1000"}, {"retention.ms": " 1000"}) == []
    assert (
        config_differences({"cleanup.policy": "compact,delete"}, {"cleanup.policy": "delete,compact"}) == []
    )
    [diff] = config_differences({}, {"retention.ms": "5"})
    assert (diff.key, diff.desired, diff.actual) == ("retention.ms", None, "5")


def test_plan_file_names_stay_inside_the_plans_directory() -> None:
    assert plan_file_name("prod-eu.1") == "prod-eu.1.json"
    assert plan_file_name("../etc/passwd") == "%2E%2E%2Fetc%2Fpasswd.json"
    assert plan_file_name(".hidden") == "%2Ehidden.json"


def test_spec_from_values_takes_the_declared_columns_in_their_order() -> None:
    import inspect

    from topic_operator.drift.arrow_schemas import DESIRED_ARROW
    from topic_operator.drift.desired_rows import spec_from_values

    assert tuple(inspect.signature(spec_from_values).parameters) == tuple(DESIRED_ARROW.names)
