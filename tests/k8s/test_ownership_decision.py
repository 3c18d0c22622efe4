"""The ownership rule on its own: oldest creationTimestamp, then uid; same Kafka cluster by normalised connect
string; the decision does not depend on the order claims are seen in."""

from __future__ import annotations

import itertools

from topic_operator.access.address import cluster_identity
from topic_operator.k8s.kafkatopics.claim_index import ClaimIndex
from topic_operator.k8s.kafkatopics.ownership import (
    claim_of,
    competitors,
    owner_of,
)


def body(
    ns: str,
    name: str,
    created: str,
    uid: str,
    cluster: str = "main",
    topic: str | None = None,
    reason: str = "",
) -> dict:
    """A KafkaTopic; with ``reason``, a status whose Ready condition has it (as the operator writes it)."""
    spec = {"cluster": cluster, **({"topicName": topic} if topic else {})}
    status = {"conditions": [{"type": "Ready", "status": "True", "reason": reason}]} if reason else {}
    return {
        "metadata": {"namespace": ns, "name": name, "uid": uid, "creationTimestamp": created},
        "spec": spec,
        **({"status": status} if status else {}),
    }


IDENTITIES = {("a", "main"): "zk:2181/kafka", ("b", "main"): "zk:2181/kafka", ("c", "main"): "other:2181"}


def test_oldest_then_uid_wins_whatever_the_order() -> None:
    claims = [
        claim_of(body("b", "orders", "2025-01-02T00:00:00Z", "u1")),
        claim_of(body("a", "orders-x", "2025-01-01T00:00:00Z", "u9", topic="orders")),
        claim_of(body("a", "orders", "2025-01-01T00:00:00Z", "u2")),
        claim_of(body("c", "orders", "2024-01-01T00:00:00Z", "u0")),  # another Kafka cluster: no competitor
    ]
    for order in itertools.permutations(claims):
        for claim in claims[:3]:
            assert owner_of(claim, order, IDENTITIES.get).ref == "a/orders"  # same second: uid u2 < u9
    assert owner_of(claims[3], claims, IDENTITIES.get).ref == "c/orders"
    assert [c.ref for c in competitors(claims[0], claims, IDENTITIES.get)] == [
        "a/orders",
        "a/orders-x",
        "b/orders",
    ]


def test_within_one_second_the_claim_that_manages_the_topic_keeps_it_whatever_the_uids() -> None:
    """The API server keeps creationTimestamp to the second. A KafkaTopic created in the owner's second, with a
    smaller uid, must not take the topic over once the owner manages it (a real API server showed it did)."""
    second = "2025-01-01T00:00:00Z"
    for reason in (
        "Created",
        "Updated",
        "InSync",
        "Adopted",
        "ClusterUnavailable",
        "Invalid",
        "Paused",
        "Planned",
    ):
        owner = claim_of(body("a", "orders", second, "u9", reason=reason))
        newcomer = claim_of(body("b", "orders", second, "u1"))
        loser = claim_of(body("a", "orders-2", second, "u0", topic="orders", reason="Conflict"))
        for order in itertools.permutations([owner, newcomer, loser]):
            for claim in (owner, newcomer, loser):
                assert owner_of(claim, order, IDENTITIES.get).ref == "a/orders", (reason, order)
    # Without a status to tell them apart, the uid still decides; an older claim always wins.
    fresh = [claim_of(body("a", "orders", second, "u9")), claim_of(body("b", "orders", second, "u1"))]
    assert owner_of(fresh[0], fresh, IDENTITIES.get).ref == "b/orders"
    older = claim_of(body("b", "orders", "2024-12-31T23:59:59Z", "u5"))
    managing = claim_of(body("a", "orders", second, "u0", reason="Created"))
    assert owner_of(managing, [managing, older], IDENTITIES.get).ref == "b/orders"


def test_a_claims_status_is_not_part_of_its_identity() -> None:
    """The handler's body and the index's copy may differ in status: the claim is still itself."""
    before = claim_of(body("a", "orders", "2025-01-01T00:00:00Z", "u1"))
    after = claim_of(body("a", "orders", "2025-01-01T00:00:00Z", "u1", reason="Created"))
    assert before == after
    assert owner_of(after, [before], IDENTITIES.get) == after


def test_unknown_clusters_compete_only_with_the_same_kafkacluster_object() -> None:
    mine = claim_of(body("x", "orders", "2025-01-02T00:00:00Z", "u1"))
    other = claim_of(body("y", "orders", "2025-01-01T00:00:00Z", "u2"))
    assert owner_of(mine, [mine, other], lambda key: None) == mine


def test_connect_strings_are_normalised() -> None:
    assert cluster_identity("ZK-1:2181,zk-0/kafka") == cluster_identity("zk-0:2181,zk-1:2181/kafka")
    assert cluster_identity("zk-0:2181/kafka") != cluster_identity("zk-0:2181/kafka2")
    assert cluster_identity("not a connect string") == "not a connect string"


def test_a_body_without_cluster_makes_no_claim_and_declared_topics_follow_identity() -> None:
    assert claim_of({"metadata": {"name": "x", "namespace": "a"}, "spec": {}}) is None
    claims = [
        claim_of(body("a", "t1", "", "u1")),
        claim_of(body("b", "t2", "", "u2")),
        claim_of(body("c", "t3", "", "u3")),
    ]
    index = ClaimIndex()
    for claim in claims:
        assert claim is not None
        index.put(claim)
    same_kafka = [key for key in index.clusters() if IDENTITIES.get(key) == "zk:2181/kafka"]
    assert index.topics_of(same_kafka) == {"t1", "t2"}
