"""Which KafkaTopic owns a Kafka topic when several declare it, decided the same way by every replica, every time.

Two KafkaTopics (in any namespaces) that name the same topic of the same Kafka cluster cannot both be applied:
each would undo the other's config on every resync. The oldest one (``creationTimestamp``) owns the topic; the
others are reported Ready=False, reason Conflict, and touch nothing. The API server keeps creationTimestamp to
the second, and GitOps tools create many objects within one: among claims of the same second, the one whose
status says it already manages the topic (a Ready condition with any reason but Conflict) keeps it, and only
between claims equal in both does ``uid`` decide. So a KafkaTopic created in the same second as the owner, but
seen later, never takes the topic over (a real API server showed it: it did, and grew the owner's topic). The
timestamp and uid are immutable and a Conflict status is never written for an owner, so the owner never changes
while it exists: no flip-flop. When the owner is deleted the next oldest takes over at its next reconcile.

"The same Kafka cluster" is the same ZooKeeper ensemble and chroot: two KafkaClusters in different namespaces may
point at one cluster, and their topics then compete. The connect string is normalised (hosts lower-cased and
sorted, default port made explicit) so that ``zk-1,zk-0/kafka`` and ``zk-0:2181,zk-1:2181/kafka`` are one cluster.

Pure: the claims come from a kopf index, the identities from another; nothing here talks to an API.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from topic_operator.k8s.bodies import mapping
from topic_operator.tenants.grants import cluster_reference

__all__ = [
    "ClaimsByTopic",
    "TopicClaim",
    "claim_of",
    "competitors",
    "creation_time",
    "owner_of",
]

ClusterKey = tuple[str, str]
"""(namespace, KafkaCluster name)."""


@dataclass(frozen=True, slots=True)
class TopicClaim:
    """One KafkaTopic's claim on a topic name, with what decides precedence."""

    namespace: str
    name: str
    uid: str
    created: datetime.datetime
    cluster: str
    """The KafkaCluster it names: a name in its own namespace, or ``<namespace>/<name>``."""
    topic: str
    """The Kafka topic name (spec.topicName, else metadata.name)."""
    kept: str = field(default="", compare=False, repr=False)
    """The KafkaTopic as last seen, as compact JSON: not part of the claim's identity. Every claim holds one for
    as long as its KafkaTopic exists, and only the drift timer reads it, once per round. As dicts and lists a
    KafkaTopic held about 2.5 KB once its strings were shared; as JSON it holds under 1 KB."""
    incumbent: bool = field(default=False, compare=False)
    """Its status says it manages the topic already (a Ready condition whose reason is not Conflict): it wins
    over claims created in the same second. Not part of the claim's identity: a status changes, the claim not."""

    @property
    def body(self) -> dict[str, Any]:
        """The KafkaTopic as last seen (the drift timer's work list): a fresh copy at each call."""
        decoded = json.loads(self.kept) if self.kept else {}
        return decoded if isinstance(decoded, dict) else {}

    @property
    def cluster_key(self) -> ClusterKey:
        return cluster_reference(self.namespace, self.cluster)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def precedence(self) -> tuple[datetime.datetime, bool, str]:
        return (self.created, not self.incumbent, self.uid)


ClaimsByTopic = Mapping[str, Iterable[TopicClaim]]
"""Every claim, by Kafka topic name (kopf's index): deciding one topic's owner reads only that topic's claims,
so an event costs the same with 10 or 10,000 KafkaTopics."""

_EPOCH_MAX = datetime.datetime.max.replace(tzinfo=datetime.UTC)


def creation_time(value: object) -> datetime.datetime | None:
    """A ``metadata.creationTimestamp`` as the API server writes it (RFC 3339, whole seconds, UTC), or None when
    there is none or it is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def _created(value: object) -> datetime.datetime:
    """An object not yet given a creationTimestamp sorts last: it cannot be older than a stored one."""
    return creation_time(value) or _EPOCH_MAX


def claim_of(body: Mapping[str, Any], *, keep: Mapping[str, Any] | None = None) -> TopicClaim | None:
    """The claim a KafkaTopic body makes, or None when it names no cluster or topic (it is invalid anyway);
    ``keep`` is carried as the claim's ``body``."""
    metadata, spec = mapping(body.get("metadata")), mapping(body.get("spec"))
    name, namespace = metadata.get("name"), metadata.get("namespace")
    cluster = spec.get("cluster")
    topic = spec.get("topicName", name)
    if not all(isinstance(v, str) and v for v in (name, namespace, cluster, topic)):
        return None
    return TopicClaim(
        namespace=str(namespace),
        name=str(name),
        uid=str(metadata.get("uid") or ""),
        created=_created(metadata.get("creationTimestamp")),
        cluster=str(cluster),
        topic=str(topic),
        kept=json.dumps(keep, separators=(",", ":")) if keep is not None else "",
        incumbent=_manages_its_topic(body),
    )


def _manages_its_topic(body: Mapping[str, Any]) -> bool:
    conditions = mapping(body.get("status")).get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition.get("reason") not in (None, "", "Conflict")
    return False


def competitors(
    claim: TopicClaim,
    claims: Iterable[TopicClaim],
    identity_of: Callable[[ClusterKey], str | None],
    granted: Callable[[TopicClaim], bool] | None = None,
) -> list[TopicClaim]:
    """Every claim on the same topic of the same Kafka cluster, ``claim`` included, oldest first.

    A claim whose KafkaCluster is unknown (``identity_of`` returns None) competes only with claims naming the
    same KafkaCluster object: its identity cannot be compared with anything else yet. A claim its KafkaCluster
    does not grant (``granted`` says no: another namespace, or a name outside its prefixes) competes with none:
    a team cannot hold a topic it may not use, however early it declared it.
    """
    mine = identity_of(claim.cluster_key)
    same: dict[tuple[str, str], TopicClaim] = {(claim.namespace, claim.name): claim}
    for other in claims:
        if other.topic != claim.topic or (granted is not None and other is not claim and not granted(other)):
            continue
        theirs = identity_of(other.cluster_key)
        if other.cluster_key == claim.cluster_key or (mine is not None and theirs == mine):
            same.setdefault((other.namespace, other.name), other)
    return sorted(same.values(), key=TopicClaim.precedence)


def owner_of(
    claim: TopicClaim,
    claims: Iterable[TopicClaim],
    identity_of: Callable[[ClusterKey], str | None],
    granted: Callable[[TopicClaim], bool] | None = None,
) -> TopicClaim:
    """The claim that owns ``claim``'s topic: the oldest granted competitor (``claim`` itself when it is the
    oldest)."""
    return competitors(claim, claims, identity_of, granted)[0]
