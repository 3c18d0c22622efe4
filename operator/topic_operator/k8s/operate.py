"""What ``kto run`` runs in its event loop, as named steps: prepare the process, find the leader Lease, build the
operator's context, serve the probes, then stand by until this replica leads and run kopf until it is stopped or
loses the Lease. The top of ``k8s/``: it assembles the handlers, the context and the process's parts, which import
nothing of it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import signal
import socket
import uuid
from pathlib import Path
from typing import Any

from topic_operator.k8s.context import OperatorContext
from topic_operator.k8s.handlers import REPORTING_COMPONENT, build_kopf_settings, build_registry
from topic_operator.k8s.process.kube_api import KopfEvents, LightkubeApi, SessionEvents
from topic_operator.k8s.process.leadership import LeaderElector, LeaseAccessError, LeaseKeeper, LeaseTimings
from topic_operator.k8s.process.settings import OperatorSettings
from topic_operator.message_text import error_line

__all__ = ["LeadershipLostError", "StartupError", "operate", "replica_identity"]

logger = logging.getLogger(__name__)


class StartupError(Exception):
    """The operator cannot start (the message says why, in one line)."""


class LeadershipLostError(Exception):
    """The leader could not renew its Lease in time and stopped (the message says so, in one line)."""


async def operate(
    settings: OperatorSettings,
    stop_flag: asyncio.Event | None = None,
    registry: Any = None,
    *,
    identity: str | None = None,
    granted_before: bool = False,
) -> None:
    """Run the operator until SIGTERM/SIGINT or ``stop_flag`` (the benchmark runs it too). ``registry`` replaces
    the operator's handlers (the benchmark measures kopf's own floor with minimal ones).

    With leader election (the default), a replica serves its probes at once and waits, as a standby, until it
    holds the Lease; only then does kopf start. It keeps renewing; if it cannot for ``lease_renew_deadline``,
    its writers stop, kopf stops and ``LeadershipLostError`` says so (``kto run`` then waits as a standby again,
    in the same process, with the same identity, and ``granted_before``: a refusal to read the Lease is then
    retried a while, see ``LeaderElector.acquire``). A clean stop releases the Lease."""
    _prepare_the_process()
    api = LightkubeApi()
    elector = _leader_elector(settings, api, identity, granted_before)
    await _join_peering(settings, api)
    context = _operator_context(settings, api, elector)
    runners = await _serve_probes(settings, context, elector)
    runners += await _serve_admission(settings, context, elector, runners)
    try:
        logger.info(
            "starting kafka-topic-operator: %s, %s",
            "all namespaces" if settings.clusterwide else "namespaces " + ", ".join(settings.namespaces),
            f"leader election through the Lease {elector.label} as {elector.identity}"
            if elector is not None
            else "no leader election",
        )
        await _lead(settings, registry, context, api, elector, stop_flag)
    finally:
        for runner in runners:
            await runner.cleanup()


def _prepare_the_process() -> None:
    """Tune the allocator, the collector and the GIL's hand-over before any of the operator's threads start."""
    from topic_operator.k8s.process.garbage_collection import tune_garbage_collection
    from topic_operator.k8s.process.lock_handoff import hand_the_lock_back_sooner
    from topic_operator.k8s.process.malloc_arenas import limit_malloc_arenas

    limit_malloc_arenas()  # before the operator's threads start (see the module)
    tune_garbage_collection()
    hand_the_lock_back_sooner()  # before the clusters' threads start computing beside the loop


def _leader_elector(
    settings: OperatorSettings, api: LightkubeApi, identity: str | None, granted_before: bool
) -> LeaderElector | None:
    """The elector of the leader Lease, or None with leader election off."""
    if not settings.leader_election:
        return None
    timings = LeaseTimings(
        settings.lease_duration, settings.lease_renew_deadline, settings.lease_retry_period
    )
    namespace = settings.lease_namespace or _pod_namespace() or api.default_namespace()
    return LeaderElector(
        api,
        namespace,
        settings.lease_name,
        identity or replica_identity(),
        timings,
        granted_before=granted_before,
    )


async def _join_peering(settings: OperatorSettings, api: LightkubeApi) -> None:
    """Create the kopf peering object when one is asked for; a refusal stops the start in one line."""
    from lightkube.core.exceptions import ConfigError

    if not settings.peering:
        return
    try:
        await api.ensure_peering(settings.peering, settings.namespaces)
    except ConfigError:
        raise
    except Exception as error:  # refused (credentials, RBAC, the peering CRD missing) or unreachable
        raise StartupError(
            f"cannot create the kopf peering object {settings.peering!r}: {error_line(error)}"
        ) from None


def _operator_context(
    settings: OperatorSettings, api: LightkubeApi, elector: LeaderElector | None
) -> OperatorContext:
    """The context every handler reads: settings, the API, Events, the input limits, and who may write."""
    from topic_operator.manifests.limits import LimitSettingError, limits_from_environment

    try:
        limits = limits_from_environment()
    except LimitSettingError as error:
        raise StartupError(str(error)) from None
    events = SessionEvents(KopfEvents(), REPORTING_COMPONENT)
    context = OperatorContext(
        settings, api, events, manifest_limits=limits, may_write=elector.holds if elector else None
    )
    events.session_of = lambda: context.api_session
    return context


async def _serve_probes(
    settings: OperatorSettings, context: OperatorContext, elector: LeaderElector | None
) -> list[Any]:
    """``/healthz`` on the health port, ``/metrics`` and ``/readyz`` on the metrics port (when on); their runners,
    for the caller to clean up. A standby is ready once it has read the Lease."""
    from topic_operator.k8s.process.liveness import Liveness
    from topic_operator.k8s.process.serving import ListenError, serve, serve_health

    readiness = context.readiness

    async def ready() -> tuple[bool, str]:
        if elector is not None and not elector.holds():
            if not elector.seen:
                return False, f"reading the leader Lease {elector.label}"
            return True, f"standby: the leader Lease {elector.label} is held by {elector.holder or 'nobody'}"
        return readiness.ready, readiness.waiting_for

    liveness = Liveness(settings.stuck_after)
    runners = []
    try:
        runners.append(await serve_health(lambda: liveness.check(context.clusters.handles(), context.session_heartbeats),
                                          host=settings.listen_host, port=settings.health_port))  # fmt: skip
        if settings.metrics_port:
            runners.append(
                await serve(context.metrics, ready, host=settings.listen_host, port=settings.metrics_port)
            )
    except ListenError as error:
        for runner in runners:
            await runner.cleanup()
        raise StartupError(f"{error} (--health-port, --metrics-port and --listen-host choose it)") from None
    return runners


async def _serve_admission(
    settings: OperatorSettings, context: OperatorContext, elector: LeaderElector | None, started: list[Any]
) -> list[Any]:
    """With a shared webhook certificate (``KTO_WEBHOOK_CERTIFICATE_DIR``), the admission webhook from this
    replica's start, standing by or leading: judged from kopf's indexes while it leads and they are complete, from
    the API server otherwise. Without one, kopf serves it on the leader alone (``handlers``)."""
    from topic_operator.k8s.kafkatopics.admission import judge_review
    from topic_operator.k8s.process.admission_serving import serve_admission
    from topic_operator.k8s.process.serving import ListenError

    if not settings.webhook_port or not settings.webhook_certificate_dir:
        return []

    def leading() -> bool:
        return (elector is None or elector.holds()) and context.readiness.ready

    try:
        runner = await serve_admission(
            lambda request: judge_review(context, leading, request),
            host=settings.webhook_listen,
            port=settings.webhook_port,
            certificates=Path(settings.webhook_certificate_dir),
        )
    except ListenError as error:
        for other in started:
            await other.cleanup()
        raise StartupError(
            f"{error} (KTO_WEBHOOK_PORT, KTO_WEBHOOK_LISTEN, KTO_WEBHOOK_CERTIFICATE_DIR)"
        ) from None
    return [runner]


async def _lead(
    settings: OperatorSettings,
    registry: Any,
    context: OperatorContext,
    api: LightkubeApi,
    elector: LeaderElector | None,
    stop_flag: asyncio.Event | None,
) -> None:
    """Stand by until this replica holds the Lease (at once without leader election), then run kopf, renewing the
    Lease, until a stop; ``LeadershipLostError`` when a renewal did not come in time."""
    import kopf

    from topic_operator.k8s.process.heap_upkeep import keep_heap
    from topic_operator.k8s.process.loop_lag import watch_loop_lag

    priority = (
        settings.priority if settings.priority is not None else random.SystemRandom().randrange(1, 32768)
    )
    keeper: LeaseKeeper | None = None
    kopf_stop = stop_flag
    upkeep = asyncio.create_task(keep_heap(), name="heap upkeep")
    lag = asyncio.create_task(watch_loop_lag(context.metrics.event_loop_lag), name="loop lag")
    try:
        if elector is not None:
            try:
                if not await _standby(elector, stop_flag):
                    return
            except LeaseAccessError as error:
                raise StartupError(str(error)) from None
            kopf_stop = context.stop_flag = asyncio.Event()
            loop = asyncio.get_running_loop()
            # Lost: stop kopf (the writers stopped already).
            keeper = LeaseKeeper(elector, LightkubeApi, lambda: loop.call_soon_threadsafe(kopf_stop.set))
            keeper.start()
            if stop_flag is not None:
                _forward(stop_flag, kopf_stop)
        await _run_kopf(kopf, settings, registry, priority, context, api, kopf_stop)
    finally:
        upkeep.cancel()
        lag.cancel()
        lost = keeper is not None and keeper.lost
        if keeper is not None:
            await asyncio.to_thread(keeper.stop, release=not lost)
    if lost:
        raise LeadershipLostError(
            f"lost the leader Lease {elector.label if elector else ''}: not renewed for "
            f"{settings.lease_renew_deadline:g} s; this replica stopped writing"
        )


async def _run_kopf(
    kopf: Any,
    settings: OperatorSettings,
    registry: Any,
    priority: int,
    context: Any,
    api: Any,
    stop_flag: asyncio.Event | None,
) -> None:
    from topic_operator.k8s.process.kopf_memories import memories

    readiness = context.readiness
    first_lists = asyncio.create_task(
        readiness.run(lambda plural: api.list_uids(plural, settings.namespaces))
    )
    try:
        await kopf.operator(
            registry=registry if registry is not None else build_registry(settings),
            settings=build_kopf_settings(settings, priority=priority),
            clusterwide=settings.clusterwide,
            namespaces=settings.namespaces,
            memo=kopf.Memo(kto=context),
            memories=memories(),
            ready_flag=readiness.kopf_ready,
            stop_flag=stop_flag,
        )
    finally:
        first_lists.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first_lists


async def _standby(elector: Any, stop_flag: asyncio.Event | None) -> bool:
    """Wait for the Lease, or for SIGTERM/SIGINT (or ``stop_flag``): True once this replica holds it."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    signals = (signal.SIGTERM, signal.SIGINT)
    installed = []
    for number in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop.add_signal_handler(number, stopping.set)
            installed.append(number)
    if stop_flag is not None:
        _forward(stop_flag, stopping)
    try:
        acquiring = asyncio.create_task(elector.acquire())
        waiting = asyncio.create_task(stopping.wait())
        done, _ = await asyncio.wait({acquiring, waiting}, return_when=asyncio.FIRST_COMPLETED)
        for task in (acquiring, waiting):
            if task not in done:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if acquiring in done:
            acquiring.result()
            return True
        logger.info("stopped while a standby for the leader Lease %s", elector.label)
        return False
    finally:
        for number in installed:
            loop.remove_signal_handler(number)


def _forward(source: asyncio.Event, target: asyncio.Event) -> None:
    async def wait() -> None:
        await source.wait()
        target.set()

    task = asyncio.ensure_future(wait())
    _background.add(task)
    task.add_done_callback(_background.discard)


_background: set[asyncio.Future[None]] = set()
"""Tasks that only forward a flag: kept referenced until they end (asyncio holds only weak references)."""


def _pod_namespace() -> str:
    """The pod's namespace, from its service account's files (empty outside a pod)."""
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def replica_identity() -> str:
    """This replica's name in the Lease: the pod's name (its host name) and a random part, as client-go's."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:10]}"
