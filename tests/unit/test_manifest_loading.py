"""Manifests -> specs: multi-document files, directories, Strimzi KafkaTopics, kubectl exports; every invalid
document, field or value reported with file, document, field path, value and rule; conflicts; other kinds ignored.

Tests run in a temporary directory (``chdir``) so that file names in messages are short and exact.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.manifests.loader import MISSING, ManifestError, Manifests, load_manifests, load_objects
from topic_operator.model import ApplyMode, ClusterSpec, DeletionPolicy, ReassignmentPolicy, TopicSpec

CLUSTER = """\
apiVersion: kto.dev/v1alpha1
kind: KafkaCluster
metadata:
  name: local
spec:
  zookeeper:
    connect: 127.0.0.1:2181/kafka
"""


def _topic(name: str, spec: str = "", *, cluster: str = "local") -> str:
    """A KafkaTopic of 3 partitions and 2 replicas; ``spec`` lines add fields or replace those defaults (a key
    written twice would be refused as YAML)."""
    lines = textwrap.dedent(spec).strip("\n").splitlines() if spec.strip() else []
    given = {line.split(":", 1)[0] for line in lines if line and not line.startswith(" ")}
    defaults = [f"{key}: {value}" for key, value in (("partitions", 3), ("replicas", 2)) if key not in given]
    body = "".join(f"  {line}\n" for line in [*defaults, *lines])
    return (
        f"apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata:\n  name: {name}\n"
        f"spec:\n  cluster: {cluster}\n{body}"
    )


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _write(path: str, *documents: str) -> str:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("---\n".join(documents))
    return path


def _errors(manifests: Manifests) -> list[str]:
    return [str(error) for error in manifests.errors]


# ---------------------------------------------------------------------------------------------------------------
# Reading.


def test_a_multi_document_file_gives_clusters_and_topics_in_order_with_their_source() -> None:
    _write("topics.yaml", CLUSTER, _topic("orders"), _topic("payments", "deletionPolicy: Delete\nmode: Plan"))
    manifests = load_manifests(["topics.yaml"])
    assert manifests.errors == ()
    assert manifests.warnings == ()
    assert manifests.clusters == (
        ClusterSpec(
            "local",
            "127.0.0.1:2181/kafka",
            False,
            (),
            (3, 4),
            source="topics.yaml#1",
            kafka_version_declared=False,
        ),
    )
    assert manifests.topics == (
        TopicSpec("local", "orders", 3, 2, {}, source="topics.yaml#2"),
        TopicSpec(
            "local",
            "payments",
            3,
            2,
            {},
            deletion_policy=DeletionPolicy.DELETE,
            mode=ApplyMode.PLAN,
            source="topics.yaml#3",
        ),
    )
    assert (manifests.files, manifests.documents) == (1, 3)
    assert manifests.summary() == "OK: 1 file, 3 documents: 1 cluster and 2 topics valid"


def test_every_kafkatopic_field_maps_to_the_spec() -> None:
    spec = """\
        topicName: Orders_V1
        rackAwareMode: Disabled
        replicaAssignment: [[1, 2], [2, 3], [3, 1]]
        config: {retention.ms: 1000}
    """
    _write("t.yaml", _topic("orders-v1", spec))
    (topic,) = load_manifests(["t.yaml"]).topics
    assert topic == TopicSpec(
        "local",
        "Orders_V1",
        3,
        2,
        {"retention.ms": "1000"},
        {0: (1, 2), 1: (2, 3), 2: (3, 1)},
        RackAwareMode.DISABLED,
        source="t.yaml#1",
    )


def test_directories_are_read_recursively_sorted_yaml_and_yml_only_hidden_skipped() -> None:
    _write("repo/z-cluster.yaml", CLUSTER)
    _write("repo/b/orders.yml", _topic("orders"))
    _write("repo/a/payments.yaml", _topic("payments"))
    _write("repo/a/notes.txt", _topic("ignored"))
    _write("repo/.git/objects.yaml", _topic("hidden"))
    _write("repo/.hidden.yaml", _topic("hidden-too"))
    manifests = load_manifests(["repo"])
    assert [t.source for t in manifests.topics] == ["repo/a/payments.yaml#1", "repo/b/orders.yml#1"]
    assert [c.source for c in manifests.clusters] == ["repo/z-cluster.yaml#1"]
    assert manifests.files == 3


def test_a_file_given_twice_is_read_once_and_files_given_explicitly_may_have_any_extension() -> None:
    _write("dir/orders.yaml", _topic("orders"))
    _write("export.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": []}))
    manifests = load_manifests(["dir", "dir/orders.yaml", "export.json"])
    assert [t.name for t in manifests.topics] == ["orders"]
    assert manifests.files == 2


def test_empty_documents_are_skipped_but_counted_in_document_numbers() -> None:
    Path("t.yaml").write_text(
        f"{_topic('orders')}---\n# just a comment\n---\n{_topic('clicks', 'partitions: 0')}"
    )
    manifests = load_manifests(["t.yaml"])
    assert _errors(manifests) == ["t.yaml#3 KafkaTopic clicks: spec.partitions = 0: must be at least 1"]
    assert manifests.documents == 2


def test_canonical_configs_from_yaml_numbers_booleans_strings_and_lists() -> None:
    config = """\
        config:
          retention.ms: 604800000
          segment.bytes: " 1073741824 "
          unclean.leader.election.enable: false
          min.cleanable.dirty.ratio: 0.5
          cleanup.policy: [compact, delete]
          compression.type: zstd
    """
    _write("t.yaml", _topic("orders", config))
    (topic,) = load_manifests(["t.yaml"]).topics
    assert topic.config == {
        "cleanup.policy": "compact,delete",
        "compression.type": "zstd",
        "min.cleanable.dirty.ratio": "0.5",
        "retention.ms": "604800000",
        "segment.bytes": "1073741824",
        "unclean.leader.election.enable": "false",
    }


def test_an_empty_config_key_is_pruned_as_the_api_server_does() -> None:
    _write("t.yaml", _topic("orders", "config:"))
    assert load_manifests(["t.yaml"]).topics[0].config == {}


def test_configs_are_checked_with_the_clusters_kafka_version() -> None:
    key = "message.timestamp.after.max.ms"  # added in Kafka 3.6
    new = CLUSTER.replace("  name: local", "  name: new").rstrip() + '\n  kafkaVersion: "3.6"\n'
    _write(
        "t.yaml",
        CLUSTER,
        new,
        _topic("a", f"config: {{{key}: 1000}}"),
        _topic("b", f"config: {{{key}: 1000}}", cluster="new"),
    )
    manifests = load_manifests(["t.yaml"])
    assert _errors(manifests) == [
        f"t.yaml#3 KafkaTopic a: spec.config.{key} = 1000: Unknown topic config name: {key}"
    ]
    assert [(t.name, dict(t.config)) for t in manifests.topics] == [("b", {key: "1000"})]


def test_a_topic_of_a_cluster_not_among_the_documents_is_checked_as_kafka_3_4_with_a_warning() -> None:
    _write("t.yaml", _topic("orders", cluster="elsewhere"), _topic("payments", cluster="elsewhere"))
    manifests = load_manifests(["t.yaml"])
    assert [t.name for t in manifests.topics] == ["orders", "payments"]
    assert [str(w) for w in manifests.warnings] == [
        "t.yaml#1 KafkaTopic orders: KafkaCluster elsewhere is not among the documents read: topic configs are "
        "checked against Kafka 3.4 and no topic prefix limit applies"
    ]


def test_timestamps_stay_strings_as_in_the_kubernetes_api() -> None:
    document = _topic("orders").replace(
        "  name: orders\n", "  name: orders\n  creationTimestamp: 2024-01-02T03:04:05Z\n"
    )
    _write("t.yaml", document)
    assert load_manifests(["t.yaml"]).errors == ()


# ---------------------------------------------------------------------------------------------------------------
# Strimzi and kubectl exports.


def _strimzi(version: str, name: str, spec: str, labels: str = "strimzi.io/cluster: local") -> str:
    return (
        f"apiVersion: kafka.strimzi.io/{version}\nkind: KafkaTopic\nmetadata:\n  name: {name}\n"
        f"  labels:\n    {labels}\nspec:\n{textwrap.indent(textwrap.dedent(spec), '  ')}"
    )


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1", "v1beta2", "v1"])
def test_strimzi_kafkatopics_are_read_with_the_cluster_from_their_label(version: str) -> None:
    spec = """\
        topicName: Orders.V1
        partitions: 6
        replicas: 3
        config:
          retention.ms: 7200000
          cleanup.policy: compact
    """
    _write("strimzi.yaml", CLUSTER, _strimzi(version, "orders-v1", spec))
    manifests = load_manifests(["strimzi.yaml"])
    assert manifests.errors == ()
    assert manifests.topics == (
        TopicSpec(
            "local",
            "Orders.V1",
            6,
            3,
            {"cleanup.policy": "compact", "retention.ms": "7200000"},
            source="strimzi.yaml#2",
        ),
    )


def test_strimzi_problems_are_explained_in_strimzi_terms() -> None:
    _write(
        "strimzi.yaml",
        _strimzi("v1beta2", "orders", "partitions: 3\n", labels="team: orders"),
        _strimzi("v1beta2", "payments", "replicas: 3\nrackAwareMode: Safe\n"),
        _strimzi("v2", "new", "partitions: 1\nreplicas: 1\n"),
    )
    assert _errors(load_manifests(["strimzi.yaml"])) == [
        "strimzi.yaml#1 KafkaTopic orders: metadata.labels.strimzi.io/cluster: a Strimzi KafkaTopic names its "
        "Kafka cluster with the strimzi.io/cluster label",
        "strimzi.yaml#1 KafkaTopic orders: spec.replicas: required field is missing (Strimzi would take the "
        "broker's default, which kto cannot know: declare it)",
        "strimzi.yaml#2 KafkaTopic payments: spec.partitions: required field is missing (Strimzi would take the "
        "broker's default, which kto cannot know: declare it)",
        "strimzi.yaml#2 KafkaTopic payments: spec.rackAwareMode = 'Safe': unknown field of a Strimzi KafkaTopic "
        "(known: topicName, partitions, replicas, config)",
        "strimzi.yaml#3 KafkaTopic new: apiVersion = 'kafka.strimzi.io/v2': Strimzi KafkaTopics are read in "
        "kafka.strimzi.io/v1alpha1, kafka.strimzi.io/v1beta1, kafka.strimzi.io/v1beta2 and kafka.strimzi.io/v1 only",
    ]


def _exported(name: str, namespace: str, **spec: object) -> dict[str, object]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": "u",
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
        "spec": {"cluster": "local", "partitions": 3, "replicas": 2, **spec},
        "status": {"topicName": name, "conditions": [{"type": "Ready", "status": "True"}], "driftCount": 0},
    }


def test_a_kubectl_list_export_is_read_item_by_item() -> None:
    export = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            _exported("orders", "team-a"),
            _exported("payments", "team-b", partitions=0),
            _exported("clicks", "team-b", config={"retention.ms": "1d"}),
        ],
        "metadata": {"resourceVersion": ""},
    }
    _write("export.json", json.dumps(export))
    manifests = load_manifests(["export.json"])
    assert [(t.name, t.source) for t in manifests.topics] == [("orders", "export.json#1/items[0]")]
    assert _errors(manifests) == [
        "export.json#1 KafkaTopic team-b/payments: items[1].spec.partitions = 0: must be at least 1",
        "export.json#1 KafkaTopic team-b/clicks: items[2].spec.config.retention.ms = '1d': Invalid value 1d for "
        "configuration retention.ms: Not a number of type LONG",
    ]


def test_a_typed_list_export_and_api_objects_are_read_too() -> None:
    typed = {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopicList", "items": [_exported("orders", "ns")]}
    _write("typed.yaml", json.dumps(typed))
    assert [t.name for t in load_manifests(["typed.yaml"]).topics] == ["orders"]
    from_api = load_objects([_exported("orders", "ns"), _exported("bad", "ns", replicas=0)], origin="api")
    assert [t.source for t in from_api.topics] == ["api#1"]
    assert _errors(from_api) == ["api#2 KafkaTopic ns/bad: spec.replicas = 0: must be at least 1"]


# ---------------------------------------------------------------------------------------------------------------
# Every kind of error, each with file, document, field path, value and rule.


def test_the_error_names_file_document_kind_name_path_value_and_rule() -> None:
    _write("examples/orders.yaml", CLUSTER, _topic("orders", "config:\n  retention.ms: 7d"))
    (error,) = load_manifests(["examples/orders.yaml"]).errors
    assert error == ManifestError(
        file="examples/orders.yaml",
        document_index=2,
        kind="KafkaTopic",
        name="orders",
        field_path="spec.config.retention.ms",
        value="7d",
        rule="Invalid value 7d for configuration retention.ms: Not a number of type LONG",
    )
    assert str(error) == (
        "examples/orders.yaml#2 KafkaTopic orders: spec.config.retention.ms = '7d': Invalid value 7d for "
        "configuration retention.ms: Not a number of type LONG"
    )


def test_schema_errors_are_all_reported_in_words() -> None:
    spec = """\
        replicas: "3"
        partitons: 4
        rackAwareMode: Always
        mode: true
    """
    document = _topic("orders", spec).replace("  partitions: 3\n", "").replace("  replicas: 2\n", "")
    _write("t.yaml", document)
    assert _errors(load_manifests(["t.yaml"])) == [
        "t.yaml#1 KafkaTopic orders: spec.mode = true: must be a string",
        "t.yaml#1 KafkaTopic orders: spec.partitions: required field is missing",
        "t.yaml#1 KafkaTopic orders: spec.partitons = 4: unknown field (known: cluster, topicName, partitions, "
        "replicas, config, unmanagedConfig, replicaAssignment, rackAwareMode, deletionPolicy, mode)",
        "t.yaml#1 KafkaTopic orders: spec.rackAwareMode = 'Always': must be one of Enforced, Safe, Disabled",
        "t.yaml#1 KafkaTopic orders: spec.replicas = '3': must be an integer (write 3, without quotes)",
    ]


def test_cluster_schema_errors() -> None:
    cluster = """\
apiVersion: kto.dev/v1alpha1
kind: KafkaCluster
metadata:
  name: local
spec:
  zookeeper:
    connect: "zk-0:2181, zk-1:2181"
    auth: {type: Kerberos}
  kafkaVersion: 3.4
  allowedTopicPrefixes: [""]
"""
    _write("c.yaml", cluster)
    manifests = load_manifests(["c.yaml"])
    assert manifests.clusters == ()
    assert _errors(manifests) == [
        "c.yaml#1 KafkaCluster local: spec.allowedTopicPrefixes[0] = '': must not be empty",
        'c.yaml#1 KafkaCluster local: spec.kafkaVersion = 3.4: must be a string (quote it in YAML: "3.4")',
        "c.yaml#1 KafkaCluster local: spec.zookeeper.auth.secretName: required field is missing",
        "c.yaml#1 KafkaCluster local: spec.zookeeper.auth.type = 'Kerberos': must be one of Digest, SASL",
        "c.yaml#1 KafkaCluster local: spec.zookeeper.connect = 'zk-0:2181, zk-1:2181': must be "
        "host:port[,host:port...][/chroot], as zookeeper.connect",
    ]


def test_the_reassignment_setting_parses_to_a_policy_and_its_absence_is_off() -> None:
    fast = CLUSTER.replace("  name: local", "  name: fast").rstrip() + (
        "\n  reassignment:\n    enabled: true\n    throttleBytesPerSecond: 10485760\n"
    )
    unthrottled = CLUSTER.replace("  name: local", "  name: unthrottled").rstrip() + (
        "\n  reassignment: {enabled: true}\n"
    )
    _write("c.yaml", CLUSTER, fast, unthrottled)
    manifests = load_manifests(["c.yaml"])
    assert manifests.errors == ()
    policies = {c.name: c.reassignment for c in manifests.clusters}
    assert policies == {
        "local": ReassignmentPolicy(),
        "fast": ReassignmentPolicy(True, 10485760),
        "unthrottled": ReassignmentPolicy(True, None),
    }
    assert policies["local"] == ReassignmentPolicy(enabled=False, throttle_bytes_per_second=None)


@pytest.mark.parametrize(
    ("setting", "error"),
    [
        ('{enabled: "yes"}', "spec.reassignment.enabled = 'yes': must be a boolean"),
        ("{enabled: yes}", None),  # YAML 1.1's yes is a boolean (true), as the API server's YAML reads it
        ("{throttleBytesPerSecond: 0}", "spec.reassignment.throttleBytesPerSecond = 0: must be at least 1"),
        ("{throttleBytesPerSecond: -5}", "spec.reassignment.throttleBytesPerSecond = -5: must be at least 1"),
        (
            "{throttleBytesPerSecond: fast}",
            "spec.reassignment.throttleBytesPerSecond = 'fast': must be an integer",
        ),
        (
            "{throttleBytesPerSecond: true}",
            "spec.reassignment.throttleBytesPerSecond = true: must be an integer",
        ),
        (
            "{throttleBytesPerSecond: 1.5}",
            "spec.reassignment.throttleBytesPerSecond = 1.5: must be an integer",
        ),
        (
            "{throttleBytesPerSecond: 9223372036854774785}",
            "spec.reassignment.throttleBytesPerSecond = 9223372036854774785: must be at most 9223372036854774784",
        ),
        (
            "{fast: true}",
            "spec.reassignment.fast = true: unknown field (known: enabled, throttleBytesPerSecond)",
        ),
        ("true", "spec.reassignment = true: must be a mapping"),
    ],
)
def test_a_bad_reassignment_setting_is_refused_naming_the_field_value_and_rule(
    setting: str, error: str | None
) -> None:
    _write("c.yaml", CLUSTER.rstrip() + f"\n  reassignment: {setting}\n")
    manifests = load_manifests(["c.yaml"])
    if error is None:
        assert manifests.errors == ()
        assert manifests.clusters[0].reassignment == ReassignmentPolicy(True, None)
        return
    assert manifests.clusters == ()
    assert _errors(manifests) == [f"c.yaml#1 KafkaCluster local: {error}"]


def test_names_are_judged_by_kafkas_rules_and_kubernetes_rules() -> None:
    _write(
        "t.yaml",
        _topic("orders", "topicName: orders$"),
        _topic("Orders_V1"),
        _topic("dots", "topicName: '..'"),
        _topic("offsets", "topicName: __consumer_offsets"),
        _topic("bad-cluster", cluster="Local_Cluster"),
    )
    assert _errors(load_manifests(["t.yaml"])) == [
        "t.yaml#1 KafkaTopic orders: spec.topicName = 'orders$': Topic name is invalid: 'orders$' contains one "
        "or more characters other than ASCII alphanumerics, '.', '_' and '-'",
        "t.yaml#2 KafkaTopic Orders_V1: metadata.name = 'Orders_V1': a lowercase RFC 1123 subdomain must consist "
        "of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        "character (at most 253 characters); a Kafka topic name that is not one goes in spec.topicName",
        "t.yaml#3 KafkaTopic dots: spec.topicName = '..': Topic name is invalid: '..' is not allowed",
        "t.yaml#4 KafkaTopic offsets: spec.topicName = '__consumer_offsets': Topic __consumer_offsets is a "
        "Kafka internal topic: kafka-topic-operator never creates, changes or deletes it.",
        "t.yaml#5 KafkaTopic bad-cluster: spec.cluster = 'Local_Cluster': must be a KafkaCluster name, or "
        "<namespace>/<name> for a KafkaCluster of another namespace",
    ]


def test_every_bad_config_key_is_reported_in_kafkas_words() -> None:
    config = """\
        config:
          retention.ms: 7d
          min.insync.replicas: 0
          cleanup.policy: [compact, 3.5]
          segment.bytes: null
          retention.hours: 24
          compression.type: lz5
    """
    _write("t.yaml", _topic("orders", config))
    assert _errors(load_manifests(["t.yaml"])) == [
        't.yaml#1 KafkaTopic orders: spec.config.cleanup.policy = ["compact", 3.5]: Invalid value 3.5 for '
        "configuration cleanup.policy: String must be one of: compact, delete",
        "t.yaml#1 KafkaTopic orders: spec.config.compression.type = 'lz5': Invalid value lz5 for configuration "
        "compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
        "t.yaml#1 KafkaTopic orders: spec.config.min.insync.replicas = 0: Invalid value 0 for configuration "
        "min.insync.replicas: Value must be at least 1",
        "t.yaml#1 KafkaTopic orders: spec.config.retention.hours = 24: Unknown topic config name: retention.hours",
        "t.yaml#1 KafkaTopic orders: spec.config.retention.ms = '7d': Invalid value 7d for configuration "
        "retention.ms: Not a number of type LONG",
        "t.yaml#1 KafkaTopic orders: spec.config.segment.bytes = null: Null value not supported for topic "
        "configs: segment.bytes",
    ]


def test_a_cross_key_config_conflict_is_reported_once_the_keys_are_valid() -> None:
    _write("t.yaml", _topic("orders", "config: {min.compaction.lag.ms: 10, max.compaction.lag.ms: 5}"))
    assert _errors(load_manifests(["t.yaml"])) == [
        "t.yaml#1 KafkaTopic orders: spec.config: conflict topic config setting min.compaction.lag.ms (10) > "
        "max.compaction.lag.ms (5)"
    ]


def test_replica_assignments_must_agree_with_the_counts_and_kafkas_rules() -> None:
    _write(
        "t.yaml",
        _topic("short", "replicaAssignment: [[0, 1], [1, 2]]"),
        _topic("thin", "replicaAssignment: [[0, 1], [1], [2]]"),
        _topic("twice", "replicaAssignment: [[0, 1], [1, 1], [2, 0]]"),
        _topic("negative", "replicaAssignment: [[0, 1], [1, -2], [2, 0]]"),
    )
    assert _errors(load_manifests(["t.yaml"])) == [
        "t.yaml#1 KafkaTopic short: spec.replicaAssignment = [[0, 1], [1, 2]]: replicaAssignment has 2 entries "
        "but spec.partitions is 3: give one list of broker ids per partition",
        "t.yaml#2 KafkaTopic thin: spec.replicaAssignment = [[0, 1], [1], [2]]: partitions 1, 2 do not list "
        "spec.replicas (2) broker ids",
        "t.yaml#3 KafkaTopic twice: spec.replicaAssignment = [[0, 1], [1, 1], [2, 0]]: Duplicate replica "
        "assignment found: Map(0 -> List(0, 1), 1 -> List(1, 1), 2 -> List(2, 0))",
        "t.yaml#4 KafkaTopic negative: spec.replicaAssignment = [[0, 1], [1, -2], [2, 0]]: Broker id -2 in "
        "partition 1 is negative; broker ids are 0 or greater.",
        "t.yaml#4 KafkaTopic negative: spec.replicaAssignment[1][1] = -2: must be at least 0",
    ]


def test_a_topic_outside_the_clusters_prefixes_is_rejected() -> None:
    limited = CLUSTER.rstrip() + "\n  allowedTopicPrefixes: [payments., orders]\n"
    _write("t.yaml", limited, _topic("orders-eu"), _topic("clicks"))
    manifests = load_manifests(["t.yaml"])
    assert [t.name for t in manifests.topics] == ["orders-eu"]
    assert _errors(manifests) == [
        "t.yaml#3 KafkaTopic clicks: metadata.name = 'clicks': Topic clicks is outside the topic prefixes "
        "cluster local allows: payments., orders."
    ]


def test_unreadable_input_is_reported_per_file_and_the_rest_still_loads() -> None:
    _write("broken.yaml", _topic("orders"), "spec: [unclosed\n")
    _write("good.yaml", _topic("payments"))
    manifests = load_manifests(["missing.yaml", "broken.yaml", "good.yaml"])
    assert [t.name for t in manifests.topics] == ["orders", "payments"]
    assert _errors(manifests) == [
        "missing.yaml: no such file or directory",
        "broken.yaml#2: not valid YAML: did not find expected ',' or ']' (line 11, column 1) while parsing a "
        "flow sequence (line 10, column 7)",
    ]


def test_an_unknown_kto_dev_version_or_kind_is_an_error() -> None:
    _write(
        "t.yaml",
        _topic("orders").replace("v1alpha1", "v1beta1"),
        "apiVersion: kto.dev/v1alpha1\nkind: KafkaUser\n",
    )
    assert _errors(load_manifests(["t.yaml"])) == [
        "t.yaml#1 KafkaTopic orders: apiVersion = 'kto.dev/v1beta1': kto.dev serves KafkaTopic and KafkaCluster "
        "in kto.dev/v1alpha1",
        "t.yaml#2 KafkaUser: kind = 'KafkaUser': kto.dev serves the kinds KafkaTopic and KafkaCluster only (kinds "
        "are case-sensitive)",
    ]


def test_long_values_are_shortened_in_messages() -> None:
    assignment = [[0, 1]] * 40
    _write("t.yaml", _topic("orders", f"replicaAssignment: {assignment}"))
    (error,) = load_manifests(["t.yaml"]).errors
    assert error.value == assignment
    assert str(error) == (
        "t.yaml#1 KafkaTopic orders: spec.replicaAssignment = [[0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], "
        "[0, 1], [0, 1], [0, 1], [0, ...: replicaAssignment has 40 entries but spec.partitions is 3: give one "
        "list of broker ids per partition"
    )


def test_a_missing_field_has_no_value() -> None:
    _write("t.yaml", "apiVersion: kto.dev/v1alpha1\nkind: KafkaTopic\nmetadata: {}\nspec: {cluster: local}\n")
    manifests = load_manifests(["t.yaml"])
    assert {e.field_path: e.value for e in manifests.errors} == {
        "metadata.name": MISSING,
        "spec.partitions": MISSING,
        "spec.replicas": MISSING,
    }
    assert _errors(manifests)[0] == "t.yaml#1 KafkaTopic: metadata.name: required field is missing"


# ---------------------------------------------------------------------------------------------------------------
# Conflicts.


def test_two_declarations_of_one_topic_are_a_conflict_naming_both_places() -> None:
    _write("a.yaml", CLUSTER, _topic("orders"), _topic("payments"))
    _write("b.yaml", _topic("orders-again", "topicName: orders"))
    manifests = load_manifests(["a.yaml", "b.yaml"])
    assert [t.name for t in manifests.topics] == ["payments"]
    assert _errors(manifests) == [
        "a.yaml#2 KafkaTopic orders: metadata.name = 'orders': topic orders of cluster local is declared more "
        "than once: at a.yaml#2 and b.yaml#1",
        "b.yaml#1 KafkaTopic orders-again: spec.topicName = 'orders': topic orders of cluster local is declared "
        "more than once: at a.yaml#2 and b.yaml#1",
    ]


def test_the_same_topic_name_in_two_clusters_is_no_conflict() -> None:
    _write("t.yaml", _topic("orders", cluster="eu"), _topic("orders", cluster="us"))
    assert [t.cluster for t in load_manifests(["t.yaml"]).topics] == ["eu", "us"]


def test_names_that_collide_in_kafka_are_a_conflict() -> None:
    _write(
        "t.yaml", _topic("orders-v1", "topicName: orders.v1"), _topic("orders-v1-b", "topicName: orders_v1")
    )
    manifests = load_manifests(["t.yaml"])
    assert manifests.topics == ()
    assert _errors(manifests) == [
        "t.yaml#1 KafkaTopic orders-v1: spec.topicName = 'orders.v1': Topic 'orders.v1' collides with existing "
        "topics: orders_v1 (declared at t.yaml#2; Kafka's metric names do not tell '.' from '_')",
        "t.yaml#2 KafkaTopic orders-v1-b: spec.topicName = 'orders_v1': Topic 'orders_v1' collides with existing "
        "topics: orders.v1 (declared at t.yaml#1; Kafka's metric names do not tell '.' from '_')",
    ]


def test_two_kafkaclusters_of_one_name_are_a_conflict() -> None:
    _write("a.yaml", CLUSTER)
    _write("b.yaml", CLUSTER.replace("  name: local", "  name: local\n  namespace: other"))
    manifests = load_manifests(["a.yaml", "b.yaml"])
    assert manifests.clusters == ()
    assert _errors(manifests) == [
        "a.yaml#1 KafkaCluster local: metadata.name = 'local': KafkaCluster local is declared more than once: "
        "at a.yaml#1 and b.yaml#1",
        "b.yaml#1 KafkaCluster other/local: metadata.name = 'local': KafkaCluster local is declared more than "
        "once: at a.yaml#1 and b.yaml#1",
    ]


# ---------------------------------------------------------------------------------------------------------------
# Other kinds.


def test_documents_of_other_kinds_are_ignored_with_a_warning() -> None:
    _write(
        "mixed.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n",
        "apiVersion: kafka.strimzi.io/v1beta2\nkind: Kafka\nmetadata: {name: my-cluster}\n",
        "just: values\n",
        "- a\n- list\n",
        _topic("orders"),
    )
    manifests = load_manifests(["mixed.yaml"])
    assert manifests.errors == ()
    assert [t.name for t in manifests.topics] == ["orders"]
    assert [str(w) for w in manifests.warnings] == [
        "mixed.yaml#1 ConfigMap settings: ignored: v1 ConfigMap is not a topic or cluster declaration",
        "mixed.yaml#2 Kafka my-cluster: ignored: kafka.strimzi.io/v1beta2 Kafka is not a topic or cluster "
        "declaration",
        "mixed.yaml#3: not a Kubernetes object (no apiVersion or kind) nor a topicctl topic file: ignored",
        "mixed.yaml#4: not a Kubernetes object (no apiVersion or kind) nor a topicctl topic file: ignored",
        "mixed.yaml#5 KafkaTopic orders: KafkaCluster local is not among the documents read: topic configs are "
        "checked against Kafka 3.4 and no topic prefix limit applies",
    ]


def test_a_directory_without_manifests_gives_a_warning() -> None:
    Path("empty/sub").mkdir(parents=True)
    Path("empty/sub/readme.md").write_text("no manifests here")
    manifests = load_manifests(["empty"])
    assert manifests.errors == ()
    assert [str(w) for w in manifests.warnings] == ["empty: no *.yaml or *.yml files in this directory"]
