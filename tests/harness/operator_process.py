"""``kto run`` as a real process, as the Deployment runs it: environment settings, a kubeconfig, its probes.

Used against kmock (``tests/e2e``) and the real API server (``tests/real``) alike. The process gets an empty HOME
(no kubeconfig of the machine's user leaks in), short test timings unless a test overrides them, loopback-only
probes on free ports, and its output in a file that a failed test shows.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from topic_operator.testing.local_server import free_port

__all__ = ["Operator", "running_operator", "start_operator"]

TEST_SETTINGS: Mapping[str, str] = {
    "KTO_LISTEN_HOST": "127.0.0.1",
    "KTO_BATCH_LINGER": "0.05",
    "KTO_RETRY_DELAY": "1",
    "KTO_CLUSTER_WAIT": "5",
    "KTO_DRIFT_INTERVAL": "3600",
    "KTO_LOG_FORMAT": "plain",
}
"""Short waits: a test's objects come one at a time, not 10,000 at once."""


@dataclass
class Operator:
    process: subprocess.Popen[bytes]
    metrics_port: int
    health_port: int
    log: Path

    def _get(self, port: int, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError as error:
            return 0, str(error)

    def readyz(self) -> tuple[int, str]:
        return self._get(self.metrics_port, "/readyz")

    def healthz(self) -> tuple[int, str]:
        return self._get(self.health_port, "/healthz")

    def metric(self, name: str, **labels: str) -> float | None:
        """One sample of ``/metrics`` (the sample's own name, e.g. ``kto_cluster_connected``), or None."""
        status, text = self._get(self.metrics_port, "/metrics")
        if status != 200:
            return None
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                    return float(sample.value)
        return None

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"kto run exited with {self.process.returncode}:\n{self.output()[-4000:]}"
                )
            if self.readyz()[0] == 200:
                return
            time.sleep(0.1)
        raise AssertionError(f"kto run not ready within {timeout:g} s:\n{self.output()[-4000:]}")

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM and the exit code; a process that does not exit in time is killed and the test fails."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            raise AssertionError(
                f"kto run did not exit within {timeout:g} s of SIGTERM:\n{self.output()[-3000:]}"
            ) from None

    def kill(self) -> None:
        """SIGKILL: no clean-up at all, as the kernel's OOM killer or a node failure ends a pod."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


def start_operator(
    directory: Path,
    kubeconfig: Path | None,
    *arguments: str,
    settings: Mapping[str, str] = TEST_SETTINGS,
    name: str = "operator",
    **environment: str,
) -> Operator:
    """``kto run ARGUMENTS`` with ``settings`` and ``environment`` (``KTO_*`` variables) on top of them."""
    metrics_port, health_port = free_port(), free_port()
    home = directory / "home"
    home.mkdir(parents=True, exist_ok=True)
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("KTO_", "KUBECONFIG"))},
        "HOME": str(home),
        "KTO_METRICS_PORT": str(metrics_port),
        "KTO_HEALTH_PORT": str(health_port),
        "KTO_MATERIAL_DIR": str(directory / f"{name}-material"),
        **settings,
        **({"KUBECONFIG": str(kubeconfig)} if kubeconfig is not None else {}),
        **environment,
    }
    log = directory / f"{name}.log"
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "kto"), "run", *arguments],
            env=environ,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return Operator(process, metrics_port, health_port, log)


@contextlib.contextmanager
def running_operator(
    directory: Path, kubeconfig: Path | None, *arguments: str, **environment: str
) -> Iterator[Operator]:
    """An operator for a ``with`` block: killed at the end if the test did not stop it."""
    operator = start_operator(directory, kubeconfig, *arguments, **environment)
    try:
        yield operator
    finally:
        operator.kill()


@contextlib.contextmanager
def ready_operator(directory: Path, kubeconfig: Path, **settings: str) -> Iterator[Operator]:
    """``kto run`` with ``TEST_SETTINGS`` and ``settings`` on top, as a module's operator: ready before the block,
    stopped with SIGTERM after it, and then it must have exited cleanly (0) with no traceback in its output."""
    started = _ready_on_free_ports(directory, kubeconfig, {**TEST_SETTINGS, **settings})
    try:
        yield started
    finally:
        code = started.stop()
        output = started.output()
    assert code == 0, output[-3000:]
    assert "Traceback" not in output, output[-5000:]


def _ready_on_free_ports(directory: Path, kubeconfig: Path, settings: Mapping[str, str]) -> Operator:
    """``start_operator`` until ready, started again on other ports when another process took a port
    ``free_port`` chose before ``kto run`` bound it (it then ends at once, saying so in one line); three tries."""
    for attempt in range(3):
        started = start_operator(directory, kubeconfig, settings=settings)
        try:
            started.wait_ready()
        except AssertionError:
            if attempt < 2 and started.process.poll() == 1 and "cannot listen on" in started.output():
                continue
            started.kill()
            raise
        return started
    raise AssertionError("unreachable")  # pragma: no cover
