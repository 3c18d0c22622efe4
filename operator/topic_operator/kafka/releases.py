"""Every ZooKeeper-mode Kafka release line from 2.0 to 3.9, and the release each rule of the port arrived in.

A cluster declares its release line (``KafkaCluster.spec.kafkaVersion``, ``kto --kafka-version``); every rule that
changed between releases asks this module whether the line has it, so that the rules of 2.0 and of 3.9 live in
one place and a new line is one more row of ``RELEASE_LINES``, not code. What each line does differently is read
from Kafka's source at one tag per line (``/work/shared/kafka-versions.md``, every fact cited ``TAG:path:line``);
the tag of each line is kept with it so that a rule can be checked against the code it ports.

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
    "BROKER_REGISTRATION_V5",
    "COMPACTION_LAG_CHECK",
    "CONFIG_WRITE_NEEDS_ZK_CONTROLLER",
    "CONSECUTIVE_PARTITIONS_CHECK",
    "CONTROLLER_ZNODE_V2",
    "DEFAULT_KAFKA_VERSION",
    "FEATURE_ZNODE",
    "FEATURE_ZNODE_V2",
    "FORMAT_VERSION_VALIDATED",
    "KAFKA_VERSIONS",
    "KRAFT_MIGRATION",
    "LOCAL_RETENTION_IN_CONSTRUCTOR",
    "METADATA_VERSION_PARSER",
    "NEWEST_KAFKA",
    "OLDEST_KAFKA",
    "PENDING_DELETION_REFUSED",
    "REASSIGNMENT_API",
    "RELEASE_LINES",
    "REMOTE_STORAGE_BROKER_CHECKS",
    "SHORT_FORMS_PRODUCTION_ONLY",
    "THROTTLED_FORMAT_COLON",
    "THROTTLED_WILDCARD_ALONE",
    "TOPIC_ID",
    "TOPIC_NAME_WORDING_3_0",
    "TOPIC_NAME_WORDING_3_3",
    "TOPIC_ZNODE_V2",
    "UNKNOWN_TOPIC_ON_ALTER",
    "ZK_REMOTE_LOG_DISABLE_REFUSED",
    "KafkaVersion",
    "ReleaseLine",
    "UnknownKafkaVersionError",
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

KAFKA_VERSIONS: Final[tuple[KafkaVersion, ...]] = tuple(line.version for line in RELEASE_LINES)
OLDEST_KAFKA: Final[KafkaVersion] = KAFKA_VERSIONS[0]
NEWEST_KAFKA: Final[KafkaVersion] = KAFKA_VERSIONS[-1]
DEFAULT_KAFKA_VERSION: Final[KafkaVersion] = (3, 4)
"""What a KafkaCluster without ``kafkaVersion`` (and ``kto`` without ``--kafka-version``) means."""

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


class UnknownKafkaVersionError(ValueError):
    """A ``kafkaVersion`` that is not a release line the project knows."""


_VERSION_TEXT: Final = re.compile(r"(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})")


def format_version(version: KafkaVersion) -> str:
    return f"{version[0]}.{version[1]}"


def _known() -> str:
    return ", ".join(line.name for line in RELEASE_LINES)


def parse_kafka_version(text: str) -> KafkaVersion:
    """ "3.9" -> (3, 9); anything that is not one of ``RELEASE_LINES`` is refused, naming the lines known."""
    match = _VERSION_TEXT.fullmatch(text)
    version = (int(match[1]), int(match[2])) if match else None
    if version is None or version not in KAFKA_VERSIONS:
        raise UnknownKafkaVersionError(
            f"{text!r} is not a ZooKeeper-mode Kafka release line kafka-topic-operator knows: "
            f"major.minor, one of {_known()}"
        )
    return version


@cache
def release_line(version: KafkaVersion) -> ReleaseLine:
    """The row of a release line; a version between two known lines or outside them is refused."""
    for line in RELEASE_LINES:
        if line.version == version:
            return line
    raise UnknownKafkaVersionError(
        f"Kafka {format_version(version)} is not a release line kafka-topic-operator knows: one of {_known()}"
    )
