"""A snapshot written as JSON lines reads back to the same cluster state, and plans the same from a file."""

import json
from dataclasses import replace

import pytest

from harness.snapshot_versions import version_1_rows
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
    assert [r["topic"] for r in rows] == [None, "a", "b"]
    assert all("brokers" not in r and r["taken_at"] == rows[0]["taken_at"] for r in rows[1:])
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
    [row] = rows_from_cluster("empty", cluster_state(), "t")  # the header row alone
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
    with pytest.raises(ValueError, match="has schema 3; this version of kto reads schemas 1 and 2"):
        rows_to_clusters([{"schema": 3, "cluster": "x", "topic": "t"}])


def test_version_1_rows_read_as_the_same_cluster() -> None:
    state = cluster_state(existing("a", {0: (0, 1)}), marked_for_deletion=frozenset({"ghost"}))
    rows = rows_from_cluster("main", state, "t")
    assert rows_to_clusters(version_1_rows(rows)) == rows_to_clusters(rows)
    assert rows_to_clusters(version_1_rows(rows_from_cluster("e", cluster_state(), "t")))["e"].topics == {}


def test_topic_rows_without_their_header_are_refused() -> None:
    rows = rows_from_cluster("main", cluster_state(existing("a", {0: (0,)})), "t")
    with pytest.raises(ValueError, match="cluster 'main' have no header row"):
        rows_to_clusters(rows[1:])


def test_two_snapshots_of_one_cluster_are_refused() -> None:
    state = cluster_state(existing("a", {0: (0,)}))
    with pytest.raises(ValueError, match="cluster 'main' has two snapshot headers"):
        rows_to_clusters(rows_from_cluster("main", state, "t1") + rows_from_cluster("main", state, "t2"))
    header, topic = rows_from_cluster("main", state, "t1")
    with pytest.raises(ValueError, match="topic 'a' was taken at 't2', its header at 't1'"):
        rows_to_clusters([header, {**topic, "taken_at": "t2"}])
    later = {**topic, "topic": "b", "taken_at": "t2"}
    with pytest.raises(ValueError, match="topic 'b' was taken at 't2', its header at 't1'"):
        rows_to_clusters(version_1_rows([header, topic]) + version_1_rows([header, later]))


def test_a_migrations_stage_and_writer_survive_a_snapshot_and_a_plain_cluster_writes_no_more() -> None:
    from topic_operator.kafka.kraft_migration import MigrationStage, choose_writer

    plain = cluster_state(existing("a", {0: (0, 1)}))
    plain = replace(plain, writer=choose_writer(None, zookeeper=True, brokers=False))
    (header,) = [r for r in rows_from_cluster("main", plain, "2026-11-27T00:00:00Z") if r["topic"] is None]
    assert "writes" not in header  # as before: nothing the rest of the header does not imply
    assert rows_to_clusters([header])["main"].writer == plain.writer
    for stage, brokers in (
        (MigrationStage.QUORUM_WAITING, True),
        (MigrationStage.DUAL_WRITE, False),
        (None, True),
    ):
        choice = choose_writer(stage, zookeeper=True, brokers=brokers)
        migrating = replace(
            plain, kraft_migration=None if stage is None else "/migration exists", writer=choice
        )
        rows = [
            json.loads(json.dumps(r)) for r in rows_from_cluster("main", migrating, "2026-11-27T00:00:00Z")
        ]
        assert rows[0]["writes"] == {
            "stage": choice.stage,
            "through": choice.writer.value,
            "reason": choice.why,
        }
        assert rows_to_clusters(rows)["main"].writer == choice
    broken = [{**rows[0], "writes": {"stage": "DualWrite", "through": "Carrier pigeon", "reason": "?"}}]
    assert rows_to_clusters(broken)["main"].writer is None
    missing = [{**rows[0], "writes": {"stage": "DualWrite", "through": None, "reason": "?"}}]
    assert rows_to_clusters(missing)["main"].writer is None
