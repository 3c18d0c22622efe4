"""How to reach a cluster's brokers: the bootstrap servers and the client properties of Kafka's own tools.

``kafka-topics.sh --bootstrap-server HOST:PORT --command-config FILE`` is how a Kafka user points a tool at a
secured cluster; ``kto`` takes the same two flags, and a KafkaCluster the same facts from its spec and Secrets.
The properties read are the ones a topic tool needs: ``security.protocol``, ``sasl.mechanism`` with
``sasl.jaas.config`` (PLAIN or SCRAM), and PEM trust and key stores (``ssl.truststore.*``, ``ssl.keystore.*``,
``ssl.endpoint.identification.algorithm``). A Java key store (JKS, PKCS12) cannot be read here and is refused by
name; any other property is returned as ignored, for the caller to warn about as Kafka's clients do.

Pure: no I/O but reading the properties file the user named.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from topic_operator.admin.errors import AdminSettingsError

__all__ = [
    "SASL_MECHANISMS",
    "SECURITY_PROTOCOLS",
    "AdminSettings",
    "parse_bootstrap_servers",
    "read_properties",
    "settings_from_properties",
]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""Kafka's ``security.protocol`` values (``SecurityProtocol.java``)."""

SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
"""The SASL mechanisms a KafkaCluster and ``--command-config`` may name."""

_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}

_UNDERSTOOD = frozenset(
    {
        "bootstrap.servers",
        "security.protocol",
        "sasl.mechanism",
        "sasl.jaas.config",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.certificates",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
        "client.id",
        "request.timeout.ms",
        "default.api.timeout.ms",
    }
)

_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9._-]+)):(?P<port>[0-9]{1,5})$")
_JAAS_OPTION = re.compile(r'(?P<key>[A-Za-z_][A-Za-z0-9_.]*)\s*=\s*"(?P<value>(?:[^"\\]|\\.)*)"')


@dataclass(frozen=True, slots=True)
class AdminSettings:
    """Everything the Admin client is built from. Secrets stay out of ``repr``."""

    bootstrap_servers: tuple[str, ...]
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    ca_pem: str | None = field(default=None, repr=False)
    certificate_file: str | None = None
    key_file: str | None = None
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True
    client_id: str = "kafka-topic-operator"

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def servers_text(self) -> str:
        """The bootstrap servers as the user wrote them, for messages."""
        return ",".join(self.bootstrap_servers)


def parse_bootstrap_servers(text: str, *, where: str = "bootstrap servers") -> tuple[str, ...]:
    """``host:port`` entries separated by commas, as Kafka's clients take ``bootstrap.servers`` (IPv6 in
    brackets). ``where`` names the field in the error."""
    entries = [entry.strip() for entry in text.split(",")]
    if not text.strip() or not any(entries):
        raise AdminSettingsError(f"{where} {text!r}: at least one host:port is needed")
    for entry in entries:
        match = _HOST_PORT.match(entry)
        if match is None:
            raise AdminSettingsError(
                f"{where} {text!r}: {entry!r} is not host:port (a host name or address, a colon and a port; "
                "an IPv6 address in brackets)"
            )
        if not 1 <= int(match["port"]) <= 65535:
            raise AdminSettingsError(f"{where} {text!r}: port {match['port']} of {entry!r} is not 1 to 65535")
    return tuple(entries)


def read_properties(path: str | Path) -> dict[str, str]:
    """A Java properties file as ``key -> value``: ``key=value``, ``key: value`` or ``key value``, ``#`` and ``!``
    comments, a backslash at a line's end continuing it, and the escapes ``\\t \\n \\\\ \\= \\:``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise AdminSettingsError(
            f"cannot read the client properties {str(path)!r}: {error.strerror or error}"
        ) from None
    except UnicodeDecodeError:
        raise AdminSettingsError(f"client properties {str(path)!r}: not UTF-8 text") from None
    return parse_properties(text)


def parse_properties(text: str) -> dict[str, str]:
    """``read_properties`` of text already read."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    found: dict[str, str] = {}
    for line in logical:
        key, value = _split_property(line)
        found[key] = value
    return found


def _split_property(line: str) -> tuple[str, str]:
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=: \t":
            break
        index += 1
    key = line[:index]
    rest = line[index:].lstrip(" \t")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t")
    return _unescape(key), _unescape(rest)


def _unescape(text: str) -> str:
    escapes = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m[1], m[1]), text)


def settings_from_properties(
    bootstrap_servers: str, properties: Mapping[str, str], *, where: str = "client properties"
) -> tuple[AdminSettings, tuple[str, ...]]:
    """The settings ``properties`` describe for ``bootstrap_servers`` (which overrides a ``bootstrap.servers``
    among them), and the properties ignored. Each refusal names the property, its value (never a secret) and
    the rule."""
    servers = bootstrap_servers or properties.get("bootstrap.servers", "")
    parsed_servers = parse_bootstrap_servers(
        servers, where="--bootstrap-server" if bootstrap_servers else where
    )
    protocol = properties.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise AdminSettingsError(
            f"{where}: security.protocol {properties['security.protocol']!r} is not one of "
            f"{', '.join(SECURITY_PROTOCOLS)}"
        )
    mechanism: str | None = None
    username = password = None
    if protocol.startswith("SASL_"):
        mechanism = properties.get("sasl.mechanism", "GSSAPI").strip().upper()
        if mechanism not in SASL_MECHANISMS:
            raise AdminSettingsError(
                f"{where}: sasl.mechanism {mechanism!r} is not supported; kto speaks {', '.join(SASL_MECHANISMS)}"
                + (
                    " (GSSAPI is Kafka's default when sasl.mechanism is not set)"
                    if mechanism == "GSSAPI"
                    else ""
                )
            )
        username, password = _jaas_credentials(properties.get("sasl.jaas.config"), mechanism, where)
    ca_file, ca_pem = _trust_store(properties, where) if protocol in ("SSL", "SASL_SSL") else (None, None)
    certificate_file, key_file, key_password = (
        _key_store(properties, where) if protocol in ("SSL", "SASL_SSL") else (None, None, None)
    )
    identification = properties.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if identification not in ("", "https"):
        raise AdminSettingsError(
            f"{where}: ssl.endpoint.identification.algorithm {identification!r} is not 'https' or empty (off)"
        )
    settings = AdminSettings(
        bootstrap_servers=parsed_servers,
        security_protocol=protocol,
        sasl_mechanism=mechanism,
        username=username,
        password=password,
        ca_file=ca_file,
        ca_pem=ca_pem,
        certificate_file=certificate_file,
        key_file=key_file,
        key_password=key_password,
        check_hostname=identification == "https",
        client_id=properties.get("client.id", "kafka-topic-operator") or "kafka-topic-operator",
    )
    ignored = tuple(sorted(k for k in properties if k not in _UNDERSTOOD))
    return settings, ignored


def _jaas_credentials(jaas: str | None, mechanism: str, where: str) -> tuple[str, str]:
    """The ``username`` and ``password`` options of ``sasl.jaas.config`` (``<LoginModule> required
    username="..." password="...";``), whose login module must be the mechanism's."""
    if not jaas or not jaas.strip():
        raise AdminSettingsError(
            f"{where}: sasl.mechanism {mechanism} needs sasl.jaas.config with username and password"
        )
    module = jaas.strip().split(None, 1)[0]
    expected = _LOGIN_MODULES[mechanism]
    if module != expected:
        raise AdminSettingsError(
            f"{where}: sasl.jaas.config names the login module {module!r}; sasl.mechanism {mechanism} takes {expected}"
        )
    options = {m["key"]: _unescape(m["value"]) for m in _JAAS_OPTION.finditer(jaas)}
    missing = [k for k in ("username", "password") if k not in options]
    if missing:
        raise AdminSettingsError(
            f'{where}: sasl.jaas.config has no {" and no ".join(missing)} option (written key="value")'
        )
    return options["username"], options["password"]


def _trust_store(properties: Mapping[str, str], where: str) -> tuple[str | None, str | None]:
    kind = properties.get("ssl.truststore.type", "").strip().upper()
    location = properties.get("ssl.truststore.location", "").strip() or None
    inline = properties.get("ssl.truststore.certificates", "").strip() or None
    if (location or inline) and kind not in ("PEM", ""):
        raise AdminSettingsError(
            f"{where}: ssl.truststore.type {kind!r} cannot be read here; give the CA certificates as PEM "
            "(ssl.truststore.type=PEM with ssl.truststore.location or ssl.truststore.certificates)"
        )
    if location and kind == "" and not location.lower().endswith((".pem", ".crt")):
        raise AdminSettingsError(
            f"{where}: ssl.truststore.location {location!r} is a JKS trust store by Kafka's default type; "
            "give PEM certificates and say ssl.truststore.type=PEM"
        )
    return location, inline


def _key_store(properties: Mapping[str, str], where: str) -> tuple[str | None, str | None, str | None]:
    kind = properties.get("ssl.keystore.type", "").strip().upper()
    location = properties.get("ssl.keystore.location", "").strip() or None
    if properties.get("ssl.keystore.key") or properties.get("ssl.keystore.certificate.chain"):
        raise AdminSettingsError(
            f"{where}: ssl.keystore.key and ssl.keystore.certificate.chain inline are not read here; give a PEM "
            "file of the key and its certificate chain as ssl.keystore.location with ssl.keystore.type=PEM"
        )
    if location is None:
        return None, None, None
    if kind != "PEM":
        raise AdminSettingsError(
            f"{where}: ssl.keystore.type {kind or 'JKS (the default)'!r} cannot be read here; give a PEM file of "
            "the key and its certificate chain (ssl.keystore.type=PEM)"
        )
    return location, location, properties.get("ssl.key.password") or None
