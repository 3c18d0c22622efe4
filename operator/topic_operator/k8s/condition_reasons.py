"""What each condition reason means and what to do about it: the table the reference and the runbooks are
generated from, so that a reason the operator sets is never left unexplained.

One entry per member of ``conditions.Reason`` (a test holds the table to the enum, and the enum to every reason the
code sets). ``ready`` is the Ready status the reason comes with; ``kinds`` the resources that carry it (an
Event-only reason says so). The words are for the person reading ``kubectl describe`` at night: what the
operator saw, whether it retries by itself, and the one thing to check or change.

Pure: no I/O, no kopf.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from topic_operator.k8s.conditions import Reason

__all__ = ["EVENT_ONLY", "KAFKACLUSTER", "KAFKATOPIC", "REASON_GUIDES", "ReasonGuide", "guide_of"]

KAFKATOPIC: Final = "KafkaTopic"
KAFKACLUSTER: Final = "KafkaCluster"
EVENT_ONLY: Final = "Event"


@dataclass(frozen=True, slots=True)
class ReasonGuide:
    """One reason: the Ready status it comes with, who carries it, what it means and what to do."""

    reason: Reason
    ready: str
    """``True`` or ``False`` (the Ready condition's status), or ``Event`` for a reason only Events carry."""
    kinds: tuple[str, ...]
    meaning: str
    what_to_do: str


REASON_GUIDES: Final[tuple[ReasonGuide, ...]] = (
    ReasonGuide(
        Reason.CREATED,
        "True",
        (KAFKATOPIC,),
        "The topic was created by this reconcile: Kafka matches the declaration.",
        "Nothing.",
    ),
    ReasonGuide(
        Reason.UPDATED,
        "True",
        (KAFKATOPIC,),
        "Partitions were added or config overrides changed by this reconcile: Kafka matches the declaration.",
        "Nothing.",
    ),
    ReasonGuide(
        Reason.IN_SYNC,
        "True",
        (KAFKATOPIC,),
        "Kafka already matched the declaration: nothing was written.",
        "Nothing.",
    ),
    ReasonGuide(
        Reason.ADOPTED,
        "True",
        (KAFKATOPIC,),
        "The topic existed before this KafkaTopic declared it (made by hand, a script or another tool) and is "
        "now managed by it: never re-created or re-placed, only brought to the declaration forward-only, and the "
        "message says what changed.",
        "Nothing. In `mode: Plan`, `status.plan` says what adopting would change before anything is written.",
    ),
    ReasonGuide(
        Reason.INVALID,
        "False",
        (KAFKATOPIC, KAFKACLUSTER),
        "The declaration breaks a CRD or Kafka rule, with Kafka's own message (a partition decrease, a config "
        "value out of range); on a KafkaCluster, its spec or a Secret's content cannot be used. Nothing is "
        "written.",
        "Fix the spec as the message says (`kubectl describe` shows it); `kto validate` finds the same before "
        "`kubectl apply`. The operator does not retry an unchanged invalid spec.",
    ),
    ReasonGuide(
        Reason.NOT_SUPPORTED,
        "False",
        (KAFKATOPIC,),
        "Valid, but not something the operator does here: a replication factor change or moving existing "
        "replicas while the KafkaCluster does not enable reassignment (`spec.reassignment.enabled`), or while "
        "another topic's reassignment runs.",
        "Enable `spec.reassignment.enabled` on the KafkaCluster to change replicas by Kafka's partition "
        "reassignment, wait for the running one to finish, or declare the replicas Kafka has.",
    ),
    ReasonGuide(
        Reason.CONFLICT,
        "False",
        (KAFKATOPIC,),
        "Another KafkaTopic, older, declares the same topic of the same Kafka cluster (in any namespace) and "
        "keeps it; or other writers kept changing the topic during the write.",
        "Delete or rename one of the two KafkaTopics (the older one keeps the topic); if another tool writes "
        "the topic, stop it.",
    ),
    ReasonGuide(
        Reason.CLUSTER_UNAVAILABLE,
        "False",
        (KAFKATOPIC, KAFKACLUSTER),
        "The cluster cannot be reached: ZooKeeper (or the brokers, when they are the writer) unreachable, not "
        "connected yet, or an outage longer than `KTO_ZK_DEADLINE` ended the batch; the message says whether "
        "this topic was not written or its outcome is unknown. Retried by itself.",
        "Check the ZooKeeper pods (or brokers) and the network path from the operator's pod to "
        "`spec.zookeeper.connect`; `kto_cluster_errors_total` by `kind` shows what each attempt hit. The "
        "changes land once the cluster is back.",
    ),
    ReasonGuide(
        Reason.PAUSED,
        "False",
        (KAFKATOPIC,),
        'The annotation `kto.dev/paused: "true"` stops reconciling this KafkaTopic: nothing is read or written.',
        "Remove the annotation (`kubectl annotate ktopic NAME kto.dev/paused-`) to resume.",
    ),
    ReasonGuide(
        Reason.PLANNED,
        "False",
        (KAFKATOPIC,),
        "`mode: Plan`: the changes are pending in `status.plan` and were not applied.",
        "Read `status.plan`; set `spec.mode` to `Apply` to apply it.",
    ),
    ReasonGuide(
        Reason.REASSIGNING,
        "False",
        (KAFKATOPIC,),
        "Kafka's controller is moving the topic's replicas (a partition reassignment); the message says which "
        "partitions are still moving. Ready once it is done.",
        "Nothing: wait. `kto_reassignment_start_time_seconds` says since when it runs.",
    ),
    ReasonGuide(
        Reason.FORBIDDEN,
        "False",
        (KAFKATOPIC,),
        "The KafkaCluster (`spec.tenants`) does not grant the KafkaTopic's namespace, or the topic name is "
        "outside the grant's `topicPrefixes` (Kafka's `TopicAuthorizationException`). Nothing is written.",
        "Ask the KafkaCluster's owner for a grant, or use a name within the granted prefixes.",
    ),
    ReasonGuide(
        Reason.QUOTA_EXCEEDED,
        "False",
        (KAFKATOPIC,),
        "The creation or partition increase would take the namespace over its quota on the KafkaCluster. "
        "Retried at each drift check, so it lands once the namespace has room.",
        "Free room in the namespace (fewer topics or partitions) or ask for a larger quota; "
        "`kto_tenant_topics` and `kto_tenant_partitions` show the usage.",
    ),
    ReasonGuide(
        Reason.POLICY_VIOLATION,
        "False",
        (KAFKATOPIC,),
        "The topic, or the change, breaks the per-topic limits the KafkaCluster sets for the namespace, or the "
        "brokers' own policy (`create.topic.policy.class.name`, `alter.config.policy.class.name`) refused it "
        "(Kafka's `PolicyViolationException`); the message names the rule, the limit and the value, or gives "
        "the brokers' words.",
        "Change the KafkaTopic to fit the limits or the policy, or ask the KafkaCluster's (or the brokers') "
        "owner to change them.",
    ),
    ReasonGuide(
        Reason.CLUSTER_NOT_FOUND,
        "False",
        (KAFKATOPIC,),
        "No KafkaCluster of that name exists in the namespace `spec.cluster` names. Reconciled as soon as it "
        "appears.",
        "Create the KafkaCluster, or correct `spec.cluster` (`<name>` in the same namespace, "
        "`<namespace>/<name>` otherwise).",
    ),
    ReasonGuide(
        Reason.CONNECTED,
        "True",
        (KAFKACLUSTER,),
        "A ZooKeeper session (or the brokers' connection) is held and the path looks like a Kafka cluster.",
        "Nothing.",
    ),
    ReasonGuide(
        Reason.AUTH_FAILED,
        "False",
        (KAFKACLUSTER,),
        "ZooKeeper or the brokers refused the operator: the credentials in the Secret (ZooKeeper's ACLs, a SASL "
        "login, the brokers' SASL), the TLS handshake (a CA that does not sign the brokers' certificate, a "
        "certificate whose names do not match the address in bootstrapServers, a client certificate they do not "
        "trust), or Kafka's ACLs on the principal. Nothing is written. Retried by itself.",
        "Read the condition's message: it names which. Check the Secret against what ZooKeeper or the brokers "
        "expect, the CA and the host names against the brokers' certificates, and the principal's ACLs "
        "(Describe, DescribeConfigs, Create, Alter, AlterConfigs on topics; Alter and AlterConfigs on the "
        "cluster) with kafka-acls.sh.",
    ),
    ReasonGuide(
        Reason.CHROOT_MISSING,
        "False",
        (KAFKACLUSTER,),
        "The chroot of `spec.zookeeper.connect` does not exist. Nothing is ever written there. Retried by "
        "itself.",
        "Correct the chroot in `spec.zookeeper.connect` (it is the one in the brokers' `zookeeper.connect`).",
    ),
    ReasonGuide(
        Reason.NOT_A_KAFKA_CLUSTER,
        "False",
        (KAFKACLUSTER,),
        "The path holds no Kafka cluster (no `/cluster/id`, no `/brokers/ids`). Nothing is ever written there. "
        "Retried by itself.",
        "Correct the chroot in `spec.zookeeper.connect` (it is the one in the brokers' `zookeeper.connect`).",
    ),
    ReasonGuide(
        Reason.SECRET_MISSING,
        "False",
        (KAFKACLUSTER,),
        "A Secret the KafkaCluster names does not exist in its namespace, or lacks the key it names. Retried by "
        "itself.",
        "Create the Secret (or its key) in the KafkaCluster's namespace, or correct its name in the spec.",
    ),
    ReasonGuide(
        Reason.SECRET_FORBIDDEN,
        "False",
        (KAFKACLUSTER,),
        "RBAC does not let the operator read Secrets in the KafkaCluster's namespace: the operator reads "
        "Secrets only in the namespaces granted to it, each by a Role and RoleBinding of its own, and the message "
        "names the RoleBinding missing there. The operator's other KafkaClusters are served meanwhile. Retried "
        "by itself.",
        "With Helm, add the namespace to `clusterNamespaces`. Without, create the Role and the RoleBinding in it "
        "(see [Secrets only where KafkaClusters live](../operations/security.md#secrets-only-where-kafkaclusters-"
        "live)).",
    ),
    ReasonGuide(
        Reason.KRAFT_MIGRATION,
        "False",
        (KAFKATOPIC, KAFKACLUSTER),
        "The cluster is at a stage of a migration to KRaft where nothing may be written: the change waits, and "
        "lands by itself once the stage allows it.",
        "`kubectl get kafkacluster NAME -o jsonpath='{.status.writes}'` says which stage and why. Declaring "
        "`spec.bootstrapServers` beside `spec.zookeeper` lets changes land through the brokers once a KRaft "
        "controller owns the metadata; after a revert, delete `/migration` (Kafka's last revert step).",
    ),
    ReasonGuide(
        Reason.CLUSTER_MISMATCH,
        "False",
        (KAFKACLUSTER,),
        "`spec.zookeeper` and `spec.bootstrapServers` reach two different Kafka clusters (the id in ZooKeeper's "
        "`/cluster/id` against the one the brokers report; both are named). Nothing is written.",
        "Correct whichever of the two addresses is wrong.",
    ),
    ReasonGuide(
        Reason.WRITER_CHANGED,
        EVENT_ONLY,
        (KAFKACLUSTER,),
        "An Event, not a condition: the migration to KRaft moved to a stage written through another path "
        "(`status.writes` and `kto_cluster_writer` follow it).",
        "Nothing: the KafkaTopics whose changes waited are reconciled at once.",
    ),
)
"""Every reason, in the order of ``Reason``."""

_BY_REASON: Final = {guide.reason: guide for guide in REASON_GUIDES}


def guide_of(reason: Reason) -> ReasonGuide:
    """The table's entry for ``reason`` (``KeyError`` for a reason the table lacks: a test keeps it complete)."""
    return _BY_REASON[reason]
