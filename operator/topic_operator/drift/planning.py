"""The plan of one cluster in the drift job: its declared topics and snapshot in, the engine's plan out.

``cluster_drift`` calls it in the job's Python stage with the ``ClusterState`` and ``TopicSpec`` values exactly as
``kto plan`` would have them, and it returns

- the plan document, ``plan_output.plan_json``: what ``kto plan -o json`` prints, for ``plans/<cluster>.json``;
- the facts the rules need about every topic the plan does something to (status, action types,
  rejections) and the config keys that differ, compared by ``comparable_config`` as the planner compares them.

Unchanged topics produce no facts, so what leaves Python is proportional to the drift, not to the fleet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from topic_operator.kafka.topic_configs import comparable_config
from topic_operator.model import ClusterSpec, ClusterState, TopicSpec, quick_init
from topic_operator.plan import Plan, TopicStatus, left_alone_config, plan
from topic_operator.plan_output import action_to_dict, cluster_problems, plan_json, writes_to_dict

__all__ = [
    "PLANNED_TOPIC_FIELDS",
    "ClusterPlan",
    "ConfigDiff",
    "Rejection",
    "TopicFacts",
    "config_differences",
    "plan_cluster",
]

PLANNED_TOPIC_FIELDS: Final = (
    "topic",
    "partitions",
    "topic_id",
    "config",
    "topic_znode_version",
    "config_znode_version",
    "topic_marked_for_deletion",
    "reassignment_in_progress",
)
"""The per-topic fields the planner reads. Partition states are left out: the plan does not depend on them,
and they are most of a row's bytes."""

_ACTIVE: Final = frozenset({TopicStatus.CREATE, TopicStatus.CHANGE, TopicStatus.DELETE, TopicStatus.REJECTED})


@quick_init
@dataclass(frozen=True, slots=True)
class Rejection:
    field: str | None
    kafka_class: str
    message: str


@quick_init
@dataclass(frozen=True, slots=True)
class ConfigDiff:
    """One override key that differs; values as written (declared / in ZooKeeper), None where absent."""

    key: str
    desired: str | None
    actual: str | None


@quick_init
@dataclass(frozen=True, slots=True)
class TopicFacts:
    topic: str
    status: str
    actions: tuple[str, ...]
    """Action types as in the plan's JSON (``create``, ``add_partitions``, ``alter_config``, ``delete``)."""
    rejections: tuple[Rejection, ...]
    config_diffs: tuple[ConfigDiff, ...]


@dataclass(frozen=True, slots=True)
class ClusterPlan:
    cluster: str
    plan: Plan
    document: str
    facts: tuple[TopicFacts, ...]


def config_differences(declared: Mapping[str, str], actual: Mapping[str, str]) -> list[ConfigDiff]:
    """The keys the plan's ``AlterConfig`` would change, found as the planner finds them: canonical values
    compared (``1000`` equals ``" 1000 "``, list configs as sets), raw values reported."""
    if dict(declared) == dict(actual):
        return []
    after, before = comparable_config(declared), comparable_config(actual)
    return [
        ConfigDiff(key, declared.get(key), actual.get(key))
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


def plan_cluster(
    specs: Iterable[TopicSpec], state: ClusterState, cluster: ClusterSpec, *, seed: int
) -> ClusterPlan:
    """Plan one cluster and extract what the rules need. Topics the plan leaves alone produce no facts."""
    declared = list(specs)
    result = plan(declared, state, cluster, seed=seed)
    by_name = {
        spec.name: spec for spec in reversed(declared)
    }  # the first declaration, as the plan reports it
    facts: list[TopicFacts] = []
    for topic in result.topics:
        spec, current = by_name.get(topic.topic), state.topics.get(topic.topic)
        diffs = (
            config_differences(
                {**left_alone_config(spec, cluster, current.config), **spec.config}, current.config
            )
            if spec is not None and current is not None
            else []
        )  # the keys the declarations do not own are left alone, as the plan leaves them: never drift
        if topic.status not in _ACTIVE and not diffs:
            continue
        facts.append(
            TopicFacts(
                topic=topic.topic,
                status=topic.status.value,
                actions=tuple(str(action_to_dict(a)["type"]) for a in topic.actions),
                rejections=tuple(Rejection(e.field, e.kafka_class, e.message) for e in topic.rejections),
                config_diffs=tuple(diffs),
            )
        )
    document = plan_json(
        result, **cluster_problems(state, cluster.kafka_version), writes=writes_to_dict(state)
    )
    return ClusterPlan(cluster.name, result, document, tuple(facts))
