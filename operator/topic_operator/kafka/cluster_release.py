"""What ZooKeeper tells of a cluster's Kafka release, and what that means for a declared ``kafkaVersion``.

Nothing in ZooKeeper names the brokers' release, but every release writes its own formats (kafka-versions.md
d.2), so the znodes bound it: a topic znode of version 3 or a topic id was written by Kafka 2.8 or later; a broker
registration of version 5 by a broker at inter-broker protocol 2.7 or later; ``/controller`` of version 1 by a
controller older than 3.4, of version 2 by 3.4 or later; ``/feature`` by a 2.7+ controller (version 2 from
3.3-IV0); ``/migration`` by a 3.4+ KRaft controller. ZooKeeper-mode brokers register no ``features`` at all
(3.9.0-rc3:core/src/main/scala/kafka/server/KafkaServer.scala:186), so those say nothing.

From the clues come bounds ("2.8 or later", "3.3 or earlier"). A declared release below the lower bound or above
the upper one is contradicted, and said so with both. Writing follows the declared release, except that nothing
is written that the release ZooKeeper shows cannot read: above the upper bound, the upper bound's formats.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from topic_operator.kafka.releases import (
    BROKER_REGISTRATION_V5,
    CONTROLLER_ZNODE_V2,
    FEATURE_ZNODE,
    FEATURE_ZNODE_V2,
    KRAFT_MIGRATION,
    TOPIC_ID,
    TOPIC_ZNODE_V2,
    KafkaVersion,
    format_version,
)

__all__ = [
    "Clue",
    "ReleaseBounds",
    "ReleaseEvidence",
    "release_bounds",
    "release_conflict",
    "release_for_writing",
    "release_report",
]

_BEFORE_CONTROLLER_V2: Final[KafkaVersion] = (3, 3)
"""The newest line whose controllers write ``/controller`` of version 1."""


@dataclass(frozen=True, slots=True)
class ReleaseEvidence:
    """The release-telling facts of one read of a cluster: counts by format, and the cluster-wide znodes."""

    topic_znode_versions: tuple[tuple[int, int], ...] = ()
    """(topic znode version, how many topics), sorted; 0 for a znode without a ``version`` field."""
    topics_with_id: int = 0
    broker_registration_versions: tuple[tuple[int, int], ...] = ()
    """(registration version, how many brokers), sorted."""
    broker_features: tuple[str, ...] = ()
    """Feature names any broker registers (ZooKeeper-mode brokers of 2.7-3.9 register none)."""
    controller_znode_version: int | None = None
    """``/controller``'s ``version``; None when there is no (readable) controller."""
    kraft_controller_epoch: int | None = None
    feature_znode_version: int | None = None
    """``/feature``'s ``version``; None when absent."""
    migration_znode: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The form snapshot files and JSON outputs carry."""
        return {
            "topic_znode_versions": {str(v): n for v, n in self.topic_znode_versions},
            "topics_with_id": self.topics_with_id,
            "broker_registration_versions": {str(v): n for v, n in self.broker_registration_versions},
            "broker_features": list(self.broker_features),
            "controller_znode_version": self.controller_znode_version,
            "kraft_controller_epoch": self.kraft_controller_epoch,
            "feature_znode_version": self.feature_znode_version,
            "migration_znode": self.migration_znode,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReleaseEvidence:
        return cls(
            topic_znode_versions=tuple(
                sorted((int(v), int(n)) for v, n in data["topic_znode_versions"].items())
            ),
            topics_with_id=int(data["topics_with_id"]),
            broker_registration_versions=tuple(
                sorted((int(v), int(n)) for v, n in data["broker_registration_versions"].items())
            ),
            broker_features=tuple(data["broker_features"]),
            controller_znode_version=data["controller_znode_version"],
            kraft_controller_epoch=data["kraft_controller_epoch"],
            feature_znode_version=data["feature_znode_version"],
            migration_znode=bool(data["migration_znode"]),
        )


@dataclass(frozen=True, slots=True)
class Clue:
    """One fact, in words, and the bound it puts on the release (None: no bound, only worth saying)."""

    text: str
    at_least: KafkaVersion | None = None
    at_most: KafkaVersion | None = None


@dataclass(frozen=True, slots=True)
class ReleaseBounds:
    clues: tuple[Clue, ...]

    @property
    def at_least(self) -> KafkaVersion | None:
        return max((c.at_least for c in self.clues if c.at_least is not None), default=None)

    @property
    def at_most(self) -> KafkaVersion | None:
        return min((c.at_most for c in self.clues if c.at_most is not None), default=None)

    @property
    def seen(self) -> str:
        """ "2.8 or later", "3.3 or earlier", "2.8 to 3.3", or "unknown"."""
        low, high = self.at_least, self.at_most
        if low is not None and high is not None:
            return f"{format_version(low)} to {format_version(high)}" if low != high else format_version(low)
        if low is not None:
            return f"{format_version(low)} or later"
        if high is not None:
            return f"{format_version(high)} or earlier"
        return "unknown"

    def why_at_least(self) -> str:
        return "; ".join(c.text for c in self.clues if c.at_least is not None and c.at_least == self.at_least)

    def why_at_most(self) -> str:
        return "; ".join(c.text for c in self.clues if c.at_most is not None and c.at_most == self.at_most)


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def release_bounds(evidence: ReleaseEvidence) -> ReleaseBounds:
    """The clues of ``evidence``, each with the bound it gives (kafka-versions.md d.2 for every format)."""
    clues: list[Clue] = []
    topic_versions = dict(evidence.topic_znode_versions)
    if topic_versions.get(3):
        clues.append(Clue(f"{_plural(topic_versions[3], 'topic znode', 'topic znodes')} of version 3, written by "
                          "Kafka 2.8 or later", at_least=TOPIC_ID))  # fmt: skip
    if topic_versions.get(2):
        clues.append(Clue(f"{_plural(topic_versions[2], 'topic znode', 'topic znodes')} of version 2, written by "
                          "Kafka 2.4 to 2.7", at_least=TOPIC_ZNODE_V2))  # fmt: skip
    if topic_versions.get(1):
        clues.append(Clue(f"{_plural(topic_versions[1], 'topic znode', 'topic znodes')} of version 1, written by "
                          "Kafka 2.3 or earlier"))  # fmt: skip
    if evidence.topics_with_id:
        clues.append(Clue(f"{_plural(evidence.topics_with_id, 'topic has', 'topics have')} a topic_id, given by a "
                          "Kafka 2.8+ controller", at_least=TOPIC_ID))  # fmt: skip
    registrations = dict(evidence.broker_registration_versions)
    if registrations.get(5):
        clues.append(Clue(f"{_plural(registrations[5], 'broker registers', 'brokers register')} version 5, written "
                          "at inter-broker protocol 2.7 or later", at_least=BROKER_REGISTRATION_V5))  # fmt: skip
    older = sum(n for v, n in registrations.items() if v < 5)
    if older:
        versions = "/".join(str(v) for v in sorted(v for v in registrations if v < 5))
        clues.append(Clue(f"{_plural(older, 'broker registers', 'brokers register')} version {versions}, written "
                          "at inter-broker protocol below 2.7"))  # fmt: skip
    if evidence.broker_features:
        clues.append(Clue(f"brokers register features {', '.join(evidence.broker_features)} (ZooKeeper-mode brokers "
                          "of 2.7 to 3.9 register none)"))  # fmt: skip
    if evidence.controller_znode_version == 1:
        clues.append(Clue("/controller is version 1, written by a controller of Kafka 3.3 or earlier",
                          at_most=_BEFORE_CONTROLLER_V2))  # fmt: skip
    elif evidence.controller_znode_version is not None and evidence.controller_znode_version >= 2:
        clues.append(Clue(f"/controller is version {evidence.controller_znode_version} with kraftControllerEpoch, "
                          "written by Kafka 3.4 or later", at_least=CONTROLLER_ZNODE_V2))  # fmt: skip
    if evidence.feature_znode_version is not None:
        since = FEATURE_ZNODE_V2 if evidence.feature_znode_version >= 2 else FEATURE_ZNODE
        clues.append(Clue(f"/feature is version {evidence.feature_znode_version}, written by a Kafka "
                          f"{format_version(since)}+ controller", at_least=since))  # fmt: skip
    if evidence.migration_znode:
        clues.append(
            Clue("/migration exists, written by a Kafka 3.4+ KRaft controller", at_least=KRAFT_MIGRATION)
        )
    return ReleaseBounds(tuple(clues))


def release_conflict(declared: KafkaVersion, bounds: ReleaseBounds) -> str | None:
    """The warning when ZooKeeper contradicts the declared release, naming both; None when it does not."""
    low, high = bounds.at_least, bounds.at_most
    name = format_version(declared)
    if low is not None and declared < low:
        return (
            f"kafkaVersion {name} is declared, but ZooKeeper shows Kafka {format_version(low)} or later "
            f"({bounds.why_at_least()}): configs and znodes follow {name}, keeping what newer releases wrote"
        )
    if high is not None and declared > high:
        return (
            f"kafkaVersion {name} is declared, but ZooKeeper shows Kafka {format_version(high)} or earlier "
            f"({bounds.why_at_most()}): nothing {format_version(high)} cannot read is written, configs and znodes "
            f"follow {format_version(high)}"
        )
    return None


def release_for_writing(declared: KafkaVersion, bounds: ReleaseBounds) -> KafkaVersion:
    """The release whose rules and formats a write follows: the declared one, capped at what ZooKeeper shows the
    cluster runs at most, so that nothing its release cannot read is written."""
    high = bounds.at_most
    return high if high is not None and declared > high else declared


def release_report(declared: KafkaVersion | None, evidence: ReleaseEvidence) -> dict[str, Any]:
    """The cluster's release as the JSON outputs show it: declared (None when nothing declared it), what
    ZooKeeper shows and why, the release writes follow, and the warning when the two disagree."""
    bounds = release_bounds(evidence)
    return {
        "declared": format_version(declared) if declared is not None else None,
        "seen": bounds.seen,
        "written_as": format_version(release_for_writing(declared, bounds)) if declared is not None else None,
        "clues": [clue.text for clue in bounds.clues],
        "warning": release_conflict(declared, bounds) if declared is not None else None,
        "evidence": evidence.to_dict(),
    }
