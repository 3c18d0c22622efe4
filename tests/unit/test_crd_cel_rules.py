"""The KafkaTopic CRD's CEL rules, evaluated with cel-python as the API server evaluates them on create and on
update: a decrease, a rename, a move to another cluster, zero replicas and an inconsistent replicaAssignment are
refused at `kubectl apply` time, and ordinary updates are not."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from topic_operator.crd.cel_rules import CelFailure, CelRules, rules_of

CRDS = Path(__file__).resolve().parents[2] / "crds"


def _schema(name: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / name).read_text())
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


RULES = CelRules(_schema("kafkatopics.kto.dev.yaml"))

PARTITIONS_RULE = "self >= oldSelf"
PARTITIONS_MESSAGE = "partitions can only be increased (Kafka cannot remove partitions)"
RENAME_RULE = (
    "(has(self.spec.topicName) ? self.spec.topicName : self.metadata.name) == "
    "(has(oldSelf.spec.topicName) ? oldSelf.spec.topicName : oldSelf.metadata.name)"
)
RENAME_MESSAGE = (
    "the topic name is immutable: spec.topicName (or metadata.name when it is absent) cannot change after "
    "creation; create a new KafkaTopic to get a new topic"
)
SIZE_RULE = "!has(self.replicaAssignment) || self.replicaAssignment.size() == self.partitions"
SIZE_MESSAGE = "replicaAssignment must have exactly one entry per partition (spec.partitions entries)"
REPLICAS_RULE = "!has(self.replicaAssignment) || self.replicaAssignment.all(r, r.size() == self.replicas)"
REPLICAS_MESSAGE = "every replicaAssignment entry must list exactly spec.replicas broker ids"
CLUSTER_FORM_RULE = (
    "self.matches('^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?"
    "([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$') && self.matches('^([^/]+/)?[^/]{1,253}$')"
)
MANAGED_RULE = "has(self.only) != has(self.allBut)"
MANAGED_MESSAGE = "managedTopicConfig takes exactly one of only and allBut"
CLUSTER_FORM_MESSAGE = (
    "spec.cluster must be a KafkaCluster name, or <namespace>/<name> for a KafkaCluster of another namespace"
)


def _topic(name: str = "orders", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": name},
        "spec": {"cluster": "local", "partitions": 6, "replicas": 3, **spec},
    }


def _updated(old: dict[str, Any], **spec: Any) -> dict[str, Any]:
    new = copy.deepcopy(old)
    new["spec"].update(spec)
    for key in [k for k, v in spec.items() if v is None]:
        del new["spec"][key]
    return new


def test_the_crds_carry_exactly_these_rules() -> None:
    rules = [(".".join(rule.path), rule.rule, rule.message, rule.field_path) for rule in RULES.rules]
    assert rules == [
        ("", RENAME_RULE, RENAME_MESSAGE, ".spec.topicName"),
        ("spec", SIZE_RULE, SIZE_MESSAGE, ".replicaAssignment"),
        ("spec", REPLICAS_RULE, REPLICAS_MESSAGE, ".replicaAssignment"),
        (
            "spec.cluster",
            "self == oldSelf",
            "cluster is immutable; create a new KafkaTopic for a topic of another cluster",
            "",
        ),
        ("spec.cluster", CLUSTER_FORM_RULE, CLUSTER_FORM_MESSAGE, ""),
        ("spec.partitions", PARTITIONS_RULE, PARTITIONS_MESSAGE, ""),
        ("spec.replicas", "self >= 1", "replicas must be at least 1", ""),
    ]
    # The KafkaCluster's rules: one on managedTopicConfig, the others on its grants
    # (tests/unit/test_crd_tenant_rules.py lists them).
    cluster_rules = rules_of(_schema("kafkaclusters.kto.dev.yaml"))
    assert len(cluster_rules) == 9
    assert [(r.path, r.rule, r.message) for r in cluster_rules if r.path[:2] != ("spec", "tenants")] == [
        (("spec", "managedTopicConfig"), MANAGED_RULE, MANAGED_MESSAGE)
    ]


@pytest.mark.parametrize(
    ("managed", "refused"),
    [
        ({"only": ["retention.ms"]}, False),
        ({"allBut": []}, False),
        ({}, True),
        ({"only": [], "allBut": []}, True),
    ],
)
def test_managed_topic_config_takes_one_of_only_and_all_but(managed: dict[str, Any], refused: bool) -> None:
    cluster = {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": "local"},
        "spec": {"bootstrapServers": "127.0.0.1:9092", "managedTopicConfig": managed},
    }
    failures = CelRules(_schema("kafkaclusters.kto.dev.yaml")).check(cluster)
    assert [(f.rule, f.message) for f in failures] == ([(MANAGED_RULE, MANAGED_MESSAGE)] if refused else [])


def test_a_partition_decrease_is_rejected() -> None:
    old = _topic(partitions=12)
    assert RULES.check(_updated(old, partitions=6), old) == [
        CelFailure("spec.partitions", 6, PARTITIONS_RULE, PARTITIONS_MESSAGE)
    ]


@pytest.mark.parametrize("partitions", [12, 13, 100])
def test_keeping_or_growing_partitions_passes(partitions: int) -> None:
    old = _topic(partitions=12)
    assert RULES.check(_updated(old, partitions=partitions), old) == []


def test_a_rename_through_topic_name_is_rejected() -> None:
    old = _topic(topicName="orders.v1")
    assert RULES.check(_updated(old, topicName="orders.v2"), old) == [
        CelFailure("spec.topicName", "orders.v2", RENAME_RULE, RENAME_MESSAGE)
    ]


def test_adding_a_topic_name_that_differs_from_metadata_name_is_a_rename() -> None:
    old = _topic("orders")
    assert RULES.check(_updated(old, topicName="orders_v1"), old) == [
        CelFailure("spec.topicName", "orders_v1", RENAME_RULE, RENAME_MESSAGE)
    ]


def test_removing_a_topic_name_that_differs_from_metadata_name_is_a_rename() -> None:
    old = _topic("orders", topicName="orders_v1")
    assert RULES.check(_updated(old, topicName=None), old) == [
        CelFailure("spec.topicName", None, RENAME_RULE, RENAME_MESSAGE)
    ]


def test_spelling_out_or_dropping_the_same_name_is_not_a_rename() -> None:
    implicit = _topic("orders")
    explicit = _updated(implicit, topicName="orders")
    assert RULES.check(explicit, implicit) == []
    assert RULES.check(implicit, explicit) == []


def test_moving_a_topic_to_another_cluster_is_rejected() -> None:
    old = _topic()
    assert RULES.check(_updated(old, cluster="other"), old) == [
        CelFailure(
            "spec.cluster",
            "other",
            "self == oldSelf",
            "cluster is immutable; create a new KafkaTopic for a topic of another cluster",
        )
    ]


def test_zero_replicas_are_rejected() -> None:
    assert RULES.check(_topic(replicas=0)) == [
        CelFailure("spec.replicas", 0, "self >= 1", "replicas must be at least 1")
    ]


def test_a_replica_assignment_with_too_few_partitions_is_rejected() -> None:
    document = _topic(partitions=3, replicas=2, replicaAssignment=[[0, 1], [1, 2]])
    assert RULES.check(document) == [
        CelFailure("spec.replicaAssignment", [[0, 1], [1, 2]], SIZE_RULE, SIZE_MESSAGE)
    ]


def test_a_replica_assignment_with_a_short_replica_list_is_rejected() -> None:
    document = _topic(partitions=3, replicas=2, replicaAssignment=[[0, 1], [1], [2, 0]])
    assert RULES.check(document) == [
        CelFailure("spec.replicaAssignment", [[0, 1], [1], [2, 0]], REPLICAS_RULE, REPLICAS_MESSAGE)
    ]


def test_a_consistent_replica_assignment_passes_and_may_grow_with_partitions() -> None:
    old = _topic(partitions=2, replicas=2, replicaAssignment=[[0, 1], [1, 2]])
    assert RULES.check(old) == []
    grown = _updated(old, partitions=3, replicaAssignment=[[0, 1], [1, 2], [2, 0]])
    assert RULES.check(grown, old) == []


def test_ordinary_updates_pass() -> None:
    old = _topic(config={"retention.ms": 1000})
    new = _updated(old, config={"retention.ms": 2000, "cleanup.policy": "compact"}, mode="Plan", replicas=2)
    assert RULES.check(new, old) == []


def test_transition_rules_do_not_run_on_create() -> None:
    """Without an old object (a create, or `kto validate`) only the rules without oldSelf run."""
    assert RULES.check(_topic(partitions=1)) == []


def test_a_rule_that_cannot_be_evaluated_fails_with_its_message() -> None:
    assert RULES.check(_topic(replicas="3")) == [
        CelFailure(
            "spec.replicas",
            "3",
            "self >= 1",
            "replicas must be at least 1 (rule evaluation error: the value has the wrong type for this rule)",
        )
    ]


def test_the_examples_pass_every_rule_on_create_and_on_an_unchanged_update() -> None:
    examples = Path(__file__).resolve().parents[2] / "manifests" / "examples"
    checked = 0
    for path in sorted(examples.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document["apiVersion"] == "kto.dev/v1alpha1" and document["kind"] == "KafkaTopic":
                assert RULES.check(document) == [], path.name
                assert RULES.check(document, copy.deepcopy(document)) == [], path.name
                checked += 1
    assert checked == 6
