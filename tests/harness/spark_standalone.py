"""A real Spark standalone cluster on 127.0.0.1: a master and worker processes, from what pyspark ships.

pyspark's wheel carries Spark's jars and ``bin/spark-class``, which starts any of Spark's main classes: the
standalone ``Master`` and ``Worker`` are the same processes ``start-master.sh``/``start-worker.sh`` start. Each
worker launches its own executor JVM for an application, and each executor its own Python workers (the
interpreter named by the driver's ``PYSPARK_PYTHON``): a job on this cluster crosses every process boundary a
real cluster has, on one machine.

Everything listens on 127.0.0.1 (``--host`` and ``SPARK_LOCAL_IP``, which the web UIs bind to as well). Every
process is the leader of its own process group, and ``stop`` ends the groups, executors and Python workers
included.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import pyspark

from harness.spark import LOG4J2
from topic_operator.testing.local_server import free_port

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
START_TIMEOUT = 60.0


def loopback_environment(work_dir: Path) -> dict[str, str]:
    """The environment of every process of the cluster, and of a driver submitting to it."""
    log_config = work_dir / "log4j2.properties"
    log_config.write_text(LOG4J2.format(level="info"), encoding="utf-8")  # the tests read its lines
    return {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_DIRS": str(work_dir / "local"),
        "PYSPARK_PYTHON": sys.executable,  # the executors' Python workers: this venv, where kto is installed
        "SPARK_DAEMON_JAVA_OPTS": f"-Dlog4j2.configurationFile=file:{log_config}",
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",  # no REST submission port (6066, fixed)
    }


@dataclass
class StandaloneCluster:
    """``with StandaloneCluster(work_dir) as cluster:`` a master and ``workers`` workers, each with ``cores``
    cores; ``cluster.url`` is the ``spark://`` address to submit to."""

    work_dir: Path
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    port: int = field(default_factory=free_port)
    _processes: list[tuple[str, subprocess.Popen[bytes], Path]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def __enter__(self) -> StandaloneCluster:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        master_log = self._launch(
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port),
             "--webui-port", str(free_port())],
        )  # fmt: skip
        self._wait_for(master_log, re.compile(r"I have been elected leader"), "the master to start")
        for number in range(self.workers):
            self._launch(
                f"worker-{number}",
                ["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                 "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", str(self.cores),
                 "--memory", self.memory, "--work-dir", str(self.work_dir / f"worker-{number}")],
            )  # fmt: skip
        registered = re.compile(r"Registering worker 127\.0\.0\.1:\d+ with")
        self._wait_for(master_log, registered, f"{self.workers} workers to register", count=self.workers)

    def stop(self) -> None:
        """End every process group (workers first: each takes its executors and Python workers with it)."""
        for _, process, _ in reversed(self._processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for _, process, _ in reversed(self._processes):
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
            with contextlib.suppress(
                ProcessLookupError
            ):  # its executors, in its group, may outlive it a moment
                os.killpg(process.pid, signal.SIGKILL)
        self._processes.clear()

    def log(self, name: str) -> str:
        """A process's output so far (for a failing test's message)."""
        for known, _, path in self._processes:
            if known == name:
                return path.read_text(encoding="utf-8", errors="replace")
        raise KeyError(name)

    def _launch(self, name: str, arguments: list[str]) -> Path:
        log = self.work_dir / f"{name}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [str(SPARK_CLASS), *arguments],
                stdout=output,
                stderr=subprocess.STDOUT,
                env=loopback_environment(self.work_dir),
                start_new_session=True,
            )
        self._processes.append((name, process, log))
        return log

    def _wait_for(self, log: Path, line: re.Pattern[str], what: str, count: int = 1) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
            if len(line.findall(text)) >= count:
                return
            for name, process, _ in self._processes:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"Spark {name} exited ({process.returncode}):\n{self.log(name)[-3000:]}"
                    )
            time.sleep(0.2)
        raise TimeoutError(f"waited {START_TIMEOUT:g} s for {what}:\n{log.read_text()[-3000:]}")
