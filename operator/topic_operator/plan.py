"""Planned writes as data: frozen actions, each of which the ZooKeeper writer turns into one transaction.

Computing a change and writing it are separate steps (as Kafka's ``createNewPartitionsAssignment`` and
``createPartitionsWithAssignment`` are), so ``mode: Plan`` simply skips the writer, a plan can be printed or
stored as JSON, and every write carries the znode version it was computed from (compare-and-set).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Action", "AddPartitions", "AlterConfig", "CreateTopic", "DeleteTopic"]


@dataclass(frozen=True, slots=True)
class CreateTopic:
    """Create ``/config/topics/<t>`` and ``/brokers/topics/<t>`` together, config first.

    ``orphan_config_version`` is the version of a config znode left without its topic (Kafka's create writes the
    config first and may stop there, §8); the transaction then overwrites it at that version instead of creating.
    """

    topic: str
    assignment: Mapping[int, tuple[int, ...]]
    config: Mapping[str, str] = field(default_factory=dict)
    orphan_config_version: int | None = None


@dataclass(frozen=True, slots=True)
class AddPartitions:
    """Rewrite ``/brokers/topics/<t>`` at ``expected_version`` with the existing partitions plus ``new_partitions``,
    keeping ``topic_id`` and the replica-change maps as read (§13.1)."""

    topic: str
    existing: Mapping[int, tuple[int, ...]]
    new_partitions: Mapping[int, tuple[int, ...]]
    expected_version: int
    topic_id: str | None = None
    adding_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlterConfig:
    """Replace the topic's whole override set at ``expected_version`` (None: the config znode does not exist) and
    announce it with one ``config_change_`` notification so brokers apply it live."""

    topic: str
    config: Mapping[str, str]
    expected_version: int | None


@dataclass(frozen=True, slots=True)
class DeleteTopic:
    """Ask the controller to delete the topic (``/admin/delete_topics/<t>``). Only ever planned explicitly."""

    topic: str


Action = CreateTopic | AddPartitions | AlterConfig | DeleteTopic
