"""The operator's claim index answers exactly what a rebuild from every object's latest claim would, after any
sequence of events: claims that move to another topic name, objects deleted, objects that claim nothing."""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from topic_operator.k8s.kafkatopics.claim_index import ClaimIndex
from topic_operator.k8s.kafkatopics.ownership import TopicClaim

OBJECTS = st.sampled_from([("team-a", "a"), ("team-a", "b"), ("team-b", "a"), ("team-b", "c")])
TOPICS = st.sampled_from(["orders", "payments", "audit"])
CLUSTERS = st.sampled_from(["main", "other", "team-a/main"])
EVENTS = st.lists(st.tuples(OBJECTS, st.none() | st.tuples(TOPICS, CLUSTERS)), max_size=40)
"""None: deleted, or claims nothing."""


def _claim(namespace: str, name: str, topic: str, cluster: str = "main") -> TopicClaim:
    created = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    return TopicClaim(namespace, name, f"{namespace}-{name}", created, cluster, topic)


@given(EVENTS)
def test_the_index_equals_a_rebuild_from_the_latest_claims(
    events: list[tuple[tuple[str, str], tuple[str, str] | None]],
) -> None:
    index = ClaimIndex()
    latest: dict[tuple[str, str], TopicClaim] = {}
    for (namespace, name), claimed in events:
        if claimed is None:
            index.drop(namespace, name)
            latest.pop((namespace, name), None)
        else:
            index.put(_claim(namespace, name, *claimed))
            latest[(namespace, name)] = _claim(namespace, name, *claimed)
    rebuilt: dict[str, set[TopicClaim]] = {}
    by_cluster: dict[tuple[str, str], set[TopicClaim]] = {}
    for claim in latest.values():
        rebuilt.setdefault(claim.topic, set()).add(claim)
        by_cluster.setdefault(claim.cluster_key, set()).add(claim)
    assert {topic: set(claims) for topic, claims in index.items()} == rebuilt
    assert sorted(index.clusters()) == sorted(by_cluster)
    for cluster, claims in by_cluster.items():
        assert set(index.of_cluster(cluster)) == claims
        assert index.topics_of([cluster]) == {claim.topic for claim in claims}
    assert index.of_cluster(("nowhere", "main")) == []
    assert set(index.claims()) == set(latest.values())
    assert index.get("no-such-topic", ()) == ()


def test_a_claim_that_moves_leaves_its_old_topic() -> None:
    index = ClaimIndex()
    index.put(_claim("team-a", "a", "orders"))
    index.put(_claim("team-a", "a", "payments"))
    assert "orders" not in index
    assert [c.topic for c in index["payments"]] == ["payments"]
