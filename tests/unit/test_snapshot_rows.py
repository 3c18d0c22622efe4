"""A snapshot written as JSON lines reads back to the same cluster state, and plans the same from a file."""

import json
from dataclasses import replace

import pytest

from harness.states import cluster_state, existing, spec
from topic_operator.model import PartitionState
from topic_operator.plan import plan
from topic_operator.snapshot_rows import rows_from_cluster, rows_to_clusters


def test_round_trip_through_json_lines() -> None:
    state = cluster_state(
        existing("a", {0: (0, 1), 1: (1, 2)}, {"retention.ms": "5"}, version=3, config_version=2),
        existing("b", {0: (2,)}, config_version=None, marked=True),
        orphan_configs={"half": 1},
        marked_for_deletion=frozenset({"ghost"}),
    )
    rows = [json.loads(json.dumps(row)) for row in rows_from_cluster("main", state, "2026-11-21T00:00:00Z")]
    assert [r["topic"] for r in rows] == ["a", "b"]
    assert all(r["brokers"] == rows[0]["brokers"] for r in rows)
    back = rows_to_clusters(rows)["main"]
    assert back.topics["a"].partitions == state.topics["a"].partitions
    assert back.topics["a"].config_znode_version == 2
    assert back.topics["b"].marked_for_deletion
    assert back.orphan_configs == {"half": 1}
    assert back.marked_for_deletion == {"ghost", "b"}
    assert {b.id: b.rack for b in back.brokers.values()} == {b.id: b.rack for b in state.brokers.values()}
    declared = [spec("a", 4, 2, {"retention.ms": "6"}), spec("c", 3, 3)]
    assert plan(declared, back, seed=1) == plan(declared, state, seed=1)


def test_an_empty_cluster_keeps_its_brokers() -> None:
    [row] = rows_from_cluster("empty", cluster_state(), "t")
    assert row["topic"] is None
    assert len(rows_to_clusters([row])["empty"].brokers) == 6
    assert rows_to_clusters([row])["empty"].topics == {}


def test_partition_states_and_many_clusters() -> None:
    topic = replace(existing("a", {0: (0, 1)}), partition_states={0: PartitionState(1, (1,), 4, 2)})
    with_states = cluster_state(topic)
    rows = rows_from_cluster("x", with_states, "t") + rows_from_cluster("y", cluster_state(), "t")
    clusters = rows_to_clusters(rows)
    assert set(clusters) == {"x", "y"}
    assert clusters["x"].topics["a"].partition_states == {0: PartitionState(1, (1,), 0, 0)}


def test_rows_of_another_schema_are_refused() -> None:
    with pytest.raises(ValueError, match="has schema 2; this version of kto reads schema 1"):
        rows_to_clusters([{"schema": 2, "cluster": "x", "topic": "t"}])
