"""Every topic config key of a KRaft line, judged by the real broker and by the product: Kafka 3.9 in KRaft mode
and Kafka 4.1, the brokers decide.

Each case of ``harness.config_cases`` (about 500 a line: every key's bounds and their neighbours, Java's
spellings, invalid forms, combinations across keys) goes to the brokers as CreateTopics with ``validate_only``
(the KRaft controller runs Kafka's own checks and writes nothing), and as IncrementalAlterConfigs with
``validate_only`` of an existing topic; and to the product as ``kto plan --bootstrap-server`` takes it: the
manifest loader, then a plan against the cluster as read. Each twice: with ``kafkaVersion`` declared as the
brokers' line, and with none, as a new user writes a KafkaCluster, where the release is the brokers' own answer.

What the product accepts the brokers must accept. What it refuses and the brokers accept must be a refusal it
marks stricter than Kafka. Each run prints its counts (``-s`` shows them).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from harness.config_cases import cases_for
from harness.kafka_clients import admin_client
from harness.kraft_cluster import KRaftCluster
from harness.waiting import eventually
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import connected
from topic_operator.admin.store import AdminStore
from topic_operator.manifests.loader import Manifests, load_objects
from topic_operator.plan import TopicPlan, plan_topic
from topic_operator.reconcile import Reconciler

pytestmark = pytest.mark.timeout(300)

BATCH = 250
"""Topics per validate-only CreateTopics request: the controller judges each on its own."""

Verdict = tuple[str, bool] | None
"""The product's: None when it would write the case, else its first refusal and whether that is marked stricter
than Kafka."""


@pytest.fixture(scope="module", params=["3.9", "4.1"])
def brokers(request: pytest.FixtureRequest) -> KRaftCluster:
    """The session's KRaft cluster of Kafka 3.9, or of Kafka 4.1."""
    cluster: KRaftCluster = request.getfixturevalue("kraft" if request.param == "3.9" else "kraft_41")
    return cluster


def _line(brokers: KRaftCluster) -> tuple[int, int]:
    major, minor = brokers.distribution.line.split(".")
    return int(major), int(minor)


# -- the brokers' verdicts ------------------------------------------------------------------------------------------


def _brokers_create_verdicts(servers: str, topics: dict[str, dict[str, str]]) -> dict[str, str | None]:
    """Each topic's answer to a validate-only CreateTopics: None when the broker would create it, else its error."""
    answers: dict[str, str | None] = {}
    names = list(topics)
    with admin_client(servers) as admin:
        for start in range(0, len(names), BATCH):
            part = {n: {"num_partitions": 1, "replication_factor": 1, "configs": topics[n]}
                    for n in names[start : start + BATCH]}  # fmt: skip
            response = admin.create_topics(part, validate_only=True, raise_errors=False, timeout_ms=30_000)
            for topic in response["topics"]:
                code = topic["error_code"]
                answers[topic["name"]] = None if code == 0 else f"error {code}: {topic['error_message']}"
    assert set(answers) == set(topics)
    return answers


def _brokers_alter_verdicts(
    servers: str, existing: str, cases: dict[str, dict[str, str]]
) -> dict[str, str | None]:
    """Each case's answer to a validate-only IncrementalAlterConfigs (SET of its keys) of the existing topic."""
    answers: dict[str, str | None] = {}
    with admin_client(servers) as admin:
        for case, config in cases.items():
            resource = ConfigResource(ConfigResourceType.TOPIC, existing, configs=dict(config))
            answered = admin.alter_configs(
                [resource], validate_only=True, raise_on_unknown=False, incremental=True
            )
            result = answered["topic"][existing]
            answers[case] = None if result == "OK" else str(result)
    return answers


# -- the product's verdicts -----------------------------------------------------------------------------------------


def _kafka_cluster(servers: str, declared: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"bootstrapServers": servers}
    if declared is not None:
        spec["kafkaVersion"] = declared
    return {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": "sweep"},
        "spec": spec,
    }


def _loaded(cluster: dict[str, Any], name: str, config: dict[str, str]) -> tuple[Manifests, Verdict]:
    """The manifest loader's reading of one KafkaTopic: what it loaded, and its first refusal or None."""
    topic = {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": {"name": name},
             "spec": {"cluster": "sweep", "partitions": 1, "replicas": 1, "config": config}}  # fmt: skip
    loaded = load_objects([cluster, topic])
    if loaded.errors:
        return loaded, (loaded.errors[0].rule, loaded.errors[0].stricter_than_kafka)
    return loaded, None


def _refusal(topic_plan: TopicPlan) -> Verdict:
    if not topic_plan.rejections:
        return None
    first = topic_plan.rejections[0]
    return first.message, first.stricter_than_kafka


def _product_create_verdicts(
    servers: str, topics: dict[str, dict[str, str]], declared: str | None
) -> dict[str, Verdict]:
    """Each new topic as ``kto plan --bootstrap-server`` judges it: the loader, then one plan of them all."""
    cluster = _kafka_cluster(servers, declared)
    verdicts: dict[str, Verdict] = {}
    specs = []
    clusters = None
    for name, config in topics.items():
        loaded, refused = _loaded(cluster, name, config)
        clusters = loaded.clusters
        if refused is not None:
            verdicts[name] = refused
        else:
            specs.extend(loaded.topics)
    assert clusters
    settings = AdminSettings(bootstrap_servers=tuple(servers.split(",")))
    with connected(settings, deadline=30) as admin:
        planned = Reconciler(AdminStore(admin, settings, deadline=60), clusters[0], deadline=60).plan(specs)
    for topic_plan in planned.topics:
        verdicts[topic_plan.topic] = _refusal(topic_plan)
    assert set(verdicts) == set(topics)
    return verdicts


def _product_alter_verdicts(
    servers: str, existing: str, cases: dict[str, dict[str, str]], declared: str | None
) -> dict[str, Verdict]:
    """Each case declared as the existing topic's config and planned against the cluster as read."""
    cluster = _kafka_cluster(servers, declared)
    settings = AdminSettings(bootstrap_servers=tuple(servers.split(",")))
    with connected(settings, deadline=30) as admin:
        state = AdminStore(admin, settings, deadline=60).read_cluster(topics=[existing])
    assert existing in state.topics
    verdicts: dict[str, Verdict] = {}
    for case, config in cases.items():
        loaded, refused = _loaded(cluster, existing, config)
        if refused is None:
            (spec,) = loaded.topics
            refused = _refusal(plan_topic(spec, state, loaded.clusters[0]))
        verdicts[case] = refused
    return verdicts


# -- the comparison -------------------------------------------------------------------------------------------------


def _compared(
    what: str, configs: dict[str, dict[str, str]], kafka: dict[str, str | None], product: dict[str, Verdict]
) -> None:
    """Print the counts; fail on what the product accepts and the brokers refuse, and on what it alone refuses
    without saying it is stricter than Kafka."""
    accepted = {
        c: {"config": configs[c], "brokers": kafka[c]} for c in configs if product[c] is None and kafka[c]
    }
    refused_alone = {
        c: {"config": configs[c], "kto": verdict[0]}
        for c, verdict in product.items()
        if verdict is not None and kafka[c] is None and not verdict[1]
    }
    stricter = sum(1 for c, v in product.items() if v is not None and kafka[c] is None and v[1])
    refused = sum(verdict is not None for verdict in kafka.values())
    print(f"\n{what}: {len(configs)} cases, {refused} refused by the brokers; mismatches: {len(accepted)} accepted "
          f"that the brokers refuse, {len(refused_alone)} refused that they accept, {stricter} refused as "
          "stricter than Kafka")  # fmt: skip
    assert accepted == {}, json.dumps(accepted, indent=1, ensure_ascii=False)
    assert refused_alone == {}, json.dumps(refused_alone, indent=1, ensure_ascii=False)
    # the cases test the rules: the brokers refuse many and accept many
    assert len(configs) / 5 < refused < len(configs) * 4 / 5, refused


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "from-the-brokers"])
def test_every_topic_config_is_judged_as_the_kraft_brokers_judge_it(
    brokers: KRaftCluster, declared: bool
) -> None:
    line = brokers.distribution.line
    cases = cases_for(_line(brokers))
    prefix = f"sweep-{uuid.uuid4().hex[:6]}"
    topics = {f"{prefix}-{number:04d}": config for number, config in enumerate(cases.values())}
    case_of = dict(zip(topics, cases, strict=True))
    kafka = _brokers_create_verdicts(brokers.bootstrap_servers, topics)
    product = _product_create_verdicts(brokers.bootstrap_servers, topics, line if declared else None)
    _compared(
        f"Kafka {line}, created, {'declared' if declared else 'release from the brokers'}",
        {case_of[t]: c for t, c in topics.items()},
        {case_of[t]: v for t, v in kafka.items()},
        {case_of[t]: v for t, v in product.items()},
    )


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "from-the-brokers"])
def test_every_topic_config_change_is_judged_as_the_kraft_brokers_judge_it(
    brokers: KRaftCluster, declared: bool
) -> None:
    line = brokers.distribution.line
    cases = cases_for(_line(brokers))
    existing = f"sweep-alter-{uuid.uuid4().hex[:6]}"
    with admin_client(brokers.bootstrap_servers) as admin:
        admin.create_topics({existing: {"num_partitions": 1, "replication_factor": 1}})
    eventually(
        lambda: existing in _listed(brokers.bootstrap_servers), timeout=30, what=f"topic {existing} created"
    )
    kafka = _brokers_alter_verdicts(brokers.bootstrap_servers, existing, cases)
    product = _product_alter_verdicts(brokers.bootstrap_servers, existing, cases, line if declared else None)
    _compared(
        f"Kafka {line}, altered, {'declared' if declared else 'release from the brokers'}",
        cases,
        kafka,
        product,
    )


def _listed(servers: str) -> set[str]:
    with admin_client(servers) as admin:
        return set(admin.list_topics())
