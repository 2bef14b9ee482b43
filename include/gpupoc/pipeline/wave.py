"""The wave of a test class on the cluster: prepare it, release its gate at once, observe it, read it back.

Every function takes a ``KubeCaller`` (raw requests, status codes kept), so the same code runs against the
simulated cluster and a real one, and the unit tests use a fake.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterable

from gpupoc.pipeline.common import PIPELINE_GATE, RELEASED_AT, WaveTask, parse_time, rfc3339
from gpupoc.pipeline.congestion import Capacity, Observation, WorkloadTimeline
from gpupoc.pipeline.k8s import KubeCaller, pod_gpus
from gpupoc.podspec import labels as L

STRATEGIC = "application/strategic-merge-patch+json"
TERMINAL = ("Succeeded", "Failed")
KUEUE_VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2"
KUEUE_API = "/apis/kueue.x-k8s.io/v1beta1"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


# ---- prepare ----
def prepare_wave(plan, test_class: str, roles: Iterable[str] = ("wave",)) -> list[dict]:
    """One small dict per pod the class submits through the operator (roles filter: over-quota probes and
    similar submissions are made by the class's own probes, not by the operator)."""
    from gpupoc.plan import class_items

    wanted = tuple(roles)
    out = []
    for item in class_items(plan, test_class):
        if not any(item.role == r or item.role.startswith(r + ":") for r in wanted):
            continue
        tenant = plan.tenant(item.tenant)
        out.append(WaveTask(item.name, item.name, tenant.namespace, tenant.kube_context).to_dict())
    return out


def selector(run_id: str, test_class: str) -> str:
    """Label selector of every pod one run of one class created."""
    return f"{L.RUN_ID}={L.safe_label_value(run_id)},{L.TEST_CLASS}={L.safe_label_value(test_class)}"


def item_key(pod: dict) -> str:
    """The wave item a pod runs (annotation set by the pod builder)."""
    meta = pod.get("metadata") or {}
    return (meta.get("annotations") or {}).get(L.ITEM) or (meta.get("labels") or {}).get(L.WORKLOAD, "")


def list_pods(caller: KubeCaller, namespaces: Iterable[str], label_selector: str) -> list[dict]:
    """Pods matching the selector in each namespace (namespaced lists: what a tenant-scoped admin may do)."""
    pods: list[dict] = []
    for ns in sorted(set(namespaces)):
        r = caller.call("GET", f"/api/v1/namespaces/{ns}/pods", query={"labelSelector": label_selector})
        if r.ok and isinstance(r.body, dict):
            pods.extend(r.body.get("items") or [])
    return pods


def latest_per_item(pods: list[dict]) -> dict[str, dict]:
    """One pod per wave item: the newest when a retry created another."""
    out: dict[str, dict] = {}
    for p in sorted(pods, key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or ""):
        out[item_key(p)] = p
    return out


# ---- release ----
@dataclass
class Release:
    """The gate release of one wave: when each pod arrived and when its gate was lifted."""

    expected: int
    found: int
    missing: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)  # workload_key, pod, namespace, created_at, released_at, by_this_try
    all_exist_at: str | None = None
    arrival_spread_seconds: float | None = None
    release_spread_seconds: float | None = None
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _gates(pod: dict) -> list[str]:
    return [g.get("name", "") for g in (pod.get("spec") or {}).get("schedulingGates") or []]


def release_patch(at: datetime) -> dict:
    """Strategic-merge patch lifting the pipeline's gate and recording when (other gates stay)."""
    return {"metadata": {"annotations": {RELEASED_AT: rfc3339(at)}},
            "spec": {"schedulingGates": [{"$patch": "delete", "name": PIPELINE_GATE}]}}


def release_wave(caller: KubeCaller, namespaces: Iterable[str], label_selector: str, expected: list[str],
                 timeout_s: float, poll_s: float = 1.0, workers: int = 8,
                 clock: Callable[[], datetime] = utcnow, sleep: Callable[[float], None] = time.sleep) -> Release:
    """Wait until every expected item's pod exists, then lift the gate of all of them together.

    A pod released by an earlier try keeps its recorded release time (annotation), so a rerun of the task
    reports the same moments. After ``timeout_s`` the pods that exist are released and the rest are listed
    as missing.
    """
    namespaces = list(namespaces)
    deadline = time.monotonic() + timeout_s
    while True:
        pods = latest_per_item(list_pods(caller, namespaces, label_selector))
        missing = [k for k in expected if k not in pods]
        if not missing or time.monotonic() >= deadline:
            break
        sleep(poll_s)
    rel = Release(expected=len(expected), found=len(expected) - len(missing), missing=missing)
    rel.all_exist_at = None if missing else rfc3339(clock())
    gated = [p for k, p in pods.items() if k in expected and PIPELINE_GATE in _gates(p)]
    at = clock()

    def lift(p: dict):
        m = p["metadata"]
        return p, caller.call("PATCH", f"/api/v1/namespaces/{m['namespace']}/pods/{m['name']}",
                              body=release_patch(at), content_type=STRATEGIC)

    results: dict[str, datetime | None] = {}
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(gated) or 1))) as pool:
        for p, r in pool.map(lift, gated):
            if r.ok:
                results[p["metadata"]["name"]] = at
            else:
                rel.errors.append(f"{p['metadata']['namespace']}/{p['metadata']['name']}: HTTP {r.status}: {r.message}")
    for key in expected:
        p = pods.get(key)
        if p is None:
            continue
        m = p["metadata"]
        previous = parse_time((m.get("annotations") or {}).get(RELEASED_AT))
        released = results.get(m["name"]) or previous
        rel.rows.append({"workload_key": key, "pod": m["name"], "namespace": m["namespace"],
                         "created_at": m.get("creationTimestamp"), "released_at": rfc3339(released) if released else None,
                         "by_this_try": m["name"] in results})
    rel.arrival_spread_seconds = _spread(parse_time(r["created_at"]) for r in rel.rows)
    rel.release_spread_seconds = _spread(parse_time(r["released_at"]) for r in rel.rows)
    return rel


def _spread(moments: Iterable[datetime | None]) -> float | None:
    known = [m for m in moments if m is not None]
    return round((max(known) - min(known)).total_seconds(), 6) if known else None


# ---- observe ----
def _condition(pod: dict, type_: str) -> dict:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == type_), {})


def _event_time(e: dict) -> str:
    return e.get("eventTime") or e.get("lastTimestamp") or e.get("firstTimestamp") or ""


def latest_events(caller: KubeCaller, namespaces: Iterable[str], pod_names: set[str]) -> dict[tuple[str, str], dict]:
    """(namespace, pod) -> the newest scheduling-related event (a Warning if any, else the newest)."""
    out: dict[tuple[str, str], dict] = {}
    for ns in sorted(set(namespaces)):
        r = caller.call("GET", f"/api/v1/namespaces/{ns}/events")
        if not r.ok or not isinstance(r.body, dict):
            continue
        for e in sorted(r.body.get("items") or [], key=_event_time):
            name = (e.get("involvedObject") or {}).get("name")
            if name not in pod_names:
                continue
            key = (ns, name)
            if e.get("type") == "Warning" or key not in out or out[key].get("type") != "Warning":
                out[key] = e
    return out


SCHEDULING_EVENT_REASONS = frozenset({"FailedScheduling", "Unschedulable", "PodGroupNotReady", "Pending"})


def scheduling_event_observations(caller: KubeCaller, namespaces: Iterable[str],
                                  pod_names: set[str]) -> list[Observation]:
    """Every moment the platform said why a wave pod could not be scheduled (first and last time of each
    aggregated event), as observations: what a user reads in ``kubectl describe pod`` after the fact."""
    out: list[Observation] = []
    for ns in sorted(set(namespaces)):
        r = caller.call("GET", f"/api/v1/namespaces/{ns}/events")
        if not r.ok or not isinstance(r.body, dict):
            continue
        for e in r.body.get("items") or []:
            name = (e.get("involvedObject") or {}).get("name")
            if name not in pod_names or e.get("reason") not in SCHEDULING_EVENT_REASONS:
                continue
            moments = {parse_time(x) for x in (e.get("firstTimestamp"), e.get("lastTimestamp"), e.get("eventTime"))}
            for at in sorted(m for m in moments if m is not None):
                out.append(Observation(taken_at=at, pod=name, namespace=ns, event_reason=e.get("reason"),
                                       event_message=e.get("message") or e.get("note")))
    return sorted(out, key=lambda o: (o.taken_at, o.namespace, o.pod))


def kueue_info(caller: KubeCaller, plan, namespaces: Iterable[str]) -> dict[tuple[str, str], dict]:
    """(namespace, pod) -> {position, queue, reason, message} from Kueue's visibility API and Workloads."""
    out: dict[tuple[str, str], dict] = {}
    for ns in sorted(set(namespaces)):
        tenant = next((t for t in plan.tenants if t.namespace == ns), None)
        lq = (tenant.queues or {}).get("kueue") if tenant else None
        if hasattr(lq, "value"):
            lq = lq.value
        if lq:
            r = caller.call("GET", f"{KUEUE_VISIBILITY}/namespaces/{ns}/localqueues/{lq}/pendingworkloads")
            for it in (r.body or {}).get("items") or [] if r.ok and isinstance(r.body, dict) else []:
                for ref in (it.get("metadata") or {}).get("ownerReferences") or []:
                    if ref.get("kind") == "Pod":
                        out.setdefault((ns, ref.get("name")), {}).update(
                            position=it.get("positionInClusterQueue"), queue=lq)
        r = caller.call("GET", f"{KUEUE_API}/namespaces/{ns}/workloads")
        for wl in (r.body or {}).get("items") or [] if r.ok and isinstance(r.body, dict) else []:
            cond = next((c for c in (wl.get("status") or {}).get("conditions") or []
                         if c.get("type") == "QuotaReserved" and c.get("status") == "False"), None)
            if not cond:
                continue
            for ref in (wl.get("metadata") or {}).get("ownerReferences") or []:
                if ref.get("kind") == "Pod":
                    out.setdefault((ns, ref.get("name")), {}).update(reason=cond.get("reason"),
                                                                     message=cond.get("message"))
    return out


def observe_once(caller: KubeCaller, namespaces: list[str], label_selector: str, plan=None,
                 clock: Callable[[], datetime] = utcnow) -> tuple[list[Observation], list[dict]]:
    """One snapshot: every wave pod with the platform's own reason, message, position and ETA (if any)."""
    pods = list_pods(caller, namespaces, label_selector)
    taken = clock()
    names = {p["metadata"]["name"] for p in pods}
    events = latest_events(caller, namespaces, names) if pods else {}
    kueue = kueue_info(caller, plan, namespaces) if plan is not None and _adapter(plan) == "kueue" else {}
    obs = []
    for p in pods:
        m, spec, st = p["metadata"], p.get("spec") or {}, p.get("status") or {}
        key = (m["namespace"], m["name"])
        cond = _condition(p, "PodScheduled")
        waiting = cond.get("status") != "True"
        ev = events.get(key, {})
        kq = kueue.get(key, {})
        reason = (cond.get("reason") if waiting else None) or kq.get("reason")
        message = (cond.get("message") if waiting else None) or kq.get("message")
        obs.append(Observation(
            taken_at=taken, pod=m["name"], namespace=m["namespace"], phase=st.get("phase") or "Pending",
            node=spec.get("nodeName"), gates=tuple(_gates(p)), reason=reason, message=message,
            event_reason=ev.get("reason"), event_message=ev.get("message"), position=kq.get("position"),
            eta=parse_time((m.get("annotations") or {}).get("gpupoc.io/platform-eta")),
        ))
    return obs, pods


def _adapter(plan) -> str:
    a = plan.platform.adapter
    return getattr(a, "value", str(a))


def observe_wave(caller: KubeCaller, namespaces: list[str], label_selector: str, expected: int, *,
                 interval_s: float, timeout_s: float, plan=None, on_snapshot: Callable[[list[Observation]], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> list[Observation]:
    """Snapshots every ``interval_s`` until all ``expected`` pods exist and are terminal (or ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    all_obs: list[Observation] = []
    while True:
        obs, pods = observe_once(caller, namespaces, label_selector, plan)
        all_obs.extend(obs)
        if on_snapshot:
            on_snapshot(obs)
        done = len(latest_per_item(pods)) >= expected and all(o.phase in TERMINAL for o in obs)
        if done or time.monotonic() >= deadline:
            return all_obs
        sleep(interval_s)


def snapshot_rows(obs: list[Observation], tenants_by_ns: dict[str, str], source: str) -> list[dict]:
    """``queue_snapshots`` rows (only pods not yet bound: the ones waiting)."""
    rows = []
    for o in obs:
        if o.node or o.phase in TERMINAL:
            continue
        rows.append({"ts": o.taken_at, "pod": o.pod, "namespace": o.namespace, "phase": o.phase,
                     "reason": o.reason or o.event_reason, "message": o.message or o.event_message,
                     "position": o.position,
                     "eta_seconds": (o.eta - o.taken_at).total_seconds() if o.eta else None,
                     "source": source, "tenant": tenants_by_ns.get(o.namespace),
                     "queue": ",".join(o.gates) or None})
    return rows


# ---- read back ----
def _container(pod: dict) -> dict:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return next((c for c in statuses if c.get("name") == "base"), statuses[0] if statuses else {})


def pod_moments(pod: dict) -> dict:
    """submitted, scheduled, started, finished (UTC) plus phase, node, exit code, reason, message."""
    m, st = pod.get("metadata") or {}, pod.get("status") or {}
    sched = _condition(pod, "PodScheduled")
    c = _container(pod)
    state = c.get("state") or {}
    last = c.get("lastState") or {}
    term = state.get("terminated") or last.get("terminated") or {}
    run = state.get("running") or {}
    waiting = state.get("waiting") or {}
    return {
        "submitted_at": parse_time(m.get("creationTimestamp")),
        "scheduled_at": parse_time(sched.get("lastTransitionTime")) if sched.get("status") == "True" else None,
        "started_at": parse_time(run.get("startedAt") or term.get("startedAt")),
        "finished_at": parse_time(term.get("finishedAt")),
        "phase": st.get("phase"),
        "node": (pod.get("spec") or {}).get("nodeName"),
        "exit_code": term.get("exitCode"),
        "reason": term.get("reason") or waiting.get("reason") or st.get("reason"),
        "message": term.get("message") or waiting.get("message") or st.get("message"),
        "restarts": c.get("restartCount"),
    }


def timelines(plan, test_class: str, pods: list[dict], release_rows: list[dict]) -> tuple[list[WorkloadTimeline], list[dict]]:
    """Typed timelines for the congestion reconstruction and ``workload_runs`` rows, one per wave item."""
    from gpupoc.plan import class_items

    items = {i.name: i for i in class_items(plan, test_class)}
    released = {r["workload_key"]: parse_time(r.get("released_at")) for r in release_rows}
    out, rows = [], []
    for key, pod in sorted(latest_per_item(pods).items()):
        item = items.get(key)
        if item is None:
            continue
        wl, tenant = plan.workload(item.workload), plan.tenant(item.tenant)
        mo = pod_moments(pod)
        spec = pod.get("spec") or {}
        priority = spec.get("priority")
        if priority is None:
            priority = plan.priority_value(item.priority_class)
        t = WorkloadTimeline(
            workload_key=key, pod=pod["metadata"]["name"], namespace=pod["metadata"]["namespace"], tenant=tenant.name,
            pool=wl.pool, priority_class=item.priority_class, priority=int(priority), gpus=pod_gpus(pod) or wl.gpus,
            submitted_at=mo["submitted_at"], released_at=released.get(key), scheduled_at=mo["scheduled_at"],
            started_at=mo["started_at"], finished_at=mo["finished_at"], phase=mo["phase"] or "", node=mo["node"])
        out.append(t)
        rows.append({"test_class": test_class, "tenant": tenant.name, "namespace": t.namespace, "pod": t.pod,
                     "workload": wl.name, "task_type": wl.task_type, "priority_class": t.priority_class,
                     "priority": t.priority, "gpus": t.gpus, "pool": t.pool, "node": t.node,
                     "submitted_at": t.submitted_at, "released_at": t.released_at, "scheduled_at": t.scheduled_at,
                     "started_at": t.started_at, "finished_at": t.finished_at, "wait_seconds": t.wait_seconds,
                     "phase": t.phase, "exit_code": mo["exit_code"], "reason": mo["reason"],
                     "message": mo["message"], "role": item.role, "scenario": item.scenario})
    return out, rows


def gone_rows(plan, test_class: str, expected: list[str], pods: list[dict], observations: list[Observation]) -> list[dict]:
    """``workload_runs`` rows for wave items whose pod vanished before collection (preempted, evicted, deleted):
    what the last snapshot showed, so no workload is silently lost from the evidence."""
    from gpupoc.plan import class_items

    present = set(latest_per_item(pods))
    items = {i.name: i for i in class_items(plan, test_class)}
    rows = []
    for key in expected:
        if key in present or key not in items:
            continue
        seen = [o for o in observations if o.pod.startswith(key + "-")]
        item, last = items[key], (seen[-1] if seen else None)
        wl, tenant = plan.workload(item.workload), plan.tenant(item.tenant)
        rows.append({"test_class": test_class, "tenant": tenant.name, "namespace": tenant.namespace,
                     "pod": last.pod if last else key, "workload": wl.name, "task_type": wl.task_type,
                     "priority_class": item.priority_class, "priority": plan.priority_value(item.priority_class),
                     "gpus": wl.gpus, "pool": wl.pool, "node": last.node if last else None,
                     "phase": "Deleted" if last else "NotCreated",
                     "reason": (last.event_reason or last.reason or "DeletedBeforeCollection") if last else "NotCreated",
                     "message": (last.event_message or last.message) if last else
                     "the operator task never created this pod; see its task log",
                     "role": item.role, "scenario": item.scenario})
    return rows


def capacity(plan, nodes: list[dict] | None = None) -> Capacity:
    """GPUs per pool and quota per tenant from the plan; per node from the Node objects when given."""
    node_gpus: dict[str, int] = {}
    node_pool: dict[str, str] = {}
    for pool in plan.pools:
        for n in pool.node_names:
            node_gpus[n], node_pool[n] = pool.gpus_per_node, pool.name
    for n in nodes or []:
        labels = (n.get("metadata") or {}).get("labels") or {}
        pool = next((p.name for p in plan.pools if all(labels.get(k) == v for k, v in p.node_selector.items())), None)
        if pool:
            alloc = ((n.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu", "0")
            node_gpus[n["metadata"]["name"]], node_pool[n["metadata"]["name"]] = int(str(alloc)), pool
    return Capacity(pool_gpus={p.name: p.capacity_gpus for p in plan.pools},
                    tenant_quota={t.name: t.quota.gpus for t in plan.tenants}, node_gpus=node_gpus, node_pool=node_pool)


def delete_pods(caller: KubeCaller, pods: list[dict]) -> list[str]:
    """Delete the given pods (404 counts as gone); returns the errors."""
    errors = []
    for p in pods:
        m = p["metadata"]
        r = caller.call("DELETE", f"/api/v1/namespaces/{m['namespace']}/pods/{m['name']}", body={})
        if not r.ok and r.status != 404:
            errors.append(f"{m['namespace']}/{m['name']}: HTTP {r.status}: {r.message}")
    return errors
