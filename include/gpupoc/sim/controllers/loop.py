"""The controller loop of the simulated cluster: Kueue, scheduler, Job controller, kubelet, nodes, quota usage.

``build_controllers(state)`` (called by ``bootstrap``) puts every controller and index on the state's
declared fields (typed by their ports, ``sim.ports``) and is where they are wired: each gets what it needs of
another as a port (a gang scheduler places through kube-scheduler's filters) or registers a hook (Kueue's
admission plug-in and Workload hand-over, the Job controller's subscription to the pod-disrupted signal).
``run_controllers(state, stop)`` repeats, until ``stop`` is set: a wait while requests arrive in a burst (API
first, ``sim.api_pressure``, at most a second), a Kueue pass, a Volcano or KAI session (those
modes only), a scheduling pass, the Job controller's replacements (recreating behaviour profiles only), the
kubelet reconcile, the registered controllers (``ADDONS``, then a fault profile's, ``reactors.addons``) and the
ResourceQuota usage refresh, then sleeps until something changes (store changes
to pods and nodes kick it) or ``TICK_SECONDS`` pass, so that timed transitions (grace periods, back-offs,
workload durations, staggered releases) happen. An exception in one pass is logged and the loop goes on.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
import time
from typing import Any, Callable

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim import quota
from gpupoc.sim.api.indexes import event_index
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import (
    deployments, disruption_budgets, endpointslices, kube_proxy, node_lifecycle, replicasets, taint_eviction)
from gpupoc.sim.controllers.kubelet import kubelet_for
from gpupoc.sim.controllers.kueue import kueue_for
from gpupoc.sim.controllers.recreate import recreator_for
from gpupoc.sim.controllers.scheduler import scheduler_for
from gpupoc.sim.ports import Reconciler
from gpupoc.sim.store import Change

log = logging.getLogger(__name__)

TICK_SECONDS = 0.5
KICK_RESOURCES = frozenset({"pods", "nodes", "workloads", "clusterqueues", "localqueues", "resourcequotas",
                            "podgroups", "queues", "deployments", "replicasets", "services",
                            "poddisruptionbudgets"})
_LOG_EVERY_SECONDS = 10.0
# Controllers beyond the built-in ones, kept in ``state.addons`` by name and run in this order each pass
# (after the kubelet): a factory of the state whose result is a ``Reconciler``. One line here adds one.
ADDONS: dict[str, Callable[[ClusterState], Reconciler]] = {
    "taint-eviction": taint_eviction.TaintEviction,
    "node-lifecycle": node_lifecycle.NodeLifecycle,
    "deployment": deployments.DeploymentController,  # services (docs/services.md)
    "replicaset": replicasets.ReplicaSetController,
    "endpointslice": endpointslices.EndpointSliceController,
    "disruption": disruption_budgets.DisruptionController,
    "kube-proxy": kube_proxy.KubeProxy,
}


def tune_gc() -> None:
    """Raise CPython's collection thresholds (never lower them). The simulated cluster allocates many
    short-lived JSON dicts (every store change keeps a copy); at the default gen0 threshold of 700 the
    cyclic collector runs thousands of times and takes ~40% of the time with 10,000 pods."""
    g0, g1, g2 = gc.get_threshold()
    gc.set_threshold(max(g0, 50_000), max(g1, 20), max(g2, 100))


def build_controllers(state: ClusterState) -> None:
    """Create the state's controllers and indexes (those already there are kept): the queue manager (with its
    hooks), the scheduler, the mode's gang scheduler on it, the Job controller (subscribed to the
    pod-disrupted signal), the kubelet, the event index, the quota usage tracker, the registered controllers
    (``ADDONS``) and those a fault profile added (``state.reactors.addons``)."""
    kueue_for(state)
    scheduler_for(state)
    gang_scheduler(state)
    recreator_for(state)
    kubelet_for(state)
    event_index(state)
    quota.tracker(state)
    for name, make in {**ADDONS, **state.reactors.addons}.items():
        if name not in state.addons:
            state.addons[name] = make(state)


class _Guard:
    """Runs one controller step, logging its failures (at most every few seconds per step)."""

    def __init__(self, stats: dict[str, list[float]]) -> None:
        self._last: dict[str, float] = {}
        self.stats = stats  # step -> [calls, seconds]

    async def run(self, name: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            result = fn()
            if inspect.isawaitable(result):
                result = await result
            return result
        except Exception:
            now = time.monotonic()
            if now - self._last.get(name, -_LOG_EVERY_SECONDS) >= _LOG_EVERY_SECONDS:
                self._last[name] = now
                log.exception("controller %s failed; the loop goes on", name)
            return None
        finally:
            entry = self.stats.setdefault(name, [0, 0.0])
            entry[0] += 1
            entry[1] += time.perf_counter() - started


def loop_stats(state: ClusterState) -> dict[str, list[float]]:
    """Calls and seconds spent per controller step of ``state``'s loop (for benchmarks and debugging)."""
    return state.controller_stats


def gang_scheduler(state: ClusterState) -> Reconciler | None:
    """The cluster's own scheduler beside kube-scheduler (Volcano or KAI, placing through kube-scheduler; HAMi,
    placing on its vGPUs), created on first use; None in the kube and kueue modes."""
    if state.mode == SchedulerMode.VOLCANO:
        from gpupoc.sim.controllers.volcano import volcano_for

        return volcano_for(state, scheduler_for(state))
    if state.mode == SchedulerMode.KAI:
        from gpupoc.sim.controllers.kai import kai_for

        return kai_for(state, scheduler_for(state))
    if state.mode == SchedulerMode.HAMI:
        from gpupoc.sim.controllers.hami import hami_for

        return hami_for(state)
    return None


def _kicker(state: ClusterState) -> Callable[[Change], None]:
    def on_change(change: Change) -> None:
        if change.resource in KICK_RESOURCES:
            state.kick()
    return on_change


async def run_controllers(state: ClusterState, stop: asyncio.Event, tick: float = TICK_SECONDS) -> None:
    """Drive every controller of ``state`` until ``stop`` is set."""
    tune_gc()
    build_controllers(state)
    kueue, scheduler, recreator, kubelet = state.kueue, state.scheduler, state.recreator, state.kubelet
    gang = gang_scheduler(state)
    state.store.add_listener(_kicker(state))
    guard = _Guard(loop_stats(state))

    async def wake_on_stop() -> None:
        await stop.wait()
        state.kick()

    waker = asyncio.get_running_loop().create_task(wake_on_stop())
    try:
        while not stop.is_set():
            await guard.run("api first", state.api_pressure.yield_to_requests)
            await guard.run("kueue", kueue.run_pass)
            if gang is not None:
                await guard.run(state.mode.value, gang.run_pass)
            await guard.run("scheduler", scheduler.run_pass)
            if recreator.enabled:
                await guard.run("recreate", recreator.run_pass)
            await guard.run("kubelet", kubelet.reconcile)
            for name, addon in list(state.addons.items()):
                await guard.run(name, addon.run_pass)
            await guard.run("quota", lambda: quota.refresh(state))
            await asyncio.sleep(0)  # let API requests in even when kicks keep coming
            if stop.is_set():
                break
            await state.wait_kick(tick)
    finally:
        waker.cancel()
        await guard.run("kubelet shutdown", kubelet.shutdown)
