"""Fleets for the drift job: declared topics and cluster states of several clusters, files made from them, and
one run of the job over a fleet.

``small_fleet`` is built by hand so that every drift kind appears where a reader expects it (the tests assert its
findings row by row); ``random_fleet`` draws clusters with random drift from a seed, for the tests that hold the
Spark job equal to the single-process rules and to ``kto plan``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pyspark.sql import SparkSession

from harness.snapshot_versions import version_1_rows
from topic_operator.drift.inputs import desired_frame, read_snapshots
from topic_operator.drift.job import DriftInputs, DriftResult, run_drift
from topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from topic_operator.model import Broker, ClusterSpec, ClusterState, PartitionState, TopicSpec, TopicState
from topic_operator.snapshot_rows import SCHEMA_VERSION, rows_from_cluster

TAKEN_AT = "2026-01-05T10:00:00+00:00"


@dataclass
class Fleet:
    specs: list[TopicSpec]
    states: dict[str, ClusterState]
    clusters: dict[str, ClusterSpec] = field(default_factory=dict)

    def specs_of(self, cluster: str) -> list[TopicSpec]:
        return [s for s in self.specs if s.cluster == cluster]

    def settings(self, cluster: str) -> ClusterSpec:
        return self.clusters.get(cluster) or ClusterSpec(cluster, "")


def healthy(partitions: Mapping[int, tuple[int, ...]]) -> dict[int, PartitionState]:
    """Every partition led by its first replica with a full ISR, as a controller leaves a healthy topic."""
    return {p: PartitionState(r[0], tuple(r), 1, 1) for p, r in partitions.items()}


def topic(
    name: str,
    partitions: Mapping[int, tuple[int, ...]],
    config: Mapping[str, str] | None = None,
    *,
    states: Mapping[int, PartitionState] | None = None,
    marked: bool = False,
    version: int = 1,
) -> TopicState:
    return TopicState(
        name=name,
        partitions=dict(partitions),
        topic_id="AAAAAAAAAAAAAAAAAAAAAQ",
        config=dict(config or {}),
        topic_znode_version=version,
        config_znode_version=0 if config else None,
        marked_for_deletion=marked,
        partition_states=dict(states) if states is not None else healthy(partitions),
    )


def state(
    topics: list[TopicState], racks: tuple[str | None, ...], *, marked: frozenset[str] = frozenset()
) -> ClusterState:
    return ClusterState(
        cluster_id="fleet-test",
        brokers={i: Broker(i, rack) for i, rack in enumerate(racks)},
        topics={t.name: t for t in topics},
        controller=0,
        marked_for_deletion=marked | {t.name for t in topics if t.marked_for_deletion},
    )


def rotation(partitions: int, replicas: int, brokers: int, start: int = 0) -> dict[int, tuple[int, ...]]:
    """Replicas of partition p on brokers start+p, start+p+1, ...: perfectly even over ``brokers``."""
    return {p: tuple((start + p + k) % brokers for k in range(replicas)) for p in range(partitions)}


def spec(
    cluster: str,
    name: str,
    partitions: int,
    replicas: int,
    config: Mapping[str, str] | None = None,
    **kw: object,
) -> TopicSpec:
    return TopicSpec(
        cluster, name, partitions, replicas, dict(config or {}), source=f"{cluster}/{name}.yaml#1", **kw
    )  # type: ignore[arg-type]


EAST_RACKS = ("rack-a", "rack-b", "rack-c", "rack-a", "rack-b", "rack-c")


def small_fleet() -> Fleet:
    """Three clusters; every kind of finding appears at least once.

    east (6 brokers, 3 racks; every topic placed by rotation, so brokers stay even):
      orders in sync; payments behind (3 -> 6); clicks ahead (6 declared 3); audit replication factor 2 vs 3;
      billing config differs (retention.ms) and equal once canonical (cleanup.policy order); fresh missing;
      ghost missing but still marked for deletion (the plan rejects it); legacy unmanaged; doomed declared and
      marked; old unmanaged and marked; lagging under-replicated; dark offline; narrow on one rack; pinned
      declared with a replica assignment that moves partition 0 (plan_rejected).
    west (3 brokers, no racks): w1 on brokers 0 and 1 only: replica and leader skew.
    north: declared, never observed.
    """
    six = len(EAST_RACKS)
    lagging = rotation(6, 3, six)
    lagging_states = {**healthy(lagging), 1: PartitionState(lagging[1][0], lagging[1][:2], 1, 1)}
    dark = rotation(6, 3, six)
    dark_states = {**healthy(dark), 0: PartitionState(-1, (), 2, 1), 4: PartitionState(9, (9,), 2, 1)}
    narrow = {
        p: ((0, 3) if p == 2 else ((p % 3) + 3 * (p % 2), (p % 3 + 1) % 3 + 3 * (p % 2))) for p in range(6)
    }
    east_topics = [
        topic("orders", rotation(12, 3, six)),
        topic("payments", rotation(3, 3, six, start=3)),
        topic("clicks", rotation(6, 3, six)),
        topic("audit", rotation(6, 2, six)),
        topic(
            "billing", rotation(6, 3, six), {"retention.ms": "86400000", "cleanup.policy": "delete,compact"}
        ),
        topic("legacy", rotation(6, 3, six)),
        topic("doomed", rotation(6, 3, six), marked=True),
        topic("old", rotation(6, 3, six), marked=True),
        topic("lagging", lagging, states=lagging_states),
        topic("dark", dark, states=dark_states),
        topic("narrow", narrow),
        topic("pinned", rotation(6, 3, six)),
    ]
    east_specs = [
        spec("east", "orders", 12, 3),
        spec("east", "payments", 6, 3),
        spec("east", "clicks", 3, 3),
        spec("east", "audit", 6, 3),
        spec("east", "billing", 6, 3, {"retention.ms": "604800000", "cleanup.policy": "compact,delete"}),
        spec("east", "fresh", 6, 3),
        spec("east", "ghost", 3, 3),
        spec("east", "doomed", 6, 3),
        spec("east", "lagging", 6, 3),
        spec("east", "dark", 6, 3),
        spec("east", "narrow", 6, 2),
        spec(
            "east",
            "pinned",
            6,
            3,
            replica_assignment={0: (5, 4, 3), **{p: r for p, r in rotation(6, 3, six).items() if p}},
        ),
    ]
    west_topics = [topic("w1", {p: ((0, 1) if p % 2 == 0 else (1, 0)) for p in range(6)})]
    west_specs = [spec("west", "w1", 6, 2)]
    north_specs = [spec("north", "n1", 3, 3)]
    return Fleet(
        specs=[*east_specs, *west_specs, *north_specs],
        states={
            "east": state(east_topics, EAST_RACKS, marked=frozenset({"ghost"})),
            "west": state(west_topics, (None, None, None)),
        },
    )


# -- random fleets -----------------------------------------------------------------------------------------------

_CONFIGS = (
    ("retention.ms", ("86400000", "604800000", "-1")),
    ("cleanup.policy", ("delete", "compact", "compact,delete")),
    ("min.insync.replicas", ("1", "2")),
    ("segment.bytes", ("1073741824", "536870912")),
)


def _random_config(rng: random.Random) -> dict[str, str]:
    return {key: rng.choice(values) for key, values in rng.sample(_CONFIGS, rng.randint(0, 3))}


def _random_states(
    rng: random.Random, partitions: Mapping[int, tuple[int, ...]], brokers: int
) -> dict[int, PartitionState]:
    states = healthy(partitions)
    for p, replicas in partitions.items():
        roll = rng.random()
        if roll < 0.05:
            states[p] = PartitionState(replicas[0], replicas[: max(1, len(replicas) - 1)], 1, 1)
        elif roll < 0.08:
            states[p] = PartitionState(-1, (), 1, 1)
        elif roll < 0.10:
            del states[p]
        elif roll < 0.12:
            states[p] = PartitionState(rng.choice(replicas[1:] or replicas), replicas, 2, 1)
        elif roll < 0.13:
            states[p] = PartitionState(brokers + 7, (brokers + 7,), 2, 1)
    return states


def random_fleet(seed: int, clusters: int = 4, topics: int = 30) -> Fleet:
    """Clusters of 3-7 brokers (some with racks, some without) whose topics drift at random in every way the job
    classifies; declared topics are valid (as the manifest loader would pass them)."""
    rng = random.Random(seed)
    fleet = Fleet([], {})
    for number in range(clusters):
        name = f"c{seed}-{number}"
        brokers = rng.randint(3, 7)
        racked = rng.random() < 0.7
        racks = tuple(f"rack-{i % 3}" for i in range(brokers)) if racked else (None,) * brokers
        metadata = [BrokerMetadata(i, r) for i, r in enumerate(racks)]
        actual: list[TopicState] = []
        marked: set[str] = set()
        if rng.random() < 0.5:
            fleet.clusters[name] = ClusterSpec(name, "", allowed_topic_prefixes=("t", "g"))
        for index in range(topics):
            topic_name = f"{rng.choice(['t', 't', 't', 'x'])}{index:03d}"
            partitions = rng.randint(1, 8)
            replicas = rng.randint(1, min(3, brokers))
            placed = assign_replicas_to_brokers(metadata, partitions, replicas, rng=rng)
            assignment = {p: tuple(r) for p, r in placed.items()}
            one_rack = [b for b in range(brokers) if racks[b] == racks[0]]
            if racked and replicas > 1 and len(one_rack) >= replicas and rng.random() < 0.1:
                assignment[0] = tuple(
                    one_rack[:replicas]
                )  # a rack violation, as a hand-made placement leaves
            config = _random_config(rng)
            declared = spec(name, topic_name, partitions, replicas, config)
            roll = rng.random()
            exists = True
            if roll < 0.10:
                exists = False  # missing
            elif roll < 0.20:
                declared = replace(declared, partitions=partitions + rng.randint(1, 4))
            elif roll < 0.25:
                declared = replace(declared, partitions=max(1, partitions - rng.randint(1, 3)))
            elif roll < 0.30:
                declared = replace(declared, replicas=max(1, min(brokers, replicas + rng.choice([-1, 1]))))
            elif roll < 0.42:
                declared = replace(declared, config=_random_config(rng))
            elif roll < 0.47:
                declared = replace(declared, config={**config, "retention.ms": "604800000"})
                config = {**config, "retention.ms": " 604800000"}  # differs as text, equal once canonical
            if exists:
                is_marked = rng.random() < 0.05
                states = _random_states(rng, assignment, brokers) if rng.random() < 0.9 else None
                current = topic(topic_name, assignment, config, marked=is_marked, version=rng.randint(0, 5))
                actual.append(replace(current, partition_states=states))
                if is_marked:
                    marked.add(topic_name)
            elif rng.random() < 0.3:
                marked.add(topic_name)
            if rng.random() < 0.9:
                fleet.specs.append(declared)
        fleet.states[name] = state(actual, racks, marked=frozenset(marked))
    return fleet


def wide_ids_fleet() -> Fleet:
    """A cluster whose broker ids span more than the job's dense rack lookup (0, 7 without a rack, 5000), with
    replicas on an unregistered broker (9): the map lookup, the unregistered ids and their load are exercised."""
    partitions = {0: (0, 5000), 1: (0, 7), 2: (5000, 9), 3: (7, 0)}
    states = {**healthy(partitions), 3: PartitionState(-1, (0,), 1, 1)}
    wide = ClusterState(
        cluster_id="fleet-test",
        brokers={0: Broker(0, "a"), 7: Broker(7, None), 5000: Broker(5000, "b")},
        topics={"spread": topic("spread", partitions, states=states)},
        controller=0,
    )
    return Fleet([spec("wide", "spread", 4, 2)], {"wide": wide})


# -- files ------------------------------------------------------------------------------------------------------------


def write_snapshots(fleet: Fleet, directory: Path, *, schema: int = SCHEMA_VERSION) -> Path:
    """One ``kto snapshot`` file per observed cluster, in the form of ``schema`` (1: as earlier kto wrote)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, cluster in fleet.states.items():
        rows = rows_from_cluster(name, cluster, TAKEN_AT)
        rows = version_1_rows(rows) if schema == 1 else rows
        text = "".join(json.dumps(row, separators=(",", ":"), sort_keys=True) + "\n" for row in rows)
        (directory / f"{name}.jsonl").write_text(text, encoding="utf-8")
    return directory


def topic_manifest(declared: TopicSpec) -> dict[str, object]:
    spec_body: dict[str, object] = {
        "cluster": declared.cluster,
        "topicName": declared.name,
        "partitions": declared.partitions,
        "replicas": declared.replicas,
        "config": dict(declared.config),
    }
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": declared.name.replace("_", "-").lower(), "namespace": declared.cluster},
        "spec": spec_body,
    }


@dataclass(frozen=True)
class FleetRun:
    fleet: Fleet
    out: Path
    result: DriftResult


def run_fleet(
    spark: SparkSession, fleet: Fleet, work: Path, *, seed: int = 0, schema: int = SCHEMA_VERSION
) -> FleetRun:
    """The job over ``fleet``: snapshots written as ``kto snapshot`` files, declared topics handed over as rows."""
    snapshots = write_snapshots(fleet, work / "snapshots", schema=schema)
    inputs = DriftInputs(
        desired=desired_frame(spark, fleet.specs),
        snapshots=read_snapshots(spark, snapshots),
        clusters=fleet.clusters,
    )
    result = run_drift(spark, inputs, work / "out", seed=seed)
    return FleetRun(fleet, work / "out", result)
