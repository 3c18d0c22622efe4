"""Every ZooKeeper-mode Kafka release line from 2.0 to 3.9, the KRaft-only lines 4.0 and 4.1, and the release
each rule of the port arrived in.

A cluster declares its release line (``KafkaCluster.spec.kafkaVersion``, ``kto --kafka-version``); every rule that
changed between releases asks this module whether the line has it, so that the rules of 2.0 and of 3.9 live in
one place and a new line is one more row of ``RELEASE_LINES``, not code. What each line does differently is read
from Kafka's source at one tag per line (``/work/shared/kafka-versions.md``, every fact cited ``TAG:path:line``);
the tag of each line is kept with it so that a rule can be checked against the code it ports.

ZooKeeper mode ends with 3.9: ``RELEASE_LINES``, ``KAFKA_VERSIONS`` and ``NEWEST_KAFKA`` are the lines a
ZooKeeper-mode cluster can run, and all that ``parse_kafka_version`` accepts by default. 4.0 and 4.1 run only in
KRaft mode and are managed only through Kafka's Admin protocol; they are kept apart, in
``KRAFT_ONLY_RELEASE_LINES``/``KRAFT_ONLY_VERSIONS`` (``ALL_RELEASE_LINES``/``ALL_KAFKA_VERSIONS`` for both), and
are read from the release notes and generated config docs, not from a source tag (``/work/shared/kraft.md`` §4).

The thresholds below are the first line with a behaviour: ``release.has(TOPIC_ID)`` is true from 2.8 on. The
topic configs' own history (which keys exist, their defaults and validators per line) is data too, in
``topic_configs``.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Final

__all__ = [
    "ALL_KAFKA_VERSIONS",
    "ALL_RELEASE_LINES",
    "BROKER_REGISTRATION_V5",
    "COMPACTION_LAG_CHECK",
    "CONFIG_WRITE_NEEDS_ZK_CONTROLLER",
    "CONSECUTIVE_PARTITIONS_CHECK",
    "CONTROLLER_ZNODE_V2",
    "DEFAULT_KAFKA_VERSION",
    "FEATURE_ZNODE",
    "FEATURE_ZNODE_V2",
    "FORMAT_VERSION_REMOVED",
    "FORMAT_VERSION_VALIDATED",
    "KAFKA_VERSIONS",
    "KRAFT_MIGRATION",
    "KRAFT_ONLY_RELEASE_LINES",
    "KRAFT_ONLY_VERSIONS",
    "LOCAL_RETENTION_IN_CONSTRUCTOR",
    "METADATA_VERSION_PARSER",
    "NEWEST_KAFKA",
    "OLDEST_KAFKA",
    "PENDING_DELETION_REFUSED",
    "REASSIGNMENT_API",
    "RELEASE_LINES",
    "REMOTE_STORAGE_BROKER_CHECKS",
    "SEGMENT_BYTES_AT_LEAST_1_MIB",
    "SHORT_FORMS_PRODUCTION_ONLY",
    "THROTTLED_FORMAT_COLON",
    "THROTTLED_WILDCARD_ALONE",
    "TIMESTAMP_AFTER_MAX_ONE_HOUR",
    "TIMESTAMP_DIFFERENCE_REMOVED",
    "TOPIC_ID",
    "TOPIC_NAME_WORDING_3_0",
    "TOPIC_NAME_WORDING_3_3",
    "TOPIC_ZNODE_V2",
    "UNKNOWN_TOPIC_ON_ALTER",
    "ZK_REMOTE_LOG_DISABLE_REFUSED",
    "ZOOKEEPER_MODE_REMOVED",
    "KafkaVersion",
    "ReleaseLine",
    "UnknownKafkaVersionError",
    "brokers_line",
    "format_version",
    "parse_kafka_version",
    "release_line",
]

KafkaVersion = tuple[int, int]
"""A release line, major and minor: (3, 9)."""


@dataclass(frozen=True, slots=True)
class ReleaseLine:
    """One release line as the catalogue read it."""

    version: KafkaVersion
    tag: str
    """The tag of ``apache/kafka`` the line's rules were read at (``kafka-versions.md``, "Tags used")."""
    newest_metadata_version: str
    """The last ``ApiVersion``/``MetadataVersion`` the line defines: its own newest, or (3.7+) the next line's
    first, defined but not yet production (3.7.1:server-common/.../MetadataVersion.java:205)."""
    latest_production: str | None = None
    """3.7+: ``MetadataVersion.LATEST_PRODUCTION``; the short ``X.Y`` forms exist only up to it (3.7.1:...:231,
    :504-513). None before 3.7, when every version had its short form."""

    @property
    def name(self) -> str:
        """The line as users write it: "3.9"."""
        return format_version(self.version)

    @property
    def kraft_only(self) -> bool:
        """Whether the line runs only in KRaft mode (4.0 on): no ZooKeeper-mode cluster runs it."""
        return self.version >= ZOOKEEPER_MODE_REMOVED

    def has(self, since: KafkaVersion) -> bool:
        """Whether the line has a behaviour that arrived in ``since`` (one of this module's thresholds)."""
        return self.version >= since


RELEASE_LINES: Final[tuple[ReleaseLine, ...]] = (
    ReleaseLine((2, 0), "2.0.1", "2.0-IV1"),
    ReleaseLine((2, 1), "2.1.1", "2.1-IV2"),
    ReleaseLine((2, 2), "2.2.2", "2.2-IV1"),
    ReleaseLine((2, 3), "2.3.1", "2.3-IV1"),
    ReleaseLine((2, 4), "2.4.1", "2.4-IV1"),
    ReleaseLine((2, 5), "2.5.1", "2.5-IV0"),
    ReleaseLine((2, 6), "2.6.3", "2.6-IV0"),
    ReleaseLine((2, 7), "2.7.2", "2.7-IV2"),
    ReleaseLine((2, 8), "2.8.2", "2.8-IV1"),
    ReleaseLine((3, 0), "3.0.2", "3.0-IV1"),
    ReleaseLine((3, 1), "3.1.2", "3.1-IV0"),
    ReleaseLine((3, 2), "3.2.3", "3.2-IV0"),
    ReleaseLine((3, 3), "3.3.2", "3.3-IV3"),
    ReleaseLine((3, 4), "3.4.1", "3.4-IV0"),
    ReleaseLine((3, 5), "3.5.2", "3.5-IV2"),
    ReleaseLine((3, 6), "3.6.2", "3.6-IV2"),
    ReleaseLine((3, 7), "3.7.1", "3.8-IV0", "3.7-IV4"),
    ReleaseLine((3, 8), "3.8.0", "3.9-IV0", "3.8-IV0"),
    ReleaseLine((3, 9), "3.9.0-rc3", "4.0-IV1", "3.9-IV0"),
)
"""Oldest first. ``newest_metadata_version``: ``allVersions`` of ``ApiVersion.scala`` (2.0-3.2) and the
``MetadataVersion`` enum (3.3+) at each tag; ``latest_production`` from ``LATEST_PRODUCTION`` (3.7.1:...:231,
3.8.0:...:239, 3.9.0-rc3:...:247)."""

KRAFT_ONLY_RELEASE_LINES: Final[tuple[ReleaseLine, ...]] = (
    ReleaseLine((4, 0), "4.0.0", "4.0-IV3", "4.0-IV3"),
    ReleaseLine((4, 1), "4.1.0", "4.1-IV1", "4.1-IV1"),
)
"""The lines that run only in KRaft mode, oldest first. Their rules were read from the release notes and the
generated config docs (kafka-site ``content/en/40|41/getting-started/upgrade.md``, ``40|41/generated/
topic_config.html``; the KIPs and PRs they name), not from a source tag: the mirror of ``apache/kafka`` ends
2024-10-25, before 4.0.0. ``tag`` names the release those pages describe, and nothing was read at it.

The metadata versions are the best documented, not confirmed at a tag:

* 4.0: "4.0-IV3 is the latest production version in the 4.0 line" (a comment apache/kafka#18902 adds to
  ``MetadataVersionTest``, as quoted in its review); trunk before 4.0 already defined 4.0-IV0..IV3 (trunk@1eb76443,
  2024-10-25: server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java:212-227), though its
  ``LATEST_PRODUCTION`` was still 4.0-IV0 then (:253). Whether 4.0.0 also defines an unstable 4.1-IV0 (which would
  then be its ``newest_metadata_version``) is not confirmed.
* 4.1: "4.1-IV1" as the latest production version and newest is NOT confirmed offline (no 4.1 source or
  ``MetadataVersion`` listing was available).

Neither value drives a check today: ``message.format.version``, the one config validated against these versions,
is gone from 4.0 (``FORMAT_VERSION_REMOVED``)."""

ALL_RELEASE_LINES: Final[tuple[ReleaseLine, ...]] = RELEASE_LINES + KRAFT_ONLY_RELEASE_LINES
"""The ZooKeeper-mode lines, then the KRaft-only ones: every line ``release_line`` knows, oldest first."""

KAFKA_VERSIONS: Final[tuple[KafkaVersion, ...]] = tuple(line.version for line in RELEASE_LINES)
"""The lines a ZooKeeper-mode cluster can run, 2.0 to 3.9: what ``kafkaVersion`` and ``--kafka-version`` take."""
KRAFT_ONLY_VERSIONS: Final[tuple[KafkaVersion, ...]] = tuple(
    line.version for line in KRAFT_ONLY_RELEASE_LINES
)
"""(4, 0), (4, 1): lines only a KRaft cluster runs, judged only for the Admin protocol."""
ALL_KAFKA_VERSIONS: Final[tuple[KafkaVersion, ...]] = KAFKA_VERSIONS + KRAFT_ONLY_VERSIONS
"""Every line the catalogue judges, 2.0 to 4.1: what ``parse_kafka_version(..., kraft=True)`` takes."""
OLDEST_KAFKA: Final[KafkaVersion] = KAFKA_VERSIONS[0]
NEWEST_KAFKA: Final[KafkaVersion] = KAFKA_VERSIONS[-1]
"""The newest ZooKeeper-mode line, 3.9 (not the newest line the catalogue knows: that is ``ALL_KAFKA_VERSIONS[-1]``)."""
DEFAULT_KAFKA_VERSION: Final[KafkaVersion] = (3, 4)
"""What a KafkaCluster without ``kafkaVersion`` (and ``kto`` without ``--kafka-version``) means where the brokers
cannot be asked (a cluster reached through ZooKeeper alone): ``brokers_line`` otherwise."""


def brokers_line(metadata_version: str | None, broker_release: KafkaVersion | None) -> KafkaVersion | None:
    """The release line whose rules the brokers apply, from what they answer: ``metadata.version`` (``4.1-IV1``,
    exact, but a cluster may run newer software than it has finalized) and the release their ApiVersions answer
    shows (``broker_release``), whichever is newer; then the newest line known here at or below it (brokers newer
    than every known line are judged by the newest). None when neither is known."""
    found = [v for v in (_metadata_version_line(metadata_version), broker_release) if v is not None]
    if not found:
        return None
    newest = max(found)
    known = [line for line in ALL_KAFKA_VERSIONS if line <= newest]
    return known[-1] if known else ALL_KAFKA_VERSIONS[0]


def _metadata_version_line(name: str | None) -> KafkaVersion | None:
    """``(4, 1)`` for ``4.1-IV1``; None for None or a name not of that form (``feature level 30``)."""
    if name is None:
        return None
    line, _, _ = name.partition("-")
    major, dot, minor = line.partition(".")
    if not dot or not major.isdigit() or not minor.isdigit():
        return None
    return int(major), int(minor)


# ---------------------------------------------------------------------------------------------------------------
# The first line of each behaviour that changed between 2.0 and 3.9 (kafka-versions.md, summary and sections a-d).

FORMAT_VERSION_VALIDATED: Final[KafkaVersion] = (2, 1)
"""``message.format.version`` gets ``ApiVersionValidator`` (2.1.1:core/src/main/scala/kafka/log/LogConfig.scala:259);
2.0 stores any string and brokers fail on it later (2.0.1:...:259, :95)."""

COMPACTION_LAG_CHECK: Final[KafkaVersion] = (2, 3)
"""``max.compaction.lag.ms`` and the ``min <= max`` cross-check (2.3.1:core/src/main/scala/kafka/log/LogConfig.scala:254,
313-319)."""

CONSECUTIVE_PARTITIONS_CHECK: Final[KafkaVersion] = (2, 3)
"""``validateTopicCreate`` refuses partition ids that do not sum like 0..n-1
(2.3.1:core/src/main/scala/kafka/zk/AdminZkClient.scala:128-132)."""

THROTTLED_FORMAT_COLON: Final[KafkaVersion] = (2, 3)
"""The throttled-replica message spells the format ``[partitionId]:[brokerId],...``; 2.0-2.2 wrote
``[partitionId],[brokerId]:...`` (2.0.1:core/src/main/scala/kafka/server/ConfigHandler.scala:202)."""

TOPIC_ZNODE_V2: Final[KafkaVersion] = (2, 4)
"""Topic znodes of version 2 with ``adding_replicas``/``removing_replicas`` (2.4.1:core/src/main/scala/kafka/zk/ZkData.scala:241-261)."""

REASSIGNMENT_API: Final[KafkaVersion] = (2, 4)
"""KIP-455: the controller keeps a reassignment's moves in the topic znode and can cancel one (through the
AlterPartitionReassignments API, not ZooKeeper); before, the request znode was all there was and nothing could
cancel or change a running reassignment."""

BROKER_REGISTRATION_V5: Final[KafkaVersion] = (2, 7)
"""Brokers register version 5 (with ``features``) when their inter-broker protocol is 2.7-IV0 or later
(2.7.2:core/src/main/scala/kafka/zk/ZkData.scala:98-103,150-153)."""

FEATURE_ZNODE: Final[KafkaVersion] = (2, 7)
"""Controllers create ``/feature`` (2.7.2:core/src/main/scala/kafka/zk/ZkData.scala:819-865)."""

UNKNOWN_TOPIC_ON_ALTER: Final[KafkaVersion] = (2, 7)
"""Altering a missing topic is ``UnknownTopicOrPartitionException`` (2.7.2:core/src/main/scala/kafka/zk/AdminZkClient.scala:395),
``AdminOperationException`` before (2.6.3:...:327)."""

TOPIC_ID: Final[KafkaVersion] = (2, 8)
"""Topic znodes of version 3 with ``topic_id`` (2.8.2:core/src/main/scala/kafka/zk/ZkData.scala:286-309)."""

THROTTLED_WILDCARD_ALONE: Final[KafkaVersion] = (2, 8)
"""The throttled-replica wildcard must be the whole list (2.8.2:core/src/main/scala/kafka/server/ConfigHandler.scala:241);
before, a list whose first item is ``*`` passed (2.7.2:...:221)."""

TOPIC_NAME_WORDING_3_0: Final[KafkaVersion] = (3, 0)
""""Topic name: <t>" in the too-long message (3.0.2:clients/src/main/java/org/apache/kafka/common/internals/Topic.java:43-54)."""

LOCAL_RETENTION_IN_CONSTRUCTOR: Final[tuple[KafkaVersion, KafkaVersion]] = ((3, 0), (3, 6))
"""Lines whose brokers' ``LogConfig`` constructor refuses a local retention above the total one, from and up to
(not including): 3.0.2:core/src/main/scala/kafka/log/LogConfig.scala:110-150 to 3.5.2:storage/.../LogConfig.java:110-148."""

PENDING_DELETION_REFUSED: Final[KafkaVersion] = (3, 1)
"""``TopicExistsException: Topic '<t>' is marked for deletion.`` (3.1.2:core/src/main/scala/kafka/zk/AdminZkClient.scala:129-131)."""

METADATA_VERSION_PARSER: Final[KafkaVersion] = (3, 3)
"""``MetadataVersionValidator`` and its wording replace ``ApiVersionValidator``
(3.3.2:core/src/main/scala/kafka/log/LogConfig.scala:372)."""

TOPIC_NAME_WORDING_3_3: Final[KafkaVersion] = (3, 3)
""""Topic name is invalid: ..." (3.3.2:clients/src/main/java/org/apache/kafka/common/internals/Topic.java:49-74)."""

FEATURE_ZNODE_V2: Final[KafkaVersion] = (3, 3)
"""``/feature`` of version 2 when the metadata version is 3.3-IV0 or later (3.3.2:core/src/main/scala/kafka/zk/ZkData.scala:907)."""

CONTROLLER_ZNODE_V2: Final[KafkaVersion] = (3, 4)
"""``/controller`` of version 2 with ``kraftControllerEpoch`` (3.4.1:core/src/main/scala/kafka/zk/ZkData.scala:58-79)."""

KRAFT_MIGRATION: Final[KafkaVersion] = (3, 4)
"""ZooKeeper-to-KRaft migration: ``/migration`` (3.4.1:core/src/main/scala/kafka/zk/ZkData.scala:1039-1076)."""

REMOTE_STORAGE_BROKER_CHECKS: Final[KafkaVersion] = (3, 6)
"""The broker's ``LogConfig.validate`` checks tiered storage against the brokers' settings
(3.6.2:storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java:550-636)."""

SHORT_FORMS_PRODUCTION_ONLY: Final[KafkaVersion] = (3, 7)
"""Short ``message.format.version`` forms only up to the latest production version
(3.7.1:server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java:504-513)."""

CONFIG_WRITE_NEEDS_ZK_CONTROLLER: Final[KafkaVersion] = (3, 7)
"""Config writes need a ZooKeeper controller in ``/controller`` (3.7.1:core/src/main/scala/kafka/zk/KafkaZkClient.scala:483-524;
3.7.0 lacks it, the 3.7 line is read at 3.7.1)."""

ZK_REMOTE_LOG_DISABLE_REFUSED: Final[KafkaVersion] = (3, 9)
"""``remote.log.copy.disable``/``remote.log.delete.on.disable`` set to true are refused in ZooKeeper mode, and so
is turning remote storage off (3.9.0-rc3:storage/.../LogConfig.java:625-682)."""

# ---------------------------------------------------------------------------------------------------------------
# KRaft-only lines (kraft.md §4). No 4.x source tag is available offline: each fact cites the KIP, PR or kafka-site
# page kraft.md names, and none was checked against a running 4.x broker.

ZOOKEEPER_MODE_REMOVED: Final[KafkaVersion] = (4, 0)
"""ZooKeeper mode is gone; brokers must be KRaft (kafka-site ``content/en/40/getting-started/upgrade.md``). The
ZooKeeper-mode refusals stop here: ``LogConfig.validate`` is only called with ``fromZK=false``, as by 3.9's KRaft
controller (3.9.0-rc3:core/src/main/scala/kafka/server/ControllerConfigurationValidator.scala:111-112)."""

FORMAT_VERSION_REMOVED: Final[KafkaVersion] = (4, 0)
"""``message.format.version`` is no topic config any more (KIP-724; apache/kafka#18267, KAFKA-17393; absent from
kafka-site ``40/generated/topic_config.html``): declared, it is an unknown name."""

TIMESTAMP_DIFFERENCE_REMOVED: Final[KafkaVersion] = (4, 0)
"""``message.timestamp.difference.max.ms`` is absent from the 4.0 topic config list (kafka-site
``40/generated/topic_config.html``) and its broker setting ``log.message.timestamp.difference.max.ms`` is removed
(KIP-937; ``40/getting-started/upgrade.md``)."""

TIMESTAMP_AFTER_MAX_ONE_HOUR: Final[KafkaVersion] = (4, 0)
"""``message.timestamp.after.max.ms`` defaults to 3600000, not Long.MAX_VALUE (KIP-1030;
``40/getting-started/upgrade.md``, ``40/generated/topic_config.html``)."""

DOWNCONVERSION_REMOVED: Final[KafkaVersion] = (4, 1)
"""``message.downconversion.enable`` is no topic config of 4.1: 4.1.1's broker answers "Unknown topic config name"
(its ``LogConfig`` class, in kafka-storage-4.1.1.jar, names the key nowhere; ``tests/real/
test_kraft_configs_agree_with_real_brokers.py`` asks the broker). 4.0 keeps it defined, as a no-op (apache/kafka#18291,
KAFKA-18269: "made the relevant configs ... no-ops"); ``TopicConfig`` still names it, deprecated."""

SEGMENT_BYTES_AT_LEAST_1_MIB: Final[KafkaVersion] = (4, 1)
"""Topic-level ``segment.bytes`` must be at least 1048576 (KAFKA-19080, apache/kafka#19371: "we forgot to set
``TopicConfig.SEGMENT_BYTES_CONFIG`` to at least 1024*1024"; ``41/generated/topic_config.html`` ``[1048576,...]``).
4.0 raised only the broker's ``log.segment.bytes`` (apache/kafka#18140, KAFKA-16368) and keeps ``[14,...]`` at topic
level (``40/generated/topic_config.html``), although the 4.0 notes say "segment.bytes/log.segment.bytes"."""


# ---------------------------------------------------------------------------------------------------------------


class UnknownKafkaVersionError(ValueError):
    """A ``kafkaVersion`` that is not a release line the project knows."""


_VERSION_TEXT: Final = re.compile(r"(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})")


def format_version(version: KafkaVersion) -> str:
    return f"{version[0]}.{version[1]}"


def _known(versions: tuple[KafkaVersion, ...]) -> str:
    return ", ".join(format_version(version) for version in versions)


def parse_kafka_version(text: str, *, kraft: bool = False) -> KafkaVersion:
    """ "3.9" -> (3, 9); anything that is not a known line is refused, naming the lines known.

    By default only the ZooKeeper-mode lines, 2.0 to 3.9, are known: "4.0" is refused, with a note that it runs
    only in KRaft mode. ``kraft=True`` also takes the KRaft-only lines (4.0, 4.1), for callers that manage a
    KRaft cluster through the Admin protocol.
    """
    allowed = ALL_KAFKA_VERSIONS if kraft else KAFKA_VERSIONS
    match = _VERSION_TEXT.fullmatch(text)
    version = (int(match[1]), int(match[2])) if match else None
    if version is None or version not in allowed:
        what = "a Kafka release line" if kraft else "a ZooKeeper-mode Kafka release line"
        why = ""
        if not kraft and version is not None and version in KRAFT_ONLY_VERSIONS:
            why = f" (Kafka {format_version(version)} runs only in KRaft mode)"
        raise UnknownKafkaVersionError(
            f"{text!r} is not {what} kafka-topic-operator knows{why}: major.minor, one of {_known(allowed)}"
        )
    return version


@cache
def release_line(version: KafkaVersion) -> ReleaseLine:
    """The row of a release line, ZooKeeper-mode or KRaft-only; a version between two known lines or outside them
    is refused."""
    for line in ALL_RELEASE_LINES:
        if line.version == version:
            return line
    raise UnknownKafkaVersionError(
        f"Kafka {format_version(version)} is not a release line kafka-topic-operator knows: "
        f"one of {_known(ALL_KAFKA_VERSIONS)}"
    )
