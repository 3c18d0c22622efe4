"""``kto plan | apply | describe | snapshot`` say the real cause in one line: a path that is not a
Kafka cluster, an unreachable ensemble (without kazoo's own log lines first), a bad connect string, Ctrl-C or
Ctrl-D at the apply question, and a snapshot file that cannot be written. No traceback, exit 1, nothing written."""

from __future__ import annotations

import builtins
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.cli import kafka_topic, kto, write_manifests
from harness.zookeeper import ZkChroot
from topic_operator.cli.main import main
from topic_operator.testing.local_server import free_port


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    return write_manifests(tmp_path / "topics.yaml", kafka_topic("orders", 3))


def command_line(manifests: Path, command: str, connect: str, *extra: str) -> list[str]:
    if command in ("plan", "apply"):
        return [command, "-f", str(manifests), "--zookeeper", connect, *extra]
    if command == "snapshot":
        return [command, "--zookeeper", connect, "--cluster", "test", "-o", "-", *extra]
    return [command, "--zookeeper", connect, *extra]


@pytest.mark.parametrize("command", ["plan", "apply", "describe", "snapshot"])
def test_a_path_that_is_not_a_kafka_cluster_is_named_as_such(
    zk: KazooClient, zk_chroot: ZkChroot, manifests: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    zk.ensure_path("/brokers/topics")  # something, but no /cluster/id and no /brokers/ids
    argv = command_line(
        manifests, command, zk_chroot.connect_string, *(["--yes"] if command == "apply" else [])
    )
    code, out, err = kto(capsys, *argv)
    assert code == 1
    assert err.splitlines() == [
        f"kto {command}: ZooKeeper path '{zk_chroot.path}' has no /cluster/id and no /brokers/ids: it does not "
        "look like a Kafka cluster (check the chroot in the connect string); nothing was written"
    ]
    assert "InvalidReplicationFactor" not in out
    assert zk.get_children("/brokers/topics") == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", ["plan", "describe", "snapshot"])
def test_an_unreachable_ensemble_is_one_line_without_kazoos_log(manifests: Path, command: str) -> None:
    connect = f"127.0.0.1:{free_port()}/kafka"  # nobody listens
    argv = command_line(manifests, command, connect, "--deadline", "2")
    done = subprocess.run(
        [sys.executable, "-m", "topic_operator.cli", *argv], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"kto {command}: cannot reach ZooKeeper at {connect} within 2 s "
        "(last error: socket connection error: Connection refused)"
    ]


@pytest.mark.parametrize(
    "connect",
    ["localhost:abc", ":2181", "host:2181kafka", "zk:2181/kafka/", "//kafka", "zk:99999", "a:1/k,b:2"],
)
def test_a_bad_connect_string_is_one_line_in_every_command(
    manifests: Path, capsys: pytest.CaptureFixture[str], connect: str
) -> None:
    for command in ("plan", "apply", "describe", "snapshot"):
        code, _, err = kto(capsys, *command_line(manifests, command, connect))
        assert code == 1
        assert len(err.splitlines()) == 1
        assert err.startswith(f"kto {command}: ZooKeeper connect string {connect!r}: ")


@pytest.mark.parametrize("key", [EOFError, KeyboardInterrupt], ids=["ctrl-d", "ctrl-c"])
def test_ctrl_c_or_ctrl_d_at_the_apply_question_cancels_cleanly(
    kafka_zk: KazooClient,
    zk_chroot: ZkChroot,
    manifests: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    key: type[BaseException],
) -> None:
    def pressed(prompt: str) -> str:
        print(prompt, end="")
        raise key

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(builtins, "input", pressed)
    code, out, err = kto(capsys, "apply", "-f", str(manifests), "--zookeeper", zk_chroot.connect_string)
    assert code == 1
    assert out.splitlines()[-1] == "Apply cancelled; nothing was written."
    assert err == ""
    assert kafka_zk.get_children("/brokers/topics") == []


@pytest.mark.parametrize(
    ("where", "problem"),
    [("missing/snap.jsonl", "directory '{tmp}/missing' does not exist"), (".", "it is a directory")],
)
def test_a_snapshot_that_cannot_be_written_is_one_line(
    kafka_zk: KazooClient,
    zk_chroot: ZkChroot,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    problem: str,
) -> None:
    output = tmp_path / where
    argv = ["snapshot", "--zookeeper", zk_chroot.connect_string, "--cluster", "test", "-o", str(output)]
    code, out, err = kto(capsys, *argv)
    assert code == 1
    assert out == ""
    assert err.splitlines() == [
        f"kto snapshot: cannot write the snapshot to {str(output)!r}: {problem.format(tmp=tmp_path)}"
    ]


def test_a_full_disk_is_one_line(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["snapshot", "--zookeeper", zk_chroot.connect_string, "--cluster", "test", "-o", "/dev/full"]
    code, _, err = kto(capsys, *argv)
    assert code == 1
    assert err.splitlines() == [
        "kto snapshot: cannot write the snapshot to '/dev/full': No space left on device"
    ]
    assert Path("/dev/full").is_char_device(), "a device is written in place, never renamed over"


@pytest.mark.timeout(60)
def test_a_failed_write_leaves_the_previous_snapshot_whole(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path
) -> None:
    output = tmp_path / "snap.jsonl"
    output.write_text("the previous snapshot\n")
    argv = ["snapshot", "--zookeeper", zk_chroot.connect_string, "--cluster", "test", "-o", str(output)]

    def small_files_only() -> None:  # Python ignores SIGXFSZ: a bigger write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    done = subprocess.run(
        [sys.executable, "-m", "topic_operator.cli", *argv],
        capture_output=True, text=True, timeout=30, preexec_fn=small_files_only,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"kto snapshot: cannot write the snapshot to {str(output)!r}: File too large"
    ]
    assert output.read_text() == "the previous snapshot\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap.jsonl"], "the temporary file was removed"


@pytest.mark.parametrize("value", ["abc", "0", "-5", "inf"])
def test_a_bad_deadline_is_refused_by_the_parser(
    manifests: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["plan", "-f", str(manifests), "--deadline", value])
    assert exited.value.code == 2
    assert "argument --deadline" in capsys.readouterr().err
