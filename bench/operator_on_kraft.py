"""The operator on a KRaft cluster at the size users run it, run as users run it: ``kto run`` as a process of its
own, against the real kube-apiserver, with a KafkaCluster that declares only ``bootstrapServers``.

Servers (all on 127.0.0.1, from ``../shared/servers``, stopped at the end, on failure, Ctrl-C or SIGTERM too):
Kafka 3.9 in KRaft mode (a controller and three brokers in racks a/b/c: ``tests/harness``'s ``KRaftCluster``),
etcd and the kube-apiserver with ``manifests/install/`` applied. The operator is ``kto run -n <namespace>`` with
the product's defaults (``--drift-interval`` 300 s, ``KTO_KRAFT_POLL_INTERVAL`` 5 s), logged in as the install's
ServiceAccount. Users are ``--clients`` threads, paced to ``--rate`` requests a second in all (0: as fast as the
API server answers), each request a new HTTPS connection as ``kubectl`` makes it.

Phases, each row printed beside its target (the KRaft issue's table):

1. ``create``: ``--topics`` KafkaTopics (1 partition, RF 1, ``retention.ms`` and, on every other one,
   ``cleanup.policy``). Printed: when every topic was in Kafka (Metadata, polled every 0.25 s) and every KafkaTopic
   Ready at its generation (a watch), each after the last create; the operator's RSS (VmRSS, and VmHWM).
2. ``update``: ``retention.ms`` patched on every KafkaTopic. Printed: when every change was in Kafka
   (DescribeConfigs, polled) and every KafkaTopic Ready at its new generation, after the last patch; RSS.
3. ``drift``: ``--drifted`` topics' ``retention.ms`` changed through the Admin protocol, behind the operator's
   back. Printed: when the last of them was back (polled every 0.2 s), after the change; and the event loop
   (``kto_event_loop_lag_seconds``: wake-ups more than 100 ms late, and the worst bucket) over the phase.
4. ``restart``: SIGTERM, then the same command again. Printed: until ``/readyz`` answers 200; RSS 20 s after;
   what the new process wrote: requests that change a KafkaTopic (the API server's audit log) and changes in Kafka
   (every topic's id, partitions and overrides read before and after, and the process's applied reconciles).

For each phase the operator's CPU seconds (``/proc``) and the event loop's hold-ups. Exit status 1 when a target is
missed. Run: ``.venv/bin/python bench/operator_on_kraft.py [--topics 10000] [--rate 51] [--clients 8]
[--drifted 50] [--skip update,drift,restart]`` (about 10 minutes at 10,000 paced).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import queue
import signal
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient

from harness.kraft_cluster import KRaftCluster, kraft_distribution  # the harness lives with the tests
from harness.kube_client import KubeApiError, KubeClient
from harness.operator_process import Operator, start_operator
from harness.real_apiserver import (
    AS_DEPLOYED,
    OPERATOR_ACCOUNT,
    OPERATOR_NAMESPACE,
    RealApiServer,
    apply_install,
    operator_kubeconfig_of,
)
from harness.server_binaries import api_server_binaries
from topic_operator.admin.client_settings import AdminSettings
from topic_operator.admin.connection import open_admin
from topic_operator.admin.reader import read_cluster
from topic_operator.model import ClusterState

API = "kto.dev/v1alpha1"
NAMESPACE = "kraft-bench"
OPERATOR_USER = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_ACCOUNT}"
TARGETS = {
    "Ready after the last create s": 5.0,
    "in Kafka after the last patch s": 5.0,
    "RSS MB": 300.0,
    "restart ready s": 60.0,
    "drift reverted s": 15.0,
    "loop held ms": 100.0,
}
"""The KRaft issue's targets at 10,000 KafkaTopics."""


# -- measuring the operator from outside ------------------------------------------------------------------------------


def process_status(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM in MB, and the CPU seconds so far, of process ``pid``."""
    found: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) / 1024
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        found["cpu"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def loop_lag(operator: Operator) -> dict[str, float]:
    """The cumulative buckets of ``kto_event_loop_lag_seconds`` (le -> count), and the count."""
    status, text = operator._get(operator.metrics_port, "/metrics")
    found: dict[str, float] = {}
    if status != 200:
        return found
    for line in text.splitlines():
        if line.startswith("kto_event_loop_lag_seconds_bucket"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            found[le] = float(line.rsplit(" ", 1)[1])
        elif line.startswith("kto_event_loop_lag_seconds_count"):
            found["count"] = float(line.rsplit(" ", 1)[1])
    return found


def held_up(before: dict[str, float], after: dict[str, float]) -> tuple[int, str]:
    """Between two scrapes: how many wake-ups were more than 100 ms late, and the highest bucket reached."""

    def delta(le: str) -> float:
        return after.get(le, 0.0) - before.get(le, 0.0)

    late = int(delta("count") - delta("0.1"))
    bounds = sorted((float(le), le) for le in after if le not in ("count", "+Inf"))
    worst = "<= 5 ms"
    for bound, le in bounds:
        if delta("count") - delta(le) > 0:
            continue
        worst = f"<= {bound * 1000:g} ms"
        break
    else:
        worst = "> 5 s"
    return late, worst


def operator_writes(server: RealApiServer, offset: int) -> tuple[int, int]:
    """Requests of the operator's ServiceAccount after byte ``offset`` of the audit log that change a KafkaTopic
    (its status or the object), and the new offset."""
    writes = 0
    with server.audit_log.open("rb") as log:
        log.seek(offset)
        data = log.read()
    for line in data.splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            ref = event.get("objectRef") or {}
            if (
                event.get("user", {}).get("username") == OPERATOR_USER
                and ref.get("resource") == "kafkatopics"
                and event.get("verb") in ("create", "update", "patch", "delete")
            ):
                writes += 1
    return writes, offset + len(data)


# -- the users ---------------------------------------------------------------------------------------------------------


class Paced:
    """Requests sent by ``clients`` threads, paced to ``rate`` a second in all (0: unpaced)."""

    def __init__(self, make_client: Callable[[], KubeClient], clients: int, rate: float) -> None:
        self.make_client, self.clients, self.rate = make_client, clients, rate

    def run(self, work: Sequence[Callable[[KubeClient], None]]) -> float:
        """Every request of ``work``; the time the last answer came (monotonic)."""
        jobs: queue.Queue[tuple[int, Callable[[KubeClient], None]]] = queue.Queue()
        for index, job in enumerate(work):
            jobs.put((index, job))
        started = time.monotonic()
        failures: list[BaseException] = []

        def worker() -> None:
            client = self.make_client()
            while True:
                try:
                    index, job = jobs.get_nowait()
                except queue.Empty:
                    return
                if self.rate > 0:
                    due = started + index / self.rate
                    if (wait := due - time.monotonic()) > 0:
                        time.sleep(wait)
                for attempt in range(5):
                    try:
                        job(client)
                        break
                    except (
                        KubeApiError,
                        OSError,
                    ) as error:  # the API server's back-pressure: as kubectl, again
                        if attempt == 4:
                            failures.append(error)
                        time.sleep(0.2 * (attempt + 1))

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(self.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise RuntimeError(f"{len(failures)} requests failed, e.g. {failures[0]}")
        return time.monotonic()


@dataclass
class Settling:
    """Every KafkaTopic of the namespace as a watch reports it: Ready at its generation or not, and the moment
    all ``expected`` were (monotonic)."""

    server: RealApiServer
    expected: int = 0
    settled: dict[str, bool] = field(default_factory=dict)
    count: int = 0
    all_at: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: bool = False

    def expect(self, count: int) -> None:
        with self.lock:
            self.expected, self.all_at = count, None
            self._check()

    def restart(self, count: int) -> None:
        """Count again from none settled, expecting ``count``: every object is about to change."""
        with self.lock:
            self.settled = dict.fromkeys(self.settled, False)
            self.count, self.expected, self.all_at = 0, count, None

    def _note(self, kind: str, body: dict[str, Any]) -> None:
        name = body["metadata"]["name"]
        status = body.get("status") or {}
        now = (
            kind != "DELETED"
            and status.get("observedGeneration") == body["metadata"].get("generation")
            and any(
                c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
            )
        )
        with self.lock:
            before = self.settled.get(name, False)
            self.settled[name] = now
            self.count += int(now) - int(before)
            self._check()

    def _check(self) -> None:
        if self.expected and self.all_at is None and self.count >= self.expected:
            self.all_at = time.monotonic()

    def start(self) -> None:
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        version = ""
        while not self.stopping:
            try:
                version = self._watch(version)
            except (OSError, http.client.HTTPException, ValueError, KeyError) as error:
                print(
                    f"  (the bench's watch: {type(error).__name__}: {error}; watching again)", file=sys.stderr
                )
                time.sleep(0.5)

    def wait_all(self, operator: Operator, timeout: float = 600) -> float:
        """The moment every expected KafkaTopic was settled; a timeout says how many were, with the operator's
        last lines."""
        give_up = time.monotonic() + timeout
        while self.all_at is None:
            if time.monotonic() > give_up:
                raise TimeoutError(
                    f"{self.count} of {self.expected} KafkaTopics settled after {timeout:g} s; the operator said:\n"
                    + operator.output()[-3000:]
                )
            time.sleep(0.05)
        return self.all_at

    def _watch(self, version: str) -> str:
        """A list (when there is no version to start from), then a watch from it, as a client-go informer; the
        version to go on from."""
        client = self.server.client()
        path = f"/apis/{API}/namespaces/{NAMESPACE}/kafkatopics"
        if not version:
            listed = client.call("GET", path, timeout=120)
            for body in listed["items"]:
                self._note("ADDED", body)
            version = listed["metadata"]["resourceVersion"]
        host = urllib.parse.urlsplit(self.server.url)
        context = ssl.create_default_context(cafile=str(self.server.credentials.ca_file))
        connection = http.client.HTTPSConnection(host.hostname, host.port, context=context, timeout=900)
        query = {"watch": "1", "resourceVersion": version, "timeoutSeconds": "600"}
        connection.request(
            "GET",
            f"{path}?{urllib.parse.urlencode(query)}",
            headers={"Authorization": f"Bearer {self.server.credentials.admin_token}"},
        )
        for line in connection.getresponse():
            event = json.loads(line)
            body = event["object"]
            if event["type"] == "ERROR":  # e.g. the version is too old: list again
                print(f"  (the bench's watch ended: {body.get('message')})", file=sys.stderr)
                return ""
            version = body["metadata"].get("resourceVersion", version)
            self._note(event["type"], body)
        return version


# -- Kafka -------------------------------------------------------------------------------------------------------------


def snapshot(admin: KafkaAdminClient, names: Sequence[str]) -> ClusterState:
    return read_cluster(admin, configs_of=names, deadline=120)


def wait_kafka(
    admin: KafkaAdminClient,
    names: Sequence[str],
    done: Callable[[ClusterState], bool],
    *,
    timeout: float,
    every: float,
) -> float:
    """Poll the cluster until ``done``; the time it first was (monotonic)."""
    give_up = time.monotonic() + timeout
    while True:
        state = snapshot(admin, names)
        seen = time.monotonic()
        if done(state):
            return seen
        if seen > give_up:
            raise TimeoutError(f"Kafka did not get there within {timeout:g} s")
        time.sleep(every)


def essence(state: ClusterState) -> dict[str, tuple[Any, ...]]:
    """What a write would change: each topic's id, replicas and overrides."""
    return {
        name: (t.topic_id, tuple(sorted(t.partitions.items())), tuple(sorted(t.config.items())))
        for name, t in state.topics.items()
    }


# -- the run -----------------------------------------------------------------------------------------------------------


def patch_retention(client: KubeClient, index: int, retention: int) -> None:
    body = {"spec": {"config": {"retention.ms": retention}}}
    client.patch(API, "kafkatopics", NAMESPACE, f"bench-{index:05d}", body)


def topic_body(index: int, retention: int) -> dict[str, Any]:
    config: dict[str, Any] = {"retention.ms": retention}
    if index % 2:
        config["cleanup.policy"] = "compact"
    return {
        "apiVersion": API,
        "kind": "KafkaTopic",
        "metadata": {"name": f"bench-{index:05d}", "namespace": NAMESPACE},
        "spec": {"cluster": "main", "partitions": 1, "replicas": 1, "config": config},
    }


class Report:
    def __init__(self) -> None:
        self.missed: list[str] = []

    def row(self, what: str, value: float, unit: str, target_key: str | None = None) -> None:
        line = f"  {what}: {value:.1f} {unit}" if unit != "" else f"  {what}: {value}"
        if target_key is not None:
            target = TARGETS[target_key]
            met = value <= target
            line += f"   target <= {target:g} {unit}   {'met' if met else 'NOT met'}"
            if not met:
                self.missed.append(what)
        print(line, flush=True)


@contextlib.contextmanager
def servers(directory: Path) -> Iterator[tuple[KRaftCluster, RealApiServer]]:
    distribution, missing = kraft_distribution()
    binaries = api_server_binaries()
    if distribution is None or isinstance(binaries, str):
        raise SystemExit(f"bench/operator_on_kraft.py needs {missing or binaries}")
    with KRaftCluster(distribution, directory / "kraft") as kraft:
        (directory / "apiserver").mkdir(parents=True, exist_ok=True)
        with RealApiServer(*binaries, directory / "apiserver") as server:
            apply_install(server.client())
            yield kraft, server


def stop_on_signals() -> None:
    def stop(number: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {number}")

    signal.signal(signal.SIGTERM, stop)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=51.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--drifted", type=int, default=50)
    parser.add_argument("--skip", default="", help="phases to leave out: update, drift, restart")
    parser.add_argument("--setting", action="append", default=[], help="KTO_NAME=value for the operator")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    stop_on_signals()
    report = Report()
    names = [f"bench-{i:05d}" for i in range(args.topics)]
    with (
        tempfile.TemporaryDirectory(prefix="kto-kraft-bench-") as temporary,
        servers(Path(temporary)) as (kraft, server),
    ):
        directory = Path(temporary)
        kube = server.client()
        kube.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        kube.create(
            "kafkaclusters",
            {
                "apiVersion": API,
                "kind": "KafkaCluster",
                "metadata": {"name": "main", "namespace": NAMESPACE},
                "spec": {"bootstrapServers": kraft.bootstrap_servers, "kafkaVersion": "3.9"},
            },
        )
        kubeconfig = operator_kubeconfig_of(server, directory / "operator-kubeconfig")
        settings = {"KTO_LISTEN_HOST": "127.0.0.1", "KTO_LOG_FORMAT": "plain", "KTO_LOG_LEVEL": "WARNING"}
        extra = dict(s.split("=", 1) for s in args.setting)

        def launch(name: str) -> Operator:
            return start_operator(
                directory, kubeconfig, "-n", NAMESPACE, settings=settings, name=name, **AS_DEPLOYED, **extra
            )

        operator = launch("operator-1")
        operator.wait_ready(timeout=120)
        admin = open_admin(
            AdminSettings(bootstrap_servers=tuple(kraft.bootstrap_servers.split(","))), deadline=120
        )
        settling = Settling(server)
        settling.start()
        users = Paced(lambda: server.client(), args.clients, args.rate)
        pid = operator.process.pid
        print(
            f"Kafka 3.9 KRaft (a controller, 3 brokers), kube-apiserver 1.32; kto run -n {NAMESPACE} (pid {pid}); "
            f"{args.topics:,} KafkaTopics, {args.clients} clients at "
            + (f"{args.rate:g}/s" if args.rate else "full speed"),
            flush=True,
        )

        # 1. create
        lag_before, cpu_before = loop_lag(operator), process_status(pid).get("cpu", 0.0)
        settling.expect(args.topics)
        last = users.run(
            [lambda c, i=i: c.create("kafkatopics", topic_body(i, 3_600_000 + i)) for i in range(args.topics)]
        )
        in_kafka = wait_kafka(
            admin, names, lambda s: all(n in s.topics for n in names), timeout=600, every=0.25
        )
        all_ready = settling.wait_all(operator)
        print("create:", flush=True)
        report.row("every topic in Kafka after the last create", in_kafka - last, "s")
        report.row(
            "every KafkaTopic Ready after the last create",
            all_ready - last,
            "s",
            "Ready after the last create s",
        )
        status = process_status(pid)
        report.row("operator RSS after the creates (VmRSS)", status.get("VmRSS", 0), "MB", "RSS MB")
        report.row("operator peak RSS so far (VmHWM)", status.get("VmHWM", 0), "MB")
        late, worst = held_up(lag_before, loop_lag(operator))
        report.row("operator CPU per create", 1000 * (status.get("cpu", 0) - cpu_before) / args.topics, "ms")
        print(f"  event loop: {late} wake-ups more than 100 ms late; worst {worst}", flush=True)

        # 2. update
        if "update" not in skip:
            lag_before, cpu_before = loop_lag(operator), process_status(pid).get("cpu", 0.0)
            settling.restart(
                args.topics
            )  # each patch makes its KafkaTopic unsettled until its status follows
            last = users.run(
                [lambda c, i=i: patch_retention(c, i, 7_200_000 + i) for i in range(args.topics)]
            )
            wanted = {f"bench-{i:05d}": str(7_200_000 + i) for i in range(args.topics)}
            in_kafka = wait_kafka(
                admin,
                names,
                lambda s: all(
                    s.topics[n].config.get("retention.ms") == v for n, v in wanted.items() if n in s.topics
                ),
                timeout=600,
                every=0.25,
            )
            all_ready = settling.wait_all(operator)
            print("update:", flush=True)
            report.row(
                "every config change in Kafka after the last patch",
                in_kafka - last,
                "s",
                "in Kafka after the last patch s",
            )
            report.row(
                "every KafkaTopic Ready at its new generation after the last patch",
                all_ready - last,
                "s",
            )
            status = process_status(pid)
            report.row("operator RSS after the updates (VmRSS)", status.get("VmRSS", 0), "MB", "RSS MB")
            report.row("operator peak RSS so far (VmHWM)", status.get("VmHWM", 0), "MB", "RSS MB")
            report.row(
                "operator CPU per update", 1000 * (status.get("cpu", 0) - cpu_before) / args.topics, "ms"
            )
            late, worst = held_up(lag_before, loop_lag(operator))
            print(f"  event loop: {late} wake-ups more than 100 ms late; worst {worst}", flush=True)

        # 3. drift behind the operator's back
        if "drift" not in skip:
            time.sleep(2)
            lag_before = loop_lag(operator)
            drifted = names[:: max(1, args.topics // args.drifted)][: args.drifted]
            before = snapshot(admin, drifted)
            admin.alter_configs(
                [
                    ConfigResource(
                        ConfigResourceType.TOPIC, n, configs={"retention.ms": (AlterConfigOp.SET, "86400001")}
                    )
                    for n in drifted
                ],
                incremental=True,
                raise_on_unknown=False,
            )
            changed = time.monotonic()
            wanted_back = {n: before.topics[n].config.get("retention.ms") for n in drifted}
            back = wait_kafka(
                admin,
                drifted,
                lambda s: all(s.topics[n].config.get("retention.ms") == v for n, v in wanted_back.items()),
                timeout=900,
                every=0.2,
            )
            print("drift:", flush=True)
            report.row(
                f"{len(drifted)} topics changed behind the operator's back: all reverted after",
                back - changed,
                "s",
                "drift reverted s",
            )
            time.sleep(6)  # a poll round or two more with nothing to do
            late, worst = held_up(lag_before, loop_lag(operator))
            report.row("event loop wake-ups more than 100 ms late, over the phase", late, "")
            print(f"  worst event loop lateness: {worst}", flush=True)

        # 4. restart
        if "restart" not in skip:
            kept = essence(snapshot(admin, names))
            operator.stop(timeout=60)
            _, offset = operator_writes(server, 0)
            restarted = time.monotonic()
            operator = launch("operator-2")
            pid = operator.process.pid
            operator.wait_ready(timeout=600)
            ready_after = time.monotonic() - restarted
            time.sleep(20)
            status = process_status(pid)
            writes, _ = operator_writes(server, offset)
            after = essence(snapshot(admin, names))
            changed_in_kafka = sum(1 for n in names if kept.get(n) != after.get(n))
            applied = (
                operator.metric("kto_topic_reconciles_total", cluster=f"{NAMESPACE}/main", result="applied")
                or 0
            )
            print("restart:", flush=True)
            report.row("restarted kto run: /readyz 200 after", ready_after, "s", "restart ready s")
            report.row(
                "restarted kto run: RSS 20 s after ready (VmRSS)", status.get("VmRSS", 0), "MB", "RSS MB"
            )
            report.row("restarted kto run: peak RSS (VmHWM)", status.get("VmHWM", 0), "MB", "RSS MB")
            print(
                f"  writes by the restarted process: {writes} to KafkaTopics, {changed_in_kafka} topics changed in Kafka, {int(applied)} reconciles applied",
                flush=True,
            )
            if writes or changed_in_kafka or applied:
                report.missed.append("a restart writes nothing")
        settling.stopping = True
        code = operator.stop(timeout=60)
        output = operator.output()
        tracebacks = output.count("Traceback")
        print(f"operator exit {code}; {tracebacks} tracebacks in its output", flush=True)
        if tracebacks:
            report.missed.append("no traceback")
        admin.close()
    print("targets:", "all met" if not report.missed else "NOT met: " + "; ".join(report.missed), flush=True)
    return 1 if report.missed else 0


if __name__ == "__main__":
    sys.exit(main())
