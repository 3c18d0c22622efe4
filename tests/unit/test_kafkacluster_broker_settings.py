"""A KafkaCluster declared with ``bootstrapServers`` (and ``tls``, ``sasl`` from Secrets) becomes the Admin client's
settings; what is missing or refused is named, and the fingerprint changes exactly when a new client is needed."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from topic_operator.access.address import spec_identity
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.k8s.conditions import Reason
from topic_operator.k8s.kafkaclusters.cluster_config import (
    ClusterConfigError,
    cluster_config,
    reaches_brokers,
    secret_names,
)


def _cluster(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "platform", "name": "events"},
        "spec": {"bootstrapServers": "b-0:9093,b-1:9093", **spec},
    }


def _secret(**data: str) -> dict[str, Any]:
    return {"data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


SASL = {"mechanism": "SCRAM-SHA-512", "secretName": "kto-user"}
TLS = {"secretName": "kafka-ca"}


def test_scram_over_tls_from_secrets(tmp_path: Path) -> None:
    body = _cluster(sasl=SASL, tls=TLS)
    assert secret_names(body) == ["kafka-ca", "kto-user"]
    secrets = {"kafka-ca": _secret(**{"ca.crt": "PEM"}), "kto-user": _secret(username="kto", password="pw")}
    config = cluster_config(body, secrets, material_dir=tmp_path, connection_timeout=5)
    settings = config.settings
    assert isinstance(settings, AdminSettings)
    assert (settings.security_protocol, settings.sasl_mechanism, settings.username, settings.password) == (
        "SASL_SSL", "SCRAM-SHA-512", "kto", "pw",
    )  # fmt: skip
    assert settings.bootstrap_servers == ("b-0:9093", "b-1:9093")
    assert Path(str(settings.ca_file)).read_text() == "PEM"
    assert oct(Path(str(settings.ca_file)).stat().st_mode & 0o777) == "0o600"
    assert settings.client_id == "kafka-topic-operator/platform/events"


@pytest.mark.parametrize(
    ("spec", "protocol"),
    [({}, "PLAINTEXT"), ({"tls": TLS}, "SSL"), ({"sasl": SASL}, "SASL_PLAINTEXT"), ({"sasl": SASL, "tls": TLS}, "SASL_SSL")],
)  # fmt: skip
def test_the_security_protocol_follows_what_is_declared(
    tmp_path: Path, spec: dict[str, Any], protocol: str
) -> None:
    secrets = {"kafka-ca": _secret(**{"ca.crt": "PEM"}), "kto-user": _secret(username="u", password="p")}
    config = cluster_config(_cluster(**spec), secrets, material_dir=tmp_path, connection_timeout=5)
    assert isinstance(config.settings, AdminSettings)
    assert config.settings.security_protocol == protocol


def test_a_missing_secret_or_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ClusterConfigError, match="Secret platform/kto-user does not exist") as missing:
        cluster_config(_cluster(sasl=SASL), {"kto-user": None}, material_dir=tmp_path, connection_timeout=5)
    assert missing.value.reason is Reason.SECRET_MISSING
    with pytest.raises(ClusterConfigError, match="Secret kto-user has no key password"):
        cluster_config(
            _cluster(sasl=SASL),
            {"kto-user": _secret(username="u")},
            material_dir=tmp_path,
            connection_timeout=5,
        )


def test_a_new_password_needs_a_new_client_and_a_policy_change_does_not(tmp_path: Path) -> None:
    def fingerprint(password: str, **spec: Any) -> str:
        body = _cluster(sasl=SASL, **spec)
        secrets = {"kto-user": _secret(username="u", password=password)}
        return cluster_config(body, secrets, material_dir=tmp_path, connection_timeout=5).fingerprint

    assert fingerprint("a") != fingerprint("b")
    assert fingerprint("a") == fingerprint("a", allowDelete=True)


def test_with_both_zookeeper_and_brokers_today_s_zookeeper_path_is_kept() -> None:
    both = _cluster(zookeeper={"connect": "zk:2181/kafka"})
    assert not reaches_brokers(both)
    assert reaches_brokers(_cluster())


def test_a_kraft_cluster_s_identity_is_its_brokers_in_any_order() -> None:
    assert (
        spec_identity("", "B-1:9093, b-0:9093")
        == spec_identity("", "b-0:9093,b-1:9093")
        == "brokers:b-0:9093,b-1:9093"
    )
    assert spec_identity("zk:2181/kafka", "b-0:9093") != spec_identity("", "b-0:9093")
