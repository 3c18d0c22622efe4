"""A batch of one kind of action cut into requests that a KRaft controller accepts.

The controller refuses a whole request whose metadata records exceed its bound (``kafka.controller_records``),
every topic in it. So the writer sends each kind of action in as few requests as fit under the bound, counting
each action's records as the controller counts them; the plan stays one plan, and a request is a transport
detail. One action alone above the bound is sent alone (the planner refuses such a topic, so only a state read
through ZooKeeper can plan one), and its refusal then concerns that topic only. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from topic_operator.admin.config_operations import config_operations
from topic_operator.kafka.controller_records import MAX_RECORDS_PER_OPERATION, create_records
from topic_operator.kafka.reassignment import BROKER_THROTTLE_RATES
from topic_operator.plan import Action, AddPartitions, AlterConfig, CreateTopic, DeleteTopic, Reassign

__all__ = ["records_of", "within_records"]

A = TypeVar("A")


def records_of(action: Action) -> int:
    """The metadata records the controller writes for ``action`` (at most: a reassignment's partitions each
    count, moved or not, and a broker's throttle keys count once per action that sends them)."""
    if isinstance(action, CreateTopic):
        return create_records(len(action.assignment), len(action.config))
    if isinstance(action, AddPartitions):
        return len(action.new_partitions)
    if isinstance(action, AlterConfig):
        keys = len(config_operations(action.previous, action.config))
        return keys + len(BROKER_THROTTLE_RATES) * len(action.clear_broker_throttles)
    if isinstance(action, Reassign):
        wanted = action.config if action.config is not None else action.previous_config
        keys = len(config_operations(action.previous_config, wanted))
        rates = len(BROKER_THROTTLE_RATES) * len(action.brokers) if action.throttle_bytes_per_second else 0
        return len(action.moves) + keys + rates
    if isinstance(action, DeleteTopic):
        return 1
    raise TypeError(f"not an action: {action!r}")


def within_records(
    batch: Sequence[A],
    records: Callable[[A], int],
    limit: int = MAX_RECORDS_PER_OPERATION,
) -> Iterator[list[A]]:
    """``batch`` in order, cut into runs whose ``records`` add up to at most ``limit``; an item above ``limit``
    alone is a run of its own. Every request carries at least one record's worth, so an empty action (none are
    planned) still goes somewhere."""
    run: list[A] = []
    total = 0
    for item in batch:
        cost = max(records(item), 1)
        if run and total + cost > limit:
            yield run
            run, total = [], 0
        run.append(item)
        total += cost
    if run:
        yield run
