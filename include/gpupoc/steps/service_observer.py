"""The ``observe_services`` task: every second, each service's Deployment, EndpointSlices and replicas, from
before the wave's release until the traffic has ended and every wave item is decided (``steps.wave_end``;
docs/services.md). A class whose preflight refused it deployed nothing: the task ends at once. A load nobody will
create is not waited for: its traffic task recorded a failure, or the wave's observer ended (the wave is over) and
no load pod of the service exists."""

from __future__ import annotations

from typing import TYPE_CHECKING

import time

from gpupoc.common.timefmt import utcnow
from gpupoc.pipeline import waits
from gpupoc.pipeline.service_history import ReplicaTracker, Snapshot, snapshots
from gpupoc.pipeline.watch_cache import WatchingCaller, watching
from gpupoc.podspec import labels as L
from gpupoc.podspec.service import service_selector
from gpupoc.steps.services import LOAD_ROLE, Deployed, deployed, load_failed
from gpupoc.steps.wave_end import WaveEnd, preflight_refused

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

HISTORY_FILE = "service_history"        # files/service_history.json: the snapshots
REPLICAS_FILE = "service_replicas"      # files/service_replicas.json: every replica seen
SCALE_FILE = "service_scale"          # the audit class's scale of each service (steps/probes/services.py)
FAILURES_FILE = "service_failures"    # the fault-recovery class's node failures under a replica
API_FILE = "observer_api_services"    # what its watches cost the API server: lists, relists after 410, bytes
CHECKPOINT_SECONDS = 15.0


def observe_services(ctx: RunContext, interval_s: float = 1.0) -> dict:
    """Snapshots until every load pod has ended and every wave item is decided (or the run's observation budget
    ran out); kept as ``files/service_history.json`` and ``service_replicas.json``. A node failure under a replica
    happens within its service's traffic (``plan.service_checks``), so its aftermath is seen."""
    services = deployed(ctx)
    if not services:
        return {"services": 0}
    if preflight_refused(ctx):
        return {"services": len(services), "snapshots": 0, "complete": True,
                "skipped": "prerequisites missing (preflight): nothing was deployed nor submitted"}
    names = [d.name for d in services]
    traffic = max((d.entry.traffic_seconds or ctx.plan.workload(d.entry.workload).service.traffic.duration_seconds
                   for d in services), default=0)
    budget = ctx.observe_timeout_s() + traffic
    deadline = time.monotonic() + budget
    history = [Snapshot.from_dict(d) for d in ctx.read_file(HISTORY_FILE, []) or []]
    tracker = ReplicaTracker()
    end = WaveEnd()
    saved = time.monotonic()
    waits.write_note(ctx.run_dir, ctx.task or "observe_services", f"{len(names)} service(s): the traffic and the "
                     "wave to end", budget)
    reader = watching(ctx.reader())  # one list per collection, then watches (``pipeline.watch_cache``)
    try:
        while True:
            loads = _look(ctx, reader, names, history, tracker)
            done = _loads_over(ctx, services, loads) and end.over(ctx)
            if done or time.monotonic() >= deadline:
                break
            if time.monotonic() - saved > CHECKPOINT_SECONDS:
                _save(ctx, history, tracker)
                saved = time.monotonic()
            time.sleep(interval_s)
    finally:
        if isinstance(reader, WatchingCaller):
            reader.close()
            ctx.writer.write_json(API_FILE, reader.stats())
        waits.clear_note(ctx.run_dir, ctx.task or "observe_services")
        _save(ctx, history, tracker)
    return {"services": len(names), "snapshots": len(history), "replicas": len(tracker.replicas),
            "complete": done, "wave": end.why or "not decided when the budget ran out"}


def _look(ctx: RunContext, reader, names: list[str], history: list[Snapshot], tracker: ReplicaTracker) -> list[dict]:
    """One snapshot of every service (``reader``: the watching reader); the load pods seen."""
    selector = service_selector(ctx.run_id, ctx.test_class)
    namespaces = sorted({d.namespace for d in deployed(ctx)})
    at = utcnow()
    deps, slices, pods = [], [], []
    for ns in namespaces:
        deps += _items(reader, f"/apis/apps/v1/namespaces/{ns}/deployments", selector)
        slices += _items(reader, f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices", "")
        pods += _items(reader, f"/api/v1/namespaces/{ns}/pods", selector)
    loads = [p for p in pods if (p["metadata"].get("labels") or {}).get(L.ROLE) == LOAD_ROLE]
    history.extend(snapshots(at, names, deps, slices))
    tracker.see(at, [p for p in pods if p not in loads])
    return loads


def _loads_over(ctx: RunContext, services: list[Deployed], loads: list[dict]) -> bool:
    """Every service with traffic has its load over: its load pods ended, or its traffic task recorded a failure
    (``steps.services.load_failed``). A load pod not created yet is waited for, even once the wave's observer
    ended: its task may still be queued, and the traffic it sends is what SVC-01 judges."""
    for d in services:
        if not d.entry.traffic:
            continue
        mine = [p for p in loads if (p["metadata"].get("labels") or {}).get(L.SERVICE) == d.name]
        ended = bool(mine) and all((p.get("status") or {}).get("phase") in ("Succeeded", "Failed") for p in mine)
        if not (ended or load_failed(ctx, d.entry.workload)):
            return False
    return True


def _items(reader, path: str, selector: str) -> list[dict]:
    r = reader.call("GET", path, query=[("labelSelector", selector)] if selector else [])
    return list((r.body or {}).get("items") or []) if r.ok and isinstance(r.body, dict) else []


def _save(ctx: RunContext, history: list[Snapshot], tracker: ReplicaTracker) -> None:
    ctx.writer.write_json(HISTORY_FILE, [s.to_dict() for s in history])
    ctx.writer.write_json(REPLICAS_FILE, [r.to_dict() for r in tracker.replicas.values()])
