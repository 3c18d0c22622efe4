"""``kto``: the command-line face of the engine. Each sub-command is a thin shell over the library.

Exit codes: 0 success (for ``plan``: nothing to change), 2 ``plan`` found changes, 1 any error or rejection.
Errors go to stderr as one line each; results go to stdout (text by default, JSON with ``-o json``).

Every command that talks to ZooKeeper is bounded by ``--deadline`` (``KTO_ZK_DEADLINE``, default 60 s): how long
ZooKeeper may keep it waiting. A shorter outage is ridden out; a longer one ends the command, ``apply`` with each
topic's outcome (applied, not written, unknown), and exits 1 with one line saying why.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import gc
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from topic_operator import __version__
from topic_operator.cli.stores import add_bootstrap_options
from topic_operator.model import ClusterSpec, ClusterState, TopicSpec

if TYPE_CHECKING:
    from topic_operator.reconcile import Judge

EXIT_OK, EXIT_ERROR, EXIT_CHANGES = 0, 1, 2


class UsageError(Exception):
    """A command line that cannot be carried out as given; printed as one line, exit 1."""


# -- shared pieces --------------------------------------------------------------------------------------------


DEADLINE_VARIABLE = "KTO_ZK_DEADLINE"


def _default_deadline() -> str:
    """``$KTO_ZK_DEADLINE`` or 60, as text: argparse checks a default given as text like a value given."""
    from topic_operator.zookeeper.bounded import DEFAULT_DEADLINE

    return os.environ.get(DEADLINE_VARIABLE, f"{DEFAULT_DEADLINE:g}")


def _deadline(text: str) -> float:
    """``--deadline``: seconds, positive and finite."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} (or ${DEADLINE_VARIABLE}) is not a number of seconds"
        ) from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} (or ${DEADLINE_VARIABLE}): the deadline must be positive")
    return value


def _kafka_version(text: str) -> tuple[int, int]:
    """``--kafka-version``: a release line kto knows, "2.0" to "3.9", or "4.0" and "4.1" for a cluster reached
    through its brokers (refused with ``--zookeeper`` by ``_declared``)."""
    from topic_operator.kafka.releases import UnknownKafkaVersionError, parse_kafka_version

    try:
        return parse_kafka_version(text, kraft=True)
    except UnknownKafkaVersionError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _known_line(version: tuple[int, int] | None) -> tuple[int, int] | None:
    """``version`` when it is a release line kto knows (the brokers may run a newer one)."""
    from topic_operator.kafka.releases import ALL_KAFKA_VERSIONS

    return version if version in ALL_KAFKA_VERSIONS else None


def _version_text(version: tuple[int, int] | None) -> tuple[str, ...]:
    """``--kafka-version`` as text, or nothing when not given (the callee's default)."""
    return () if version is None else (f"{version[0]}.{version[1]}",)


def _add_kafka_version_option(command: argparse.ArgumentParser, what: str, *, default: bool = True) -> None:
    note = " (default 3.4)" if default else ""
    command.add_argument("--kafka-version", type=_kafka_version, metavar="X.Y",
                         help=f"the brokers' Kafka release line, 2.0 to 3.9 (4.0 and 4.1 through --bootstrap-server), "
                         f"{what}{note}")  # fmt: skip


@contextmanager
def _zookeeper(connect: str, deadline: float, *, require_kafka: bool = True) -> Iterator[Any]:
    """A client on the cluster, closed (boundedly) at the end; refuses a path that is not a Kafka cluster.

    kazoo may reconnect for as long as it likes (no retry limit): the command's deadline decides when to stop
    waiting, and kazoo's own log lines stay out of the way of kto's one-line errors.
    """
    from topic_operator.connect_string import ConnectStringError
    from topic_operator.zookeeper.connection import DEFAULT_CONNECTION_TIMEOUT, ZooKeeperSettings, connected
    from topic_operator.zookeeper.writer import ZooKeeperWriter

    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    logging.getLogger("kazoo").propagate = False
    try:
        settings = ZooKeeperSettings(
            connect=connect,
            deadline=deadline,
            connection_timeout=min(deadline, DEFAULT_CONNECTION_TIMEOUT),
            connect_max_tries=-1,
            connect_retry_deadline=None,
            retry_max_delay=1.0,
        )
    except ConnectStringError as error:
        raise UsageError(str(error)) from None
    with connected(settings) as client:
        if require_kafka:
            ZooKeeperWriter(client, deadline=deadline).require_kafka_cluster()
        yield client


@contextmanager
def _zookeeper_store(connect: str, deadline: float) -> Iterator[Any]:
    """``_zookeeper`` as the engine's store."""
    from topic_operator.zookeeper.store import ZooKeeperStore
    from topic_operator.zookeeper.writer import ZooKeeperWriter

    with _zookeeper(connect, deadline) as client:
        yield ZooKeeperStore(client, ZooKeeperWriter(client, deadline=deadline))


def _store(
    args: argparse.Namespace, cluster: ClusterSpec | None = None
) -> contextlib.AbstractContextManager[Any]:
    """The cluster's store: its brokers when ``--bootstrap-server`` or the KafkaCluster's ``bootstrapServers``
    names them, else its ZooKeeper (``--zookeeper`` or the KafkaCluster's)."""
    from topic_operator.cli.stores import chosen_store

    connect = cluster.zookeeper_connect if cluster is not None else args.zookeeper
    servers = cluster.bootstrap_servers if cluster is not None else None
    zookeeper = (lambda: _zookeeper_store(connect, args.deadline)) if connect else None
    return chosen_store(args, zookeeper, bootstrap_servers=servers, zookeeper_address=connect or "")


def _declared(
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
        name = _chosen_cluster(args.cluster, named, manifests.summary(), bool(errors))
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
        _print_errors(errors, sys.stderr)
        raise
    if not brokers and cluster.kafka_version in KRAFT_ONLY_VERSIONS:
        raise UsageError(
            f"Kafka {format_version(cluster.kafka_version)} runs only in KRaft mode and has no ZooKeeper: reach "
            f"cluster {name} through --bootstrap-server"
        )
    reached = replace(cluster, zookeeper_connect=connect, bootstrap_servers=brokers)
    topics = list(manifests.topics_of(name))
    return reached, topics, errors, plan_judge(manifests.tenants_of(name), topics)


def _declared_release(cluster: ClusterSpec) -> tuple[int, int] | None:
    """The release the cluster declares, None where its brokers' own is taken (nothing to contradict)."""
    return cluster.kafka_version if cluster.kafka_version_declared else None


def _both(cluster: ClusterSpec) -> bool:
    """Whether the cluster is reached through both its ZooKeeper and its brokers."""
    return bool(cluster.zookeeper_connect and cluster.bootstrap_servers)


def _chosen_cluster(requested: str | None, named: Sequence[str], summary: str, had_errors: bool) -> str:
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


def _print_errors(errors: Sequence[str], stream: TextIO) -> None:
    for error in errors:
        print(f"error: {error}", file=stream)


def _warnings(
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


def _warn_about(
    state: ClusterState,
    cluster: str,
    *,
    skip_topics: bool = False,
    declared: tuple[int, int] | None = None,
    both: bool = False,
) -> None:
    """The ``_warnings`` on stderr, and where a KRaft migration stands: the stage and the writer, always for a
    cluster reached through ``both`` its ZooKeeper and its brokers (the stage chooses between them)."""
    for warning in _warnings(state, cluster, skip_topics=skip_topics, declared=declared):
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


# -- plan / apply ---------------------------------------------------------------------------------------------


def _plan(args: argparse.Namespace) -> int:
    from topic_operator.plan import TopicStatus, plan, refused
    from topic_operator.plan_output import (
        cluster_problems,
        plan_json,
        render_plan_markdown,
        render_plan_text,
        writes_to_dict,
    )

    cluster, topics, errors, judge = _declared(args, needs_zookeeper=args.snapshot is None)
    _print_errors(errors, sys.stderr)
    if args.snapshot is not None:
        state = _snapshot_state(args.snapshot, cluster.name)
        result = plan(topics, state, cluster, seed=args.seed)
    else:
        with _store(args, cluster) as store:
            # only the declared topics' overrides are planned: the brokers need not describe the others'
            state = store.read_cluster(deadline=args.deadline, configs_of=[t.name for t in topics])
            result = plan(topics, state, cluster, seed=args.seed)
            # the brokers' own verdict (validate_only) where the store has one: a policy, a config they refuse
            result = refused(result, store.validate(result.actions))
    if judge is not None:
        result = refused(result, judge(result, state))
    _warn_about(state, cluster.name, declared=_declared_release(cluster), both=_both(cluster))
    if args.output == "json":
        problems = cluster_problems(state, cluster.kafka_version)
        sys.stdout.write(plan_json(result, manifest_errors=errors, **problems, writes=writes_to_dict(state)))
    elif args.output == "markdown":
        warnings = _warnings(state, cluster.name, declared=_declared_release(cluster))
        sys.stdout.write(render_plan_markdown(result, manifest_errors=errors, warnings=warnings))
    else:
        sys.stdout.write(render_plan_text(result, show_unchanged=args.verbose))
    if errors or result.has_rejections:
        return EXIT_ERROR
    pending = result.has_changes or any(t.status is TopicStatus.CHANGE for t in result.topics)  # queued too
    return EXIT_CHANGES if pending else EXIT_OK


def _snapshot_state(path: str, cluster: str) -> ClusterState:
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


def _one_shot(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` run with Python's cycle collector paused, and resumed after it (as it was).

    A plan or an apply of 50,000 topics builds millions of objects that live until the command ends, none of
    them garbage, and the collector walks them over and over as they are made: a fifth of the command's time.
    When the process ends with the command (``kto`` run from its own command line), what the command left is
    frozen before the collector is resumed: otherwise the collector's pass at the interpreter's exit walks all
    of it once more, which took 0.3 s after the command was done. A process that goes on after a command (a
    test calling ``main`` with its arguments) gets the collector back as it was, nothing frozen, so no
    reference cycle the command left outlives it. ``kto run`` and the other commands are left alone.
    """

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return command(args)
        finally:
            if collecting:
                if getattr(args, "process_ends_with_the_command", False):
                    gc.freeze()
                gc.enable()

    return run


def _confirmed(args: argparse.Namespace) -> bool:
    """``--yes``, or 'yes' typed at a terminal; Ctrl-C or Ctrl-D at the question is a 'no'."""
    if args.yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError("refusing to apply without --yes: standard input is not a terminal to confirm on")
    try:
        return input("Apply these changes? Only 'yes' is accepted: ").strip() == "yes"
    except (EOFError, KeyboardInterrupt):
        print()
        return False


def _apply(args: argparse.Namespace) -> int:
    from topic_operator.plan_output import cluster_problems, plan_to_dict, render_plan_text, writes_to_dict
    from topic_operator.reconcile import Reconciler, TopicOutcome

    cluster, topics, errors, judge = _declared(args)
    _print_errors(errors, sys.stderr)
    with _store(args, cluster) as store:
        reconciler = Reconciler(store, cluster, seed=args.seed, deadline=args.deadline)
        # One read serves the preview and the apply, so what is written is the plan that was shown and
        # confirmed; a change made since then fails its version check and that topic is re-read and re-planned.
        state = store.read_cluster(deadline=args.deadline, configs_of=[t.name for t in topics])
        _warn_about(state, cluster.name, declared=_declared_release(cluster), both=_both(cluster))
        preview = reconciler.plan(topics, state=state, judge=judge)
        if args.output == "text":
            sys.stdout.write(render_plan_text(preview))
        if not preview.has_changes:
            report = None
        elif not _confirmed(args):
            print("Apply cancelled; nothing was written.")
            return EXIT_ERROR
        else:
            report = reconciler.apply(topics, state=state, judge=judge, planned=preview)
    results = report.results if report is not None else ()
    if args.output == "json":
        document = {
            "plan": plan_to_dict(report.plan if report is not None else preview),
            "results": [
                {
                    "topic": r.topic,
                    "outcome": r.outcome.value,
                    "attempts": r.attempts,
                    "errors": [str(e) for e in r.errors],
                }
                for r in results
            ],
            "manifest_errors": errors,
            "interrupted": report.interrupted if report is not None else None,
            **cluster_problems(state, cluster.kafka_version),
            "writes": writes_to_dict(state),
        }
        print(json.dumps(document, indent=2))
    else:
        for result in results:
            if result.outcome is not TopicOutcome.UNCHANGED:
                print(f"{result.topic}: {result.outcome.value.replace('_', ' ')}")
                for error in result.errors:
                    print(f"    {error}")
        print(_apply_summary(report) if report is not None else "apply: nothing to change")
    if report is not None and report.interrupted:
        print(f"kto apply: stopped: {report.interrupted}; {_outcome_counts(report)}", file=sys.stderr)
    waited = None
    if args.wait and report is not None:
        with _store(args, cluster) as store:
            reconciler = Reconciler(store, cluster, seed=args.seed, deadline=args.deadline)
            waited = _wait_for_reassignments(reconciler, topics, report, args)
    failed = any(
        r.outcome not in (TopicOutcome.APPLIED, TopicOutcome.UNCHANGED, TopicOutcome.PLANNED) for r in results
    )
    return EXIT_ERROR if errors or failed or preview.has_rejections or waited is False else EXIT_OK


def _wait_for_reassignments(
    reconciler: Any, topics: list[Any], report: Any, args: argparse.Namespace
) -> bool | None:
    """``kto apply --wait``: follow the reassignments this apply started until Kafka's controller has finished
    them (the request znode gone and the topic znodes' adding/removing maps empty), printing a progress line
    whenever it changes, then apply those topics once more, which removes the throttles as ``--verify`` does.
    Everything it says goes to stderr, after apply's own output, so ``-o json`` stays one document. None when
    nothing was reassigned; False when the wait timed out (the throttles then stay until a later apply) or the
    clean-up was not applied."""
    import time

    from topic_operator.plan import Reassign
    from topic_operator.reconcile import TopicOutcome

    started = {
        r.topic: sum(len(a.moves) for a in r.plan.actions if isinstance(a, Reassign))
        for r in report.results
        if r.outcome is TopicOutcome.APPLIED and any(isinstance(a, Reassign) for a in r.plan.actions)
    }
    if not started:
        return None
    give_up = time.monotonic() + args.wait_timeout
    shown = ""
    while True:
        state = reconciler.store.read_cluster(topics=sorted(started), deadline=args.deadline)
        running = {
            name: topic
            for name, topic in state.topics.items()
            if name in started and topic.reassignment_in_progress
        }
        line = "; ".join(
            f"{name}: {sum(1 for p in t.partitions if t.adding_replicas.get(p) or t.removing_replicas.get(p))}"
            f" of {started[name]} partitions moving"
            for name, t in sorted(running.items())
        )
        if not running:
            print(f"reassignment done: {', '.join(sorted(started))}", file=sys.stderr)
            break
        if line != shown:
            print(f"reassigning: {line}", file=sys.stderr)
            shown = line
        if time.monotonic() >= give_up:
            print(
                f"kto apply: still reassigning after {args.wait_timeout:g} s; run kto apply again once it is "
                "done to remove the throttles",
                file=sys.stderr,
            )
            return False
        time.sleep(min(1.0, max(give_up - time.monotonic(), 0.0)))
    cleanup = reconciler.apply([spec for spec in topics if spec.name in started])  # only what was confirmed
    for result in cleanup.results:
        if result.outcome is not TopicOutcome.UNCHANGED:
            done = "throttles removed" if _clears(result.plan) else result.outcome.value.replace("_", " ")
            print(f"{result.topic}: {done}", file=sys.stderr)
            for error in result.errors:
                print(f"    {error}", file=sys.stderr)
    return all(r.outcome in (TopicOutcome.APPLIED, TopicOutcome.UNCHANGED) for r in cleanup.results)


def _clears(topic_plan: Any) -> bool:
    from topic_operator.plan import AlterConfig

    return any(isinstance(a, AlterConfig) and a.clear_broker_throttles for a in topic_plan.actions)


def _outcome_counts(report: Any) -> str:
    counts = report.counts()
    return ", ".join(f"{count} {outcome.value.replace('_', ' ')}" for outcome, count in counts.items())


def _apply_summary(report: Any) -> str:
    """``apply: 12 topics changed`` and, when not all went through, how many ended each way."""
    from topic_operator.reconcile import TopicOutcome

    applied = len(report.by_outcome(TopicOutcome.APPLIED))
    counts = report.counts()
    if set(counts) <= {TopicOutcome.APPLIED, TopicOutcome.UNCHANGED}:
        return f"apply: {applied} topics changed"
    return f"apply: {applied} topics changed ({_outcome_counts(report)})"


# -- describe / snapshot ----------------------------------------------------------------------------------------


def _describe(args: argparse.Namespace) -> int:
    from topic_operator.cli.describe import describe_lines
    from topic_operator.cli.stores import cluster_address

    with _store(args) as store:
        state = store.read_cluster(partition_states=True, topics=args.topics or None, deadline=args.deadline)
    _warn_about(state, cluster_address(args), skip_topics=True, declared=args.kafka_version)
    if args.kafka_version is not None:
        _note_release(state)
    unreadable = sorted(t for t in state.unreadable_topics if not args.topics or t in args.topics)
    missing = sorted(set(args.topics) - set(state.topics) - set(unreadable))
    for line in describe_lines(
        state,
        args.topics,
        under_replicated=args.under_replicated_partitions,
        unavailable=args.unavailable_partitions,
    ):
        print(line)
    for topic in unreadable:
        print(f"error: Topic '{topic}' cannot be read: {state.unreadable_topics[topic]}", file=sys.stderr)
    for topic in missing:
        print(f"error: Topic '{topic}' does not exist as expected", file=sys.stderr)
    return EXIT_ERROR if missing or unreadable else EXIT_OK


def _snapshot(args: argparse.Namespace) -> int:
    from topic_operator.snapshot_rows import rows_from_cluster

    output = None if args.output == "-" else Path(args.output)
    if output is not None:
        _check_writable(output)
    with _store(args) as store:
        state = store.read_cluster(partition_states=True, deadline=args.deadline)
    _warn_about(state, args.cluster, declared=args.kafka_version)
    if args.kafka_version is not None:
        _note_release(state)
    taken_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    rows = rows_from_cluster(args.cluster, state, taken_at)
    lines = "".join(json.dumps(row, separators=(",", ":"), sort_keys=True) + "\n" for row in rows)
    if output is None:
        sys.stdout.write(lines)
    else:
        _write_whole(output, lines)
        print(
            f"snapshot: {len(state.topics)} topics, {len(state.brokers)} brokers of {args.cluster} -> {args.output}"
        )
    return EXIT_OK


def _note_release(state: ClusterState) -> None:
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


def _export(args: argparse.Namespace) -> int:
    import re

    import yaml

    from topic_operator.cli.export import TopicFilter, cluster_document, export_cluster
    from topic_operator.connect_string import ConnectStringError, parse_connect_string
    from topic_operator.manifests.loader import load_manifests
    from topic_operator.manifests.topic_documents import object_name

    if args.format == "strimzi" and args.with_assignment:
        raise UsageError(
            "--with-assignment: a Strimzi KafkaTopic has no replica assignment; use --format kto"
        )
    try:
        wanted = TopicFilter(
            re.compile(args.include) if args.include is not None else None,
            re.compile(args.exclude) if args.exclude is not None else None,
        )
    except re.error as error:
        raise UsageError(
            f"--include/--exclude {error.pattern!r} is not a regular expression: {error}"
        ) from None
    cluster, write_cluster = args.cluster, args.cluster is None
    declared: set[str] = set()
    if args.unmanaged_from is not None:
        manifests = load_manifests([args.unmanaged_from])
        if manifests.errors:
            _print_errors([str(e) for e in manifests.errors], sys.stderr)
            raise UsageError(
                f"--unmanaged-from {args.unmanaged_from}: the manifests have errors; nothing written"
            )
        named = sorted({t.cluster for t in manifests.topics} | {c.name for c in manifests.clusters})
        if cluster is None and len(named) == 1:
            cluster, write_cluster = named[0], manifests.cluster(named[0]) is None
        declared = {t.name for t in manifests.topics if t.cluster == cluster}
    if cluster is None and args.zookeeper is None:
        cluster = "kafka"
    if cluster is None:
        try:
            chroot = parse_connect_string(args.zookeeper)[1]
        except ConnectStringError:
            chroot = None  # refused with its reason when connecting
        cluster = object_name(chroot.strip("/").replace("/", "-")) if chroot else "kafka"
    if args.output != "-" and Path(args.output).exists() and not Path(args.output).is_dir():
        raise UsageError(f"cannot export to {args.output!r}: it exists and is not a directory")
    with _store(args) as store:
        state = store.read_cluster(deadline=args.deadline)
    _warn_about(state, cluster, skip_topics=True)
    exported = export_cluster(
        state, cluster=cluster, target=args.format, with_assignment=args.with_assignment, wanted=wanted,
        declared=declared,
    )  # fmt: skip
    for note in exported.notes:
        print(f"note: {note}", file=sys.stderr)
    files: list[tuple[str, str]] = []
    if write_cluster:
        files.append(
            (
                f"kafkacluster-{cluster}",
                yaml.safe_dump(
                    cluster_document(
                        cluster,
                        args.zookeeper,
                        # through the brokers, their own release when none is given (ApiVersions)
                        *_version_text(args.kafka_version or _known_line(state.broker_release)),
                        bootstrap_servers=args.bootstrap_server,
                    ),
                    sort_keys=False,
                ),
            )
        )
    for topic in exported.topics:
        comment = f"# {topic.comment}\n" if topic.comment else ""
        if topic.comment:
            print(f"warning: {topic.comment}", file=sys.stderr)
        body = yaml.safe_dump(topic.document, sort_keys=False) if topic.document is not None else ""
        files.append((topic.file_name, comment + body))
    if args.output == "-":
        sys.stdout.write("".join(f"---\n{text}" for _, text in files))
    else:
        directory = Path(args.output)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            for name, text in files:
                _write_whole(directory / f"{name}.yaml", text)
        except OSError as error:
            raise UsageError(f"cannot write to {args.output!r}: {error.strerror or error}") from None
    written = sum(1 for t in exported.topics if t.document is not None)
    print(f"export: {written} topics of {cluster} -> {args.output}", file=sys.stderr)
    return EXIT_OK


def _check_writable(output: Path) -> None:
    """Before reading a whole cluster: refuse an output that cannot be written, in one line."""
    if output.is_dir():
        raise UsageError(f"cannot write the snapshot to {str(output)!r}: it is a directory")
    if not output.parent.is_dir():
        raise UsageError(
            f"cannot write the snapshot to {str(output)!r}: directory {str(output.parent)!r} does not exist"
        )


def _write_whole(output: Path, text: str) -> None:
    """All or nothing: a temporary file beside ``output``, renamed over it, so a failed write (disk full, no
    permission) never leaves half a snapshot for the drift job to read, nor spoils the previous one. Anything
    but a regular file (``/dev/stdout``, a FIFO, a symlink) is written in place: renaming over it would replace
    the device or the link itself."""
    temporary: str | None = None
    try:
        if output.is_symlink() or (output.exists() and not output.is_file()):
            with output.open("w") as file:
                file.write(text)
            return
        descriptor, temporary = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.")
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as a plain open() would have made it
        os.replace(temporary, output)
    except OSError as error:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise UsageError(f"cannot write the snapshot to {str(output)!r}: {error.strerror or error}") from None


# -- validate / demo ------------------------------------------------------------------------------------------


def _validate(args: argparse.Namespace) -> int:
    from topic_operator.kafka.releases import DEFAULT_KAFKA_VERSION
    from topic_operator.manifests.loader import TenantRules, load_manifests

    manifests = load_manifests(
        args.paths,
        check_cel=True,
        kafka_version=args.kafka_version or DEFAULT_KAFKA_VERSION,
        tenant_rules=TenantRules.ALL,
    )
    for error in manifests.errors:
        print(error)
    for warning in manifests.warnings:
        print(f"warning: {warning}")
    print(manifests.summary())
    return EXIT_OK if manifests.ok else EXIT_ERROR


def _demo(args: argparse.Namespace) -> int:
    from topic_operator.cli.demo import run_demo

    return run_demo(sys.stdout, examples=Path(args.examples) if args.examples else None)


# -- parser ---------------------------------------------------------------------------------------------------


def _add_manifest_options(
    command: argparse.ArgumentParser, outputs: Sequence[str] = ("text", "json")
) -> None:
    command.add_argument("-f", "--file", dest="files", action="append", required=True, metavar="PATH",
                         help="a manifest file or directory, or - for standard input (repeatable)")  # fmt: skip
    command.add_argument("--zookeeper", metavar="CONNECT",
                         help="ZooKeeper connect string with optional chroot, e.g. zk-0:2181,zk-1:2181/kafka "
                         "(default: the KafkaCluster's spec.zookeeper.connect)")  # fmt: skip
    add_bootstrap_options(command)
    command.add_argument("--cluster", metavar="NAME", help="which declared cluster (needed when several are)")
    _add_kafka_version_option(command, "when no KafkaCluster among the manifests declares the cluster")
    command.add_argument("-o", "--output", choices=outputs, default="text")
    command.add_argument(
        "--seed", type=int, default=0, help="seed of the placement of new topics (default 0)"
    )
    _add_deadline_option(command)


def _add_cluster_address(command: argparse.ArgumentParser) -> None:
    """``--zookeeper`` or ``--bootstrap-server`` (one of them), and ``--command-config``."""
    where = command.add_mutually_exclusive_group(required=True)
    where.add_argument("--zookeeper", metavar="CONNECT", help="the cluster's ZooKeeper, with its chroot")
    add_bootstrap_options(command, group=where)


def _add_deadline_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--deadline", type=_deadline, default=_default_deadline(), metavar="SECONDS",
                         help="how long ZooKeeper may keep the command waiting before it gives up, reporting what "
                         f"was done (default: ${DEADLINE_VARIABLE}, else 60)")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kto",
        description="Topics as code for Apache Kafka, KRaft and ZooKeeper-mode (kafka-topic-operator).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser(
        "validate",
        help="check manifests offline: CRD schema, CEL rules and Kafka's rules; exit 1 on any error",
        description="Check KafkaTopic/KafkaCluster (and Strimzi KafkaTopic) manifests without a cluster: the "
        "CRD schema, the CRD's CEL rules and Kafka's topic rules. Directories are read recursively "
        "(*.yaml, *.yml); - reads standard input. Input is read within limits (KTO_MANIFEST_* environment "
        "variables, listed in the documentation's settings reference). Prints one line per error and a summary; exits 1 on any error.",
    )
    validate.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a manifest file, a directory of them, or - for standard input",
    )
    _add_kafka_version_option(
        validate,
        "that checks the configs of topics whose cluster no KafkaCluster among the manifests declares",
    )
    validate.set_defaults(handler=_validate)

    plan = commands.add_parser("plan", help="show what apply would change; exit 0 none, 2 changes, 1 errors")
    _add_manifest_options(plan, outputs=("text", "json", "markdown"))
    plan.add_argument("-v", "--verbose", action="store_true", help="list unchanged topics too")
    plan.add_argument("--snapshot", metavar="FILE",
                      help="plan against this kto snapshot file instead of reading ZooKeeper (CI needs no access "
                      "to it); the file must hold the cluster planned")  # fmt: skip
    plan.set_defaults(handler=_one_shot(_plan))

    apply = commands.add_parser("apply", help="make the cluster match the manifests")
    _add_manifest_options(apply)
    apply.add_argument("--yes", action="store_true", help="apply without asking")
    apply.add_argument(
        "--wait",
        action="store_true",
        help="after starting a partition reassignment, wait until Kafka has finished it (a progress line on "
        "stderr), then remove its throttles; without it, apply returns at once and a later apply removes them",
    )
    apply.add_argument(
        "--wait-timeout",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="how long --wait waits (default 3600); exit 1 if the reassignment is still running then",
    )
    apply.set_defaults(handler=_one_shot(_apply))

    describe = commands.add_parser("describe", help="describe topics as kafka-topics.sh --describe does")
    describe.add_argument("topics", nargs="*", metavar="TOPIC")
    _add_cluster_address(describe)
    describe.add_argument("--under-replicated-partitions", action="store_true")
    describe.add_argument("--unavailable-partitions", action="store_true")
    _add_kafka_version_option(
        describe, "to compare with the release ZooKeeper shows (which is then printed too)", default=False
    )
    _add_deadline_option(describe)
    describe.set_defaults(handler=_describe)

    snapshot = commands.add_parser("snapshot", help="write the cluster as JSON lines (the drift job's input)")
    _add_cluster_address(snapshot)
    snapshot.add_argument("--cluster", required=True, metavar="NAME", help="the name rows carry")
    snapshot.add_argument("-o", "--output", required=True, metavar="FILE", help="a file, or - for stdout")
    _add_kafka_version_option(
        snapshot,
        "to compare with the release ZooKeeper shows (which the header records anyway)",
        default=False,
    )
    _add_deadline_option(snapshot)
    snapshot.set_defaults(handler=_snapshot)

    export = commands.add_parser(
        "export",
        help="write a KafkaTopic for each topic of a live cluster, to bring it under management",
        description="Read a cluster and write one KafkaTopic per topic as it is: partitions, partition 0's "
        "replication factor, the config overrides as stored (and with --with-assignment every partition's "
        "replicas), so that kto plan -f of the export plans nothing. Kafka's internal topics and topics marked "
        "for deletion are left out with a note. Without --cluster, the KafkaCluster document is written too, "
        "named after the chroot.",
    )
    _add_cluster_address(export)
    export.add_argument("--cluster", metavar="NAME",
                        help="the KafkaCluster the topics name, declared elsewhere (its document is not written)")  # fmt: skip
    export.add_argument("--format", choices=("kto", "strimzi"), default="kto")
    _add_kafka_version_option(export, "written as the exported KafkaCluster's spec.kafkaVersion")
    export.add_argument("--with-assignment", action="store_true", help="declare every partition's replicas")
    export.add_argument("--include", metavar="REGEX", help="only topics whose whole name matches")
    export.add_argument("--exclude", metavar="REGEX", help="not the topics whose whole name matches")
    export.add_argument("--unmanaged-from", metavar="DIR",
                        help="only the topics the manifests in DIR do not declare (for their cluster)")  # fmt: skip
    export.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="a directory (a file per topic), or - for one YAML stream on stdout")  # fmt: skip
    _add_deadline_option(export)
    export.set_defaults(handler=_export)

    demo = commands.add_parser(
        "demo", help="run the engine against a local ZooKeeper and a simulated 6-broker cluster"
    )
    demo.add_argument("--examples", metavar="DIR", help="manifests to apply (default: manifests/examples)")
    demo.set_defaults(handler=_demo)

    from topic_operator.cli.convert import register as register_convert
    from topic_operator.drift.command import register as register_drift
    from topic_operator.k8s.command import register as register_run

    register_run(commands)
    register_drift(commands)
    register_convert(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``kto``: with no ``argv``, the process's own command line (the console script, which exits after)."""
    args = build_parser().parse_args(argv)
    args.process_ends_with_the_command = argv is None
    from topic_operator.access.interface import ClusterAccessError
    from topic_operator.manifests.limits import LimitSettingError
    from topic_operator.message_text import one_line

    try:
        return int(args.handler(args))
    except (UsageError, ClusterAccessError, LimitSettingError) as error:
        print(one_line(f"kto {args.command}: {error}"), file=sys.stderr)
        return EXIT_ERROR
