"""Hostile manifests against a real ZooKeeper made to look like a Kafka cluster: ``kto validate``, ``kto plan``
and ``kto apply --yes`` of generated and mutated documents end with exit 1, one bounded printable line per
problem, no traceback, and a znode tree identical before and after.

Each generated file carries one document with one problem of a known family (wrong types, Kafka-invalid values,
control characters, long scalars, deep nesting, alias bombs, keys given twice, broken YAML, odd tags, undecodable
bytes, wrong kinds, oversized files, FIFOs), so every file must be named by at least one error line; files of
randomly mutated text must not crash anything or change ZooKeeper, whatever they turned into. A valid
KafkaCluster in a file of its own makes plan and apply connect and read the cluster.

The limits are lowered through their environment variables so that hostile inputs stay small and the test takes
well under a minute; the full-size cases (100,000 nested brackets, a billion laughs) run as real processes at the
end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

from harness.zookeeper import ZkChroot
from topic_operator.cli.main import main
from topic_operator.message_text import LINE_LIMIT

CLUSTER = "fuzz"
BASE_SPEC = {"cluster": CLUSTER, "partitions": "3", "replicas": "2", "config": "{retention.ms: 86400000}"}
LIMITS = {
    "KTO_MANIFEST_MAX_FILE_BYTES": "60000",
    "KTO_MANIFEST_MAX_SCALAR_CHARS": "5000",
    "KTO_MANIFEST_MAX_ALIAS_NODES": "3000",
    "KTO_MANIFEST_MAX_DEPTH": "32",
}


def topic(
    name: str = "orders", *, api: str = "kto.dev/v1alpha1", kind: str = "KafkaTopic", **spec: str
) -> str:
    fields = {**BASE_SPEC, **spec}
    body = "".join(f"  {key}: {value}\n" for key, value in fields.items() if value != "<absent>")
    return f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n{body}"


def laughs(levels: int) -> str:
    lines = ["    l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"]
    lines += [f"    l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, levels)]
    return "".join(lines)


# Each family: a strategy of file contents (str or bytes) with exactly one problem in its one document.
FAMILIES: dict[str, st.SearchStrategy[str | bytes]] = {
    "wrong type": st.sampled_from(
        [
            topic(partitions='"3"'),
            topic(replicas="[2]"),
            topic(config="[retention.ms]"),
            topic(cluster="{a: b}"),
            topic(replicaAssignment="{0: [1]}"),
            topic(partitions="3.0"),
            topic(partitions="true"),
            topic(partitions="null"),
            topic(partitions="<absent>"),
            topic(rackAwareMode="Sometimes"),
        ]
    ),
    "kafka-invalid": st.sampled_from(
        [
            topic(partitions="0"),
            topic(replicas="0"),
            topic(config="{retention.ms: 7d}"),
            topic(config="{no.such.config: 1}"),
            topic(config="{retention.ms: 1000, local.retention.ms: 5000}"),
            topic(config="{retention.bytes: 10, local.retention.bytes: -1}"),
            topic(config="{min.cleanable.dirty.ratio: .nan}"),
            topic(config="{segment.ms: 99999999999999999999999}"),
            topic(config="{retention.ms: !!binary aGVsbG8=}"),
            topic("__consumer_offsets"),
            topic(replicaAssignment="[[0, 1], [1, 1], [2, 0]]"),
            topic(replicaAssignment="[[0, 1]]"),
        ]
    ),
    "control characters": st.builds(
        lambda char, where: (
            topic(topicName=f'"bad{char}name"')
            if where == "name"
            else topic(config=f'{{"key{char}x": 1}}')
            if where == "key"
            else topic(cluster=f'"{CLUSTER}{char}"')
        ),
        st.sampled_from(["\\n", "\\0", "\\e[31m", "\\u202e", "\\r", "\\t", "\\u2028"]),
        st.sampled_from(["name", "key", "cluster"]),
    ),
    "long scalar": st.builds(lambda n: topic(topicName="x" * n), st.integers(6000, 20000)),
    "long value in a message": st.builds(
        lambda n: topic(config=f"{{retention.ms: {'9' * n}}}"), st.integers(300, 4000)
    ),
    "deep nesting": st.builds(
        lambda depth, where: (
            topic(config="{x: " + "[" * depth + "]" * depth + "}")
            if where == "config"
            else "apiVersion: v1\nkind: ConfigMap\ndata: " + "{a: " * depth + "1" + "}" * depth + "\n"
        ),
        st.integers(40, 3000),
        st.sampled_from(["config", "ignored"]),
    ),
    "alias bomb": st.builds(
        lambda levels, where: (
            topic(config="{x: *l" + str(levels - 1) + "}").replace(
                "metadata:", "junk:\n  laughs:\n" + laughs(levels) + "metadata:"
            )
            if where == "config"
            else topic().replace("metadata:", "unknown:\n" + laughs(levels) + "metadata:")
        ),
        st.integers(4, 9),
        st.sampled_from(["config", "unknown key"]),
    ),
    "key given twice": st.just(topic() + "  partitions: 300\n"),
    "broken YAML": st.sampled_from(
        [
            topic() + "  config: [unclosed\n",
            topic() + "\tbad: tab\n",
            "a: b: c\n" + topic(),
            topic()[:-1] + ": :\n",
        ]
    ),
    "odd tags": st.sampled_from(
        [
            topic(partitions="!!int three"),
            topic(config="!!python/object:os.system {}"),
            topic(partitions="1" + "0" * 5000),
            topic(replicas="!!timestamp never"),
            topic(config="!!set {a, b}"),
        ]
    ),
    "undecodable": st.builds(
        lambda b: b + topic().encode(), st.sampled_from([b"\xff\xfe\x00", b"# caf\xe9\n"])
    ),
    "wrong kind or version": st.sampled_from(
        [
            topic(kind="KafkaUser"),
            topic(kind="kafkatopic"),
            topic(api="kto.dev/v1"),
            topic(api="kto.dev"),
            topic(api="kafka.strimzi.io/v2"),
        ]
    ),
    "oversized file": st.builds(lambda n: topic() + "#" + "x" * n + "\n", st.integers(60_000, 120_000)),
    "fifo": st.just("<fifo>"),
}


def mutated_text() -> st.SearchStrategy[bytes]:
    """A valid topic of another cluster, with random bytes put in and cut out: whatever it becomes, it must not
    crash anything, and it can never be a topic of the cluster being applied."""
    base = topic(cluster="elsewhere").encode()
    return st.builds(
        lambda cut, insert, at: base[:at] + insert + base[at + cut :],
        st.integers(0, 20),
        st.binary(max_size=30)
        | st.sampled_from([b"&a", b"*a", b"[", b"{", b"!!", b"\x00", b"\t", b"<<: ", b"? "]),
        st.integers(0, len(base)),
    )


@st.composite
def hostile_sets(draw: st.DrawFn) -> tuple[list[tuple[str, str | bytes]], list[bytes]]:
    families = draw(st.lists(st.sampled_from(sorted(FAMILIES)), min_size=1, max_size=5, unique=True))
    return [(family, draw(FAMILIES[family])) for family in families], draw(
        st.lists(mutated_text(), max_size=2)
    )


def znode_tree(client: KazooClient) -> dict[str, tuple[bytes, int, int]]:
    """Every znode under the root with its data, data version and child version."""
    tree: dict[str, tuple[bytes, int, int]] = {}
    pending = ["/"]
    while pending:
        path = pending.pop()
        data, stat = client.get(path)
        tree[path] = (data, stat.version, stat.cversion)
        pending.extend(f"{path.rstrip('/')}/{child}" for child in client.get_children(path))
    return tree


@pytest.fixture
def limited(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, value in LIMITS.items():
        monkeypatch.setenv(variable, value)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    captured = capsys.readouterr()
    lines = captured.out.splitlines() + captured.err.splitlines()
    for line in lines:
        assert len(line) <= LINE_LIMIT + 200, line[:300]
        assert line.isprintable(), repr(line[:300])
    return code, lines


@pytest.mark.timeout(180)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
    print_blob=True,
)
@given(case=hostile_sets())
def test_hostile_manifests_are_refused_line_by_line_and_nothing_is_written(
    case: tuple[list[tuple[str, str | bytes]], list[bytes]],
    kafka_zk: KazooClient,
    zk_chroot: ZkChroot,
    limited: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    families, mutations = case
    with tempfile.TemporaryDirectory(prefix="kto-fuzz-") as directory:
        root = Path(directory)
        cluster = root / "cluster.yaml"
        cluster.write_text(
            f"apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {{name: {CLUSTER}}}\n"
            f"spec: {{zookeeper: {{connect: '{zk_chroot.connect_string}'}}}}\n"
        )
        hostile: list[Path] = []
        for number, (_, content) in enumerate(families):
            path = root / f"hostile-{number}.yaml"
            if content == "<fifo>":
                os.mkfifo(path)
            elif isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
            hostile.append(path)
        mutated = []
        for number, content in enumerate(mutations):
            path = root / f"mutated-{number}.yaml"
            path.write_bytes(content)
            mutated.append(path)
        files = [str(p) for p in (cluster, *hostile, *mutated)]

        code, lines = run(capsys, "validate", *files)
        assert code == 1
        for (family, _), path in zip(families, hostile, strict=True):
            named = [line for line in lines if line.startswith((f"{path}#", f"{path}:"))]
            assert named, f"no message for the {family} file {path.name}: {lines}"

        before = znode_tree(kafka_zk)
        flags = [flag for path in files for flag in ("-f", path)]
        target = ["--zookeeper", zk_chroot.connect_string, "--cluster", CLUSTER]
        plan_code, _ = run(capsys, "plan", *flags, *target)
        apply_code, _ = run(capsys, "apply", *flags, *target, "--yes")
        assert (plan_code, apply_code) == (1, 1)
        assert znode_tree(kafka_zk) == before


@pytest.mark.timeout(120)
def test_the_full_size_cases_as_real_processes(
    kafka_zk: KazooClient, zk_chroot: ZkChroot, tmp_path: Path
) -> None:
    """With the default limits, in real processes (a crash would be an exit code, not an exception): 100,000
    nested brackets in an ignored ConfigMap, a billion laughs, a 3 MB scalar, a FIFO and /dev/zero."""
    (tmp_path / "deep.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\ndata: " + "[" * 100_000 + "]" * 100_000
    )
    (tmp_path / "bomb.yaml").write_text(
        topic(config="{x: *l9}").replace("metadata:", "junk:\n  laughs:\n" + laughs(10) + "metadata:")
    )
    (tmp_path / "long.yaml").write_text(topic(topicName="x" * 3_000_000))
    os.mkfifo(tmp_path / "pipe.yaml")
    os.symlink("/dev/zero", tmp_path / "zero.yaml")
    (tmp_path / "cluster.yaml").write_text(
        f"apiVersion: kto.dev/v1alpha1\nkind: KafkaCluster\nmetadata: {{name: {CLUSTER}}}\n"
        f"spec: {{zookeeper: {{connect: '{zk_chroot.connect_string}'}}}}\n"
    )
    names = ["cluster.yaml", "deep.yaml", "bomb.yaml", "long.yaml", "pipe.yaml", "zero.yaml"]
    kto = [sys.executable, "-m", "topic_operator.cli"]
    before = znode_tree(kafka_zk)
    flags = [flag for name in names for flag in ("-f", name)]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KTO_MANIFEST_")}
    for argv in (
        ["validate", *names],
        ["plan", *flags, "--zookeeper", zk_chroot.connect_string],
        ["apply", *flags, "--zookeeper", zk_chroot.connect_string, "--yes"],
    ):
        completed = subprocess.run(
            [*kto, *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=environment,
        )
        output = completed.stdout + completed.stderr
        assert completed.returncode == 1, output[-3000:]
        assert "Traceback" not in output
        for name in names[1:]:
            assert f"{name}#" in output or f"{name}:" in output, (name, output[-3000:])
        assert max(map(len, output.splitlines())) <= LINE_LIMIT
    assert znode_tree(kafka_zk) == before
