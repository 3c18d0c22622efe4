"""``kto plan --snapshot FILE`` refuses a file it cannot plan from in one line naming it (and the line), with no
traceback and nothing on stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import kafka_topic, kto, write_manifests

HEADER = (
    '{"schema": 2, "cluster": "%s", "taken_at": "2025-01-01T00:00:00Z", "topic": null, "cluster_id": "c", '
    '"controller": 0, "brokers": [{"id": 0, "rack": null}], "marked_for_deletion": [], "orphan_configs": {}, '
    '"unreadable_topics": {}}\n'
)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read the snapshot"),
        ("not json\n", "line 1: not JSON"),
        ('{"hello": "world"}\n', "line 1: not a kto snapshot row (snapshot row for cluster None"),
        (HEADER % "test" + "[1, 2]\n", "line 2: not a kto snapshot row"),
        (
            HEADER % "test" + '{"schema": 2, "taken_at": "x", "topic": "t"}\n',
            "line 2: not a kto snapshot row (a row without the field 'cluster')",
        ),
        (HEADER % "prod-eu", "holds prod-eu, not cluster test (kto snapshot --cluster names it)"),
        ("", "holds no cluster, not cluster test"),
    ],
    ids=[
        "missing",
        "not-json",
        "foreign-json",
        "not-an-object",
        "no-cluster-field",
        "another-cluster",
        "empty",
    ],
)
def test_a_file_that_is_not_the_clusters_snapshot_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, expected: str
) -> None:
    manifests = write_manifests(tmp_path / "topics.yaml", kafka_topic("orders", 3))
    snapshot = tmp_path / "snap.jsonl"
    if content is not None:
        snapshot.write_text(content)
    code, out, err = kto(capsys, "plan", "-f", str(manifests), "--snapshot", str(snapshot), "-o", "markdown")
    assert (code, out) == (1, "")
    assert err.count("\n") == 1
    assert err.startswith("kto plan: ")
    assert str(snapshot) in err
    assert expected in err


def test_the_snapshot_of_the_cluster_is_planned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifests = write_manifests(tmp_path / "topics.yaml", kafka_topic("orders", 3, 1))
    snapshot = tmp_path / "snap.jsonl"
    snapshot.write_text(HEADER % "prod-eu" + HEADER % "test")
    code, out, err = kto(capsys, "plan", "-f", str(manifests), "--snapshot", str(snapshot))
    assert (code, err) == (2, "")
    assert "+ topic orders: create" in out


def test_plan_pauses_the_cycle_collector_only_while_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """kto plan and apply run without the cycle collector (for speed) and leave it as they found it, even when
    they fail, so that a process that goes on (a test, ``kto run``'s own process) is not left without it."""
    import gc

    from topic_operator.cli import plan

    seen: list[bool] = []
    original = plan.snapshot_state
    monkeypatch.setattr(plan, "snapshot_state", lambda *a: seen.append(gc.isenabled()) or original(*a))
    manifests = write_manifests(tmp_path / "topics.yaml", kafka_topic("orders", 3, 1))
    snapshot = tmp_path / "snap.jsonl"
    snapshot.write_text(HEADER % "test")
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    assert kto(capsys, "plan", "-f", str(manifests), "--snapshot", str(snapshot))[0] == 2
    assert gc.isenabled()
    assert kto(capsys, "plan", "-f", str(manifests), "--snapshot", str(tmp_path / "missing"))[0] == 1
    assert seen == [False, False]
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen  # a process that goes on keeps collecting what the commands left
