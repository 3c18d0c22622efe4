"""``kto drift`` over a live fleet of three clusters against the slowest single cluster's read.

The fleet: two ZooKeeper-mode clusters (each a real ZooKeeper from Debian on 127.0.0.1, its brokers registered as
Kafka's register themselves) and one real Kafka 3.9 KRaft cluster of ``../shared/servers`` (a controller and three
brokers), with ``--topics`` topics in all, split evenly, every topic with two config overrides. Each is declared by
a KafkaCluster document: the ZooKeeper ones by ``spec.zookeeper``, the KRaft one by ``spec.bootstrapServers``.

Measured in turn, ``--repeat`` times each (the machine is shared: interleaving puts a neighbour's load on both), each
a process of its own timed from its start to its exit, as a user waits for it:

- **each cluster as a fleet of one**: ``kto drift --clusters one.yaml`` over that cluster alone; its read phase
  is ``summary.json``'s "reading 1 cluster live";
- **each cluster's read**: what a reader of the drift job runs for it (``drift.live.collect_cluster``: open the
  store through ``access``, read, make the rows), in this process, with everything already imported;
- **each cluster alone**: ``kto snapshot`` of that cluster (``--zookeeper`` or ``--bootstrap-server``): one read,
  through the same way in (``access``) the drift job uses;
- **the fleet**: ``kto drift --clusters fleet.yaml --desired fleet.yaml --engine processes``: the three read in
  parallel, planned, and the outputs written; its read phase is ``summary.json``'s "reading 3 clusters live".

Target: the fleet's read phase within 1.2x the read phase of its slowest cluster as a fleet of one (medians): the
same command and the same phase, so the same work besides the reads (the readers' start), and reading a fleet
live costs what its slowest cluster costs, not the sum. Beside it, without a target: the fleet's read phase over
the slowest read in this process (which starts nothing and imports nothing), and the whole command over the
slowest ``kto snapshot`` (the command also plans every cluster and writes the Parquet, the plans and the report,
which a snapshot does not). Prints the table, where the fleet's time goes, and whether the target is met; exits 1
when it is not.
Run: ``.venv/bin/python bench/drift_live.py [--topics 10000] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.kafka_cluster import make_kafka_cluster  # the harness lives with the tests
from harness.zookeeper import close_client, create_chroot, new_client
from kraft import BenchCluster, create_in_chunks, kafka_39, load, stop_on_signals, wait_brokers, wait_online
from topic_operator.access.address import ClusterAddress
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import connected
from topic_operator.drift.live import collect_cluster
from topic_operator.model import ClusterSpec, TopicSpec
from topic_operator.reconcile import Reconciler
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.zookeeper.store import ZooKeeperStore

TARGET_RATIO = 1.2
"""The fleet's read phase over the read phase of its slowest cluster as a fleet of one."""
READ_PHASE = "reading 3 clusters live"
READ_PHASE_OF_ONE = "reading 1 cluster live"
KTO = str(Path(sys.executable).with_name("kto"))
OVERRIDES = {"retention.ms": "86400000", "cleanup.policy": "delete"}


def cluster_document(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": name},
        "spec": spec,
    }


def zookeeper_cluster(server: LocalZooKeeper, name: str, topics: int) -> str:
    """``/kafka`` on ``server``: six brokers registered, ``topics`` topics created through the engine; its connect
    string."""
    admin = new_client(server.connect_string)
    create_chroot(admin, "/kafka")
    close_client(admin)
    connect = f"{server.connect_string}/kafka"
    client = new_client(connect)
    make_kafka_cluster(client, ephemeral=False)
    specs = [TopicSpec(name, f"{name}-{i:05d}", 2, 3, dict(OVERRIDES)) for i in range(topics)]
    report = Reconciler(ZooKeeperStore(client, deadline=120), ClusterSpec(name, connect)).apply(specs)
    if report.interrupted or report.writes < topics:
        raise SystemExit(f"{name}: {report.writes} of {topics} topics created ({report.interrupted})")
    close_client(client)
    return connect


def kraft_topics(bootstrap: str, topics: int, timeout: float) -> None:
    """``topics`` topics on the KRaft cluster, online, each with the overrides."""
    settings = AdminSettings(bootstrap_servers=tuple(bootstrap.split(",")))
    names = [f"kraft-{i:05d}" for i in range(topics)]
    with connected(settings, deadline=120) as admin:
        wait_brokers(admin, 3, timeout=timeout)
        create_in_chunks(admin, names, 2, 3, 1000)
        wait_online(admin, names, 2, 3, timeout=timeout)
        from kafka.admin import ConfigResource, ConfigResourceType

        for start in range(0, len(names), 500):
            admin.alter_configs(
                [
                    ConfigResource(ConfigResourceType.TOPIC, n, configs=OVERRIDES)
                    for n in names[start : start + 500]
                ]
            )


def read_alone(name: str, address: ClusterAddress) -> float:
    """One cluster read as a drift task reads it; a failed read ends the bench."""
    started = time.perf_counter()
    rows = list(collect_cluster(name, address, 30.0))
    seconds = time.perf_counter() - started
    failed = [reason for _, line, reason in rows if line is None]
    if failed:
        raise SystemExit(f"{name}: {failed[0]}")
    return seconds


def live_drift(fleet: Path, out: Path) -> tuple[float, dict[str, Any]]:
    """``kto drift`` over ``fleet`` (its own declarations: nothing declared elsewhere): the whole command's seconds,
    and its ``summary.json`` (its phases' seconds under ``timings_seconds``)."""
    whole = timed(
        [KTO, "drift", "--desired", str(fleet), "--clusters", str(fleet), "--out", str(out), "--engine",
         "processes", "-q"],
        (0, 2),
    )  # fmt: skip
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return whole, summary


def timed(command: Sequence[str], codes: tuple[int, ...]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in codes:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--topics", type=int, default=10_000, help="topics in the whole fleet (split in three)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs of each measurement (medians)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds any wait may take")
    args = parser.parse_args()
    stop_on_signals()
    share = args.topics // 3
    print(f"load average at the start: {load()} (this machine: {os.cpu_count()} CPUs, shared)")
    with (
        tempfile.TemporaryDirectory(prefix="kto-bench-drift-live-") as scratch,
        LocalZooKeeper() as first,
        LocalZooKeeper() as second,
        BenchCluster(kafka_39(), Path(scratch) / "kraft", kafkas_jvm=True) as kraft,
    ):
        work = Path(scratch)
        started = time.monotonic()
        addresses = {
            "zk-blue": ("--zookeeper", zookeeper_cluster(first, "zk-blue", share)),
            "zk-green": ("--zookeeper", zookeeper_cluster(second, "zk-green", share)),
            "kraft": ("--bootstrap-server", kraft.bootstrap_servers),
        }
        kraft_topics(kraft.bootstrap_servers, args.topics - 2 * share, args.timeout)
        print(f"set-up: {args.topics} topics in three clusters in {time.monotonic() - started:.1f} s")
        documents = {
            "zk-blue": cluster_document("zk-blue", {"zookeeper": {"connect": addresses["zk-blue"][1]}}),
            "zk-green": cluster_document("zk-green", {"zookeeper": {"connect": addresses["zk-green"][1]}}),
            "kraft": cluster_document("kraft", {"bootstrapServers": kraft.bootstrap_servers}),
        }
        fleet = work / "fleet.yaml"
        fleet.write_text(yaml.safe_dump_all(list(documents.values())))
        fleets_of_one = {name: work / f"{name}.yaml" for name in documents}
        for name, path in fleets_of_one.items():
            path.write_text(yaml.safe_dump(documents[name]))
        ways_in = {
            name: ClusterAddress(address)
            if flag == "--zookeeper"
            else ClusterAddress(brokers=AdminSettings(bootstrap_servers=tuple(address.split(","))))
            for name, (flag, address) in addresses.items()
        }
        alone: dict[str, list[float]] = {name: [] for name in addresses}
        reads: dict[str, list[float]] = {name: [] for name in addresses}
        read_of_one: dict[str, list[float]] = {name: [] for name in addresses}
        together: list[float] = []
        read_phase: list[float] = []
        for round_number in range(args.repeat):
            for name, (flag, address) in addresses.items():
                _, alone_summary = live_drift(fleets_of_one[name], work / f"drift-{name}")
                read_of_one[name].append(alone_summary["timings_seconds"][READ_PHASE_OF_ONE])
                reads[name].append(read_alone(name, ways_in[name]))
                snapshot = work / f"{name}.jsonl"
                alone[name].append(
                    timed([KTO, "snapshot", flag, address, "--cluster", name, "-o", str(snapshot)], (0,))
                )
            out = work / f"drift-{round_number}"
            whole, summary = live_drift(fleet, out)
            together.append(whole)
            read_phase.append(summary["timings_seconds"][READ_PHASE])
    one_medians = {name: statistics.median(values) for name, values in read_of_one.items()}
    slowest_one = max(one_medians, key=lambda name: one_medians[name])
    read_medians = {name: statistics.median(values) for name, values in reads.items()}
    slowest_read = max(read_medians, key=lambda name: read_medians[name])
    medians = {name: statistics.median(values) for name, values in alone.items()}
    slowest = max(medians, key=lambda name: medians[name])
    fleet_s = statistics.median(together)
    phase_s = statistics.median(read_phase)
    ratio = phase_s / one_medians[slowest_one]

    def row(label: str, values: list[float]) -> str:
        return f"{label:<34}{statistics.median(values):>8.2f}  {', '.join(f'{v:.2f}' for v in values)}"

    print(f"\n{'':34}{'median s':>8}  runs")
    for name in addresses:
        print(row(f"kto drift's read of {name} alone", read_of_one[name]))
    for name in addresses:
        print(row(f"read of {name} in this process", reads[name]))
    print(row("kto drift's read of the three", read_phase))
    for name in addresses:
        print(row(f"kto snapshot {name}", alone[name]))
    print(row("kto drift, the three live", together))
    print(
        f"\nthe fleet's read over the read of its slowest cluster alone ({slowest_one}): {ratio:.2f}x (target <= "
        f"{TARGET_RATIO}x)"
    )
    print(
        f"the fleet's read over the slowest read in this process ({slowest_read}): "
        f"{phase_s / read_medians[slowest_read]:.2f}x (no target: that read starts no process and imports nothing)"
    )
    print(
        f"the whole kto drift over the slowest kto snapshot ({slowest}): {fleet_s / medians[slowest]:.2f}x (no target)"
    )
    timings = summary.get("timings_seconds", {})
    print(
        "where the fleet's time goes (summary.json): "
        + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items())
    )
    reads = {c["name"]: c.get("read") for c in summary["clusters"]}
    print(f"read through: {reads}")
    print(f"load average at the end: {load()}")
    met = ratio <= TARGET_RATIO
    print(f"target: {'met' if met else 'not met'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
