"""Requests for the controller, sent again through another broker when the one kafka-python chose is not up.

kafka-python sends CreateTopics, CreatePartitions, DeleteTopics and AlterPartitionReassignments to the
controller id of its first Metadata answer, and keeps that id until an answer says NOT_CONTROLLER. A KRaft
broker, and a ZooKeeper-mode broker once a KRaft controller owns the metadata of a migration, names a live broker
picked at random as that id (3.9.0 ``KafkaApis.handleTopicMetadataRequest``, ``KRaftCachedControllerId``): any
broker forwards such a request to the controller. When the broker picked stops, as each one does while a cluster
rolls from ZooKeeper mode to KRaft, kafka-python fails every later request at once, without sending it:
``UnknownBrokerIdError`` once the metadata no longer lists that broker, ``NodeNotReadyError`` while it waits to
reconnect. So the cluster went unserved for as long as one broker was down.

For a write, only those two errors are sent again: each says the request never left this process, so sending it
again cannot write twice. Any other failure (an answer lost after the request went out) stays the caller's, which
re-reads. A read (``reading=True``) is also sent again when its connection was refused or dropped, or its answer
timed out: asking twice changes nothing. kafka-python sends the requests any broker may answer (Metadata,
ApiVersions) to the broker it thinks least loaded, which just after a broker stopped can be that broker; the
refusal puts it in back-off, so the next attempt goes to another.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import kafka.errors as kafka_errors
from kafka.admin import KafkaAdminClient

__all__ = ["NEVER_SENT", "UNANSWERED", "through_any_broker"]

T = TypeVar("T")

NEVER_SENT = (kafka_errors.UnknownBrokerIdError, kafka_errors.NodeNotReadyError)
"""kafka-python's errors for a request it did not send: the broker is not in the metadata, or not connected."""

UNANSWERED = (*NEVER_SENT, kafka_errors.KafkaConnectionError, kafka_errors.RequestTimedOutError)
"""The errors of a request that may have gone out but got no answer: safe to send again only when it reads."""

FIRST_PAUSE = 0.05
LONGEST_PAUSE = 1.0


def through_any_broker(
    admin: KafkaAdminClient, send: Callable[[], T], *, deadline: float, reading: bool = False
) -> T:
    """``send()``; while it fails without having sent its request (or, ``reading``, without an answer), the
    controller id kafka-python keeps is forgotten (its next request asks the brokers' metadata for a live one)
    and ``send()`` is tried again, for at most ``deadline`` seconds. The last failure is raised when they run
    out."""
    again = UNANSWERED if reading else NEVER_SENT
    give_up = time.monotonic() + deadline
    pause = FIRST_PAUSE
    while True:
        try:
            return send()
        except again:
            if time.monotonic() + pause >= give_up:
                raise
        # kafka-python's own cache of the broker it forwards through; None makes it ask Metadata again
        admin._controller_id = None
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)
