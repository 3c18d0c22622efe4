"""Failures of the ZooKeeper side, each with one clear message naming the connect string or the znode.

Kafka's own rejections live in ``topic_operator.kafka.errors``; these are about reaching and writing ZooKeeper.
Messages never contain a password: connect strings carry none, and credentials are not echoed.
"""

from __future__ import annotations

from topic_operator.access.interface import ClusterAccessError, ClusterUnavailableError

__all__ = [
    "FencedError",
    "KraftMigrationError",
    "NotAKafkaClusterError",
    "WriteConflictError",
    "WriteRefusedError",
    "ZooKeeperAuthError",
    "ZooKeeperChrootMissingError",
    "ZooKeeperError",
    "ZooKeeperUnavailableError",
]


class ZooKeeperError(ClusterAccessError):
    """Base of every ZooKeeper-side failure."""


class ZooKeeperUnavailableError(ZooKeeperError, ClusterUnavailableError):
    """No server of the ensemble could be reached (or stayed reachable) within the configured time."""


class FencedError(ZooKeeperUnavailableError):
    """This process may no longer write: it is not sure any more that it holds the operator's leader lease
    (another replica may hold it soon). What it did not send yet is reported as not written, as after an outage."""


class ZooKeeperAuthError(ZooKeeperError):
    """The servers refused our credentials (SASL) or our identity may not read the cluster (digest, ACLs)."""


class ZooKeeperChrootMissingError(ZooKeeperError):
    """The chroot in the connect string does not exist. It is never created: a typo must not grow a new tree."""


class NotAKafkaClusterError(ZooKeeperError):
    """The path has no ``/cluster/id`` or no ``/brokers/ids``: writing there would create a second, empty
    "cluster" that no broker reads."""


class KraftMigrationError(ZooKeeperError):
    """The cluster is migrating to KRaft (semantics §15): a KRaft controller owns the metadata, and znodes written
    directly are not seen by it. Nothing is written; reading and planning still work."""


class WriteConflictError(ZooKeeperError):
    """Another writer changed a znode between our read and our write (its version moved, or it appeared or went
    away). Nothing was written; re-read the cluster and plan that topic again."""

    def __init__(self, topic: str, path: str, detail: str) -> None:
        super().__init__(
            f"topic '{topic}': {path} changed since it was read ({detail}); nothing was written, re-read and re-plan"
        )
        self.topic = topic
        self.path = path


class WriteRefusedError(ZooKeeperError):
    """ZooKeeper refused a transaction for a reason other than a concurrent change: an ACL that does not let
    this identity write, a read-only server, a quota. The message names the znode, the server's error and what
    it means; a transaction is atomic, so nothing of the change was written."""

    def __init__(self, topic: str, path: str, error: str, reason: str) -> None:
        super().__init__(
            f"topic '{topic}': ZooKeeper refused to write {path} ({error}): {reason}; nothing of this change was "
            "written"
        )
        self.topic = topic
        self.path = path
        self.error = error
