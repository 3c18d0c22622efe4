"""Plan and apply: the one entry point the operator, the CLI and the demo use to make a cluster match.

Read the cluster (or take the watched view's state), plan every declared topic, apply the actions through the
ZooKeeper writer (pipelined, one transaction each), and for every topic whose write met a concurrent change,
re-read just that topic and plan it again, a bounded number of times. Results are per topic, so one topic's
rejection or conflict never holds up another, and applying the same declarations twice changes nothing the
second time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from kazoo.client import KazooClient

from topic_operator.model import ApplyMode, ClusterSpec, ClusterState, TopicSpec
from topic_operator.plan import Action, Plan, TopicPlan, TopicStatus, plan
from topic_operator.zookeeper.snapshot import read_cluster
from topic_operator.zookeeper.writer import Outcome, WriteResult, ZooKeeperWriter

__all__ = ["ReconcileReport", "Reconciler", "TopicOutcome", "TopicResult"]


class TopicOutcome(Enum):
    APPLIED = "applied"
    UNCHANGED = "unchanged"
    PLANNED = "planned"
    """``mode: Plan``: the actions were computed and reported, not written."""
    REJECTED = "rejected"
    CONFLICT = "conflict"
    """Other writers kept changing the topic; nothing of ours was written in the last attempt."""


@dataclass(frozen=True, slots=True)
class TopicResult:
    topic: str
    outcome: TopicOutcome
    plan: TopicPlan
    errors: tuple[Exception, ...] = ()
    attempts: int = 1


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    """The first plan (what was intended) and each topic's result (what happened)."""

    cluster: str
    plan: Plan
    results: tuple[TopicResult, ...] = field(default=())

    def by_outcome(self, outcome: TopicOutcome) -> list[TopicResult]:
        return [r for r in self.results if r.outcome is outcome]

    @property
    def writes(self) -> int:
        return sum(len(r.plan.actions) for r in self.results if r.outcome is TopicOutcome.APPLIED)


class Reconciler:
    """Makes one cluster match its declarations through ``client`` (started, rooted at the cluster's chroot)."""

    def __init__(
        self,
        client: KazooClient,
        cluster: ClusterSpec,
        *,
        writer: ZooKeeperWriter | None = None,
        seed: int = 0,
        max_replans: int = 3,
    ) -> None:
        self._client = client
        self._cluster = cluster
        self._writer = writer if writer is not None else ZooKeeperWriter(client)
        self._seed = seed
        self._max_replans = max_replans

    def plan(
        self,
        desired: Iterable[TopicSpec],
        *,
        deleting: Iterable[TopicSpec] = (),
        state: ClusterState | None = None,
    ) -> Plan:
        """What would change, computed against ``state`` or a fresh read. Nothing is written."""
        actual = state if state is not None else read_cluster(self._client)
        return plan(desired, actual, self._cluster, deleting=deleting, seed=self._seed)

    def apply(
        self,
        desired: Iterable[TopicSpec],
        *,
        deleting: Iterable[TopicSpec] = (),
        state: ClusterState | None = None,
    ) -> ReconcileReport:
        """Plan, then write every action of topics declared with ``mode: Apply``.

        ``state`` (e.g. the watched view's) saves a full read; if it is stale, the writer's version checks turn
        that into conflicts, and those topics are re-read and re-planned.
        """
        desired, deleting = list(desired), list(deleting)
        first = self.plan(desired, deleting=deleting, state=state)
        specs = {spec.name: spec for spec in [*deleting, *desired]}
        results: dict[str, TopicResult] = {}
        pending = _settle(first.topics, specs, results, attempt=1)
        attempt = 1
        while pending:
            conflicts = self._write(pending, results, attempt)
            if not conflicts or attempt > self._max_replans:
                for topic_plan, errors in conflicts:
                    results[topic_plan.topic] = TopicResult(
                        topic_plan.topic, TopicOutcome.CONFLICT, topic_plan, errors, attempt
                    )
                break
            attempt += 1
            pending = self._replan(
                [tp.topic for tp, _ in conflicts], desired, deleting, specs, results, attempt
            )
        ordered = tuple(results[t.topic] for t in first.topics if t.topic in results)
        return ReconcileReport(self._cluster.name, first, ordered)

    def _write(
        self, plans: Sequence[TopicPlan], results: dict[str, TopicResult], attempt: int
    ) -> list[tuple[TopicPlan, tuple[Exception, ...]]]:
        """Apply all actions in one pipelined batch; return the topics that met a conflict."""
        actions: list[Action] = [action for topic_plan in plans for action in topic_plan.actions]
        by_topic: dict[str, list[WriteResult]] = {}
        for result in self._writer.apply_all(actions):
            by_topic.setdefault(result.action.topic, []).append(result)
        conflicts: list[tuple[TopicPlan, tuple[Exception, ...]]] = []
        for topic_plan in plans:
            written = by_topic.get(topic_plan.topic, [])
            errors = tuple(
                w.error for w in written if w.error is not None and w.outcome is not Outcome.APPLIED
            )
            if any(w.outcome is Outcome.CONFLICT for w in written):
                conflicts.append((topic_plan, errors))
            elif any(w.outcome is Outcome.REJECTED for w in written):
                results[topic_plan.topic] = TopicResult(
                    topic_plan.topic, TopicOutcome.REJECTED, topic_plan, errors, attempt
                )
            else:
                results[topic_plan.topic] = TopicResult(
                    topic_plan.topic, TopicOutcome.APPLIED, topic_plan, (), attempt
                )
        return conflicts

    def _replan(
        self,
        topics: list[str],
        desired: list[TopicSpec],
        deleting: list[TopicSpec],
        specs: dict[str, TopicSpec],
        results: dict[str, TopicResult],
        attempt: int,
    ) -> list[TopicPlan]:
        """Re-read only the conflicting topics (plus brokers and markers) and plan them again. Collision checks
        need every name: a conflicting create re-plans against a topic that now exists, which needs none."""
        fresh = read_cluster(self._client, topics=topics)
        wanted = set(topics)
        again = plan(
            [s for s in desired if s.name in wanted],
            fresh,
            self._cluster,
            deleting=[s for s in deleting if s.name in wanted],
            seed=self._seed,
        )
        return _settle(again.topics, specs, results, attempt)


def _settle(
    plans: Iterable[TopicPlan], specs: dict[str, TopicSpec], results: dict[str, TopicResult], attempt: int
) -> list[TopicPlan]:
    """Record the result of every plan that needs no write; return the plans whose actions must be written."""
    pending: list[TopicPlan] = []
    for topic_plan in plans:
        outcome = _outcome_without_writing(topic_plan, specs.get(topic_plan.topic))
        if outcome is None:
            pending.append(topic_plan)
        else:
            results[topic_plan.topic] = TopicResult(
                topic_plan.topic, outcome, topic_plan, topic_plan.rejections, attempt
            )
    return pending


def _outcome_without_writing(topic_plan: TopicPlan, spec: TopicSpec | None) -> TopicOutcome | None:
    """The outcome of a topic plan that needs no write, or None when its actions must be written."""
    if topic_plan.status is TopicStatus.REJECTED:
        return TopicOutcome.REJECTED
    if not topic_plan.actions:
        return TopicOutcome.UNCHANGED
    if spec is not None and spec.mode is ApplyMode.PLAN:
        return TopicOutcome.PLANNED
    return None
