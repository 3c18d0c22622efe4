"""`kto validate PATH...`: offline checks of manifests, one line per error and a summary; exit 1 on any error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from topic_operator.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "examples"

GOOD = """\
apiVersion: kto.dev/v1alpha1
kind: KafkaCluster
metadata:
  name: local
spec:
  zookeeper:
    connect: 127.0.0.1:2181/kafka
---
apiVersion: kto.dev/v1alpha1
kind: KafkaTopic
metadata:
  name: orders
spec:
  cluster: local
  partitions: 6
  replicas: 3
  config:
    retention.ms: 86400000
"""

BAD = """\
apiVersion: kto.dev/v1alpha1
kind: KafkaTopic
metadata:
  name: payments
spec:
  cluster: local
  partitions: 0
  replicas: 3
  config:
    retention.ms: 7d
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_the_examples_validate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLES)]) == 0
    assert capsys.readouterr().out == "OK: 5 files, 8 documents: 1 cluster and 7 topics valid\n"


def test_good_files_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    Path("good.yaml").write_text(GOOD)
    assert main(["validate", "good.yaml"]) == 0
    assert capsys.readouterr().out == "OK: 1 file, 2 documents: 1 cluster and 1 topic valid\n"


def test_bad_files_print_one_line_per_error_then_warnings_and_a_summary_and_exit_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("good.yaml").write_text(GOOD)
    Path("team").mkdir()
    Path("team/bad.yaml").write_text(BAD)
    assert main(["validate", "good.yaml", "team"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "team/bad.yaml#1 KafkaTopic payments: spec.config.retention.ms = '7d': Invalid value 7d for configuration "
        "retention.ms: Not a number of type LONG",
        "team/bad.yaml#1 KafkaTopic payments: spec.partitions = 0: must be at least 1",
        "warning: team/bad.yaml#2 ConfigMap settings: ignored: v1 ConfigMap is not a topic or cluster declaration",
        "FAILED: 2 errors in 2 files, 4 documents (1 cluster and 1 topic valid, 1 warning)",
    ]


def test_cel_rules_are_not_evaluated_on_a_document_of_the_wrong_shape(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A string partition count is a type error, after which the API server evaluates no CEL rule (the rules
    assume the schema's types): the replicaAssignment rule is not reported as failing to evaluate."""
    Path("t.yaml").write_text(
        GOOD.split("---\n")[1].replace("partitions: 6", 'partitions: "2"')
        + "  replicaAssignment: [[0, 1, 2]]\n"
    )
    assert main(["validate", "t.yaml"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "t.yaml#1 KafkaTopic orders: spec.partitions = '2': must be an integer (write 2, without quotes)",
        "warning: t.yaml#1 KafkaTopic orders: KafkaCluster local is not among the documents read: topic configs are "
        "checked against Kafka 3.4 and no topic prefix limit applies",
        "FAILED: 1 error in 1 file, 1 document (0 clusters and 0 topics valid, 1 warning)",
    ]


def test_a_missing_path_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "nowhere.yaml"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "nowhere.yaml: no such file or directory",
        "FAILED: 1 error in 0 files, 0 documents (0 clusters and 0 topics valid)",
    ]


def test_validate_needs_a_path(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate"])
    assert exited.value.code == 2
    assert "the following arguments are required: PATH" in capsys.readouterr().err


def test_kto_validate_runs_as_a_command() -> None:
    Path("bad.yaml").write_text(BAD)
    completed = subprocess.run(
        [sys.executable, "-m", "topic_operator.cli", "validate", "bad.yaml"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert (
        completed.stdout.splitlines()[-1]
        == "FAILED: 2 errors in 1 file, 2 documents (0 clusters and 0 topics valid, 2 warnings)"
    )


def test_validate_needs_no_cel_python_at_run_time() -> None:
    """cel-python is a development dependency (the reference the CEL rules' functions are tested against): an
    installed kto validates without importing it."""
    Path("good.yaml").write_text(GOOD)
    script = (
        "import sys\n"
        "from topic_operator.cli.main import main\n"
        "code = main(['validate', 'good.yaml'])\n"
        "assert 'celpy' not in sys.modules, 'cel-python was imported'\n"
        "raise SystemExit(code)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
