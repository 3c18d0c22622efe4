"""Plan and apply: the one entry point the operator, the CLI and the demo use to make a cluster match.

Read the cluster (or take the watched view's state), plan every declared topic, apply the actions through the
cluster's store (ZooKeeper's writer, pipelined, one transaction each; or the Admin protocol's batched requests), and for every topic whose write met a concurrent change,
re-read just that topic and plan it again, a bounded number of times. Results are per topic, so one topic's
rejection or conflict never holds up another, and applying the same declarations twice changes nothing the
second time.

Every step is bounded by one deadline: how long the cluster may keep the run waiting. An outage shorter than that
is ridden out; a longer one ends the run with each topic's outcome as it stands (applied, not written, or
unknown) and ``ReconcileReport.interrupted`` saying why, so that the caller can report it and try again later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from topic_operator.access.interface import (
    DEFAULT_DEADLINE,
    ClusterStore,
    ClusterUnavailableError,
    Outcome,
    Patience,
    WriteResult,
)
from topic_operator.kafka.errors import KafkaError
from topic_operator.model import ApplyMode, ClusterSpec, ClusterState, TopicSpec
from topic_operator.plan import Action, Plan, TopicPlan, TopicStatus, plan, refused

__all__ = ["Judge", "ReconcileReport", "Reconciler", "TopicOutcome", "TopicResult"]

Judge = Callable[[Plan, ClusterState], Mapping[str, KafkaError]]
"""Refusals of a plan's topics, by topic name, given the plan and the state it was made against."""


class TopicOutcome(Enum):
    APPLIED = "applied"
    UNCHANGED = "unchanged"
    PLANNED = "planned"
    """``mode: Plan``: the actions were computed and reported, not written."""
    REJECTED = "rejected"
    CONFLICT = "conflict"
    """Other writers kept changing the topic; nothing of ours was written in the last attempt."""
    NOT_WRITTEN = "not_written"
    """The cluster stayed away past the deadline before the topic's change was (wholly) written; ``errors`` say
    which part was not. Nothing of that part landed: planning again is safe."""
    UNKNOWN = "unknown"
    """The change was sent, its answer was lost with the connection, and the cluster did not come back within the
    deadline to tell whether it landed. The next run re-reads and finds out."""


_PRECEDENCE = (Outcome.UNKNOWN, Outcome.CONFLICT, Outcome.REJECTED, Outcome.NOT_WRITTEN)
"""How a topic with several actions reads when they ended differently: the first outcome found among them."""


@dataclass(frozen=True, slots=True)
class TopicResult:
    topic: str
    outcome: TopicOutcome
    plan: TopicPlan
    errors: tuple[Exception, ...] = ()
    attempts: int = 1


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    """The first plan (what was intended) and each topic's result (what happened). ``interrupted`` is the
    one-line reason when the cluster stayed away past the deadline and ended the run early (None otherwise)."""

    cluster: str
    plan: Plan
    results: tuple[TopicResult, ...] = field(default=())
    interrupted: str | None = None

    def by_outcome(self, outcome: TopicOutcome) -> list[TopicResult]:
        return [r for r in self.results if r.outcome is outcome]

    def counts(self) -> dict[TopicOutcome, int]:
        """Topics per outcome (outcomes with none left out), for a one-line summary."""
        found = {outcome: len(self.by_outcome(outcome)) for outcome in TopicOutcome}
        return {outcome: count for outcome, count in found.items() if count}

    @property
    def writes(self) -> int:
        return sum(len(r.plan.actions) for r in self.results if r.outcome is TopicOutcome.APPLIED)


class Reconciler:
    """Makes one cluster match its declarations through ``store``, whichever protocol it speaks (ZooKeeper's
    znodes, Kafka's Admin protocol, or the one a migration's stage allows): the engine knows no store but through
    the ``ClusterStore`` interface, and ``access`` opens them.

    ``deadline``: seconds the cluster may keep a ``plan`` or ``apply`` waiting, unless the call gives its own.
    """

    def __init__(
        self,
        store: ClusterStore,
        cluster: ClusterSpec,
        *,
        seed: int = 0,
        max_replans: int = 3,
        deadline: float = DEFAULT_DEADLINE,
    ) -> None:
        self.store = store
        self._cluster = cluster
        self._seed = seed
        self._max_replans = max_replans
        self._deadline = deadline

    def plan(
        self,
        desired: Iterable[TopicSpec],
        *,
        deleting: Iterable[TopicSpec] = (),
        state: ClusterState | None = None,
        deadline: float | Patience | None = None,
        judge: Judge | None = None,
    ) -> Plan:
        """What would change, computed against ``state`` or a fresh read. Nothing is written. Raises
        ``ClusterUnavailableError`` if the read cannot finish within the deadline.

        ``judge`` refuses topics the planner would write (a KafkaCluster's grants to the namespaces that declared
        them: ``tenants.rules``); it sees the plan and the state it was made against."""
        if state is None:
            desired, deleting = list(desired), list(deleting)
            # A plan compares only the declared topics' overrides (the others are listed, never diffed), so only
            # theirs are asked for: through the Admin protocol, in the same round as the Metadata.
            concerned = [spec.name for spec in (*desired, *deleting)]
            state = self.store.read_cluster(deadline=self._patience(deadline), configs_of=concerned)
        made = plan(desired, state, self._cluster, deleting=deleting, seed=self._seed)
        return refused(made, judge(made, state)) if judge is not None else made

    def apply(
        self,
        desired: Iterable[TopicSpec],
        *,
        deleting: Iterable[TopicSpec] = (),
        state: ClusterState | None = None,
        deadline: float | Patience | None = None,
        judge: Judge | None = None,
        planned: Plan | None = None,
    ) -> ReconcileReport:
        """Plan, then write every action of topics declared with ``mode: Apply``.

        ``state`` (e.g. the watched view's) saves a full read; if it is stale, the writer's version checks turn
        that into conflicts, and those topics are re-read and re-planned. ``deadline`` bounds every wait on
        ZooKeeper: past it the report says each topic's outcome and ``interrupted`` why (a first read that
        cannot finish raises ``ClusterUnavailableError`` instead: nothing was planned or written).

        ``planned``: what ``plan`` gave for the same ``desired``, ``deleting``, ``state`` and ``judge`` (the
        preview ``kto apply`` showed), taken as the first plan instead of planning all of it again: planning is
        a pure function of those, so the result is the same, and a cluster of 50,000 topics is planned once.
        """
        if planned is not None and state is None:
            raise ValueError("a plan made beforehand is applied only with the state it was made against")
        patience = self._patience(deadline)
        desired, deleting = list(desired), list(deleting)
        first = (
            planned
            if planned is not None
            else self.plan(desired, deleting=deleting, state=state, deadline=patience, judge=judge)
        )
        specs = {spec.name: spec for spec in [*deleting, *desired]}
        results: dict[str, TopicResult] = {}
        pending = _settle(first.topics, specs, results, attempt=1)
        attempt = 1
        interrupted: str | None = None
        while pending:
            conflicts, interrupted = self._write(pending, results, attempt, patience)
            if not conflicts or attempt > self._max_replans or interrupted:
                for topic_plan, errors in conflicts:
                    results[topic_plan.topic] = TopicResult(
                        topic_plan.topic, TopicOutcome.CONFLICT, topic_plan, errors, attempt
                    )
                break
            attempt += 1
            names = [tp.topic for tp, _ in conflicts]
            try:
                pending = self._replan(names, desired, deleting, specs, results, attempt, patience)
            except ClusterUnavailableError as gone:
                interrupted = str(gone)
                for topic_plan, errors in conflicts:
                    results[topic_plan.topic] = TopicResult(
                        topic_plan.topic, TopicOutcome.CONFLICT, topic_plan, (*errors, gone), attempt
                    )
                break
        ordered = tuple(results[t.topic] for t in first.topics if t.topic in results)
        return ReconcileReport(self._cluster.name, first, ordered, interrupted)

    def _patience(self, deadline: float | Patience | None) -> Patience:
        if isinstance(deadline, Patience):
            return deadline
        return Patience(deadline if deadline is not None else self._deadline)

    def _write(
        self, plans: Sequence[TopicPlan], results: dict[str, TopicResult], attempt: int, patience: Patience
    ) -> tuple[list[tuple[TopicPlan, tuple[Exception, ...]]], str | None]:
        """Apply all actions in one pipelined batch; return the topics that met a conflict, and why the batch
        ended early (None when it did not)."""
        actions: list[Action] = [action for topic_plan in plans for action in topic_plan.actions]
        try:
            written_results = self.store.apply_all(actions, deadline=patience)
        except ClusterUnavailableError as gone:  # before anything was sent
            for topic_plan in plans:
                results[topic_plan.topic] = TopicResult(
                    topic_plan.topic, TopicOutcome.NOT_WRITTEN, topic_plan, (gone,), attempt
                )
            return [], str(gone)
        by_topic: dict[str, list[WriteResult]] = {}
        interrupted: str | None = None
        for result in written_results:
            by_topic.setdefault(result.action.topic, []).append(result)
            cut_short = result.error if result.outcome in (Outcome.NOT_WRITTEN, Outcome.UNKNOWN) else None
            if cut_short is not None and interrupted is None:
                interrupted = str(cut_short.__cause__ or cut_short)
        conflicts: list[tuple[TopicPlan, tuple[Exception, ...]]] = []
        for topic_plan in plans:
            written = by_topic.get(topic_plan.topic, [])
            errors = tuple(
                w.error for w in written if w.error is not None and w.outcome is not Outcome.APPLIED
            )
            outcomes = {w.outcome for w in written}
            worst = next((o for o in _PRECEDENCE if o in outcomes), Outcome.APPLIED)
            if worst is Outcome.CONFLICT:
                conflicts.append((topic_plan, errors))
            else:
                results[topic_plan.topic] = TopicResult(
                    topic_plan.topic, TopicOutcome(worst.value), topic_plan, errors, attempt
                )
        return conflicts, interrupted

    def _replan(
        self,
        topics: list[str],
        desired: list[TopicSpec],
        deleting: list[TopicSpec],
        specs: dict[str, TopicSpec],
        results: dict[str, TopicResult],
        attempt: int,
        patience: Patience,
    ) -> list[TopicPlan]:
        """Re-read only the conflicting topics (plus brokers and markers) and plan them again. Collision checks
        need every name: a conflicting create re-plans against a topic that now exists, which needs none.

        Not judged again (``apply``'s ``judge``): the first plan judged these topics and counted them against
        their quotas, and another writer's change can only leave less for them to write."""
        fresh = self.store.read_cluster(topics=topics, deadline=patience, configs_of=topics)
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
