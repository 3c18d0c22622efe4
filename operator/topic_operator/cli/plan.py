"""``kto plan``: what ``kto apply`` would change, read from the cluster or from a snapshot file."""

from __future__ import annotations

import argparse
import sys

from topic_operator.cli.declared import (
    declared_release,
    reached_through_both,
    read_declared,
    snapshot_state,
    state_warnings,
    warn_about,
)
from topic_operator.cli.options import (
    EXIT_CHANGES,
    EXIT_ERROR,
    EXIT_OK,
    add_manifest_options,
    one_shot,
    print_errors,
)
from topic_operator.cli.stores import store_for

__all__ = ["register", "run"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kto plan`` to ``kto``'s sub-commands."""
    plan = commands.add_parser("plan", help="show what apply would change; exit 0 none, 2 changes, 1 errors")
    add_manifest_options(plan, outputs=("text", "json", "markdown"))
    plan.add_argument("-v", "--verbose", action="store_true", help="list unchanged topics too")
    plan.add_argument("--snapshot", metavar="FILE",
                      help="plan against this kto snapshot file instead of reading ZooKeeper (CI needs no access "
                      "to it); the file must hold the cluster planned")  # fmt: skip
    plan.set_defaults(handler=one_shot(run))


def run(args: argparse.Namespace) -> int:
    from topic_operator.plan import TopicStatus, plan, refused
    from topic_operator.plan_output import (
        cluster_problems,
        plan_json,
        render_plan_markdown,
        render_plan_text,
        writes_to_dict,
    )

    cluster, topics, errors, judge = read_declared(args, needs_zookeeper=args.snapshot is None)
    print_errors(errors, sys.stderr)
    if args.snapshot is not None:
        state = snapshot_state(args.snapshot, cluster.name)
        result = plan(topics, state, cluster, seed=args.seed)
    else:
        with store_for(args, cluster) as store:
            # only the declared topics' overrides are planned: the brokers need not describe the others'
            state = store.read_cluster(deadline=args.deadline, configs_of=[t.name for t in topics])
            result = plan(topics, state, cluster, seed=args.seed)
            # the brokers' own verdict (validate_only) where the store has one: a policy, a config they refuse
            result = refused(result, store.validate(result.actions))
    if judge is not None:
        result = refused(result, judge(result, state))
    warn_about(state, cluster.name, declared=declared_release(cluster), both=reached_through_both(cluster))
    if args.output == "json":
        problems = cluster_problems(state, cluster.kafka_version)
        sys.stdout.write(plan_json(result, manifest_errors=errors, **problems, writes=writes_to_dict(state)))
    elif args.output == "markdown":
        warnings = state_warnings(state, cluster.name, declared=declared_release(cluster))
        sys.stdout.write(render_plan_markdown(result, manifest_errors=errors, warnings=warnings))
    else:
        sys.stdout.write(render_plan_text(result, show_unchanged=args.verbose))
    if errors or result.has_rejections:
        return EXIT_ERROR
    pending = result.has_changes or any(t.status is TopicStatus.CHANGE for t in result.topics)  # queued too
    return EXIT_CHANGES if pending else EXIT_OK
