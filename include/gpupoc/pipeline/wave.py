"""The wave of a test class on the cluster: prepare it, release its gate at once, read it back, delete it.

The observer is in ``gpupoc.pipeline.observe``; each attempt's ``workload_runs`` row in ``gpupoc.pipeline.runs``.

Every function takes a ``KubeCaller`` (raw requests, status codes kept), so the same code runs against the
simulated cluster and a real one, and the unit tests use a fake.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Callable, Iterable

from gpupoc.common.constants import PIPELINE_GATE, RELEASED_AT
from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.pipeline.common import WaveTask
from gpupoc.pipeline.k8s import METADATA_LIST, KubeCaller, Response
from gpupoc.pipeline.timelines import Capacity
from gpupoc.podspec import labels as L

STRATEGIC = "application/strategic-merge-patch+json"
TERMINAL = ("Succeeded", "Failed")


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
    """The wave item a pod runs (annotation set by the pod builder, kept by controllers that recreate it)."""
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


def await_pods(caller: KubeCaller, namespaces: list[str], label_selector: str, expected: list[str], timeout_s: float,
               poll_s: float = 1.0, sleep: Callable[[float], None] = time.sleep, refused: Callable[[], set[str]] = set,
               on_waiting: Callable[[list[str], float], None] | None = None) -> tuple[dict[str, dict], list[str]]:
    """Wait until every expected item's pod exists (an item whose creation was refused is not waited for), at
    most ``timeout_s``; the latest pod per item and the items without one."""
    deadline = time.monotonic() + timeout_s
    while True:
        pods = latest_per_item(list_pods(caller, namespaces, label_selector))
        absent = [k for k in expected if k not in pods]
        gone = refused() if absent else set()  # the refusals are read only while a pod is missing
        missing = [k for k in absent if k not in gone]
        if not missing or time.monotonic() >= deadline:
            break
        if on_waiting:
            on_waiting(missing, deadline - time.monotonic())
        sleep(poll_s)
    return pods, [k for k in expected if k not in pods]


# The patch of one pod's gate, built when it is sent (a dict: the same patch for every pod).
PatchFor = Callable[[dict], dict]
Patch = dict | PatchFor
LiftAll = Callable[[list[dict], Patch], Iterable[tuple[dict, Response]]]


def patch_body(patch: Patch, pod: dict) -> dict:
    """The body to send for ``pod`` now: ``patch`` itself, or what it builds for the pod at this moment."""
    return patch(pod) if callable(patch) else patch


class ReleaseStamps:
    """When each pod's gate came off: a pod's patch is stamped as it is sent (again on each send that a 429 or
    a lost answer makes), so a pod whose lift the harness sent late starts its wait when its gate came off,
    not when the release began: the harness's own lag is never counted as the platform's wait."""

    def __init__(self, clock: Callable[[], datetime]):
        self.clock = clock
        self.sent: dict[str, datetime] = {}

    def __call__(self, pod: dict) -> dict:
        at = self.clock()
        self.sent[pod["metadata"]["name"]] = at
        return release_patch(at)


def lift_in_threads(caller: KubeCaller, pods: list[dict], patch: Patch, workers: int) -> list[tuple[dict, Response]]:
    """PATCH ``patch`` onto every pod from ``workers`` threads of ``caller``; each pod with its answer."""

    def lift(p: dict) -> tuple[dict, Response]:
        m = p["metadata"]
        return p, caller.call("PATCH", f"/api/v1/namespaces/{m['namespace']}/pods/{m['name']}",
                              body=patch_body(patch, p), content_type=STRATEGIC)

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(pods) or 1))) as pool:
        return list(pool.map(lift, pods))


def release_wave(caller: KubeCaller, namespaces: Iterable[str], label_selector: str, expected: list[str],
                 timeout_s: float, poll_s: float = 1.0, workers: int = 8,
                 clock: Callable[[], datetime] = utcnow, sleep: Callable[[float], None] = time.sleep,
                 refused: Callable[[], set[str]] = set,
                 on_waiting: Callable[[list[str], float], None] | None = None,
                 on_lifting: Callable[[], None] | None = None, lift_all: LiftAll | None = None,
                 created: dict[str, dict] | None = None) -> Release:
    """Wait until every expected item's pod exists, then lift the gate of all of them together.

    An item whose creation the platform refused (``refused()``: item keys) is not waited for. A pod released
    by an earlier try keeps its recorded release time (annotation), so a rerun of the task reports the same
    moments. After ``timeout_s`` the pods that exist are released and the rest are listed as missing;
    ``on_waiting(missing, seconds left)`` is told while it waits, ``on_lifting()`` just before the first gate
    is lifted. ``lift_all(pods, patch)`` sends the patches (default: ``workers`` threads of ``caller``; a large
    wave's through the async client, ``async_release.lift_gates``). ``created`` (item -> ``{pod, namespace,
    created_at}``): the wave's gated pods as their submitters created them and said so, taken as they are instead
    of listed (a bulk wave of 10,000 pods: the list would cost the API server a second while nothing else may go);
    a pod gone since answers 404, named in the errors.
    """
    namespaces, wanted = list(namespaces), set(expected)  # a set: 10,000 items looked up 10,000 times
    if created is None:
        pods, missing = await_pods(caller, namespaces, label_selector, expected, timeout_s, poll_s, sleep, refused,
                                   on_waiting)
    else:
        pods = {k: _as_created(k, c) for k, c in created.items() if k in wanted}
        missing = [k for k in expected if k not in pods]
    rel = Release(expected=len(expected), found=len(expected) - len(missing), missing=missing)
    rel.all_exist_at = None if missing else rfc3339(clock())
    gated = [p for k, p in pods.items() if k in wanted and PIPELINE_GATE in _gates(p)]
    at = clock()
    if on_lifting is not None:
        on_lifting()

    results: dict[str, datetime | None] = {}
    lift_all = lift_all or (lambda pods, patch: lift_in_threads(caller, pods, patch, workers))
    stamps = ReleaseStamps(clock)
    for p, r in lift_all(gated, stamps):
        if r.ok:
            results[p["metadata"]["name"]] = stamps.sent.get(p["metadata"]["name"], at)
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


def _as_created(item: str, created: dict) -> dict:
    """A gated pod as its submitter created it: what the release reads of a listed one."""
    return {"metadata": {"name": created["pod"], "namespace": created["namespace"],
                         "creationTimestamp": created.get("created_at"), "annotations": {L.ITEM: item}},
            "spec": {"schedulingGates": [{"name": PIPELINE_GATE}]}}


def _spread(moments: Iterable[datetime | None]) -> float | None:
    known = [m for m in moments if m is not None]
    return round((max(known) - min(known)).total_seconds(), 6) if known else None


def capacity(plan, nodes: list[dict] | None = None, held: dict[str, int] | None = None) -> Capacity:
    """GPUs per pool and quota per tenant from the plan; per node from the Node objects when given. ``held``:
    GPUs per node the run's own services held throughout (not the wave's to take)."""
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
    pool_gpus = {p.name: p.capacity_gpus for p in plan.pools}
    for node, gpus in (held or {}).items():
        if node in node_gpus:
            node_gpus[node] = max(0, node_gpus[node] - gpus)
            pool_gpus[node_pool[node]] = max(0, pool_gpus[node_pool[node]] - gpus)
    return Capacity(pool_gpus=pool_gpus, tenant_quota={t.name: t.quota.gpus for t in plan.tenants},
                    node_gpus=node_gpus, node_pool=node_pool)


def delete_pods(caller: KubeCaller, pods: list[dict]) -> list[str]:
    """Delete the given pods (404 counts as gone); returns the errors."""
    errors = []
    for p in pods:
        m = p["metadata"]
        r = caller.call("DELETE", f"/api/v1/namespaces/{m['namespace']}/pods/{m['name']}", body={})
        if not r.ok and r.status != 404:
            errors.append(f"{m['namespace']}/{m['name']}: HTTP {r.status}: {r.message}")
    return errors


def delete_selected(caller: KubeCaller, namespaces: Iterable[str], selector: str,
                    lister: KubeCaller | None = None) -> tuple[int, list[str]]:
    """Delete the pods matching ``selector`` in each namespace with one ``deletecollection``, as kubectl
    ``delete pods -l`` does (10,000 deletes one by one took half a minute). Its answer lists the pods it deleted,
    so they are not listed first; it is asked for their metadata only (``METADATA_LIST``): at 10,000 pods the
    whole objects are some 60 MB, which the API server would also write into one audit event at the
    RequestResponse level. A namespace where that is refused (no
    ``deletecollection`` right: 403, or 405) has its pods listed (by ``lister``, else ``caller``) and deleted
    one by one. Returns how many pods were deleted and the errors."""
    deleted, errors = 0, []
    for ns in sorted(set(namespaces)):
        r = caller.call("DELETE", f"/api/v1/namespaces/{ns}/pods", query={"labelSelector": selector}, body={},
                        accept=METADATA_LIST)
        if r.status in (403, 405):
            group = list_pods(lister or caller, [ns], selector)
            errors += delete_pods(caller, group)
            deleted += len(group)
        elif not r.ok:
            errors.append(f"pods of {ns} matching {selector}: HTTP {r.status}: {r.message}")
        elif isinstance(r.body, dict):
            deleted += len(r.body.get("items") or [])
    return deleted, errors


def adapter_name(plan) -> str:
    """The plan's scheduler adapter as a plain string (``kube-scheduler``, ``kueue``, ``volcano``, ``kai``, ``hami``)."""
    a = plan.platform.adapter
    return getattr(a, "value", str(a))
