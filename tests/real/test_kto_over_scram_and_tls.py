"""``kto --bootstrap-server --command-config`` on a KRaft cluster whose clients must speak SASL_SSL with
SCRAM-SHA-512, as a secured production cluster is set up: the work is done with the right properties, and each
wrong one (a refused password, a CA not trusted, plain text to a TLS port, no broker at all) ends the command
within its deadline in one line saying which, with nothing written and no password shown."""

from __future__ import annotations

import base64
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.kraft_cluster import SECURED_PASSWORD as PASSWORD
from harness.kraft_cluster import KRaftCluster
from harness.kto_objects import KTO_API, kafka_topic, ready, wait_cluster_ready, wait_topic
from harness.kube_client import KubeClient
from harness.operator_process import Operator
from harness.real_apiserver import Credentials, grant_secrets

pytestmark = pytest.mark.timeout(240)

KTO = str(Path(sys.executable).parent / "kto")
REFUSAL_DEADLINE = 60.0


def _properties(path: Path, *, password: str = PASSWORD, protocol: str = "SASL_SSL", ca: Path | None) -> Path:
    lines = [
        f"security.protocol={protocol}",
        "sasl.mechanism=SCRAM-SHA-512",
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="kto" password="{password}";',
    ]
    if ca is not None:
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={ca}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _kto(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KTO, *arguments], capture_output=True, text=True, timeout=90, check=False)


def test_kto_works_over_scram_and_tls(secured: tuple[KRaftCluster, Credentials], tmp_path: Path) -> None:
    cluster, credentials = secured
    name = f"secured-{uuid.uuid4().hex[:6]}"
    manifest = tmp_path / "topics.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kto.dev/v1alpha1",
                "kind": "KafkaTopic",
                "metadata": {"name": name},
                "spec": {
                    "cluster": "secured",
                    "partitions": 3,
                    "replicas": 3,
                    "config": {"retention.ms": "60000"},
                },
            }
        )
    )
    config = _properties(tmp_path / "client.properties", ca=credentials.ca_file)
    reach = ["--bootstrap-server", cluster.client_bootstrap_servers, "--command-config", str(config)]
    applied = _kto(
        "apply", "-f", str(manifest), *reach, "--kafka-version", "3.9", "--yes", "--deadline", "30"
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    described = _kto("describe", name, *reach)
    assert described.returncode == 0, described.stderr
    assert f"Topic: {name}\tTopicId: " in described.stdout
    assert "PartitionCount: 3\tReplicationFactor: 3\tConfigs: retention.ms=60000" in described.stdout
    again = _kto("plan", "-f", str(manifest), *reach, "--kafka-version", "3.9")
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("wrong password", "refused the SASL SCRAM-SHA-512 credentials of user 'kto': "),
        (
            "CA not trusted",
            "failed: KafkaConnectionError: Handshake failed: [SSL: CERTIFICATE_VERIFY_FAILED]",
        ),
        ("plain text to TLS", "check that the servers are up and that they speak SASL_PLAINTEXT with SASL"),
        ("no broker", "no broker of 127.0.0.1:1 answered within 5 s"),
    ],
)
def test_a_wrong_way_in_is_one_line_within_the_deadline(
    secured: tuple[KRaftCluster, Credentials], tmp_path: Path, case: str, words: str
) -> None:
    cluster, credentials = secured
    servers = cluster.client_bootstrap_servers
    config = {
        "wrong password": lambda: _properties(tmp_path / "c", password="not-it", ca=credentials.ca_file),
        "CA not trusted": lambda: _properties(tmp_path / "c", ca=None),
        "plain text to TLS": lambda: _properties(tmp_path / "c", protocol="SASL_PLAINTEXT", ca=None),
        "no broker": lambda: _properties(tmp_path / "c", ca=credentials.ca_file),
    }[case]()
    if case == "no broker":
        servers = "127.0.0.1:1"
    # A refusal is final, so it ends the command when it comes: the deadline is one a loaded machine's first TLS
    # handshake with a cold broker fits in, and the command must end well before it. The other cases have only
    # the deadline to end on.
    refused = case in ("wrong password", "CA not trusted")
    deadline = REFUSAL_DEADLINE if refused else 5.0
    started = time.monotonic()
    failed = _kto(
        "describe",
        "--bootstrap-server",
        servers,
        "--command-config",
        str(config),
        "--deadline",
        f"{deadline:g}",
    )
    took = time.monotonic() - started
    if refused:
        assert took < REFUSAL_DEADLINE / 2, f"a final refusal waited {took:.1f} s, as for the deadline"
    assert failed.returncode == 1
    assert failed.stdout == ""
    (line,) = failed.stderr.splitlines()
    assert line.startswith("kto describe: ")
    assert words in line
    assert "not-it" not in line
    assert PASSWORD not in line


def _secret(namespace: str, name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def test_the_operator_reaches_the_brokers_with_scram_and_tls_from_secrets(
    secured: tuple[KRaftCluster, Credentials],
    kube: KubeClient,
    namespace: str,
    operators: Callable[..., Operator],
) -> None:
    cluster, credentials = secured
    operator = operators(KTO_ZK_CONNECTION_TIMEOUT="5")
    operator.wait_ready()
    grant_secrets(kube, namespace)  # the operator reads Secrets only where a RoleBinding lets it
    kube.create("secrets", _secret(namespace, "kafka-ca", **{"ca.crt": credentials.ca_file.read_text()}))
    kube.create("secrets", _secret(namespace, "kto-user", username="kto", password=PASSWORD))
    kube.create("secrets", _secret(namespace, "wrong-user", username="kto", password="not-it"))

    def declare(name: str, user_secret: str) -> None:
        kube.create(
            "kafkaclusters",
            {
                "apiVersion": KTO_API,
                "kind": "KafkaCluster",
                "metadata": {"namespace": namespace, "name": name},
                "spec": {
                    "bootstrapServers": cluster.client_bootstrap_servers,
                    "kafkaVersion": "3.9",
                    "tls": {"secretName": "kafka-ca"},
                    "sasl": {"mechanism": "SCRAM-SHA-512", "secretName": user_secret},
                },
            },
        )

    declare("main", "kto-user")
    declare("refused", "wrong-user")
    assert ready(wait_cluster_ready(kube, namespace))["reason"] == "Connected"

    # The first refusal may be a connection that timed out on a loaded machine (ClusterUnavailable, retried with
    # the session back-off): wait for what the wrong password means.
    def auth_failed() -> dict[str, Any] | None:
        body: dict[str, Any] = kube.get(KTO_API, "kafkaclusters", namespace, "refused")
        return body if ready(body).get("reason") == "AuthFailed" else None

    refused = kube.wait_for(auth_failed, timeout=90, what=f"KafkaCluster {namespace}/refused AuthFailed")
    assert ready(refused)["status"] == "False"
    assert "refused the SASL SCRAM-SHA-512 credentials of user 'kto'" in ready(refused)["message"]
    assert "not-it" not in ready(refused)["message"]

    topic = f"secured-{uuid.uuid4().hex[:6]}"
    kube.create("kafkatopics", kafka_topic(namespace, topic, partitions=2, replicas=3))
    created = wait_topic(kube, namespace, topic, 1, "Created")
    assert (created["status"]["partitions"], created["status"]["replicas"]) == (2, 3)
    assert "Traceback" not in operator.output()
