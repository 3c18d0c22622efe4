"""The CRDs in crds/ are what the API server needs (structural schemas) and what users read (`kubectl explain`,
`kubectl get`), agree with the model, do not clash with Strimzi's names, and accept the examples."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from topic_operator.kafka.assignment import RackAwareMode
from topic_operator.manifests.loader import load_manifests
from topic_operator.model import ApplyMode, DeletionPolicy, ReassignmentPolicy

REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / "crds"
PACKAGE_CRDS = REPO / "operator" / "topic_operator" / "crd"
EXAMPLES = REPO / "manifests" / "examples"

# Every name Strimzi's CRDs register (plural, singular, short names, categories), from its install files.
STRIMZI_NAMES = frozenset(
    {
        *("kafkas", "kafka", "k"),
        *("kafkatopics", "kafkatopic", "kt"),
        *("kafkausers", "kafkauser", "ku"),
        *("kafkaconnects", "kafkaconnect", "kc"),
        *("kafkaconnectors", "kafkaconnector", "kctr"),
        *("kafkamirrormakers", "kafkamirrormaker", "kmm"),
        *("kafkamirrormaker2s", "kafkamirrormaker2", "kmm2"),
        *("kafkabridges", "kafkabridge", "kb"),
        *("kafkarebalances", "kafkarebalance", "kr"),
        *("kafkanodepools", "kafkanodepool", "knp"),
        *("strimzipodsets", "strimzipodset", "sps"),
        "strimzi",
    }
)


def _crd(name: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((CRDS / name).read_text())
    return document


TOPIC = _crd("kafkatopics.kto.dev.yaml")
CLUSTER = _crd("kafkaclusters.kto.dev.yaml")
BOTH = pytest.mark.parametrize("crd", [TOPIC, CLUSTER], ids=["KafkaTopic", "KafkaCluster"])


def _version(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    (version,) = crd["spec"]["versions"]
    return version


def _schema(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    schema: Mapping[str, Any] = _version(crd)["schema"]["openAPIV3Schema"]
    return schema


def _nodes(node: Mapping[str, Any], path: str = "<root>") -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from _nodes(child, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), Mapping):
            yield from _nodes(node[key], f"{path}[{key}]")


def test_the_package_copy_of_the_crds_is_identical_to_crds_dir() -> None:
    """The loader reads the package copy (so an installed wheel has it); crds/ is the source of truth."""
    source = {p.name: p.read_bytes() for p in CRDS.glob("*.yaml")}
    copy = {p.name: p.read_bytes() for p in PACKAGE_CRDS.glob("*.yaml")}
    assert sorted(source) == ["kafkaclusters.kto.dev.yaml", "kafkatopics.kto.dev.yaml"]
    assert copy == source, "run: cp crds/*.yaml operator/topic_operator/crd/"


@BOTH
def test_crd_is_namespaced_v1alpha1_of_kto_dev_with_a_status_subresource(crd: dict[str, Any]) -> None:
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    spec = crd["spec"]
    assert spec["group"] == "kto.dev"
    assert spec["scope"] == "Namespaced"
    assert crd["metadata"]["name"] == f"{spec['names']['plural']}.kto.dev"
    version = _version(crd)
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}


@BOTH
def test_metadata_is_only_typed(crd: dict[str, Any]) -> None:
    """The API server allows nothing under metadata but restrictions on name and generateName: a description
    there made a real API server refuse both CRDs (the full rule set is in tests/chart/, structural_schema)."""
    assert _schema(crd)["properties"]["metadata"] == {"type": "object"}


@BOTH
def test_every_field_has_a_description_for_kubectl_explain(crd: dict[str, Any]) -> None:
    """Except metadata, which may carry none (kubectl explain describes ObjectMeta from the API server's own)."""
    undescribed = [
        path
        for path, node in _nodes(_schema(crd))
        if not node.get("description", "").strip() and path != "<root>.metadata"
    ]
    assert undescribed == []


def test_kafkatopic_printer_columns() -> None:
    columns = [
        (c["name"], c["type"], c["jsonPath"], c.get("priority", 0))
        for c in _version(TOPIC)["additionalPrinterColumns"]
    ]
    assert columns == [
        ("Cluster", "string", ".spec.cluster", 0),
        ("Topic", "string", ".status.topicName", 0),
        ("Partitions", "integer", ".spec.partitions", 0),
        ("Replicas", "integer", ".spec.replicas", 0),
        ("Ready", "string", '.status.conditions[?(@.type=="Ready")].status', 0),
        ("Drift", "integer", ".status.driftCount", 0),
        ("Reason", "string", '.status.conditions[?(@.type=="Ready")].reason', 1),
        ("Age", "date", ".metadata.creationTimestamp", 0),
    ]


def test_kafkacluster_printer_columns() -> None:
    columns = [
        (c["name"], c["type"], c["jsonPath"], c.get("priority", 0))
        for c in _version(CLUSTER)["additionalPrinterColumns"]
    ]
    assert columns == [
        ("Connect", "string", ".spec.zookeeper.connect", 0),
        ("Connected", "boolean", ".status.connected", 0),
        ("Writes", "string", ".status.writes.through", 0),
        ("Brokers", "integer", ".status.brokerCount", 0),
        ("Topics", "integer", ".status.topics.managed", 0),
        ("Unmanaged", "integer", ".status.topics.unmanaged", 1),
        ("Age", "date", ".metadata.creationTimestamp", 0),
    ]


@BOTH
def test_printer_columns_point_at_fields_the_schema_has_with_that_type(crd: dict[str, Any]) -> None:
    for column in _version(crd)["additionalPrinterColumns"]:
        filtered = re.sub(r"\[\?\(.*?\)\]", "[]", column["jsonPath"])
        steps = filtered.lstrip(".").split(".")
        if steps[0] == "metadata":
            continue
        node = _schema(crd)
        for step in steps:
            node = node["properties"][step.split("[")[0]]
            if "[" in step:
                node = node["items"]
        if "[" not in filtered:
            assert node["type"] == column["type"], column["name"]
        else:
            assert node["type"] == "string" == column["type"], column["name"]
        assert column["description"]


def test_short_names_and_categories() -> None:
    assert TOPIC["spec"]["names"] == {
        "kind": "KafkaTopic",
        "listKind": "KafkaTopicList",
        "plural": "kafkatopics",
        "singular": "kafkatopic",
        "shortNames": ["ktopic"],
        "categories": ["kto"],
    }
    assert CLUSTER["spec"]["names"] == {
        "kind": "KafkaCluster",
        "listKind": "KafkaClusterList",
        "plural": "kafkaclusters",
        "singular": "kafkacluster",
        "shortNames": ["kcluster"],
        "categories": ["kto"],
    }


@BOTH
def test_short_names_and_categories_do_not_clash_with_strimzi(crd: dict[str, Any]) -> None:
    """kubectl expands a category before it resolves a resource name, so a category named like one of
    Strimzi's resources (`kafka` is Strimzi's Kafka) would hijack `kubectl get kafka`: none may be."""
    names = crd["spec"]["names"]
    ours = {*names["shortNames"], *names["categories"]}
    assert ours & STRIMZI_NAMES == set()
    assert "kafka" not in names["categories"]


def test_enums_and_defaults_agree_with_the_model() -> None:
    spec = _schema(TOPIC)["properties"]["spec"]["properties"]
    for field, enum, default in (
        ("rackAwareMode", RackAwareMode, RackAwareMode.ENFORCED),
        ("deletionPolicy", DeletionPolicy, DeletionPolicy.RETAIN),
        ("mode", ApplyMode, ApplyMode.APPLY),
    ):
        assert spec[field]["enum"] == [member.value for member in enum], field
        assert spec[field]["default"] == default.value, field
    assert _schema(TOPIC)["properties"]["spec"]["required"] == ["cluster", "partitions", "replicas"]
    cluster_spec = _schema(CLUSTER)["properties"]["spec"]
    assert "required" not in cluster_spec
    assert cluster_spec["anyOf"] == [{"required": ["zookeeper"]}, {"required": ["bootstrapServers"]}]
    assert cluster_spec["properties"]["allowDelete"]["default"] is False
    # no default: the API server would write one into every KafkaCluster, and the brokers' own answer (the
    # release of a cluster that does not declare one) would never be taken
    assert "default" not in cluster_spec["properties"]["kafkaVersion"]
    reassignment = cluster_spec["properties"]["reassignment"]["properties"]
    assert reassignment["enabled"]["default"] is ReassignmentPolicy().enabled is False
    assert "default" not in reassignment["throttleBytesPerSecond"]  # absent: no throttle
    assert ReassignmentPolicy().throttle_bytes_per_second is None


def _cluster_with(reassignment: object) -> dict[str, Any]:
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": "c"},
        "spec": {"zookeeper": {"connect": "zk:2181/kafka"}, "reassignment": reassignment},
    }


@pytest.mark.parametrize(
    "reassignment",
    [{}, {"enabled": False}, {"enabled": True, "throttleBytesPerSecond": 10485760},
     {"throttleBytesPerSecond": 1}, {"throttleBytesPerSecond": 2**63 - 1024}],
    ids=["empty", "disabled", "throttled", "one", "largest"],
)  # fmt: skip
def test_the_cluster_schema_accepts_a_reassignment_setting(reassignment: dict[str, Any]) -> None:
    validator = jsonschema.Draft4Validator(_schema(CLUSTER))
    assert list(validator.iter_errors(_cluster_with(reassignment))) == []


@pytest.mark.parametrize(
    ("reassignment", "path", "keyword"),
    [
        ({"enabled": "yes"}, ["spec", "reassignment", "enabled"], "type"),
        ({"throttleBytesPerSecond": 0}, ["spec", "reassignment", "throttleBytesPerSecond"], "minimum"),
        ({"throttleBytesPerSecond": -5}, ["spec", "reassignment", "throttleBytesPerSecond"], "minimum"),
        ({"throttleBytesPerSecond": "fast"}, ["spec", "reassignment", "throttleBytesPerSecond"], "type"),
        ({"throttleBytesPerSecond": True}, ["spec", "reassignment", "throttleBytesPerSecond"], "type"),
        ({"throttleBytesPerSecond": 2.5}, ["spec", "reassignment", "throttleBytesPerSecond"], "type"),
        ({"throttleBytesPerSecond": 2**63}, ["spec", "reassignment", "throttleBytesPerSecond"], "maximum"),
        ("on", ["spec", "reassignment"], "type"),
    ],
    ids=["enabled-yes", "throttle-0", "throttle-negative", "throttle-fast", "throttle-bool", "throttle-float",
         "throttle-past-long", "not-a-mapping"],
)  # fmt: skip
def test_the_cluster_schema_refuses_a_bad_reassignment_setting(
    reassignment: object, path: list[str], keyword: str
) -> None:
    validator = jsonschema.Draft4Validator(_schema(CLUSTER))
    errors = list(validator.iter_errors(_cluster_with(reassignment)))
    assert [(list(e.absolute_path), e.validator) for e in errors] == [(path, keyword)]


def test_the_reassignment_descriptions_say_what_it_does() -> None:
    node = _schema(CLUSTER)["properties"]["spec"]["properties"]["reassignment"]
    assert node["type"] == "object"
    enabled, throttle = node["properties"]["enabled"], node["properties"]["throttleBytesPerSecond"]
    assert enabled["type"] == "boolean"
    assert "/admin/reassign_partitions" in enabled["description"]
    assert "one reassignment at a time per cluster" in enabled["description"]
    assert (throttle["type"], throttle["format"], throttle["minimum"], throttle["maximum"]) == (
        "integer",
        "int64",
        1,
        2**63 - 1024,  # the largest below Long.MAX_VALUE that the API server's float64 bounds hold exactly
    )
    for words in (
        "leader.replication.throttled.rate",
        "follower.replication.throttled.rate",
        "removed",
        "--throttle",
    ):
        assert words in " ".join(throttle["description"].split()), words


def test_config_values_may_be_strings_numbers_booleans_or_lists() -> None:
    config = _schema(TOPIC)["properties"]["spec"]["properties"]["config"]
    assert config["type"] == "object"
    assert config["additionalProperties"]["x-kubernetes-preserve-unknown-fields"] is True
    validator = jsonschema.Draft4Validator(_schema(TOPIC))
    document = {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": "t"},
        "spec": {
            "cluster": "c",
            "partitions": 1,
            "replicas": 1,
            "config": {"a": "x", "b": 1, "c": 0.5, "d": True, "e": ["compact", "delete"]},
        },
    }
    assert list(validator.iter_errors(document)) == []


def _example_documents() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for index, document in enumerate(yaml.safe_load_all(path.read_text()), start=1):
            found.append((f"{path.name}#{index}", document))
    return found


@pytest.mark.parametrize(
    ("where", "document"), _example_documents(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_example_validates_against_its_crd(where: str, document: dict[str, Any]) -> None:
    if document["apiVersion"].startswith("kafka.strimzi.io/"):
        assert document["kind"] == "KafkaTopic"
        return
    crd = {"KafkaTopic": TOPIC, "KafkaCluster": CLUSTER}[document["kind"]]
    assert document["apiVersion"] == "kto.dev/v1alpha1"
    errors = [error.message for error in jsonschema.Draft4Validator(_schema(crd)).iter_errors(document)]
    assert errors == [], where


def test_examples_have_a_cluster_several_teams_a_compacted_topic_and_a_manual_assignment() -> None:
    manifests = load_manifests([EXAMPLES])
    assert manifests.errors == ()
    assert manifests.warnings == ()
    assert [c.name for c in manifests.clusters] == ["local"]
    assert manifests.clusters[0].zookeeper_connect == "127.0.0.1:2181/kafka"
    topics = {t.name: t for t in manifests.topics}
    teams = {name.replace("_", ".").replace("-", ".").split(".")[0] for name in topics}
    assert teams == {"analytics", "inventory", "orders", "payments"}
    assert any(t.config.get("cleanup.policy") == "compact" for t in topics.values())
    manual = topics["orders_audit"].replica_assignment
    assert manual is not None
    racks = {broker: "abc"[broker % 3] for broker in range(6)}
    assert all(len({racks[b] for b in replicas}) == 3 for replicas in manual.values())
    assert sorted(replicas[0] for replicas in manual.values()) == [0, 1, 2, 3, 4, 5]
    assert "inventory-strimzi.yaml#1" in topics["inventory.stock-levels"].source
