"""The cluster a command works on, from its manifests and flags (``read_declared``), or from a ``kto snapshot``
file (``snapshot_state``); and what the command says on stderr about the state it read (``warn_about``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from topic_operator.cli.options import UsageError, print_errors
from topic_operator.model import ClusterSpec, ClusterState, TopicSpec

if TYPE_CHECKING:
    from topic_operator.reconcile import Judge

__all__ = [
    "chosen_cluster",
    "declared_release",
    "note_release",
    "reached_through_both",
    "read_declared",
    "snapshot_state",
    "state_warnings",
    "warn_about",
]


def read_declared(
    args: argparse.Namespace, *, needs_zookeeper: bool = True
) -> tuple[ClusterSpec, list[TopicSpec], list[str], Judge | None]:
    """The cluster and its topics from the manifests, every manifest error (printed by the caller), and the judge
    of the cluster's grants to the namespaces of its KafkaTopics (None: no KafkaTopic of another namespace).

    The cluster is ``--cluster``, or the only one the topics name. Its KafkaCluster document (if given) supplies
    the policy; ``--zookeeper`` overrides its connect string, which only a command that reads the cluster
    ``needs_zookeeper`` for. When no cluster can be chosen, the manifest errors are printed before the reason,
    since they are usually why (a missing file, a KafkaCluster declared twice).
    """
    from topic_operator.kafka.releases import DEFAULT_KAFKA_VERSION, KRAFT_ONLY_VERSIONS, format_version
    from topic_operator.manifests.loader import TenantRules, load_manifests
    from topic_operator.tenants.rules import plan_judge

    fallback = args.kafka_version or DEFAULT_KAFKA_VERSION
    # Brokers say their own release: with no --kafka-version, a topic of no KafkaCluster document is checked
    # against every line they could run, and the plan judges it by theirs.
    told = args.kafka_version is not None or not args.bootstrap_server
    manifests = load_manifests(
        args.files, kafka_version=fallback if told else None, tenant_rules=TenantRules.NAMES
    )
    errors = [str(e) for e in manifests.errors]
    named = sorted({t.cluster for t in manifests.topics} | {c.name for c in manifests.clusters})
    try:
        name = chosen_cluster(args.cluster, named, manifests.summary(), bool(errors))
        declared = manifests.cluster(name)
        if declared is not None and not declared.kafka_version_declared and args.kafka_version is not None:
            declared = replace(declared, kafka_version=args.kafka_version, kafka_version_declared=True)
        if declared is not None and args.kafka_version not in (None, declared.kafka_version):
            raise UsageError(
                f"--kafka-version {format_version(args.kafka_version)} contradicts KafkaCluster {name}'s "
                f"spec.kafkaVersion {format_version(declared.kafka_version)}: change one of them"
            )
        cluster = declared or ClusterSpec(
            name=name, zookeeper_connect="", kafka_version=fallback, kafka_version_declared=told
        )
        # Either flag alone is the only way in; both, or a KafkaCluster declaring both, let the migration's
        # stage choose which one writes (``access.staged``).
        connect = args.zookeeper or ("" if args.bootstrap_server else cluster.zookeeper_connect)
        brokers = args.bootstrap_server or (None if args.zookeeper else cluster.bootstrap_servers)
        if not connect and not brokers and needs_zookeeper:
            invalid = any(
                e.kind == "KafkaCluster" and e.name.rsplit("/", 1)[-1] == name for e in manifests.errors
            )
            why = (
                "its KafkaCluster is not valid (see the errors above)"
                if invalid
                else "no KafkaCluster declares it"
            )
            raise UsageError(
                f"no ZooKeeper and no brokers for cluster {name}: {why}; pass --zookeeper or --bootstrap-server, "
                "or declare its KafkaCluster"
            )
    except UsageError:
        print_errors(errors, sys.stderr)
        raise
    if not brokers and cluster.kafka_version in KRAFT_ONLY_VERSIONS:
        raise UsageError(
            f"Kafka {format_version(cluster.kafka_version)} runs only in KRaft mode and has no ZooKeeper: reach "
            f"cluster {name} through --bootstrap-server"
        )
    reached = replace(cluster, zookeeper_connect=connect, bootstrap_servers=brokers)
    topics = list(manifests.topics_of(name))
    return reached, topics, errors, plan_judge(manifests.tenants_of(name), topics)


def declared_release(cluster: ClusterSpec) -> tuple[int, int] | None:
    """The release the cluster declares, None where its brokers' own is taken (nothing to contradict)."""
    return cluster.kafka_version if cluster.kafka_version_declared else None


def reached_through_both(cluster: ClusterSpec) -> bool:
    """Whether the cluster is reached through both its ZooKeeper and its brokers."""
    return bool(cluster.zookeeper_connect and cluster.bootstrap_servers)


def chosen_cluster(requested: str | None, named: Sequence[str], summary: str, had_errors: bool) -> str:
    """``--cluster``, or the one cluster the valid manifests name; otherwise why there is none to choose."""
    if requested is not None:
        if requested in named:
            return requested
        listed = f"they name {', '.join(named)}" if named else "they name no cluster"
        raise UsageError(f"the manifests declare nothing valid for cluster {requested} ({listed}; {summary})")
    if len(named) == 1:
        return named[0]
    if named:
        raise UsageError(
            f"the manifests name several clusters ({', '.join(named)}): choose one with --cluster"
        )
    why = "see the errors above" if had_errors else "no KafkaCluster, and no KafkaTopic naming one"
    raise UsageError(f"the manifests name no cluster ({why}; {summary})")


def snapshot_state(path: str, cluster: str) -> ClusterState:
    """``cluster`` as a ``kto snapshot`` file holds it (``plan --snapshot``): what CI plans against without
    reaching ZooKeeper. A file that is not a snapshot, or holds no such cluster, is refused naming it."""
    import orjson

    from topic_operator.snapshot_rows import rows_to_clusters

    try:
        lines = Path(path).read_bytes().splitlines()
    except OSError as error:
        raise UsageError(f"cannot read the snapshot {path!r}: {error.strerror or error}") from None
    number = 0

    def rows() -> Iterator[Any]:
        nonlocal number
        for number, line in enumerate(lines, 1):  # noqa: B007 (read by the error message below)
            if line.strip():
                yield orjson.loads(line)

    try:
        clusters = rows_to_clusters(rows())
    except orjson.JSONDecodeError as error:
        raise UsageError(f"snapshot {path!r}, line {number}: not JSON ({error})") from None
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        why = f"a row without the field {error.args[0]!r}" if isinstance(error, KeyError) else str(error)
        raise UsageError(f"snapshot {path!r}, line {number}: not a kto snapshot row ({why})") from None
    if cluster not in clusters:
        held = ", ".join(sorted(clusters)) or "no cluster"
        raise UsageError(
            f"snapshot {path!r} holds {held}, not cluster {cluster} (kto snapshot --cluster names it)"
        )
    return clusters[cluster]


def state_warnings(
    state: ClusterState, cluster: str, *, skip_topics: bool = False, declared: tuple[int, int] | None = None
) -> list[str]:
    """One line per znode kto could not read (named with its problem), one for a KRaft migration, and one when
    ZooKeeper shows a release that contradicts the ``declared`` one, naming both."""
    from topic_operator.kafka.cluster_release import release_bounds, release_conflict

    found = []
    if declared is not None and state.release_evidence is not None:
        conflict = release_conflict(declared, release_bounds(state.release_evidence))
        if conflict is not None:
            found.append(f"cluster {cluster}: {conflict}")
    if state.kraft_migration is not None:
        found.append(
            f"cluster {cluster} is migrating to KRaft ({state.kraft_migration}): kto reads and plans, "
            "and writes nothing"
        )
    for path, problem in state.unreadable_znodes.items():
        found.append(f"{path} is not in a format Kafka writes, so it was left out: {problem}")
    if not skip_topics:
        found.extend(
            f"topic {topic} cannot be read: {problem}" for topic, problem in state.unreadable_topics.items()
        )
    return found


def warn_about(
    state: ClusterState,
    cluster: str,
    *,
    skip_topics: bool = False,
    declared: tuple[int, int] | None = None,
    both: bool = False,
) -> None:
    """The ``state_warnings`` on stderr, and where a KRaft migration stands: the stage and the writer, always for a
    cluster reached through ``both`` its ZooKeeper and its brokers (the stage chooses between them)."""
    for warning in state_warnings(state, cluster, skip_topics=skip_topics, declared=declared):
        print(f"warning: {warning}", file=sys.stderr)
    if state.kraft_migration is not None and state.kraft_migration_stage is not None:
        print(f"note: the migration to KRaft: {state.kraft_migration_stage}", file=sys.stderr)
    if state.writer is not None and (both or state.migration is not None or not state.writer.writes):
        print(f"note: cluster {cluster}: {state.writer.summary()}", file=sys.stderr)
    if state.broker_release is not None and declared is not None and state.broker_release != declared:
        from topic_operator.kafka.releases import format_version

        print(
            f"warning: cluster {cluster}: its brokers answer as Kafka {format_version(state.broker_release)} "
            f"(ApiVersions), not the {format_version(declared)} declared: topic configs are judged as "
            f"{format_version(declared)}; declare kafkaVersion {format_version(state.broker_release)} to judge "
            "them as the brokers do",
            file=sys.stderr,
        )


def note_release(state: ClusterState) -> None:
    """One stderr line: the Kafka release ZooKeeper shows, and the znode facts it is read from; or, read through
    the brokers, the release and ``metadata.version`` they answer with."""
    from topic_operator.kafka.cluster_release import release_bounds
    from topic_operator.kafka.releases import format_version

    if state.broker_release is not None or state.metadata_version is not None:
        answered = (
            format_version(state.broker_release) if state.broker_release is not None else "an unknown release"
        )
        metadata = (
            f", metadata.version {state.metadata_version}" if state.metadata_version is not None else ""
        )
        print(
            f"kafka release: the brokers answer as Kafka {answered}{metadata} (ApiVersions)", file=sys.stderr
        )
        return
    if state.release_evidence is None:
        return
    bounds = release_bounds(state.release_evidence)
    clues = "; ".join(clue.text for clue in bounds.clues) or "no znode tells"
    print(f"kafka release: ZooKeeper shows Kafka {bounds.seen} ({clues})", file=sys.stderr)
