"""How many metadata records a KRaft controller writes for each topic operation, and the most it accepts in one.

A KRaft controller gathers the records of one request in a list bounded at ``MAX_RECORDS_PER_OPERATION``
(``QuorumController.MAX_RECORDS_PER_USER_OP``, equal to ``MAX_RECORDS_PER_BATCH``, 10000:
3.9.0-rc3:metadata/src/main/java/org/apache/kafka/controller/QuorumController.java:184,191, the same in 4.1). One
record too many and the whole request is refused, every topic in it, with a ``PolicyViolationException``
"Unable to perform excessively large batch operation." (``BoundedListTooLongException`` turned into that answer by
3.9.0-rc3:.../controller/errors/EventHandlerExceptionInfo.java:83-88). A ``validate_only`` request builds the
same list, so it is refused the same way. A ZooKeeper-mode controller has no such bound.

What one topic costs, as the 3.9 controller counts (3.9.0-rc3:.../controller/ReplicationControlManager.java and
ConfigurationControlManager.java):

- CreateTopics: a ``TopicRecord``, a ``ConfigRecord`` per override given, a ``PartitionRecord`` per partition
  (``createTopic``, :802-812);
- CreatePartitions: a ``PartitionRecord`` per new partition (``createPartitions``, :1834);
- IncrementalAlterConfigs: a ``ConfigRecord`` per topic key whose value changes, and per broker key sent,
  changed or not (``incrementalAlterConfigResource``, :240-247: brokers always, so that they reload);
- AlterPartitionReassignments: at most one ``PartitionChangeRecord`` per partition (``alterPartitionReassignment``);
- DeleteTopics: a ``RemoveTopicRecord`` per topic (``deleteTopic``, :967).

So a request may carry many topics as long as their records add up to the bound, and one topic alone can exceed
it (10,000 partitions, or 9,990 with ten overrides). Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from topic_operator.kafka.errors import PolicyViolationError

__all__ = [
    "EXCESSIVE_BATCH",
    "MAX_RECORDS_PER_OPERATION",
    "create_records",
    "too_many_records",
]

MAX_RECORDS_PER_OPERATION: Final = 10_000
"""The most metadata records a KRaft controller writes for one request (``MAX_RECORDS_PER_USER_OP``)."""

EXCESSIVE_BATCH: Final = "Unable to perform excessively large batch operation."
"""The controller's own words when a request needs more records than that."""


def create_records(partitions: int, overrides: int) -> int:
    """The records of creating one topic: its ``TopicRecord``, one per override, one per partition."""
    return 1 + overrides + partitions


def too_many_records(
    topic: str, operation: str, records: int, parts: str, *, field: str
) -> PolicyViolationError | None:
    """The controller's refusal of an operation on one topic that alone needs more records than it accepts
    (``parts`` says what the records are), or None when it fits."""
    if records <= MAX_RECORDS_PER_OPERATION:
        return None
    return PolicyViolationError(
        f"{EXCESSIVE_BATCH} {operation} topic {topic} needs {records:,} metadata records ({parts}), more than a "
        f"KRaft controller writes for one request ({MAX_RECORDS_PER_OPERATION:,}: "
        "QuorumController.MAX_RECORDS_PER_USER_OP), and one topic cannot be split across requests.",
        field=field,
    )
