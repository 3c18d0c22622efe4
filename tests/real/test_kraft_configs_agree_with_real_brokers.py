"""Every topic config key of a KRaft line, judged by the real broker and by the product: Kafka 3.9 in KRaft mode
and Kafka 4.1, the brokers decide.

Each case of ``harness.config_cases`` (about 500 a line: every key's bounds and their neighbours, Java's
spellings, invalid forms, combinations across keys) goes to the brokers as CreateTopics with ``validate_only``
(the KRaft controller runs Kafka's own checks and writes nothing), and to the product as ``kto plan
--bootstrap-server`` takes it: the manifest loader, then a plan against the cluster as read. Twice: with
``kafkaVersion`` declared as the brokers' line, and with none, as a new user writes a KafkaCluster, where the
release is the brokers' own answer.

What the product accepts the brokers must accept. What it refuses and the brokers accept must be a refusal it
marks stricter than Kafka.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from harness.config_cases import cases_for
from harness.kafka_clients import admin_client
from harness.kraft_cluster import KRaftCluster
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import connected
from topic_operator.admin.store import AdminStore
from topic_operator.manifests.loader import load_objects
from topic_operator.reconcile import Reconciler

pytestmark = pytest.mark.timeout(300)

BATCH = 250
"""Topics per validate-only CreateTopics request: the controller judges each on its own."""


@pytest.fixture(scope="module", params=["3.9", "4.1"])
def brokers(request: pytest.FixtureRequest) -> KRaftCluster:
    """The session's KRaft cluster of Kafka 3.9, or of Kafka 4.1."""
    cluster: KRaftCluster = request.getfixturevalue("kraft" if request.param == "3.9" else "kraft_41")
    return cluster


def _brokers_verdicts(servers: str, topics: dict[str, dict[str, str]]) -> dict[str, str | None]:
    """Each topic's answer: None when the broker would create it, else its error and message."""
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


def _product_verdicts(
    servers: str, topics: dict[str, dict[str, str]], declared: str | None
) -> dict[str, tuple[str, bool] | None]:
    """Each topic's verdict as ``kto plan --bootstrap-server`` reaches it: None when it would be created, else
    the first refusal and whether it is marked stricter than Kafka."""
    spec: dict[str, Any] = {"bootstrapServers": servers}
    if declared is not None:
        spec["kafkaVersion"] = declared
    cluster = {
        "apiVersion": "kto.dev/v1alpha1",
        "kind": "KafkaCluster",
        "metadata": {"name": "sweep"},
        "spec": spec,
    }
    verdicts: dict[str, tuple[str, bool] | None] = {}
    specs = []
    clusters = None
    for name, config in topics.items():
        topic = {"apiVersion": "kto.dev/v1alpha1", "kind": "KafkaTopic", "metadata": {"name": name},
                 "spec": {"cluster": "sweep", "partitions": 1, "replicas": 1, "config": config}}  # fmt: skip
        loaded = load_objects([cluster, topic])
        clusters = loaded.clusters
        if loaded.errors:
            first = loaded.errors[0]
            verdicts[name] = (first.rule, first.stricter_than_kafka)
        else:
            specs.extend(loaded.topics)
    assert clusters
    settings = AdminSettings(bootstrap_servers=tuple(servers.split(",")))
    with connected(settings, deadline=30) as admin:
        planned = Reconciler(AdminStore(admin, settings, deadline=60), clusters[0], deadline=60).plan(specs)
    for topic_plan in planned.topics:
        if topic_plan.rejections:
            first_error = topic_plan.rejections[0]
            verdicts[topic_plan.topic] = (first_error.message, first_error.stricter_than_kafka)
        else:
            verdicts[topic_plan.topic] = None
    assert set(verdicts) == set(topics)
    return verdicts


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "from-the-brokers"])
def test_every_topic_config_is_judged_as_the_kraft_brokers_judge_it(
    brokers: KRaftCluster, declared: bool
) -> None:
    line = brokers.distribution.line
    cases = cases_for(tuple(int(part) for part in line.split(".")))  # type: ignore[arg-type]
    prefix = f"sweep-{uuid.uuid4().hex[:6]}"
    topics = {f"{prefix}-{number:04d}": config for number, config in enumerate(cases.values())}
    case_of = dict(zip(topics, cases, strict=True))
    kafka = _brokers_verdicts(brokers.bootstrap_servers, topics)
    product = _product_verdicts(brokers.bootstrap_servers, topics, line if declared else None)

    wrongly_accepted = {
        case_of[t]: {"config": topics[t], "brokers": kafka[t]}
        for t in topics
        if product[t] is None and kafka[t]
    }
    wrongly_refused = {
        case_of[t]: {"config": topics[t], "kto": verdict[0]}
        for t, verdict in product.items()
        if verdict is not None and kafka[t] is None and not verdict[1]
    }
    assert wrongly_accepted == {}, json.dumps(wrongly_accepted, indent=1, ensure_ascii=False)
    assert wrongly_refused == {}, json.dumps(wrongly_refused, indent=1, ensure_ascii=False)
    # the cases test the rules: both sides refuse many and accept many
    refused = sum(verdict is not None for verdict in kafka.values())
    assert len(topics) / 5 < refused < len(topics) * 4 / 5, refused
