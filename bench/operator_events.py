"""The operator with up to 50,000 KafkaTopics: its CPU and API writes per event, how soon every KafkaTopic settles,
its peak RSS, a restart, and its periodic drift check over the whole cluster.

The operator runs as users run it: ``kto run`` as a process of its own, started with its own flags (``-n``, the
ports, ``--log-format plain --log-level warning``, ``--drift-interval``), nothing of the bench inside it, its CPU,
RSS (``VmHWM``, ``VmRSS``) and event loop (its own ``kto_event_loop_lag_seconds``) read from outside. With
``--operator in-process`` it runs in this process instead, exactly as ``kto run`` builds it
(``k8s.operate.operate``), for what only that can show: CPU by thread, the bench's own probe of the loop with the
stacks that held it, garbage collections, the census per KafkaTopic, ``--memory`` and ``--floor``; the RSS is
then this process's, the bench's bookkeeping included. Either way it runs against kmock's API emulator with the
API server's bookkeeping (``tests/harness/kube_api``, a process of its own) or, with ``--apiserver real``, etcd and the real kube-apiserver of ``../shared/servers``. A
real ZooKeeper is made to look like a cluster of ``--brokers`` brokers in 3 racks (default 12). A load generator
(a process of its own) plays the users, with concurrent requests as ``kubectl apply`` makes them:

1. ``create``: N KafkaTopics (``--partitions`` each, default 4, RF 3, 3 config overrides): 50,000 of them are
   200,000 partitions, the ceiling of a ZooKeeper-mode cluster;
2. ``update``: one config key changed on all of them;
3. ``label``: a label added to all of them (nothing for the operator to do);
4. ``check``: the periodic drift check over every topic, in the operator: one with nothing changed since the
   check before it, then one after ``--drifted`` topics were changed behind the operator's back (it finds and
   reverts them), with ``--new-topics`` KafkaTopics created while it runs. For each check: its duration (from
   ``kto_drift_check_duration_seconds``), ZooKeeper's requests over it (its ``srvr`` count), the new
   KafkaTopics' time to Ready, and the longest the event loop was held up meanwhile;
5. ``restart``: the operator stopped, and a new ``kto run`` process started with the same settings (kopf lists and
   resumes every object: nothing to do), until ``/readyz``;
6. ``drift``: the next drift check in that process, as its ``kto_drift_check_duration_seconds`` count shows it.

For each phase: the operator's CPU (the ``kto run`` process's, read from ``/proc``; in-process, split by thread
from ``/proc/self/task``: kopf, our handlers, kazoo's threads, the batches), per event; its writes to the API
(status patches, other patches, Events), per event; how long after the last request every topic was settled; the
peak and current RSS; the event loop's late wake-ups (its ``kto_event_loop_lag_seconds``; in-process, the longest
hold-up of a 10 ms sleep on its loop, timed, with the stacks, and Python's garbage collections from
``gc.callbacks``: each collection of the oldest generation walks every object the process holds). In-process,
after the event phases, what the operator holds per KafkaTopic, by structure (each object charged once, found
through ``gc``).

Targets on the real API server (up to 50,000 KafkaTopics): every KafkaTopic settled within 5 s of the
last create or update, peak RSS <= 500 MB, a restart ready within 120 s with no write about a KafkaTopic, a
drift check within 10 s reading only what changed, a KafkaTopic created while it runs Ready within 2 s, and the
event loop never held up for more than 100 ms; about 10 ms of CPU per change is accepted. On kmock: 3 ms of CPU per event and 300 MB.

``--rate N`` paces the users to N requests a second (51: the pace of the 10,000-KafkaTopic figures); 0 sends
them as fast as the server answers. ``--skip`` leaves phases out (at 50,000 each paced phase takes 16 minutes).
``--floor kopf`` and ``--floor raw`` replace the operator's KafkaTopic handling by the least work per change (a
status and an Event), done by kopf's handlers or by one aiohttp watch without kopf.

``--memory`` shows what holds the operator's memory at the highest point of the event phases and after them
(tracemalloc, which slows the run and adds its own memory to the peak RSS).
``--profile`` samples the operator's process with py-spy (``pip install py-spy``) and splits the CPU between kopf, the
operator's own code, kazoo, aiohttp/the HTTP stack, and the rest.

Run: ``.venv/bin/python bench/operator_events.py --apiserver real --topics 50000 --rate 51 --clients 8
--skip label,check,drift --drift-interval 3600`` (about 40 minutes: the outside run's settings; the checks
need a short interval);
``[--operator in-process [--floor kopf|raw] [--memory]] [--profile] [--setting worker_limit=1000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token"
NS = "bench"
API = "kto.dev/v1alpha1"
RACK_NAMES = ("rack-a", "rack-b", "rack-c")
NEW_LABEL = "kto-bench-new"
"""The label of the KafkaTopics the check phase creates while a drift check runs (watched on their own)."""
TARGETS = {
    # On kopf's API emulator, which answers faster than a real API server.
    "kmock": {"CPU per event ms": 3.0, "peak RSS MB": 300.0},
    # On a real kube-apiserver, up to 50,000 KafkaTopics (200,000 partitions): every KafkaTopic settled within
    # 5 s of the last create or update, a restart ready within 120 s, a drift check within 10 s, a KafkaTopic
    # created while it runs Ready within 2 s, the event loop never held up for more than 100 ms. About 10 ms of
    # CPU per change is what kopf's watch and the real work cost: accepted, and printed.
    "real": {
        "CPU per event ms": 10.0,
        "peak RSS MB": 500.0,
        "settled s": 5.0,
        "restart s": 120.0,
        "check s": 10.0,
        "new Ready s": 2.0,
        "held up ms": 100.0,
    },
}


# -- the load generator (a process of its own) ---------------------------------------------------------------------


class _Settling:
    """What the users see settle: one list, then a watch of the kind, keeping each object's observedGeneration
    and whether it is Ready. Cheaper for the API server than listing 10,000 objects every few seconds (which a
    real one would pay for, and which would weigh on the figures), and exact: the moment the last object
    settles is seen as it happens."""

    def __init__(self, session: Any, base: str, plural: str, selector: str = "") -> None:
        self.session, self.url, self.plural = session, f"{base}/{plural}", plural
        self.selector = {"labelSelector": selector} if selector else {}
        self.seen: dict[str, tuple[int | None, bool]] = {}
        self.ready_at: dict[str, float] = {}
        """When each object was first seen Ready (Unix time)."""
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def _note(self, body: dict[str, Any]) -> None:
        status = body.get("status") or {}
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
        )
        self.seen[body["metadata"]["name"]] = (status.get("observedGeneration"), ready)
        if ready and body["metadata"]["name"] not in self.ready_at:
            self.ready_at[body["metadata"]["name"]] = time.time()
        self.changed.set()

    async def start(self) -> None:
        version = await self._list()
        self.task = asyncio.create_task(self._watch(version))

    async def _list(self) -> str:
        async with self.session.get(self.url, params={"limit": "500", **self.selector}) as response:
            listed = await response.json()
        for body in listed["items"]:
            self._note(body)
        cont = listed["metadata"].get("continue")
        while cont:
            params = {"limit": "500", "continue": cont, **self.selector}
            async with self.session.get(self.url, params=params) as response:
                page = await response.json()
            for body in page["items"]:
                self._note(body)
            cont = page["metadata"].get("continue")
        return str(listed["metadata"].get("resourceVersion", ""))

    async def _watch(self, version: str) -> None:
        import aiohttp

        forever = aiohttp.ClientTimeout(total=None, sock_read=None)
        while True:
            params = {
                "watch": "true",
                "resourceVersion": version,
                "allowWatchBookmarks": "true",
                **self.selector,
            }
            async with self.session.get(self.url, params=params, timeout=forever) as response:
                async for line in response.content:
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    body = event["object"]
                    if event["type"] == "ERROR":  # 410 Gone: list again
                        version = await self._list()
                        break
                    version = body.get("metadata", {}).get("resourceVersion", version)
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self._note(body)

    def settled(self, generation: int) -> int:
        return sum(1 for observed, ready in self.seen.values() if observed == generation and ready)

    async def until(self, generation: int, count: int, timeout: float = 1800) -> float:
        """Until ``count`` objects are Ready at ``generation``; the monotonic time it happened."""
        deadline = time.monotonic() + timeout
        while self.settled(generation) < count:
            self.changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeError(
                    f"{self.plural} not settled at generation {generation} within {timeout:g} s"
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(remaining, 5.0))
        return time.monotonic()

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


DEPLOYMENT = "deployment"
USER = "user"
"""How the operator is set up (``--setup``): as the install's Deployment runs it, or as a user tries it."""

POST = "post"
KUBECTL_APPLY = "kubectl-apply"
KUBECTL_MANAGER = "kubectl-client-side-apply"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _topic_object(name: str, partitions: int, retention_ms: int) -> dict[str, Any]:
    """The KafkaTopic every user declares: three overrides."""
    return {
        "apiVersion": API, "kind": "KafkaTopic", "metadata": {"name": name, "namespace": NS},
        "spec": {"cluster": "main", "partitions": partitions, "replicas": 3,
                 "config": {"retention.ms": retention_ms, "cleanup.policy": "delete", "min.insync.replicas": 2}},
    }  # fmt: skip


def _last_applied(applied: dict[str, Any]) -> str:
    """The annotation ``kubectl apply`` keeps: the object as applied, compact JSON, then a newline."""
    return json.dumps(applied, separators=(",", ":")) + "\n"


def _as_kubectl_applies(applied: dict[str, Any]) -> dict[str, Any]:
    """What ``kubectl apply`` creates: the object, annotated with itself."""
    created: dict[str, Any] = json.loads(json.dumps(applied))
    created["metadata"]["annotations"] = {LAST_APPLIED: _last_applied(applied)}
    return created


def _kubectl_apply_patch(applied: dict[str, Any]) -> dict[str, Any]:
    """What ``kubectl apply`` patches when one key changed: the key, and the annotation rewritten."""
    return {
        "metadata": {"annotations": {LAST_APPLIED: _last_applied(applied)}},
        "spec": {"config": {"retention.ms": applied["spec"]["config"]["retention.ms"]}},
    }


async def _loadgen(
    url: str,
    phase: str,
    topics: int,
    connect: str,
    rate: float,
    clients: int,
    token: str,
    ca: str | None,
    partitions: int = 4,
    new_at: list[float] | None = None,
    users: str = POST,
) -> dict[str, Any]:
    """One phase's requests, ``clients`` at a time; with ``rate`` > 0, the n-th request starts no earlier than
    n / rate seconds after the first (a set pace, instead of as fast as the server answers). ``users``: ``post``
    sends the bare objects and merge patches; ``kubectl-apply`` sends what ``kubectl apply`` sends (the object
    with its ``last-applied-configuration`` annotation, then a patch that changes the key and the annotation,
    as the field manager ``kubectl-client-side-apply``)."""
    import ssl

    import aiohttp

    headers = {"Authorization": f"Bearer {token}"}
    base = f"{url}/apis/{API}/namespaces/{NS}"
    gate = asyncio.Semaphore(clients)
    writes = 0
    issued = 0
    loop = asyncio.get_running_loop()
    first = loop.time()
    connector = aiohttp.TCPConnector(
        ssl=ssl.create_default_context(cafile=ca) if ca else False, limit=clients + 4
    )

    async def paced() -> None:
        nonlocal issued
        due = first + issued / rate if rate > 0 else 0.0
        issued += 1
        if due > loop.time():
            await asyncio.sleep(due - loop.time())

    async with aiohttp.ClientSession(headers=headers, connector=connector) as session:

        async def call(method: str, path: str, body: Any, content_type: str = "application/json") -> None:
            nonlocal writes
            await paced()
            async with gate, session.request(method, f"{base}{path}", data=json.dumps(body),
                                             headers={"Content-Type": content_type}) as response:  # fmt: skip
                if response.status >= 300:
                    raise RuntimeError(f"{method} {path}: {response.status} {await response.text()}")
                writes += 1

        plural = "kafkaclusters" if phase == "cluster" else "kafkatopics"
        watch = _Settling(session, base, plural, selector=NEW_LABEL if phase == "new" else "")
        await watch.start()
        names = [f"topic-{i:05d}" for i in range(topics)]
        merge = "application/merge-patch+json"
        started = time.monotonic()
        try:
            if phase == "cluster":
                await call("POST", "/kafkaclusters", {"apiVersion": API, "kind": "KafkaCluster",
                                                      "metadata": {"name": "main", "namespace": NS},
                                                      "spec": {"zookeeper": {"connect": connect}}})  # fmt: skip
                done = time.monotonic()
                settled_at = await watch.until(1, 1)
            elif phase == "create":
                if users == KUBECTL_APPLY:
                    await asyncio.gather(*(call("POST", f"/kafkatopics?fieldManager={KUBECTL_MANAGER}",
                                                _as_kubectl_applies(_topic_object(name, partitions, 604800000)))
                                           for name in names))  # fmt: skip
                else:
                    await asyncio.gather(*(call("POST", "/kafkatopics", _topic_object(name, partitions, 604800000))
                                           for name in names))  # fmt: skip
                done = time.monotonic()
                settled_at = await watch.until(1, topics)
            elif phase == "update":
                if users == KUBECTL_APPLY:
                    await asyncio.gather(*(call("PATCH", f"/kafkatopics/{name}?fieldManager={KUBECTL_MANAGER}",
                                                _kubectl_apply_patch(_topic_object(name, partitions, 86400000)),
                                                merge) for name in names))  # fmt: skip
                else:
                    patch = {"spec": {"config": {"retention.ms": 86400000}}}
                    await asyncio.gather(
                        *(call("PATCH", f"/kafkatopics/{name}", patch, merge) for name in names)
                    )
                done = time.monotonic()
                settled_at = await watch.until(2, topics)
            elif phase == "new":  # one KafkaTopic at each of the given Unix times: created while a check runs
                created: dict[str, float] = {}

                async def create_at(index: int, when: float) -> None:
                    await asyncio.sleep(max(when - time.time(), 0.0))
                    name = f"new-{index:02d}"
                    created[name] = time.time()
                    await call("POST", "/kafkatopics", {
                        "apiVersion": API, "kind": "KafkaTopic",
                        "metadata": {"name": name, "namespace": NS, "labels": {NEW_LABEL: "true"}},
                        "spec": {"cluster": "main", "partitions": partitions, "replicas": 3},
                    })  # fmt: skip

                await asyncio.gather(*(create_at(i, when) for i, when in enumerate(new_at or ())))
                done = time.monotonic()
                settled_at = await watch.until(1, len(created))
                return {
                    "requests_took": done - started,
                    "settled_after": max(settled_at - done, 0.0),
                    "writes": writes,
                    "created": created,
                    "ready_after": {name: watch.ready_at[name] - at for name, at in created.items()},
                }
            elif phase == "label":
                patch = {"metadata": {"labels": {"team": "platform"}}}
                await asyncio.gather(*(call("PATCH", f"/kafkatopics/{name}", patch, merge) for name in names))
                done = settled_at = time.monotonic()
            else:
                raise SystemExit(f"unknown phase {phase}")
        finally:
            await watch.stop()
    return {"requests_took": done - started, "settled_after": max(settled_at - done, 0.0), "writes": writes}


# -- the operator (this process) -------------------------------------------------------------------------------------


class EmulatorWrites:
    """Every write the emulator took (its ``/_kto/stats``), the load generator's included."""

    includes_users = True

    def __init__(self, url: str) -> None:
        self.url = url

    def writes(self) -> dict[str, int]:
        request = urllib.request.Request(
            f"{self.url}/_kto/stats", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        with urllib.request.urlopen(request, timeout=300) as response:
            writes: dict[str, int] = json.loads(response.read())["writes"]
            return writes


class AuditedWrites:
    """The operator's writes as the real API server's audit log records them: the requests of the operator's
    ServiceAccount (the load generator, an admin, is not in the log), read on from where the last look ended."""

    includes_users = False
    VERBS = frozenset({"create", "update", "patch", "delete"})

    def __init__(self, log: Path, username: str) -> None:
        self.log, self.username = log, username
        self.offset = 0
        self.unreadable = 0
        """Lines of the audit log that were not JSON (reported with the figures)."""
        self.counts: collections.Counter[str] = collections.Counter()

    def writes(self) -> dict[str, int]:
        if self.log.stat().st_size < self.offset:
            self.offset = 0  # the log was started anew
        with self.log.open("rb") as file:
            file.seek(self.offset)
            for line in file:
                if not line.endswith(b"\n"):
                    break  # half written: read it next time
                self.offset += len(line)
                try:
                    event = json.loads(line)
                except (
                    ValueError
                ):  # a line the API server did not write whole (a 50,000-KafkaTopic run met one)
                    self.unreadable += 1
                    continue
                if (
                    event.get("user", {}).get("username") != self.username
                    or event.get("verb") not in self.VERBS
                ):
                    continue
                ref = event.get("objectRef") or {}
                resource = ref.get("resource", "?") + (
                    f"/{ref['subresource']}" if ref.get("subresource") else ""
                )
                self.counts[f"{event['verb']} {resource}"] += 1
        return dict(self.counts)


def _delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}


COMPILED_CLASSES = 4
"""Generated classes ``--compile-beside`` compiles, over and over: about 7 s and 1.6 cores a round on two cores."""

AUTOGROUPS = Path("/proc/sys/kernel/sched_autogroup_enabled")


def _java_class(index: int, methods: int = 1500) -> str:
    """A class of ``methods`` arithmetic methods: enough to keep javac busy for seconds."""
    lines = [f"public class Busy{index} {{"]
    for m in range(methods):
        terms = " + ".join(
            f"(a{(m + t) % 7} * {(m * 31 + t * 17) % 97 + 1} ^ (b >> {t + 1}))" for t in range(8)
        )
        lines.append(f"  static long m{m}(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long b) "
                     f"{{ return {terms}; }}")  # fmt: skip
    lines.append("}")
    return "\n".join(lines)


@contextlib.contextmanager
def _compile_beside(work: Path) -> Any:
    """A Java compile at the lowest priority (niceness 19), over and over for the whole run, in a session of its
    own as a command typed in another terminal is: the load the outside run had beside the operator. Where the
    kernel groups each session's processes (its autogroups, ``AUTOGROUPS`` 1: the default of most distributions),
    niceness ranks processes only within their session, so the compile's session is given as much of the CPU as
    the operator's, not only what the operator leaves idle (``man 7 sched``)."""
    javac = shutil.which("javac")
    if javac is None:
        raise SystemExit("--compile-beside: there is no javac (Debian: default-jdk-headless)")
    sources, classes = work / "compile-beside", work / "compile-beside-classes"
    sources.mkdir()
    for index in range(COMPILED_CLASSES):
        (sources / f"Busy{index}.java").write_text(_java_class(index))
    files = " ".join(str(path) for path in sorted(sources.glob("*.java")))
    loop = f"while true; do {javac} -d {classes} {files} >/dev/null 2>&1; done"
    compiling = subprocess.Popen(["nice", "-n", "19", "bash", "-c", loop], start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    grouped = AUTOGROUPS.read_text().strip() == "1" if AUTOGROUPS.exists() else False
    print(
        json.dumps({"a Java compile beside the run, at niceness 19": True, "autogroups": grouped}), flush=True
    )
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(compiling.pid, signal.SIGKILL)
        compiling.wait(10)


def _descendants(root: int) -> list[int]:
    """The processes below ``root`` (read from ``/proc``), deepest last."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _renice(pids: list[int], niceness: int) -> None:
    """Every thread of ``pids`` at ``niceness`` (Linux sets it per thread; threads made later inherit it)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    os.setpriority(os.PRIO_PROCESS, int(task.name), niceness)


async def _run_loadgen(
    phases: Phases, phase: str, connect: str, new_at: list[float] | None = None
) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--loadgen", phase, "--url", phases.url, "--topics", str(phases.topics),
        "--connect", connect, "--rate", str(phases.rate), "--clients", str(phases.clients), "--token",
        phases.token, *(("--ca", str(phases.ca)) if phases.ca else ()), "--partitions", str(phases.partitions),
        "--users", phases.users, *(("--new-at", ",".join(map(str, new_at))) if new_at else ()), stdout=subprocess.PIPE,
    )  # fmt: skip
    if phases.others_nice:
        _renice([process.pid, *phases.servers], phases.others_nice)
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"load generator {phase} failed ({process.returncode})")
    result: dict[str, Any] = json.loads(out)
    return result


class ThisProcess:
    """The operator running in this process: its CPU, peak and current RSS."""

    name = "this process"

    def cpu(self) -> float:
        return time.process_time()

    def peak_mb(self) -> int:
        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)

    def now_mb(self) -> int:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20)

    def threads(self) -> dict[str, float]:
        """CPU seconds so far of each kind of thread alive now, from ``/proc/self/task`` (exact, unlike a
        sampling profiler's shares). A thread that ended meanwhile is missing: the phase row's "other"."""
        by_kind: dict[str, float] = collections.defaultdict(float)
        for thread in threading.enumerate():
            try:
                by_kind[_thread_kind(thread)] += _cpu_seconds(
                    Path(f"/proc/self/task/{thread.native_id}/stat")
                )
            except OSError:
                continue
        return dict(by_kind)


def _cpu_seconds(stat: Path) -> float:
    """utime + stime of a process or thread, from its ``/proc/.../stat`` (fields after the command's ``)``)."""
    fields = stat.read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _thread_kind(thread: threading.Thread) -> str:
    if thread is threading.main_thread():
        return "event loop"  # kopf, our handlers, aiohttp, the status and Event posting
    if thread.name.startswith("kto-"):
        return "cluster thread"  # the batches: plan, the pipelined writes, the re-reads, the watched view
    if "zk_loop" in thread.name or "_thread_worker" in thread.name:
        return "kazoo threads"
    return "other threads"


class OtherProcess:
    """The operator as a process of its own (``kto run``), read from ``/proc``: its CPU since it started, its
    peak RSS (``VmHWM``) and its RSS now (``VmRSS``)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.name = f"kto run (pid {process.pid})"

    def cpu(self) -> float:
        return _cpu_seconds(Path(f"/proc/{self.process.pid}/stat"))

    def _status_mb(self, key: str) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return round(int(line.split()[1]) / 1024)
        raise RuntimeError(f"no {key} for pid {self.process.pid}")

    def peak_mb(self) -> int:
        return self._status_mb("VmHWM")

    def now_mb(self) -> int:
        return self._status_mb("VmRSS")

    def loop_lag(self, metrics_url: str) -> dict[str, float]:
        """The process's own ``kto_event_loop_lag_seconds`` (cumulative buckets, le -> count, and the count):
        the event loop's lateness as the operator measures it, since the bench's own probe cannot reach a loop
        in another process."""
        from prometheus_client.parser import text_string_to_metric_families

        with urllib.request.urlopen(metrics_url, timeout=30) as answer:
            text = answer.read().decode()
        found: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            if family.name != "kto_event_loop_lag_seconds":
                continue
            for sample in family.samples:
                if sample.name.endswith("_bucket"):
                    found[sample.labels["le"]] = found.get(sample.labels["le"], 0.0) + sample.value
                elif sample.name.endswith("_count"):
                    found["count"] = found.get("count", 0.0) + sample.value
        return found


def _late_wake_ups(before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    """Between two scrapes of ``kto_event_loop_lag_seconds``: the wake-ups more than 100 ms late, and the
    bucket the latest fell in (the histogram's resolution: the bound it is under)."""

    def delta(le: str) -> float:
        return after.get(le, 0.0) - before.get(le, 0.0)

    total = delta("count")
    worst = "none"
    for bound in sorted((float(le), le) for le in after if le not in ("count", "+Inf")):
        if total - delta(bound[1]) <= 0:
            worst = f"<= {bound[0] * 1000:g} ms"
            break
    else:
        worst = "beyond the largest bucket" if total else "none"
    return {"wake-ups > 100 ms late": int(total - delta("0.1")), "latest": worst}


def _threads_delta(before: dict[str, float], after: dict[str, float], total: float) -> dict[str, float]:
    """CPU of each kind of thread over a phase; threads started or ended within it count as "other"."""
    spent = {kind: after[kind] - before.get(kind, 0.0) for kind in after}
    spent["other threads"] = total - sum(v for k, v in spent.items() if k != "other threads")
    return {kind: seconds for kind, seconds in spent.items() if seconds > 0.0005}


class LoopLag:
    """How late the event loop runs, sampled on the operator's own loop (it runs in this process): a sleep of
    ``every`` seconds that ends later than asked says the loop was held by something else for that long (a
    callback that did not yield, or the other threads holding Python's lock).

    A watcher thread tells these apart: while a sleep is overdue by more than ``stall`` seconds it samples the
    loop thread's stack every few milliseconds and, when the loop runs again, keeps the hold-up with the loop
    thread's own CPU and the other threads' over the part it watched (the loop thread busy: a callback ran; the
    other threads busy: they held Python's lock; neither: the machine's cores were busy elsewhere), and the stacks
    the loop thread was seen in."""

    def __init__(self, every: float = 0.01, stall: float = 0.05) -> None:
        self.every, self.stall = every, stall
        self.samples: list[tuple[float, float]] = []
        """(monotonic time the late sleep ended, how late it was), for every sleep later than 5 ms."""
        self.hold_ups: list[dict[str, Any]] = []
        """Each hold-up longer than ``stall``: when it ended, how long, the loop thread's CPU, its stacks."""
        self._beat = time.monotonic()
        self._loop_thread: int | None = None
        self._stopped = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="bench-loop-watcher", daemon=True)

    async def run(self) -> None:
        self._loop_thread = threading.get_ident()
        self._watcher.start()
        try:
            while True:
                asked = time.monotonic()
                self._beat = asked
                await asyncio.sleep(self.every)
                ended = time.monotonic()
                self._beat = ended
                late = ended - asked - self.every
                if late > 0.005:
                    self.samples.append((ended, late))
        finally:
            self._stopped.set()

    def _watch(self) -> None:
        """Sample the loop thread while it is overdue; keep one record per hold-up."""
        assert self._loop_thread is not None
        clock = time.pthread_getcpuclockid(self._loop_thread)
        current: dict[str, Any] | None = None
        while not self._stopped.wait(0.005):
            beat = self._beat
            overdue = time.monotonic() - beat - self.every
            if overdue > self.stall:
                if current is None or current["beat"] != beat:
                    current = {
                        "beat": beat,
                        "seen": time.monotonic(),
                        "cpu": time.clock_gettime(clock),
                        "process cpu": time.process_time(),
                        "threads": _thread_clocks(),
                        "stacks": collections.Counter(),
                    }
                frame = sys._current_frames().get(self._loop_thread)
                if frame is not None:
                    current["stacks"][_stack_summary(frame)] += 1
            elif current is not None:
                loop_cpu = time.clock_gettime(clock) - current["cpu"]
                self.hold_ups.append({
                    "ended": time.monotonic(),
                    "held ms": round(1000 * (self._beat - current["beat"] - self.every)),
                    "watched ms": round(1000 * (self._beat - current["seen"])),
                    "loop thread CPU ms": round(1000 * loop_cpu),
                    "other threads CPU ms": round(1000 * (time.process_time() - current["process cpu"] - loop_cpu)),
                    "busiest threads ms": _busiest(current["threads"], _thread_clocks()),
                    "stacks": current["stacks"].most_common(3),
                })  # fmt: skip
                current = None

    def worst(self, start: float, end: float) -> float:
        """The longest hold-up overlapping ``start``..``end`` (monotonic), in seconds."""
        return max(
            (late for ended, late in self.samples if ended >= start and ended - late <= end), default=0.0
        )

    def longest(self, start: float, end: float, count: int = 3) -> list[dict[str, Any]]:
        """The ``count`` longest hold-ups that ended between ``start`` and ``end``, with what the loop did."""
        within = [h for h in self.hold_ups if start <= h["ended"] <= end]
        return [
            {k: v for k, v in h.items() if k != "ended"}
            for h in sorted(within, key=lambda h: -h["held ms"])[:count]
        ]


def _thread_clocks() -> dict[str, float]:
    """Each live thread's CPU so far, by name (asyncio's ``to_thread`` workers, kazoo's, the clusters')."""
    clocks: dict[str, float] = {}
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        with contextlib.suppress(OSError, ProcessLookupError):
            clocks[thread.name] = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    return clocks


def _busiest(before: dict[str, float], after: dict[str, float], count: int = 3) -> dict[str, int]:
    """The ``count`` threads that used the most CPU between two ``_thread_clocks``, in ms."""
    spent = {name: after[name] - before.get(name, 0.0) for name in after}
    top = sorted(spent.items(), key=lambda item: -item[1])[:count]
    return {name: round(1000 * seconds) for name, seconds in top if seconds >= 0.001}


def _stack_summary(frame: Any, depth: int = 6) -> str:
    """The innermost ``depth`` frames of a stack as ``file:function:line``, innermost first, outside asyncio's
    own loop machinery (which is in every sample and says nothing)."""
    parts: list[str] = []
    while frame is not None and len(parts) < depth:
        code = frame.f_code
        name = code.co_filename.rsplit("/", 2)
        where = "/".join(name[-2:])
        if not where.startswith("asyncio/") or not parts:
            parts.append(f"{where}:{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(parts)


class GcPauses:
    """Python's cyclic garbage collections in this process, timed (``gc.callbacks``): a collection of the oldest
    generation walks every tracked object, so with tens of thousands of KafkaTopics it is where the event loop
    stops longest."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, int, float]] = []
        """(monotonic end, generation, seconds) of each collection."""
        self._began = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.monotonic()
        else:
            now = time.monotonic()
            self.pauses.append((now, info["generation"], now - self._began))

    def between(self, start: float, end: float) -> dict[str, float]:
        """The longest pause of each generation, and the total, between ``start`` and ``end`` (monotonic)."""
        seen = [(generation, took) for ended, generation, took in self.pauses if start <= ended <= end]
        longest = {
            f"gen{g} max ms": round(1000 * max((t for gg, t in seen if gg == g), default=0.0))
            for g in range(3)
        }
        return {
            **longest,
            "total s": round(sum(t for _, t in seen), 2),
            "gen2 count": sum(g == 2 for g, _ in seen),
        }

    def close(self) -> None:
        gc.callbacks.remove(self._note)


class Phases:
    def __init__(
        self,
        url: str,
        topics: int,
        writes: EmulatorWrites | AuditedWrites,
        *,
        rate: float = 0.0,
        clients: int = 32,
        token: str = TOKEN,
        ca: Path | None = None,
        partitions: int = 4,
        users: str = POST,
    ) -> None:
        self.url, self.topics, self.rate, self.clients = url, topics, rate, clients
        self.users = users
        self.server = writes
        self.token, self.ca = token, ca
        self.rows: list[dict[str, Any]] = []
        self.operator: ThisProcess | OtherProcess = ThisProcess()
        """Whose CPU and memory the phases measure: this process, or the restarted ``kto run``."""
        self.partitions = partitions
        self.check: dict[str, Any] = {}
        """The check phase's figures (``_check_phase``)."""
        self.gc: GcPauses | None = None
        """Python's garbage collections, while the operator runs in this process."""
        self.lag: LoopLag | None = None
        """The event loop's lateness, while the operator runs in this process."""
        self.others_nice = 0
        """The niceness of every process of the run but the operator (``--others-nice``; 0: as started)."""
        self.servers: list[int] = []
        """The servers' processes (API server, etcd, ZooKeeper), reniced with the load generators."""
        self.after_ready_mb: int | None = None
        """The restarted operator's RSS 20 s after it answered ``/readyz``."""
        self.stopped_s: float | None = None
        """How long the first ``kto run`` took to exit after its SIGTERM: a user's restart waits for it too."""
        self.metrics_url = ""
        """The operator's ``/metrics``, where it runs as its own process (its event loop's lateness)."""

    async def measure(self, name: str, events: int, work: Any, at_least: float = 2.0) -> dict[str, Any]:
        """Run ``work`` (a coroutine), then wait ``at_least`` seconds and until the operator is idle (the echoes
        of its own writes and every batch done), and record its CPU and writes over that time."""
        operator = self.operator
        # The writes are counted off the event loop: at 50,000 KafkaTopics a phase's audit log is hundreds of
        # thousands of lines, whose parsing on the loop held it up for a second (the bench's work, not the operator's).
        before, cpu = await asyncio.to_thread(self.server.writes), operator.cpu()
        threads = operator.threads() if isinstance(operator, ThisProcess) else {}
        lag_before = await self._exported_lag(operator)
        started = time.monotonic()
        result = await work
        result = result if isinstance(result, dict) else {}
        await asyncio.sleep(at_least)
        quiet = at_least + await _until_idle(operator)
        cpu = operator.cpu() - cpu
        by_thread = (
            _threads_delta(threads, operator.threads(), cpu) if isinstance(operator, ThisProcess) else {}
        )
        writes = _delta(await asyncio.to_thread(self.server.writes), before)
        users = (result or {}).get("writes", 0)
        operator_writes = dict(writes)
        own_key = {
            "create": "create kafkatopics",
            "update": "update kafkatopics",
            "label": "update kafkatopics",
        }
        if (
            name in own_key and self.server.includes_users
        ):  # the load generator's requests are not the operator's
            operator_writes[own_key[name]] = operator_writes.get(own_key[name], 0) - users
        operator_writes = {k: v for k, v in operator_writes.items() if v}
        lease_writes = sum(
            operator_writes.pop(k) for k in [k for k in operator_writes if k.endswith(" leases")]
        )
        row = {
            "phase": name,
            "events": events,
            "wall s": round(time.monotonic() - started - quiet, 1),
            "requests took s": round((result or {}).get("requests_took", 0.0), 1),
            "settled after last request s": round((result or {}).get("settled_after", 0.0), 1),
            "operator CPU s": round(cpu, 1),
            "CPU per event ms": round(1000 * cpu / max(events, 1), 2),
            "CPU per event ms, by thread": {
                k: round(1000 * v / max(events, 1), 2) for k, v in by_thread.items()
            },
            "operator writes": operator_writes,
            "writes per event": round(sum(operator_writes.values()) / max(events, 1), 2),
            "leader Lease writes": lease_writes,
            "event loop held up at most ms": (
                round(1000 * self.lag.worst(started, time.monotonic()))
                if self.lag is not None and isinstance(operator, ThisProcess)
                else None
            ),
            "garbage collections": (
                self.gc.between(started, time.monotonic())
                if self.gc is not None and isinstance(operator, ThisProcess)
                else None
            ),
            "longest hold-ups": (
                self.lag.longest(started, time.monotonic())
                if self.lag is not None and isinstance(operator, ThisProcess)
                else None
            ),
            "event loop, from kto_event_loop_lag_seconds": (
                _late_wake_ups(lag_before, lag_after)
                if (lag_after := await self._exported_lag(operator)) and lag_before
                else None
            ),
            "peak RSS MB so far": operator.peak_mb(),
            "RSS MB now": operator.now_mb(),
            "process": operator.name,
        }
        self.rows.append(row)
        print(json.dumps(row), flush=True)
        return row

    async def _exported_lag(self, operator: ThisProcess | OtherProcess) -> dict[str, float]:
        if not isinstance(operator, OtherProcess) or not self.metrics_url:
            return {}
        try:
            return await asyncio.to_thread(operator.loop_lag, self.metrics_url)
        except OSError:  # between two processes, or not serving yet
            return {}


async def _until_idle(
    operator: ThisProcess | OtherProcess, window: float = 2.0, busy: float = 0.02, limit: float = 600.0
) -> float:
    """Wait until the operator used less than ``busy`` of a core over ``window`` seconds; returns the wait."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        cpu = operator.cpu()
        await asyncio.sleep(window)
        if operator.cpu() - cpu < busy * window:
            break
    return time.monotonic() - started


def _answers_200(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


async def _until_ready(
    url: str, limit: float = 900.0, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Poll the operator's ``/readyz`` until it answers 200, from a thread (the operator may serve it on this
    loop); a ``process`` that ends meanwhile ends the wait at once."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if await asyncio.to_thread(_answers_200, url):
            return
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"kto run ended with {process.returncode} before it was ready")
        await asyncio.sleep(0.5)
    raise TimeoutError(f"{url} did not answer 200 within {limit:g} s")


_FLOOR_READY = {"type": "Ready", "status": "True", "reason": "Created", "message": "done",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}  # fmt: skip
"""The one condition a floor writes per change."""


def _floor_registry(*, topics: bool = True) -> Any:
    """kopf with the least an operator can do per KafkaTopic event: a watch-event handler keeping one claim, a
    handler that writes a Ready status and posts one Event, kopf's settings as the operator has them. Nothing of
    ours runs: what this costs per event is kopf's own floor. Without ``topics``, kopf handles the KafkaCluster
    alone (the raw floor watches the KafkaTopics itself: ``_raw_topic_floor``)."""
    import kopf

    from topic_operator.k8s.handlers import CLUSTERS, TOPICS
    from topic_operator.k8s.process.login import register_logins

    registry = kopf.OperatorRegistry()
    register_logins(registry)

    claims: dict[str, str] = {}

    async def seen(
        body: kopf.Body, **_: Any
    ) -> None:  # as the operator keeps its claims: one per watch event
        claims[str(body["metadata"]["uid"])] = str(
            body.get("spec", {}).get("topicName", body["metadata"]["name"])
        )

    async def handled(body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
        patch.status.update(observedGeneration=body["metadata"]["generation"], conditions=[_FLOOR_READY])
        kopf.event(body, type="Normal", reason="Created", message="done")

    if topics:
        kopf.on.event(*TOPICS, registry=registry)(seen)
    for kind in (TOPICS, CLUSTERS) if topics else (CLUSTERS,):
        for decorator in (kopf.on.resume, kopf.on.create, kopf.on.update):
            decorator(*kind, registry=registry, id="handled")(handled)
    return registry


async def _raw_topic_floor(url: str, token: str = TOKEN, ca: str | None = None) -> None:
    """The same least work per KafkaTopic event with no kopf at all: one list and watch over aiohttp, a claim
    kept per event, and for each new generation one status merge-patch and one Event. What the Kubernetes side
    costs per event when nothing but the HTTP and JSON work is done."""
    import aiohttp

    base = f"{url}/apis/{API}/namespaces/{NS}/kafkatopics"
    claims: dict[str, str] = {}
    running: set[asyncio.Task[None]] = set()
    gate = asyncio.Semaphore(64)

    import ssl

    context = ssl.create_default_context(cafile=str(ca)) if ca else None
    connector = aiohttp.TCPConnector(limit=16, ssl=context if context is not None else True)
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(headers=headers, connector=connector) as session:

        async def handle(metadata: dict[str, Any]) -> None:
            status = {"status": {"observedGeneration": metadata["generation"], "conditions": [_FLOOR_READY]}}
            event = {"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "kto-", "namespace": NS},
                     "involvedObject": {"apiVersion": API, "kind": "KafkaTopic", "name": metadata["name"],
                                        "namespace": NS, "uid": metadata["uid"]},
                     "reason": "Created", "message": "done", "type": "Normal",
                     "source": {"component": "kafka-topic-operator"}, "count": 1,
                     "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z"}  # fmt: skip
            async with gate:
                async with session.patch(f"{base}/{metadata['name']}/status", data=json.dumps(status),
                                         headers={"Content-Type": "application/merge-patch+json"}) as answer:  # fmt: skip
                    await answer.read()
                async with session.post(f"{url}/api/v1/namespaces/{NS}/events", data=json.dumps(event),
                                        headers={"Content-Type": "application/json"}) as answer:  # fmt: skip
                    await answer.read()

        def seen(body: dict[str, Any]) -> None:
            metadata = body["metadata"]
            claims[metadata["uid"]] = body.get("spec", {}).get("topicName", metadata["name"])
            if (body.get("status") or {}).get("observedGeneration") != metadata.get("generation"):
                task = asyncio.get_running_loop().create_task(handle(metadata))
                running.add(task)
                task.add_done_callback(running.discard)

        async with session.get(base) as answer:
            listed = await answer.json()
        for body in listed["items"]:
            seen(body)
        version = listed["metadata"].get("resourceVersion", "")
        forever = aiohttp.ClientTimeout(total=None)
        while True:
            params = {"watch": "true", "resourceVersion": version}
            async with session.get(base, params=params, timeout=forever) as answer:
                async for line in answer.content:
                    if line.strip():
                        event = json.loads(line)
                        version = event["object"]["metadata"].get("resourceVersion", version)
                        if event["type"] in ("ADDED", "MODIFIED"):
                            seen(event["object"])


async def _with_raw_floor(operator: Any, phases: Phases) -> None:
    """``operator`` (kopf, KafkaClusters only) with the raw KafkaTopic floor beside it, until it stops."""
    watch = asyncio.create_task(
        _raw_topic_floor(phases.url, phases.token, str(phases.ca) if phases.ca else None)
    )
    try:
        await operator
    finally:
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch


async def _operator_session(
    settings: Any, phases: Phases, plan: list[str], connect: str, floor: str | None
) -> Any:
    from topic_operator.k8s.operate import operate

    stop = asyncio.Event()
    registry = _floor_registry(topics=floor != "raw") if floor else None
    operator = operate(settings, stop_flag=stop, registry=registry)
    task = asyncio.create_task(_with_raw_floor(operator, phases) if floor == "raw" else operator)
    await asyncio.sleep(2)  # login and first lists
    for phase in plan:
        events = 1 if phase == "cluster" else phases.topics
        await phases.measure(phase, events, _run_loadgen(phases, phase, connect))
    return stop, task


async def _main(args: argparse.Namespace) -> None:
    from kazoo.client import KazooClient

    from topic_operator.k8s.process.settings import OperatorSettings
    from topic_operator.testing.local_server import LocalZooKeeper, free_port
    from topic_operator.testing.simulated_brokers import bootstrap_cluster, register_brokers

    work = Path(tempfile.mkdtemp(prefix="kto-bench-operator-"))
    (work / "home").mkdir()
    stack = contextlib.ExitStack()
    try:
        if args.compile_beside:
            stack.enter_context(_compile_beside(work))
        api = stack.enter_context(
            _real_api(work, args.setup) if args.apiserver == "real" else _emulated_api(work)
        )
        url = api.url
        os.environ.update(KUBECONFIG=str(api.kubeconfig), HOME=str(work / "home"))
        with LocalZooKeeper() as zookeeper:
            admin = KazooClient(hosts=f"{zookeeper.connect_string}/kafka")
            admin.start(10)
            admin.ensure_path("/")
            bootstrap_cluster(admin, "bench-cluster")
            register_brokers(admin, [RACK_NAMES[i % len(RACK_NAMES)] for i in range(args.brokers)])
            connect = f"{zookeeper.connect_string}/kafka"
            settings = OperatorSettings(
                namespaces=(NS,), metrics_port=free_port(), health_port=free_port(), listen_host="127.0.0.1",
                drift_interval=args.drift_interval, material_dir=work / "material", log_level="warning",
                lease_namespace=api.lease_namespace, log_format="plain", **_overrides(args.setting),
            )  # fmt: skip
            profiler = _start_profiler(work, os.getpid()) if args.profile else None
            peak_watch = None
            if args.memory:
                tracemalloc.start(12)  # deep enough to tell who keeps what JSON decoding made
                peak_watch = asyncio.create_task(_watch_for_the_peak())
            phases = Phases(url, args.topics, api.writes, rate=args.rate, clients=args.clients, token=api.token,
                            ca=api.ca, partitions=args.partitions, users=args.users)  # fmt: skip
            if args.others_nice:
                phases.others_nice, phases.servers = args.others_nice, _descendants(os.getpid())
                _renice(phases.servers, args.others_nice)
            if args.operator == "process":
                await _as_its_own_process(settings, phases, connect, admin, zookeeper, args, work)
                updated = _updated(admin)
                admin.stop()
                admin.close()
                _print_summary(phases, None, updated, args.topics, args.apiserver)
                return
            phases.lag, phases.gc = LoopLag(), GcPauses()
            lag_probe = asyncio.create_task(phases.lag.run())
            events = [
                p for p in ("cluster", "create", "update", "label") if p == "cluster" or p not in args.skip
            ]
            stop, task = await _operator_session(settings, phases, events, connect, args.floor)
            if "check" not in args.skip and not args.floor:
                phases.check = await _check_phase(phases, settings, connect, admin, zookeeper, args)
            # The census's own lists and sets of every object (over 100 MB at 50,000 KafkaTopics) are the
            # bench's, not the operator's: the peak is taken before it, and it runs after every phase it
            # would otherwise weigh on.
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            if not args.floor:
                sizes = _structure_sizes(args.topics)
                print("bytes per KafkaTopic held, by structure:", json.dumps(sizes), flush=True)
            lag_probe.cancel()
            phases.gc.close()
            phases.lag = phases.gc = None
            if peak_watch is not None:
                peak_watch.cancel()
                _report_memory(_PEAK[0], "at the highest traced total of the create, update and label phases")
                _report_memory(
                    tracemalloc.take_snapshot(), "after the label phase (every KafkaTopic settled)"
                )
                tracemalloc.stop()
            stop.set()
            await task
            if profiler is not None:  # the profile covers the create, update and label phases
                _report_profile(profiler, work, "events")
            if "restart" in args.skip:
                pass
            elif args.floor:  # the floor's registry exists only in this process: restarted here
                await _restart_in_this_process(settings, phases, connect, args, work)
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            else:
                await _restart_as_kto_run(settings, phases, args, work)
            updated = _updated(admin)
            admin.stop()
            admin.close()
    finally:
        stack.close()
        shutil.rmtree(work, ignore_errors=True)
    _print_summary(phases, peak, updated, args.topics, args.apiserver)
    if args.apiserver == "real" and getattr(api.writes, "unreadable", 0):
        print(f"audit log lines that were not JSON (not counted): {api.writes.unreadable}")


def _updated(admin: Any) -> int:
    """The bench's topics whose config znode holds the update phase's value."""
    from topic_operator.zookeeper.znodes import TopicConfigZNode

    return sum(
        TopicConfigZNode.decode(t, admin.get(TopicConfigZNode.path(t))[0]).get("retention.ms") == "86400000"
        for t in admin.get_children("/brokers/topics")
        if t.startswith("topic-")
    )


async def _as_its_own_process(
    settings: Any,
    phases: Phases,
    connect: str,
    admin: Any,
    zookeeper: Any,
    args: argparse.Namespace,
    work: Path,
) -> None:
    """Every phase with the operator as users run it: ``kto run`` started on its own, with its own flags and
    nothing of the bench in its process; then stopped with SIGTERM and started again for the restart. Its CPU,
    RSS and event loop are read from outside (``/proc``, its ``/metrics``)."""
    phases.metrics_url = f"http://127.0.0.1:{settings.metrics_port}/metrics"
    process, log = _start_kto_run(settings, work, "kto-run-first", args.kto, args.setup)
    phases.operator = OtherProcess(process)
    try:
        await _until_ready(f"http://127.0.0.1:{settings.metrics_port}/readyz", process=process)
        for phase in ("cluster", "create", "update", "label"):
            if phase == "cluster" or phase not in args.skip:
                events = 1 if phase == "cluster" else phases.topics
                await phases.measure(phase, events, _run_loadgen(phases, phase, connect))
        if "check" not in args.skip:
            phases.check = await _check_phase(phases, settings, connect, admin, zookeeper, args)
    finally:
        phases.stopped_s = _stop_kto_run(process, log)
        print(json.dumps({"kto run exited after its SIGTERM, s": round(phases.stopped_s, 1)}), flush=True)
    if "restart" not in args.skip:
        await _restart_as_kto_run(settings, phases, args, work)


def _start_kto_run(
    settings: Any, work: Path, name: str, kto: str, setup: str = DEPLOYMENT
) -> tuple[subprocess.Popen[bytes], Path]:
    """``kto run`` as a user starts it: a process (and process group) of its own, the flags the user gives on
    the command line, the rest of the bench's settings in the environment as the Deployment sets them (with
    ``setup`` ``user``: none of them, every other setting at its default, but the address it listens on, kept on
    loopback); its log in ``work``."""
    log = work / f"{name}.log"
    flags = ["-n", NS, "--metrics-port", str(settings.metrics_port), "--health-port", str(settings.health_port),
             "--log-format", settings.log_format, "--log-level", settings.log_level,
             "--drift-interval", f"{settings.drift_interval:g}"]  # fmt: skip
    with log.open("wb") as sink:
        if setup == USER:
            environment = {name: value for name, value in os.environ.items() if not name.startswith("KTO_")}
            environment["KTO_LISTEN_HOST"] = settings.listen_host
        else:
            environment = {**os.environ, **_environment(settings)}
        process = subprocess.Popen([kto, "run", *flags], env=environment, stdout=sink, stderr=sink,
                                   start_new_session=True)  # fmt: skip
    return process, log


def _stop_kto_run(process: subprocess.Popen[bytes], log: Path) -> float:
    """SIGTERM to its process group, as a user's Ctrl-C or Kubernetes does; what it logged if it did not end
    cleanly. Returns the seconds it took to exit."""
    stopping = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        code = process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        code = process.wait(10)
    stopped = time.monotonic() - stopping
    text = log.read_text(errors="replace")
    if code != 0 or "Traceback" in text:
        print(f"kto run ended with {code}; its log ends with:\n{text[-3000:]}")
    return stopped


class _Api:
    """The API server the bench runs against, and how the operator and the users reach it."""

    def __init__(
        self,
        url: str,
        kubeconfig: Path,
        writes: EmulatorWrites | AuditedWrites,
        *,
        token: str = TOKEN,
        ca: Path | None = None,
        lease_namespace: str = NS,
        server: Any = None,
    ) -> None:
        self.url, self.kubeconfig, self.writes = url, kubeconfig, writes
        self.token, self.ca, self.lease_namespace = token, ca, lease_namespace
        self.server = server

    def server_rss(self) -> str:
        sizes = self.server.rss_bytes() if self.server is not None else {}
        return ", ".join(f"{name} {size / 2**20:.0f} MB" for name, size in sizes.items())


@contextlib.contextmanager
def _emulated_api(work: Path) -> Any:
    """kmock's emulator with the API server's bookkeeping, as a process of its own; the operator logs in with
    the emulator's token."""
    crds = sorted((ROOT / "crds").glob("*.yaml"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    api = subprocess.Popen([sys.executable, "-m", "harness.kube_api", TOKEN, "0", *map(str, crds)],
                           stdout=subprocess.PIPE, env=env)  # fmt: skip
    try:
        assert api.stdout is not None
        url = api.stdout.readline().decode().strip()
        kubeconfig = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
                      "clusters": [{"name": "c", "cluster": {"server": url}}],
                      "users": [{"name": "u", "user": {"token": TOKEN}}],
                      "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}  # fmt: skip
        (work / "kubeconfig").write_text(json.dumps(kubeconfig))
        yield _Api(url, work / "kubeconfig", EmulatorWrites(url))
    finally:
        api.kill()
        api.wait(10)


OPERATOR_NAMESPACE = "kafka-topic-operator"
OPERATOR_USER = f"system:serviceaccount:{OPERATOR_NAMESPACE}:kafka-topic-operator"


@contextlib.contextmanager
def _real_api(work: Path, setup: str = DEPLOYMENT) -> Any:
    """etcd and the real kube-apiserver (``tests/harness/real_apiserver``) and the bench's namespace; the users log
    in as an admin. ``setup`` ``deployment``: ``manifests/install/`` applied server-side, and the operator logs in
    with a TokenRequest token of the install's ServiceAccount; ``user``: only the CRDs of ``crds/``, and the
    operator logs in as an admin too (another one, whose writes are audited), as ``kto run`` on a developer's
    machine does."""
    sys.path.insert(0, str(ROOT / "tests"))
    from harness.real_apiserver import (
        DEVELOPER_USER,
        RealApiServer,
        apply_install,
        crd_documents,
        wait_established,
    )
    from harness.server_binaries import api_server_binaries

    binaries = api_server_binaries()
    if isinstance(binaries, str):
        raise SystemExit(f"--apiserver real: {binaries}")
    (work / "apiserver").mkdir()
    with RealApiServer(*binaries, work / "apiserver") as server:
        admin = server.client()
        if setup == USER:
            for document in crd_documents():
                admin.apply_document(document)
                wait_established(admin, document["metadata"]["name"])
            operator_user, lease_namespace = DEVELOPER_USER, "default"
            kubeconfig = server.kubeconfig(work / "kubeconfig", server.credentials.developer_token)
        else:
            apply_install(admin)
            token = server.service_account_token(OPERATOR_NAMESPACE, "kafka-topic-operator", seconds=86400)
            operator_user, lease_namespace = OPERATOR_USER, OPERATOR_NAMESPACE
            kubeconfig = server.kubeconfig(work / "kubeconfig", token)
        admin.apply_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        yield _Api(
            server.url,
            kubeconfig,
            AuditedWrites(server.audit_log, operator_user),
            token=server.credentials.admin_token,
            ca=server.credentials.ca_file,
            lease_namespace=lease_namespace,
            server=server,
        )


async def _restart_in_this_process(
    settings: Any, phases: Phases, connect: str, args: argparse.Namespace, work: Path
) -> None:
    """A floor, restarted in this process: its peak RSS includes what the first session left behind."""
    session: list[Any] = []

    async def restart() -> None:  # kopf lists and resumes every KafkaTopic
        session.extend(await _operator_session(settings, phases, [], connect, floor=args.floor))

    profiler = _start_profiler(work, os.getpid()) if args.profile else None
    await phases.measure("restart", args.topics, restart())
    if profiler is not None:
        _report_profile(profiler, work, "restart")
    stop, task = session
    await phases.measure("drift", args.topics, asyncio.sleep(args.drift_interval))
    stop.set()
    await task


async def _restart_as_kto_run(settings: Any, phases: Phases, args: argparse.Namespace, work: Path) -> None:
    """The restart as a real one: a new ``kto run`` process with the same settings, which lists, indexes and
    resumes every KafkaTopic; then one drift check in it. Its CPU (start-up and imports included) and memory
    are read from ``/proc``; its RSS again ``--settle-after-ready`` seconds after it is ready."""
    process, log = _start_kto_run(settings, work, "kto-run-restarted", args.kto, args.setup)
    phases.operator = OtherProcess(process)
    phases.metrics_url = f"http://127.0.0.1:{settings.metrics_port}/metrics"
    try:
        profiler = _start_profiler(work, process.pid) if args.profile else None
        # Idle alone ends too early: kopf's first list of 10,000 objects leaves the process quiet for seconds.
        # Readiness is reached once that list is seen; the resumes follow, busy, until idle.
        ready_at: list[float] = []

        async def ready() -> None:
            await _until_ready(f"http://127.0.0.1:{settings.metrics_port}/readyz", process=process)
            ready_at.append(time.monotonic())

        await phases.measure("restart", args.topics, ready())
        # The figure users compare: RSS 20 s after /readyz, whether or not the process is idle by then.
        await asyncio.sleep(max(0.0, ready_at[0] + 20 - time.monotonic()))
        phases.after_ready_mb = phases.operator.now_mb()
        print(json.dumps({"restarted RSS MB 20 s after ready": phases.after_ready_mb}), flush=True)
        if profiler is not None:  # a profile of its own: the restart is kopf's listing and resuming
            _report_profile(profiler, work, "restart")
        if "drift" not in args.skip:
            # The timer runs at start and then every drift interval: this phase holds exactly the next check.
            await phases.measure(
                "drift", args.topics, _next_drift_check(phases.metrics_url, 2 * args.drift_interval + 600)
            )
    finally:
        _stop_kto_run(process, log)


def _drift_checks(url: str) -> float:
    """Drift checks completed so far, as the operator's ``/metrics`` counts them."""
    return _drift_check_totals(url)[0]


def _drift_check_totals(url: str) -> tuple[float, float]:
    """Drift checks completed so far and the seconds they took, from the operator's ``/metrics``."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(url, timeout=30) as answer:
        text = answer.read().decode()
    samples = [sample for family in text_string_to_metric_families(text) for sample in family.samples]
    return (
        sum(s.value for s in samples if s.name == "kto_drift_check_duration_seconds_count"),
        sum(s.value for s in samples if s.name == "kto_drift_check_duration_seconds_sum"),
    )


async def _check_completed(url: str, after: float, limit: float) -> tuple[float, float, float]:
    """Until more than ``after`` drift checks have completed: (checks, their seconds, monotonic time seen)."""
    started = time.monotonic()
    while True:
        count, seconds = await asyncio.to_thread(_drift_check_totals, url)
        if count > after:
            return count, seconds, time.monotonic()
        if time.monotonic() - started > limit:
            raise TimeoutError(f"no drift check completed within {limit:g} s")
        await asyncio.sleep(0.1)


def _zookeeper_requests(zookeeper: Any) -> int:
    """Every request ZooKeeper has received since it started (its ``srvr`` packet count): reads and writes."""
    import re

    found = re.search(r"Received: (\d+)", zookeeper.four_letter_word("srvr"))
    if found is None:
        raise RuntimeError("ZooKeeper's srvr reply has no 'Received:' line")
    return int(found.group(1))


async def _check_phase(
    phases: Phases, settings: Any, connect: str, admin: Any, zookeeper: Any, args: argparse.Namespace
) -> dict[str, Any]:
    """The periodic drift check over every topic, in this process: first one with nothing changed since the
    check before it; then one after ``--drifted`` topics' configs were changed behind the operator's back,
    with new KafkaTopics created while it runs (the first 0.5 s into it, then every 0.5 s). Reports each check's
    duration, ZooKeeper's requests over it, the new KafkaTopics' time to Ready, and the event loop's longest
    hold-up while the check ran."""
    from topic_operator.zookeeper.znodes import TopicConfigZNode

    url = f"http://127.0.0.1:{settings.metrics_port}/metrics"
    limit = 2 * args.drift_interval + 600
    count, seconds = await asyncio.to_thread(_drift_check_totals, url)
    count, seconds, _ = await _check_completed(url, count, limit)
    before = await asyncio.to_thread(_zookeeper_requests, zookeeper)
    quiet_count, quiet_seconds, quiet_end = await _check_completed(url, count, limit)
    quiet = {
        "check s": round(quiet_seconds - seconds, 2),
        "garbage collections": phases.gc.between(quiet_end - (quiet_seconds - seconds), quiet_end)
        if phases.gc
        else None,
        "ZooKeeper requests since the check before": await asyncio.to_thread(_zookeeper_requests, zookeeper)
        - before,
        "event loop held up at most ms": round(
            1000 * phases.lag.worst(quiet_end - (quiet_seconds - seconds), quiet_end)
        )
        if phases.lag
        else None,
        "longest hold-ups": phases.lag.longest(quiet_end - (quiet_seconds - seconds), quiet_end)
        if phases.lag
        else None,
    }
    drifted = [f"topic-{i:05d}" for i in range(0, phases.topics, max(phases.topics // args.drifted, 1))]
    drifted = drifted[: args.drifted]
    for topic in drifted:  # the topics' configs as someone else's tool would change them: one key each
        path = TopicConfigZNode.path(topic)
        config = TopicConfigZNode.decode(topic, admin.get(path)[0])
        admin.set(path, TopicConfigZNode.encode({**config, "retention.ms": "3600000"}))
    before = await asyncio.to_thread(_zookeeper_requests, zookeeper)
    # The next check starts about one drift interval after the last one ended (the session keeper looks every
    # second): the creations begin half a second into it.
    start = time.time() + (quiet_end + args.drift_interval + 0.5 - time.monotonic())
    new_at = [start + 0.5 * i for i in range(args.new_topics)]
    generated = asyncio.create_task(_run_loadgen(phases, "new", connect, new_at=new_at))
    _, changed_seconds, changed_end = await _check_completed(url, quiet_count, limit)
    requests = await asyncio.to_thread(_zookeeper_requests, zookeeper) - before
    new = await generated
    took = changed_seconds - quiet_seconds
    began = time.time() - (time.monotonic() - changed_end) - took  # the check's start, as Unix time
    during = {
        name: after for name, after in new["ready_after"].items() if new["created"][name] <= began + took
    }
    row = {
        "quiet check": quiet,
        "check with changes": {
            "check s": round(took, 2),
            "topics changed behind the operator": len(drifted),
            "garbage collections": phases.gc.between(changed_end - took, changed_end) if phases.gc else None,
            "ZooKeeper requests since the changes": requests,
            "event loop held up at most ms": round(1000 * phases.lag.worst(changed_end - took, changed_end))
            if phases.lag
            else None,
            "longest hold-ups": phases.lag.longest(changed_end - took, changed_end) if phases.lag else None,
            "KafkaTopics created while it ran": len(during),
            "their time to Ready s": sorted(round(v, 2) for v in during.values()),
            "KafkaTopics created after it ended, time to Ready s": sorted(
                round(v, 2) for name, v in new["ready_after"].items() if name not in during
            ),
        },
    }
    print(json.dumps({"phase": "check", **row}), flush=True)
    return row


async def _next_drift_check(url: str, limit: float) -> None:
    """Until one more drift check has completed (the phase starts idle, so none is half done)."""
    before = await asyncio.to_thread(_drift_checks, url)
    started = time.monotonic()
    while await asyncio.to_thread(_drift_checks, url) <= before:
        if time.monotonic() - started > limit:
            raise TimeoutError(f"no drift check completed within {limit:g} s")
        await asyncio.sleep(0.5)


def _environment(settings: Any) -> dict[str, str]:
    """The operator's settings as ``kto run`` reads them from its environment."""
    from topic_operator.k8s.process.settings import environment_variables

    environ: dict[str, str] = {}
    for name, variable in environment_variables().items():
        value = getattr(settings, name)
        if value is None:
            continue
        if isinstance(value, tuple):
            environ[variable] = ",".join(value)
        elif isinstance(value, bool):
            environ[variable] = "true" if value else "false"
        else:
            environ[variable] = str(value)
    return environ


def _overrides(given: list[str]) -> dict[str, Any]:
    """``--setting name=value`` pairs as operator settings, parsed as ``kto run`` parses its environment."""
    from topic_operator.k8s.process.settings import environment_variables, settings_from_env

    variables = environment_variables()
    environ: dict[str, str] = {}
    for pair in given:
        name, _, value = pair.partition("=")
        if name not in variables:
            raise SystemExit(
                f"--setting {pair!r}: no operator setting {name!r} (one of {', '.join(variables)})"
            )
        environ[variables[name]] = value
    parsed = settings_from_env(environ)
    return {name: getattr(parsed, name) for name in {p.partition("=")[0] for p in given}}


def _print_summary(phases: Phases, peak: float | None, updated: int, topics: int, server: str) -> None:
    """The phases' table and each figure beside its target. ``peak``: this process's peak RSS where the
    operator ran in it (None: it ran as its own processes, whose peaks the rows hold)."""
    print()
    print(
        f"{'phase':<10}{'events':>8}{'wall s':>9}{'settled s':>11}{'CPU s':>8}{'ms/event':>10}{'writes/ev':>11}"
        f"{'peak MB':>9}{'now MB':>8}  writes"
    )
    for row in phases.rows:
        print(f"{row['phase']:<10}{row['events']:>8}{row['wall s']:>9}{row['settled after last request s']:>11}"
              f"{row['operator CPU s']:>8}{row['CPU per event ms']:>10}{row['writes per event']:>11}"
              f"{row['peak RSS MB so far']:>9}{row['RSS MB now']:>8}  {row['operator writes']}")  # fmt: skip
    restarted = [row for row in phases.rows if row["process"] != ThisProcess.name]
    if peak is not None:
        print(
            f"peak RSS of the operator in this process (cluster to check, before the census): {peak:.0f} MB"
        )
    last_of_each = {row["process"]: row for row in restarted}
    for process, row in last_of_each.items():
        print(f"peak RSS (VmHWM) of {process}: {row['peak RSS MB so far']} MB; RSS after its last phase "
              f"({row['phase']}): {row['RSS MB now']} MB")  # fmt: skip
    targets = TARGETS[server]
    print(f"targets ({server}):")

    def verdict(what: str, figure: float, bound: float, unit: str) -> None:
        print(
            f"  {what}: {figure:g} {unit} (target <= {bound:g} {unit}: {'met' if figure <= bound else 'NOT met'})"
        )

    peaks = [*([] if peak is None else [peak]), *(r["peak RSS MB so far"] for r in restarted)]
    verdict("peak RSS", max(peaks), targets["peak RSS MB"], "MB")
    for row in phases.rows:
        if row["phase"] in ("create", "update"):
            verdict(
                f"CPU per {row['phase']} event", row["CPU per event ms"], targets["CPU per event ms"], "ms"
            )
            if "settled s" in targets:
                verdict(f"settled after the last {row['phase']}", row["settled after last request s"],
                        targets["settled s"], "s")  # fmt: skip
        if row["phase"] == "restart" and "restart s" in targets:
            verdict("restart ready", row["wall s"], targets["restart s"], "s")
            # As a user times it: from the SIGTERM to the new process's /readyz.
            if phases.stopped_s is not None:
                verdict("restart ready after the SIGTERM (the old process's exit included)",
                        round(phases.stopped_s + row["wall s"], 1), targets["restart s"], "s")  # fmt: skip
            if phases.after_ready_mb is not None:
                verdict("restarted operator's RSS 20 s after ready", phases.after_ready_mb, targets["peak RSS MB"],
                        "MB")  # fmt: skip
        if row["phase"] in ("restart", "drift", "label"):
            about_topics = sum(v for k, v in row["operator writes"].items() if "kafkatopics" in k)
            verdict(f"writes about KafkaTopics in the {row['phase']} phase", about_topics, 0, "")
    changed = phases.check.get("check with changes")
    if changed and "check s" in targets:
        verdict(
            "drift check, with topics changed behind the operator",
            changed["check s"],
            targets["check s"],
            "s",
        )
        quiet = phases.check["quiet check"]
        verdict("drift check, nothing changed", quiet["check s"], targets["check s"], "s")
        print(f"  ZooKeeper requests over a quiet check's interval: {quiet['ZooKeeper requests since the check before']}"
              f"; over the check after {changed['topics changed behind the operator']} topics were changed:"
              f" {changed['ZooKeeper requests since the changes']}")  # fmt: skip
        if changed["their time to Ready s"]:
            verdict("KafkaTopic created during the check, Ready after", max(changed["their time to Ready s"]),
                    targets["new Ready s"], "s")  # fmt: skip
        else:
            print("  no KafkaTopic was created while the check ran (it was shorter than half a second)")
        helds = [
            c["event loop held up at most ms"]
            for c in (changed, quiet)
            if c["event loop held up at most ms"] is not None
        ]
        if helds:
            verdict("event loop held up during the checks", max(helds), targets["held up ms"], "ms")
        else:
            print("  event loop during the checks: timed by the bench's probe in-process only; as its own process, "
                  "each phase's row has its kto_event_loop_lag_seconds")  # fmt: skip
    print(f"topics whose config znode has the updated value: {updated} of {topics}")


def _deep_size(root: object, seen: set[int]) -> int:
    """Bytes of ``root`` and of everything it reaches that ``seen`` does not hold yet (which it then does):
    each object is charged once, to the first structure that reaches it. Classes, functions and modules are
    not followed (they are the program, not its data)."""
    import types

    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType,
            types.MethodType, types.FrameType)  # fmt: skip
    total, stack = 0, [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, skip):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        stack.extend(gc.get_referents(item))
    return total


def _structure_sizes(topics: int) -> dict[str, float]:
    """What the operator in this process holds, by structure, in bytes per KafkaTopic: found through the
    collector (the context is kopf's memo), each object charged once, in the order below."""
    from kopf._core.reactor.inventory import ResourceMemories

    from topic_operator.k8s.context import OperatorContext

    frozen = gc.get_freeze_count()
    gc.unfreeze()  # the operator's heap upkeep freezes what lives long, and gc.get_objects lists no frozen object
    try:
        # What the freezes held that had died in reference cycles: the upkeep's thaw would collect it too. The
        # upkeep's hook freezes what survives the collection: thawed again to be listed.
        dead = gc.collect()
        gc.unfreeze()
        found = [o for o in gc.get_objects() if isinstance(o, OperatorContext)]
        memories = [o for o in gc.get_objects() if isinstance(o, ResourceMemories)]
    finally:
        if frozen:
            gc.freeze()
    if not found:
        return {}
    ctx = found[-1]
    seen: set[int] = {id(ctx)}
    seen.update(id(getattr(ctx, name)) for name in ("settings", "metrics", "api", "events"))
    parts: dict[str, object] = {
        "claims (each KafkaTopic's claim and kept body, by topic and by cluster)": ctx.claims,
        "validations (each KafkaTopic's checked spec)": ctx.validations,
        "TopicWork (what each KafkaTopic was answered for)": ctx.topic_work,
        "the clusters' watched ZooKeeper views, with kazoo's watches": [
            getattr(h.link, "watched", None) for h in ctx.clusters.handles()
        ],
    }  # fmt: skip
    sizes = {name: round(_deep_size(part, seen) / max(topics, 1)) for name, part in parts.items()}
    sizes["kopf's memories of KafkaTopics (objects kept)"] = sum(len(kept._items) for kept in memories)
    sizes["objects frozen out of the collector's walk (the heap upkeep), per KafkaTopic"] = round(
        frozen / max(topics, 1), 1
    )
    sizes["of which dead in reference cycles (collected by the census), per KafkaTopic"] = round(
        dead / max(topics, 1), 1
    )
    return sizes


_PEAK: list[Any] = [None, 0]
"""The snapshot taken at the highest traced total seen so far, and that total."""


async def _watch_for_the_peak(every: float = 3.0) -> None:
    """Every few seconds, a snapshot if the traced total is the highest yet: what the bursts hold."""
    while True:
        await asyncio.sleep(every)
        current = tracemalloc.get_traced_memory()[0]
        if current > _PEAK[1] * 1.05:
            _PEAK[:] = [tracemalloc.take_snapshot(), current]


def _report_memory(snapshot: tracemalloc.Snapshot | None, when: str) -> None:
    """Live Python allocations, by file and by line (tracemalloc)."""
    if snapshot is None:
        return
    snapshot = snapshot.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    total = sum(stat.size for stat in snapshot.statistics("filename"))
    print(f"live Python allocations {when}: {total / 2**20:.0f} MiB; by file:")
    for stat in snapshot.statistics("filename")[:12]:
        print(f"  {stat.size / 2**20:7.1f} MiB  {stat.traceback[0].filename.split('site-packages/')[-1]}")
    print("by line:")
    for stat in snapshot.statistics("lineno")[:15]:
        frame = stat.traceback[0]
        print(f"  {stat.size / 2**20:7.1f} MiB  {frame.filename.split('site-packages/')[-1]}:{frame.lineno}")
    print("the largest by whole traceback (innermost of ours or kopf's first):")
    for stat in snapshot.statistics("traceback")[:8]:
        print(f"  {stat.size / 2**20:7.1f} MiB in {stat.count} blocks")
        for frame in reversed(stat.traceback):
            name = frame.filename.split("site-packages/")[-1].split("topic_operator/")[-1]
            print(f"      {name}:{frame.lineno}")


def _start_profiler(work: Path, pid: int) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        print("--profile: py-spy is not installed (pip install py-spy); running without it")
        return None
    return subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", "50", "--threads",
                             "--format", "raw", "--output", str(work / "profile.txt"), "--nonblocking"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def _report_profile(profiler: subprocess.Popen[bytes], work: Path, phase: str) -> None:
    profiler.send_signal(signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        profiler.wait(30)
    path = work / "profile.txt"
    if not path.exists():
        print("--profile: py-spy wrote nothing")
        return
    kept = Path(tempfile.gettempdir()) / f"kto-bench-operator-profile-{phase}.txt"
    shutil.copyfile(path, kept)
    print(f"py-spy's raw samples (collapsed stacks, for a flame graph): {kept}")
    shares: collections.Counter[str] = collections.Counter()
    ours: collections.Counter[str] = collections.Counter()
    samples = path.read_text()
    path.unlink()  # the next phase's profile goes to the same file
    for line in samples.splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        shares[_owner(frames)] += int(count)
        for frame in {f for f in frames if "topic_operator/" in f}:  # inclusive: every function on the stack
            ours[frame.split(" (")[0] + " (" + frame.split("topic_operator/")[1]] += int(count)
    total = sum(shares.values()) or 1
    print(
        f"where the operator's CPU went in the {phase} phases (py-spy samples; each sample goes to the innermost"
        " kto or kopf frame):"
    )
    for owner, count in shares.most_common():
        print(f"  {owner:<34} {100 * count / total:5.1f} %")
    print("our functions, inclusive:")
    for function, count in ours.most_common(15):
        print(f"  {function:<70} {100 * count / total:5.1f} %")


def _owner(frames: list[str]) -> str:
    """Whose work a sample is: the innermost frame that is the operator's or kopf's (a library called by one of
    them counts for it), else kazoo's threads, else the event loop itself."""
    for frame in reversed(frames):
        if "topic_operator/" in frame:
            return "kto (our code and what it calls)"
        if "kopf/" in frame:
            return "kopf (and what it calls)"
    if any("kazoo/" in frame for frame in frames):
        return "kazoo (its connection threads)"
    return "asyncio loop, aiohttp transport, other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--drift-interval", type=float, default=60.0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--operator",
        choices=("process", "in-process"),
        default="process",
        help="process (the default): every phase against `kto run` as users run it, a process of its own with "
        "its own flags; in-process: the operator's coroutine in this process, for what only that can show "
        "(CPU by thread, the bench's loop probe, garbage collections, the census per KafkaTopic, --memory, "
        "--floor); its RSS includes the bench's own",
    )
    parser.add_argument(
        "--setup",
        choices=(DEPLOYMENT, USER),
        default=DEPLOYMENT,
        help="deployment (the default): manifests/install applied, the operator logged in as its ServiceAccount "
        "with its settings in its environment, as the Deployment runs it; user: only crds/ applied, the operator "
        "logged in as the kubeconfig's admin with only its command-line flags, as a user tries kto run "
        "(--apiserver real)",
    )
    parser.add_argument(
        "--kto",
        default=str(Path(sys.executable).parent / "kto"),
        help="the kto command the operator runs as (default: this environment's); another installation, such as "
        "a virtual environment with the wheel of `make dist` installed, to run the operator as a user installs it",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="after the label phase, what holds the memory (tracemalloc; slower)",
    )
    parser.add_argument(
        "--floor",
        choices=("kopf", "raw"),
        help="the same phases with only a status and an Event written per change: by kopf's handlers (kopf's "
        "own cost), or by one aiohttp watch with no kopf for KafkaTopics (the HTTP and JSON cost alone)",
    )
    parser.add_argument(
        "--kopf-floor", dest="floor", action="store_const", const="kopf", help="the same as --floor kopf"
    )
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an operator setting for this run, e.g. worker_limit=1000 (repeatable), to compare settings",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        metavar="PER_SECOND",
        help="pace the users' requests (0: as fast as the emulator answers); 57 is the pace of the real "
        "kube-apiserver measured (10,000 creates in 176 s)",
    )
    parser.add_argument(
        "--apiserver",
        choices=("kmock", "real"),
        default="kmock",
        help="kmock (kopf's emulator, the default) or the real kube-apiserver and etcd of ../shared/servers "
        "(KTO_KUBE_APISERVER, KTO_ETCD), with the operator logged in as the install's ServiceAccount",
    )
    parser.add_argument(
        "--clients",
        type=int,
        default=32,
        help="concurrent user requests (the issue's real-server figures came from 8 client threads)",
    )
    parser.add_argument(
        "--partitions", type=int, default=4, help="partitions of each KafkaTopic (RF 3; default 4)"
    )
    parser.add_argument(
        "--brokers",
        type=int,
        default=12,
        help="brokers the cluster's ZooKeeper shows, in 3 racks (default 12)",
    )
    parser.add_argument(
        "--skip",
        type=lambda text: set(filter(None, text.split(","))),
        default=set(),
        metavar="PHASE,...",
        help="leave out phases: create, update, label, check, restart, drift (e.g. --skip label at 50,000, where "
        "each phase of paced requests takes a quarter of an hour; drift, the check after the restart, with a long "
        "--drift-interval)",
    )
    parser.add_argument(
        "--others-nice",
        type=int,
        default=0,
        metavar="N",
        help="run the API server, etcd, ZooKeeper and the load generators at niceness N (Linux), the operator "
        "at its own: where the operator has a node's cores to itself, as in a cluster, and not the servers' "
        "and clients' turn on two shared ones (tells the operator's own hold-ups of the loop from the machine's)",
    )
    parser.add_argument(
        "--compile-beside",
        action="store_true",
        help="a Java compile (javac) at niceness 19 beside the whole run, in a session of its own, as the outside "
        "run had: with the kernel's autogroups, niceness does not keep it from the operator's share of the CPU",
    )
    parser.add_argument(
        "--drifted",
        type=int,
        default=100,
        help="topics changed behind the operator before the check phase's check",
    )
    parser.add_argument(
        "--new-topics", type=int, default=6, help="KafkaTopics created while the check phase's check runs"
    )
    parser.add_argument(
        "--users",
        choices=(POST, KUBECTL_APPLY),
        default=POST,
        help="what the users send: the bare objects and merge patches (post, default), or what 'kubectl apply' "
        "sends (kubectl-apply: each object carries its last-applied-configuration annotation)",
    )
    parser.add_argument("--new-at", help=argparse.SUPPRESS)
    parser.add_argument("--loadgen", help=argparse.SUPPRESS)
    parser.add_argument("--token", default=TOKEN, help=argparse.SUPPRESS)
    parser.add_argument("--ca", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--connect", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if (args.floor or args.memory) and args.operator == "process":
        parser.error("--floor and --memory look inside the operator's process: add --operator in-process")
    if args.loadgen:
        new_at = [float(t) for t in args.new_at.split(",")] if args.new_at else None
        result = _loadgen(args.url, args.loadgen, args.topics, args.connect, args.rate, args.clients, args.token,
                          args.ca, partitions=args.partitions, new_at=new_at, users=args.users)  # fmt: skip
        print(json.dumps(asyncio.run(result)))
        return
    asyncio.run(_main(args))


if __name__ == "__main__":
    main()
