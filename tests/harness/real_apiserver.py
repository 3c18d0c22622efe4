"""A real Kubernetes API server for tests: etcd plus kube-apiserver on 127.0.0.1, as controller-runtime's envtest.

The fixture makes everything the server needs itself, in a temporary directory: a CA, a serving certificate for
``127.0.0.1``/``localhost``, an RSA key pair for ServiceAccount tokens, a static token file with one admin
(``system:masters``), and kubeconfigs. RBAC is on, so a test that logs in with a ServiceAccount's token proves the
operator's Role is enough. Only the API server runs (no controller-manager, no kubelet): deleted namespaces stay
``Terminating``, owner references are not collected, and no ``default`` ServiceAccount is made.

Both processes are started in sessions of their own and stopped by PID: SIGTERM, then SIGKILL after a grace. The
API server can be stopped and started again on the same ports and the same etcd (``restart``), which is what an API
server restart looks like to a client. ``logs()`` gives both servers' output for a failed test's report.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import os
import secrets
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from harness.kube_client import KubeClient, write_kubeconfig
from harness.lifecycle import StartedServer
from harness.server_binaries import api_server_binaries
from topic_operator.testing.local_server import free_port

OPERATOR_NAMESPACE = "kafka-topic-operator"
OPERATOR_ACCOUNT = "kafka-topic-operator"
"""The namespace and ServiceAccount ``manifests/install/`` runs the operator as."""

AS_DEPLOYED = {"KTO_LEASE_NAMESPACE": OPERATOR_NAMESPACE}
"""What the install's Deployment sets beside the defaults that a process outside a pod must be told: the leader
Lease lives in the operator's namespace (the downward API gives the pod its own)."""

__all__ = [
    "ADMIN_USER",
    "DEVELOPER_USER",
    "Credentials",
    "RealApiServer",
    "apply_install",
    "crd_documents",
    "grant_secrets",
    "install_documents",
    "installed_apiserver",
    "operator_kubeconfig_of",
    "stop_process",
    "wait_established",
]

INSTALL = Path(__file__).resolve().parents[2] / "manifests" / "install"

ADMIN_USER = "kto-test-admin"
DEVELOPER_USER = "kto-test-developer"
"""A second admin (``system:masters``), whose requests are audited as a ServiceAccount's are: ``kto run`` on a
developer's machine, logged in with the kubeconfig's admin rights, with its writes still counted apart from the
test's own."""
AUDITED_GROUP = "kto-tests:audited"


def stop_process(process: subprocess.Popen[bytes], grace: float = 20.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; always reaped. Safe on a process that already exited."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
    process.wait(10)


def _pem_key(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@dataclass(frozen=True)
class Credentials:
    """What the API server is started with, and what clients trust and present."""

    ca_file: Path
    cert_file: Path
    key_file: Path
    service_account_key: Path
    service_account_public_key: Path
    token_file: Path
    admin_token: str
    developer_token: str

    @classmethod
    def make(cls, directory: Path) -> Credentials:
        now = datetime.datetime.now(datetime.UTC)
        valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=2))
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kto-tests-ca")])
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid[0])
            .not_valid_after(valid[1])
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        key = ec.generate_private_key(ec.SECP256R1())
        names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid[0])
            .not_valid_after(valid[1])
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        service_account = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        token, developer_token = secrets.token_hex(24), secrets.token_hex(24)
        files = {
            "ca.crt": ca.public_bytes(serialization.Encoding.PEM),
            "apiserver.crt": cert.public_bytes(serialization.Encoding.PEM),
            "apiserver.key": _pem_key(key),
            "service-account.key": _pem_key(service_account),
            "service-account.pub": service_account.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
            "tokens.csv": (
                f"{token},{ADMIN_USER},{ADMIN_USER}-uid,system:masters\n"
                f'{developer_token},{DEVELOPER_USER},{DEVELOPER_USER}-uid,"system:masters,{AUDITED_GROUP}"\n'
            ).encode(),
        }
        for name, data in files.items():
            (directory / name).write_bytes(data)
            (directory / name).chmod(0o600)
        return cls(
            ca_file=directory / "ca.crt",
            cert_file=directory / "apiserver.crt",
            key_file=directory / "apiserver.key",
            service_account_key=directory / "service-account.key",
            service_account_public_key=directory / "service-account.pub",
            token_file=directory / "tokens.csv",
            admin_token=token,
            developer_token=developer_token,
        )


class RealApiServer(StartedServer):
    """etcd and kube-apiserver, started by ``start()`` (or ``with``), stopped by ``stop()``."""

    def __init__(self, apiserver: Path, etcd: Path, directory: Path) -> None:
        self._apiserver_binary, self._etcd_binary = apiserver, etcd
        self.directory = directory
        self.credentials = Credentials.make(self.directory)
        self.etcd_port, self.etcd_peer_port, self.port = free_port(), free_port(), free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self._etcd: subprocess.Popen[bytes] | None = None
        self._apiserver: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------------

    def start(self, timeout: float = 90.0) -> RealApiServer:
        started = time.monotonic()
        self._start_etcd(timeout)
        self.start_apiserver(timeout)
        self.startup_seconds = time.monotonic() - started
        return self

    def _spawn(self, argv: list[str], log_name: str) -> subprocess.Popen[bytes]:
        with (self.directory / log_name).open("ab") as log:
            return subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self.directory,
            )

    def _start_etcd(self, timeout: float) -> None:
        client = f"http://127.0.0.1:{self.etcd_port}"
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        self._etcd = self._spawn(
            [
                str(self._etcd_binary),
                "--name=default",
                f"--data-dir={self.directory / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                # Tests write thousands of objects; etcd's default 2 GB quota and hourly compaction suit them.
                "--log-level=warn",
            ],
            "etcd.log",
        )
        self._wait(f"{client}/health", self._etcd, timeout, "etcd", context=None)

    def start_apiserver(self, timeout: float = 90.0) -> None:
        """Start (or start again, on the same port and etcd) the API server; return once ``/readyz`` says ok."""
        credentials = self.credentials
        self._apiserver = self._spawn(
            [
                str(self._apiserver_binary),
                f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.port}",
                "--advertise-address=127.0.0.1",
                "--endpoint-reconciler-type=none",
                "--service-cluster-ip-range=10.0.0.0/24",
                f"--tls-cert-file={credentials.cert_file}",
                f"--tls-private-key-file={credentials.key_file}",
                f"--client-ca-file={credentials.ca_file}",
                f"--token-auth-file={credentials.token_file}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={credentials.service_account_public_key}",
                f"--service-account-signing-key-file={credentials.service_account_key}",
                f"--cert-dir={self.directory / 'certs'}",
                f"--audit-policy-file={self._audit_policy()}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-format=json",
                # One file however long the run: the API server otherwise starts a new one every 100 MB (its
                # default), which a 50,000-KafkaTopic bench passes, and the writes counted from it are lost.
                "--audit-log-maxsize=1000000",
            ],
            "kube-apiserver.log",
        )
        self._wait(
            f"{self.url}/readyz", self._apiserver, timeout, "kube-apiserver", context=self.ssl_context()
        )

    def stop_apiserver(self, grace: float = 20.0) -> None:
        """Stop the API server alone (etcd keeps the objects), as a restart or an outage does."""
        if self._apiserver is not None:
            stop_process(self._apiserver, grace)
            self._apiserver = None

    def restart(self) -> None:
        self.stop_apiserver()
        self.start_apiserver()

    def stop(self) -> None:
        self.stop_apiserver()
        if self._etcd is not None:
            stop_process(self._etcd)
            self._etcd = None

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in (self._etcd, self._apiserver) if p is not None and p.poll() is None]

    def _wait(
        self,
        url: str,
        process: subprocess.Popen[bytes],
        timeout: float,
        name: str,
        context: ssl.SSLContext | None,
    ) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{self.logs(40)}")
            try:
                with urllib.request.urlopen(url, timeout=2, context=context) as response:
                    body = response.read().decode(errors="replace")
                    if response.status == 200:
                        return
                    last = body
            except urllib.error.HTTPError as error:
                last = f"{error.code} {error.read()[:200]!r}"
            except OSError as error:
                last = str(error)
            time.sleep(0.1)
        raise RuntimeError(f"{name} not ready within {timeout:g} s ({last}):\n{self.logs(40)}")

    # -- the audit log ---------------------------------------------------------------------------------------------

    @property
    def audit_log(self) -> Path:
        return self.directory / "audit.log"

    def _audit_policy(self) -> Path:
        """Every request of a ServiceAccount or of ``DEVELOPER_USER``, at Metadata level (who, verb, object,
        answer); nothing else."""
        path = self.directory / "audit-policy.yaml"
        path.write_text(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
            f"  - level: Metadata\n    userGroups: [system:serviceaccounts, {AUDITED_GROUP}]\n"
            "  - level: None\n"
        )
        return path

    def audit_events(self, username: str) -> list[dict[str, Any]]:
        """The audit events of one user's requests so far (``system:serviceaccount:<ns>:<name>``)."""
        if not self.audit_log.exists():
            return []
        events = []
        for line in self.audit_log.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("user", {}).get("username") == username:
                    events.append(event)
        return events

    # -- clients -------------------------------------------------------------------------------------------------

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.credentials.ca_file))

    def client(self, token: str | None = None) -> KubeClient:
        """A client as the admin (``system:masters``), or as whoever ``token`` belongs to."""
        return KubeClient(self.url, token or self.credentials.admin_token, ca_file=self.credentials.ca_file)

    def kubeconfig(self, path: Path, token: str | None = None, namespace: str = "default") -> Path:
        return write_kubeconfig(
            path,
            self.url,
            token or self.credentials.admin_token,
            namespace,
            ca_file=self.credentials.ca_file,
        )

    def service_account_token(self, namespace: str, name: str, seconds: int = 7200) -> str:
        """A token for the ServiceAccount (TokenRequest, as the kubelet asks for a Pod's projected token)."""
        answer = self.client().call(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": seconds},
            },
        )
        token: str = answer["status"]["token"]
        return token

    # -- reports -------------------------------------------------------------------------------------------------

    def logs(self, lines: int = 80) -> str:
        parts = []
        for name in ("etcd.log", "kube-apiserver.log"):
            path = self.directory / name
            if path.exists():
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {name} (last {len(tail)} lines)\n" + "\n".join(tail))
        return "\n".join(parts)

    def rss_bytes(self) -> dict[str, int]:
        """Resident memory of each server process, from /proc."""
        sizes: dict[str, int] = {}
        for name, process in (("etcd", self._etcd), ("kube-apiserver", self._apiserver)):
            if process is not None and process.poll() is None:
                with contextlib.suppress(OSError):
                    fields = Path(f"/proc/{process.pid}/statm").read_text().split()
                    sizes[name] = int(fields[1]) * os.sysconf("SC_PAGE_SIZE")
        return sizes


def _folder_documents(folder: Path) -> list[dict[str, Any]]:
    """What ``kubectl apply -f <folder>`` applies, in its order (its files by name)."""
    found: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.yaml")):
        found.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return found


def install_documents() -> list[dict[str, Any]]:
    """What ``kubectl apply -f manifests/install/`` applies, in its order (the CRDs before their objects)."""
    return _folder_documents(INSTALL)


def crd_documents() -> list[dict[str, Any]]:
    """The CRDs of ``crds/``, as a user applies them to try ``kto run`` without the install."""
    return _folder_documents(INSTALL.parents[1] / "crds")


SECRETS_GRANT: Final = "kafka-topic-operator-secrets"
"""The install's Role and RoleBinding that let the operator read Secrets, in its own namespace only."""


def grant_secrets(kube: KubeClient, namespace: str) -> None:
    """The install's Role and RoleBinding for Secrets, created in ``namespace`` too, as the security page tells a
    platform team to for a namespace holding KafkaClusters that name Secrets: the operator may then read them."""
    grant = [d for d in install_documents() if d["metadata"]["name"] == SECRETS_GRANT]
    assert [d["kind"] for d in grant] == ["Role", "RoleBinding"]
    for document in grant:
        kube.create(
            document["kind"].lower() + "s",
            {**document, "metadata": {**document["metadata"], "namespace": namespace}},
        )


def wait_established(kube: KubeClient, name: str, timeout: float = 30) -> None:
    def established() -> bool:
        crd = kube.get("apiextensions.k8s.io/v1", "customresourcedefinitions", None, name)
        conditions = (crd.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    kube.wait_for(established, timeout=timeout, what=f"CRD {name} Established")


@contextlib.contextmanager
def installed_apiserver(directory: Path) -> Iterator[RealApiServer]:
    """etcd and kube-apiserver with RBAC on, and ``manifests/install/`` applied server-side (as the install guide says);
    stopped by PID on leaving. Skips the test when the binaries are missing, naming what is."""
    binaries = api_server_binaries()
    if isinstance(binaries, str):
        pytest.skip(f"real API server: {binaries}")
    with RealApiServer(*binaries, directory) as server:
        apply_install(server.client())
        yield server


def operator_kubeconfig_of(server: RealApiServer, path: Path) -> Path:
    """A kubeconfig with a token of the operator's ServiceAccount (TokenRequest), as its Pod would have."""
    return server.kubeconfig(path, server.service_account_token(OPERATOR_NAMESPACE, OPERATOR_ACCOUNT))


def apply_install(kube: KubeClient) -> None:
    """``manifests/install/`` applied server-side, each CRD established before the objects that follow it."""
    for document in install_documents():
        kube.apply_document(document)
        if document["kind"] == "CustomResourceDefinition":
            wait_established(kube, document["metadata"]["name"])
