"""Tenant isolation: borrowed quota taken back for its lender (``test_classes.tenant_isolation.reclaim``).

After the wave has ended, the borrower submits its pods and fills the pool beyond its guarantee; once it
holds more than that, the lender submits pods within its fair share, and the probe watches, every second,
until every lender pod holds its GPUs at the same moment or ``max_reclaim_seconds`` (plus a margin) have
passed (a lender pod that ended and left its GPUs to a sibling is no reclaim). The row
(``gpupoc.classes.tenant_isolation.reclaim_judge``) goes to ``files/reclaim.json``; the collector writes ``reclaim_probes``. The
probe's pods are deleted at the end, so the class's lease ends with a clean pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import secrets
import time
from dataclasses import asdict

from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.k8s import pod_gpus
from gpupoc.classes.tenant_isolation.reclaim_judge import held_by_node, reclaim_row
from gpupoc.steps.probes.common import probe_manifest, wait_for_release, waiting
from gpupoc.steps.wave_end import WaveEnd

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

RECLAIM_FILE = "reclaim"
MARGIN_SECONDS = 10.0
POLL_SECONDS = 1.0


def _pool_pods(ctx: RunContext, pool: str) -> list[dict]:
    from gpupoc.podspec import labels as L

    return [p for p in W.list_pods(ctx.reader(), ctx.namespaces, f"{L.RUN_ID}={L.safe_label_value(ctx.run_id)}")
            if ((p.get("metadata") or {}).get("labels") or {}).get(L.POOL) == pool]


def _submit(ctx: RunContext, side: str, sub) -> list[str]:
    tenant = ctx.plan.tenant(sub.tenant)
    caller = ctx.tenant(tenant.name, f"reclaim probe: the {side}'s submission")
    names = []
    for i in range(sub.count):
        name = f"ti-reclaim-{side}-{i:02d}-{secrets.token_hex(3)}"
        body = probe_manifest(ctx, sub.workload, tenant.name, name, role=f"reclaim-{side}")
        r = caller.call("POST", f"/api/v1/namespaces/{tenant.namespace}/pods", body=body)
        if r.ok:
            names.append(name)
    return names


def _held(pods: list[dict], namespace: str, names: set[str]) -> float:
    return float(sum(pod_gpus(p) for p in pods if p["metadata"]["namespace"] == namespace
                     and p["metadata"]["name"] in names and (p.get("spec") or {}).get("nodeName")
                     and (p.get("status") or {}).get("phase") in ("Pending", "Running")))


def _holds(pod: dict | None) -> bool:
    return bool(pod and (pod.get("spec") or {}).get("nodeName")
                and (pod.get("status") or {}).get("phase") in ("Pending", "Running"))


def _placed_at(pod: dict | None):
    cond = next((c for c in ((pod or {}).get("status") or {}).get("conditions") or []
                 if c.get("type") == "PodScheduled" and c.get("status") == "True"), None)
    return parse_time(cond.get("lastTransitionTime")) if cond else None


def reclaim_probe(ctx: RunContext) -> dict:
    """The borrower fills the pool, the lender asks within its guarantee; how soon it is served."""
    rc = ctx.spec.reclaim
    if rc is None:
        return {"skipped": "no test_classes.tenant_isolation.reclaim in the plan"}
    fs = ctx.spec.fair_share
    owed = {t.tenant: t for t in fs.tenants}
    pool = ctx.plan.pool(fs.pool)
    th = ctx.spec.thresholds
    budget = ctx.spec.gate_timeout_seconds + ctx.hold_timeout_s()
    wait_for_release(ctx, ctx.spec.gate_timeout_seconds)
    with waiting(ctx, "the wave's end before the reclaim probe", budget):
        deadline, end = time.monotonic() + budget, WaveEnd()
        while not end.over(ctx) and time.monotonic() < deadline:
            time.sleep(2.0)
    borrower_t, lender_t = ctx.plan.tenant(rc.borrower.tenant), ctx.plan.tenant(rc.lender.tenant)
    guaranteed = float(owed[borrower_t.name].guaranteed_gpus)
    borrower_at = utcnow()
    borrowed = set(_submit(ctx, "borrower", rc.borrower))
    held = 0.0
    with waiting(ctx, f"{borrower_t.name} to hold more than its {guaranteed:g} guaranteed GPUs",
                 rc.borrow_timeout_seconds):
        deadline, last, steady = time.monotonic() + rc.borrow_timeout_seconds, -1.0, 0
        while time.monotonic() < deadline:
            held = _held(_pool_pods(ctx, pool.name), borrower_t.namespace, borrowed)
            steady = steady + 1 if held == last else 0
            last = held
            if held > guaranteed and steady >= 2:  # borrowing, and no more of its pods being placed
                break
            time.sleep(POLL_SECONDS)
    pods = W.list_pods(ctx.reader(), ctx.namespaces, "")  # everything on the pool's nodes, not only the run's
    nodes = {n: pool.gpus_per_node for n in pool.node_names}
    for n in ctx.read_file("nodes", []) or []:
        if all((n.get("labels") or {}).get(k) == v for k, v in pool.node_selector.items()):
            nodes[n["name"]] = int(str((n.get("allocatable") or {}).get("nvidia.com/gpu", pool.gpus_per_node)))
    used = held_by_node(pods)
    free = {n: max(0, g - used.get(n, 0)) for n, g in nodes.items()}
    asks = [ctx.plan.workload(rc.lender.workload).gpus] * rc.lender.count
    submitted_at = utcnow()
    t0 = time.monotonic()
    lent = _submit(ctx, "lender", rc.lender)
    watch = th.max_reclaim_seconds + MARGIN_SECONDS
    placed: dict[str, object] = {}
    with waiting(ctx, f"{lender_t.name}'s {len(lent)} pod(s) to get the GPUs it lent back", watch):
        while time.monotonic() - t0 < watch:
            now = {p["metadata"]["name"]: p for p in _pool_pods(ctx, pool.name)
                   if p["metadata"]["namespace"] == lender_t.namespace}
            placed = {n: _placed_at(now.get(n)) for n in lent}
            # all at once: a lender pod that ended and handed its GPUs to its sibling is no reclaim
            if lent and all(placed.values()) and all(_holds(now.get(n)) for n in lent):
                break
            placed = {}
            time.sleep(POLL_SECONDS)
    observed = time.monotonic() - t0
    taken = _borrower_pods_taken(ctx, borrower_t.namespace, borrowed)
    row = reclaim_row(borrower=borrower_t.name, lender=lender_t.name, pool=pool.name, borrower_guaranteed=guaranteed,
                      borrower_held=held, lender_asks=asks, free=free, submitted_at=submitted_at,
                      placed=[placed.get(n) for n in lent] if lent else [None], taken=taken,
                      observed_seconds=observed, max_reclaim_seconds=th.max_reclaim_seconds)
    ctx.writer.write_json(RECLAIM_FILE, {**asdict(row), "submitted_at": rfc3339(submitted_at),
                                         "borrower_submitted_at": rfc3339(borrower_at),
                                         "placed_at": rfc3339(row.placed_at) if row.placed_at else None})
    admin = ctx.admin("reclaim probe: delete its pods")
    W.delete_pods(admin, [p for p in W.list_pods(admin.inner, ctx.namespaces, ctx.selector)
                          if p["metadata"]["name"] in borrowed | set(lent)])
    return {"needs_reclaim": row.needs_reclaim, "reclaimed": row.reclaimed, "reclaim_seconds": row.reclaim_seconds,
            "borrower_pods_taken": taken}


def _borrower_pods_taken(ctx: RunContext, namespace: str, names: set[str]) -> int:
    """Borrower pods the platform preempted or evicted (by their own records: status, events, audit)."""
    from gpupoc.pipeline.observe import list_events
    from gpupoc.pipeline.workload_outcome import classify, event_statements

    pods = {p["metadata"]["name"]: p for p in W.list_pods(ctx.reader(), [namespace], ctx.selector)}
    events = list_events(ctx.reader(), [namespace])
    records = ctx.platform_records()
    taken = 0
    for name in names:
        pod, key = pods.get(name), (namespace, name)
        out = classify(pod, present=pod is not None and not pod["metadata"].get("deletionTimestamp"),
                       events=event_statements(events, namespace, name), owner=records.owner.get(key, []),
                       deletions=records.deletions.get(key, []))
        if out.outcome.value in ("preempted", "evicted"):
            taken += 1
    return taken
