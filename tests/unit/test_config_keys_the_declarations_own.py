"""Config keys the declarations own: a KafkaCluster's managedTopicConfig (only / allBut) and a KafkaTopic's
unmanagedConfig leave the other keys to other tools. A key left alone is never drift, never written, never
removed, and the plan says so; equal values are never drift, in any spelling Kafka reads alike."""

from collections.abc import Mapping
from typing import Any

import pytest

from harness.states import cluster_state, existing, spec
from topic_operator.cli.export_documents import export_cluster
from topic_operator.drift.desired_rows import spec_from_row, spec_to_row
from topic_operator.drift.planning import plan_cluster
from topic_operator.kafka.releases import ALL_KAFKA_VERSIONS, KRAFT_ONLY_VERSIONS, format_version
from topic_operator.kafka.topic_configs import (
    ConfigType,
    TopicConfigDef,
    topic_configs_at,
    validate_topic_config,
)
from topic_operator.manifests.loader import Manifests, load_objects
from topic_operator.model import ClusterSpec, ManagedConfig, TopicSpec
from topic_operator.plan import AlterConfig, TopicStatus, plan_topic
from topic_operator.plan_output import plan_to_dict, render_plan_text

TWO = {0: (0, 1, 2), 1: (1, 2, 3)}
STORED = {"retention.ms": "1000", "min.insync.replicas": "2", "leader.replication.throttled.replicas": "0:1"}


def _cluster(managed: ManagedConfig) -> ClusterSpec:
    return ClusterSpec("main", "127.0.0.1:2181/kafka", managed_config=managed)


def _only_alter(result: Any) -> AlterConfig:
    [action] = result.actions
    assert isinstance(action, AlterConfig)
    return action


def test_by_default_the_declaration_owns_every_key() -> None:
    """Today's behaviour stays the default: adoption removes what the declaration leaves out."""
    result = plan_topic(spec("t", 2, 3, {"retention.ms": "2000"}), cluster_state(existing("t", TWO, STORED)))
    assert _only_alter(result).config == {"retention.ms": "2000"}
    assert result.left_alone == ()


def test_adoption_keeps_the_overrides_a_cluster_leaves_to_other_tools() -> None:
    cluster = _cluster(
        ManagedConfig(all_but=frozenset({"min.insync.replicas", "leader.replication.throttled.replicas"}))
    )
    result = plan_topic(
        spec("t", 2, 3, {"retention.ms": "2000"}), cluster_state(existing("t", TWO, STORED)), cluster
    )
    assert _only_alter(result).config == {**STORED, "retention.ms": "2000"}
    assert [c.field for c in result.changes] == ["config.retention.ms"]
    assert result.left_alone == ("leader.replication.throttled.replicas", "min.insync.replicas")


def test_only_listed_keys_are_owned() -> None:
    """With only: the keys listed are the declaration's (an absent one removed), every other key is kept."""
    cluster = _cluster(ManagedConfig(only=frozenset({"retention.ms", "cleanup.policy"})))
    result = plan_topic(
        spec("t", 2, 3, {"cleanup.policy": "compact"}), cluster_state(existing("t", TWO, STORED)), cluster
    )
    assert _only_alter(result).config == {
        "min.insync.replicas": "2",
        "leader.replication.throttled.replicas": "0:1",
        "cleanup.policy": "compact",
    }
    assert sorted(c.field for c in result.changes) == ["config.cleanup.policy", "config.retention.ms"]


def test_a_key_another_tool_changes_is_not_drift() -> None:
    cluster = _cluster(ManagedConfig(all_but=frozenset({"min.insync.replicas"})))
    declared = spec("t", 2, 3, {"retention.ms": "1000", "leader.replication.throttled.replicas": "0:1"})
    for value in ("2", "3", "not even a number"):
        state = cluster_state(existing("t", TWO, {**STORED, "min.insync.replicas": value}))
        result = plan_topic(declared, state, cluster)
        assert (result.status, result.actions, result.changes) == (TopicStatus.UNCHANGED, (), ())
        assert result.left_alone == ("min.insync.replicas",)
    # the same change, owned by the declarations, is drift
    owned = plan_topic(declared, cluster_state(existing("t", TWO, {**STORED, "min.insync.replicas": "3"})))
    assert [c.field for c in owned.changes] == ["config.min.insync.replicas"]


def test_a_topic_leaves_its_own_keys_alone() -> None:
    declared = TopicSpec(
        "main", "t", 2, 3, {"retention.ms": "2000"}, unmanaged_config=frozenset({"min.insync.replicas"})
    )
    result = plan_topic(declared, cluster_state(existing("t", TWO, STORED)))
    assert _only_alter(result).config == {"retention.ms": "2000", "min.insync.replicas": "2"}
    assert result.left_alone == ("min.insync.replicas",)


def test_the_plan_says_what_it_leaves_alone() -> None:
    cluster = _cluster(ManagedConfig(all_but=frozenset({"min.insync.replicas"})))
    state = cluster_state(existing("t", TWO, STORED))
    from topic_operator.plan import plan

    result = plan(
        [spec("t", 2, 3, {"retention.ms": "2000", "leader.replication.throttled.replicas": "0:1"})],
        state,
        cluster,
    )
    [topic] = plan_to_dict(result)["topics"]
    assert topic["left_alone"] == ["config.min.insync.replicas"]
    text = render_plan_text(result)
    assert "    left alone (not owned by the declarations): config.min.insync.replicas\n" in text
    # a topic with nothing left alone says nothing of it
    [bare] = plan_to_dict(plan([spec("t", 2, 3, STORED)], state))["topics"]
    assert "left_alone" not in bare


@pytest.mark.parametrize(
    ("managed", "listed"),
    [
        (ManagedConfig(only=frozenset({"cleanup.policy"})), "spec.managedTopicConfig.only does not list it"),
        (ManagedConfig(all_but=frozenset({"retention.ms"})), "spec.managedTopicConfig.allBut lists it"),
    ],
)
def test_declaring_a_key_left_to_other_tools_is_refused_and_nothing_is_written(
    managed: ManagedConfig, listed: str
) -> None:
    result = plan_topic(
        spec("t", 4, 3, {"retention.ms": "2000"}),
        cluster_state(existing("t", TWO, STORED)),
        _cluster(managed),
    )
    assert result.status is TopicStatus.REJECTED
    assert result.actions == ()
    [error] = result.rejections
    assert error.field == "config.retention.ms"
    assert str(error).startswith(
        "config.retention.ms: '2000' cannot be declared: KafkaCluster main leaves retention.ms"
    )
    assert listed in str(error)


def test_the_drift_job_reads_no_drift_in_keys_left_alone() -> None:
    cluster = _cluster(ManagedConfig(all_but=frozenset({"min.insync.replicas"})))
    declared = spec("t", 2, 3, {"retention.ms": "1000", "leader.replication.throttled.replicas": "0:1"})
    state = cluster_state(existing("t", TWO, {**STORED, "min.insync.replicas": "3"}))
    assert plan_cluster([declared], state, cluster, seed=0).facts == ()
    # owned, the same difference is a finding
    [facts] = plan_cluster([declared], state, _cluster(ManagedConfig()), seed=0).facts
    assert [d.key for d in facts.config_diffs] == ["min.insync.replicas"]


def test_export_declares_only_the_keys_the_topics_own() -> None:
    state = cluster_state(existing("t", TWO, STORED))
    exported = export_cluster(state, cluster="main", managed=ManagedConfig(only=frozenset({"retention.ms"})))
    [topic] = exported.topics
    assert topic.document is not None
    assert topic.document["spec"]["config"] == {"retention.ms": "1000"}
    [everything] = export_cluster(state, cluster="main").topics
    assert everything.document is not None
    assert everything.document["spec"]["config"] == STORED


def test_a_declared_row_carries_the_keys_left_alone() -> None:
    declared = TopicSpec(
        "main", "t", 2, 3, {"retention.ms": "2000"}, unmanaged_config=frozenset({"b.key", "a.key"})
    )
    row = spec_to_row(declared)
    assert row["unmanaged_config"] == ["a.key", "b.key"]
    assert spec_from_row(row) == declared
    assert spec_from_row({**row, "unmanaged_config": None}).unmanaged_config == frozenset()


# ---- the manifests ---------------------------------------------------------------------------------------------


def _load(cluster_spec: Mapping[str, Any], topic_spec: Mapping[str, Any]) -> Manifests:
    return load_objects(
        [
            {
                "apiVersion": "kto.dev/v1alpha1",
                "kind": "KafkaCluster",
                "metadata": {"name": "main"},
                "spec": cluster_spec,
            },
            {
                "apiVersion": "kto.dev/v1alpha1",
                "kind": "KafkaTopic",
                "metadata": {"name": "orders"},
                "spec": {"cluster": "main", "partitions": 2, "replicas": 3, **topic_spec},
            },
        ],
        check_cel=True,
    )


def test_the_loader_reads_both_fields() -> None:
    manifests = _load(
        {"bootstrapServers": "127.0.0.1:9092", "managedTopicConfig": {"allBut": ["min.insync.replicas"]}},
        {"config": {"retention.ms": 1000}, "unmanagedConfig": ["segment.ms"]},
    )
    assert manifests.errors == ()
    [cluster] = manifests.clusters
    assert cluster.managed_config == ManagedConfig(all_but=frozenset({"min.insync.replicas"}))
    [topic] = manifests.topics
    assert topic.unmanaged_config == frozenset({"segment.ms"})


@pytest.mark.parametrize(
    ("cluster_fields", "topic_fields", "field", "rule"),
    [
        (
            {"managedTopicConfig": {"only": ["retention.ms", "retention.msec"]}},
            {},
            "spec.managedTopicConfig.only[1]",
            "Unknown topic config name: retention.msec",
        ),
        (
            {},
            {"unmanagedConfig": ["min.insync.replica"]},
            "spec.unmanagedConfig[0]",
            "Unknown topic config name",
        ),
        (
            {"managedTopicConfig": {"allBut": ["retention.ms"]}},
            {"config": {"retention.ms": 1000}},
            "spec.config.retention.ms",
            "KafkaCluster main leaves retention.ms to other tools (spec.managedTopicConfig.allBut lists it)",
        ),
        (
            {},
            {"config": {"retention.ms": 1000}, "unmanagedConfig": ["retention.ms"]},
            "spec.config.retention.ms",
            "unmanagedConfig leaves retention.ms alone",
        ),
        ({"managedTopicConfig": {}}, {}, "spec.managedTopicConfig", "exactly one of only and allBut"),
    ],
)
def test_the_loader_refuses_what_cannot_be_owned(
    cluster_fields: Mapping[str, Any], topic_fields: Mapping[str, Any], field: str, rule: str
) -> None:
    manifests = _load({"bootstrapServers": "127.0.0.1:9092", **cluster_fields}, topic_fields)
    assert any(error.field_path == field and rule in error.rule for error in manifests.errors), (
        manifests.errors
    )


# ---- equal values are never drift, on every release line --------------------------------------------------------

_NUMERIC = (ConfigType.INT, ConfigType.LONG, ConfigType.DOUBLE)
_LIST_SPELLINGS: Mapping[str, tuple[object, str, object]] = {
    # key: (declared as YAML has it, stored as another tool wrote it, a different value)
    "cleanup.policy": (["delete", "compact"], "compact,delete", ["compact"]),
    "leader.replication.throttled.replicas": (["1:2", "0:1"], "0:1, 1:2", "0:1"),
    "follower.replication.throttled.replicas": ("1:2,0:1", " 0:1,1:2", "*"),
}


def _numeric_spellings(definition: TopicConfigDef, line: Any) -> tuple[object, str, object]:
    """The default declared as a YAML number, stored as Kafka reads it too (a sign, zeros, an exponent), and a
    different value the line accepts."""
    if definition.type is ConfigType.DOUBLE:
        value = float(definition.default)
        return value, f"{value * 10}E-1", next(v for v in (0.25, 0.75) if v != value)
    value = int(definition.default)
    stored = f"+0{value}" if value >= 0 else f"-0{-value}"
    for other in (value + 1, value - 1, 2, 5):
        try:
            validate_topic_config({definition.name: other}, kafka_version=line)
        except Exception:  # a value the line refuses: try the next
            continue
        if other != value:
            return value, stored, other
    raise AssertionError(f"no other value of {definition.name} is valid")


def _keys_to_compare() -> list[tuple[Any, str]]:
    return [
        (line, name)
        for line in ALL_KAFKA_VERSIONS
        for name, definition in topic_configs_at(line).items()
        if definition.type in _NUMERIC or definition.type is ConfigType.LIST
    ]


@pytest.mark.parametrize(
    ("line", "key"), _keys_to_compare(), ids=lambda v: v if isinstance(v, str) else format_version(v)
)
def test_equal_values_are_not_drift_whatever_their_spelling(line: Any, key: str) -> None:
    definition = topic_configs_at(line)[key]
    declared_value, stored, different = (
        _LIST_SPELLINGS[key] if definition.type is ConfigType.LIST else _numeric_spellings(definition, line)
    )
    reach: dict[str, Any] = (
        {"bootstrapServers": "127.0.0.1:9092"}
        if line in KRAFT_ONLY_VERSIONS
        else {"zookeeper": {"connect": "127.0.0.1:2181/k"}}
    )
    state = cluster_state(existing("orders", TWO, {key: stored}))
    for value, drift in ((declared_value, False), (different, True)):
        manifests = _load({**reach, "kafkaVersion": format_version(line)}, {"config": {key: value}})
        assert manifests.errors == (), manifests.errors
        [cluster], [topic] = manifests.clusters, manifests.topics
        result = plan_topic(topic, state, cluster)
        assert result.rejections == ()
        assert [c.field for c in result.changes] == ([f"config.{key}"] if drift else []), (value, stored)


def test_the_comparison_covers_every_list_and_numeric_key() -> None:
    """The spellings above name every LIST key a line defines; a new one fails here until it has its own."""
    keys = {key for line, key in _keys_to_compare() if topic_configs_at(line)[key].type is ConfigType.LIST}
    assert keys == set(_LIST_SPELLINGS)
    assert len(_keys_to_compare()) > 400
