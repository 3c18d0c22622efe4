"""``kto apply``: make the cluster match the manifests, after showing the plan and, at a terminal, asking."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from topic_operator.cli.declared import (
    declared_release,
    reached_through_both,
    read_declared,
    warn_about,
)
from topic_operator.cli.options import (
    EXIT_ERROR,
    EXIT_OK,
    UsageError,
    add_manifest_options,
    one_shot,
    print_errors,
)
from topic_operator.cli.stores import store_for

__all__ = ["register", "run"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto apply`` to ``kto``'s sub-commands."""
    apply = commands.add_parser("apply", help="make the cluster match the manifests")
    add_manifest_options(apply)
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
    apply.set_defaults(handler=one_shot(run))


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


def run(args: argparse.Namespace) -> int:
    from topic_operator.plan_output import cluster_problems, plan_to_dict, render_plan_text, writes_to_dict
    from topic_operator.reconcile import Reconciler, TopicOutcome

    cluster, topics, errors, judge = read_declared(args)
    print_errors(errors, sys.stderr)
    with store_for(args, cluster) as store:
        reconciler = Reconciler(store, cluster, seed=args.seed, deadline=args.deadline)
        # One read serves the preview and the apply, so what is written is the plan that was shown and
        # confirmed; a change made since then fails its version check and that topic is re-read and re-planned.
        state = store.read_cluster(deadline=args.deadline, configs_of=[t.name for t in topics])
        warn_about(
            state, cluster.name, declared=declared_release(cluster), both=reached_through_both(cluster)
        )
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
        with store_for(args, cluster) as store:
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
