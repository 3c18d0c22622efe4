"""The admission webhook's settings, server and registration, without an API server (the real one is in
tests/real/test_tenants_on_a_real_apiserver.py): a bad setting names its variable, the certificate an API server
will be given is valid for the names it calls, a Service is what a cluster's API server is pointed at, and the
failure policy reaches kopf's configuration.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import ssl
from pathlib import Path
from typing import Any

import kopf
import pytest
from cryptography import x509

from topic_operator.k8s.handlers import build_kopf_settings, build_registry
from topic_operator.k8s.kafkatopics.admission import TenancyWebhookServer, webhook_server
from topic_operator.k8s.process.settings import OperatorSettings, SettingsError, settings_from_env

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        (
            {"KTO_WEBHOOK_FAILURE_POLICY": "Sometimes"},
            "KTO_WEBHOOK_FAILURE_POLICY must be one of Ignore, Fail",
        ),
        ({"KTO_WEBHOOK_SERVICE": "just-a-name"}, "KTO_WEBHOOK_SERVICE must be <namespace>/<name>"),
        ({"KTO_WEBHOOK_PORT": "70000"}, "KTO_WEBHOOK_PORT must be a port"),
        ({"KTO_WEBHOOK_PORT": "many"}, "KTO_WEBHOOK_PORT='many' is not a valid int"),
    ],
)
def test_a_bad_webhook_setting_names_its_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        settings_from_env(env)


def test_the_certificate_names_every_address_it_is_called_at(tmp_path: Path) -> None:
    certificate, key = TenancyWebhookServer.build_certificate(
        ["127.0.0.1", "0.0.0.0", "kto-webhook.kafka.svc", "127.0.0.1"]
    )
    parsed = x509.load_pem_x509_certificate(certificate)
    names = parsed.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1")
    ]  # 0.0.0.0 left out
    assert names.get_values_for_type(x509.DNSName) == ["kto-webhook.kafka.svc"]
    (tmp_path / "tls.crt").write_bytes(certificate)
    (tmp_path / "tls.key").write_bytes(key)
    context = ssl.create_default_context(purpose=ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")  # a server can serve with it
    client = ssl.create_default_context(cadata=certificate.decode())  # and a client trusts it as its own CA
    assert client.cert_store_stats()["x509_ca"] == 1


async def _first_config(server: TenancyWebhookServer) -> Any:
    async def never(*_: Any, **__: Any) -> Any:  # pragma: no cover - no request is made
        raise AssertionError("no admission request expected")

    async with server:
        async for config in server(never):
            return config
    return None


def test_outside_a_cluster_the_api_server_is_given_a_url_and_the_ca_bundle() -> None:
    settings = OperatorSettings(webhook_port=0, webhook_listen="127.0.0.1", webhook_host="127.0.0.1")
    config = asyncio.run(_first_config(webhook_server(settings)))
    assert config["url"].startswith("https://127.0.0.1:")
    bundle = base64.b64decode(config["caBundle"])
    assert x509.load_pem_x509_certificate(bundle).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )


def test_in_a_cluster_the_api_server_is_given_the_service() -> None:
    settings = OperatorSettings(webhook_listen="127.0.0.1", webhook_service="kto/kto-webhook")
    config = asyncio.run(_first_config(webhook_server(settings)))
    assert "url" not in config
    assert config["service"] == {"namespace": "kto", "name": "kto-webhook", "port": 443, "path": "/"}
    bundle = x509.load_pem_x509_certificate(base64.b64decode(config["caBundle"]))
    names = bundle.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "kto-webhook.kto.svc" in names.get_values_for_type(x509.DNSName)


@pytest.mark.parametrize(("policy", "ignore"), [("Ignore", True), ("Fail", False)])
def test_the_webhook_is_registered_only_when_asked_for_with_its_failure_policy(
    policy: str, ignore: bool
) -> None:
    assert not build_registry(OperatorSettings())._webhooks.get_all_handlers()
    assert build_kopf_settings(OperatorSettings(), priority=0).admission.server is None
    settings = OperatorSettings(webhook_port=9443, webhook_failure_policy=policy)
    (handler,) = build_registry(settings)._webhooks.get_all_handlers()
    assert (handler.id, handler.ignore_failures, sorted(handler.operations or ())) == (
        "tenancy",
        ignore,
        ["CREATE", "UPDATE"],
    )
    kopf_settings = build_kopf_settings(settings, priority=0)
    assert isinstance(kopf_settings.admission.server, kopf.WebhookServer)
    assert kopf_settings.admission.managed == "kafka-topic-operator.kto.dev"
