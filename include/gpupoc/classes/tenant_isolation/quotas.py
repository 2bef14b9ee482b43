"""Quota probes: an over-quota submission, usage against quota through the run, two tenants' shares.

Part of the tenant-isolation test class. A usage reading carries its ``quota_samples`` row as the table's own
model (``table.py`` ``QuotaSample``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

import pandas as pd
from pydantic import BaseModel, ConfigDict

from gpupoc.classes.tenant_isolation.table import QuotaSample
from gpupoc.kube.resources import GPU_QUOTA_KEY
from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.pipeline.k8s import KubeCaller, holds_gpus, pod_gpus

P1 = "P1"
QUEUE_GATE_HINTS = ("kueue", "queue", "volcano", "kai")
APPROVAL_HINTS = ("approv",)


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _int(v: Any) -> int | None:
    try:
        return int(str(v))
    except (TypeError, ValueError):
        return None


# -- over-quota submission ---------------------------------------------------------------------------------

class OverQuotaResult(_Row):
    """What happened to a pod asking more GPUs than the tenant has left, and what the user was told."""

    tenant: str
    namespace: str
    quota: str
    pod: str
    at: str
    hard_gpus: int | None = None
    used_gpus: int | None = None
    remaining_gpus: int | None = None
    requested_gpus: int
    http_status: int
    outcome: str  # blocked | queued | approval | admitted | rejected
    user_message: str = ""
    phase: str = ""
    node: str = ""
    finding: str = ""
    severity: str = ""


def classify_submission(status: int, message: str, pod: dict | None) -> tuple[str, str]:
    """(outcome, what the user sees) for a submitted over-quota pod and its latest state."""
    if status == 403 and "exceeded quota" in message:
        return "blocked", message
    if status >= 300 or status == 0:
        return "rejected", message
    pod = pod or {}
    meta, spec, st = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    conds = {c.get("type"): c for c in st.get("conditions") or []}
    sched = conds.get("PodScheduled") or {}
    said = sched.get("message") or st.get("message") or ""
    marks = " ".join([*(g.get("name", "") for g in spec.get("schedulingGates") or []),
                      *(meta.get("annotations") or {}).keys(), *(meta.get("labels") or {}).keys()]).lower()
    if any(h in marks for h in APPROVAL_HINTS):
        return "approval", said or "waiting for approval"
    if spec.get("nodeName") or st.get("phase") in ("Running", "Succeeded"):
        return "admitted", said
    if spec.get("schedulingGates") and any(h in marks for h in QUEUE_GATE_HINTS):
        return "queued", said
    if "quota" in said.lower():
        return "queued", said
    return "admitted", said


def submit_over_quota(tenant: KubeCaller, tenant_name: str, namespace: str, quota: str,
                      make_pod: Callable[[str, int], dict], *, observe_s: float = 8.0, poll_s: float = 1.0,
                      extra_gpus: int = 1, cleanup: bool = True, name: str | None = None) -> OverQuotaResult:
    """Submit, as the tenant, a pod asking ``remaining + extra_gpus`` GPUs; watch it ``observe_s`` seconds.

    ``make_pod(name, gpus)`` builds the manifest (the plan's pod-spec builder). ``admitted`` means the quota
    was not enforced (P1) unless a queue holds the pod.
    """
    q = tenant.call("GET", f"/api/v1/namespaces/{namespace}/resourcequotas/{quota}")
    hard = used = None
    if q.ok:
        hard = _int(((q.body.get("status") or {}).get("hard") or (q.body.get("spec") or {}).get("hard") or {})
                    .get(GPU_QUOTA_KEY))
        used = _int(((q.body.get("status") or {}).get("used") or {}).get(GPU_QUOTA_KEY))
    remaining = None if hard is None else max(hard - (used or 0), 0)
    gpus = (remaining or 0) + extra_gpus
    name = name or f"over-quota-{tenant_name}"[:55].rstrip("-") + f"-{int(time.time()) % 100000}"
    at = utcnow()
    r = tenant.call("POST", f"/api/v1/namespaces/{namespace}/pods", body=make_pod(name, gpus))
    pod = r.body if r.ok and isinstance(r.body, dict) else None
    if pod:
        name = pod["metadata"]["name"]
        deadline = time.monotonic() + observe_s
        while time.monotonic() < deadline:
            g = tenant.call("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
            if g.ok:
                pod = g.body
                if (pod.get("spec") or {}).get("nodeName"):
                    break
            time.sleep(poll_s)
    outcome, said = classify_submission(r.status, r.message, pod)
    row = OverQuotaResult(tenant=tenant_name, namespace=namespace, quota=quota, pod=name, at=rfc3339(at),
                          hard_gpus=hard, used_gpus=used, remaining_gpus=remaining, requested_gpus=gpus,
                          http_status=r.status, outcome=outcome, user_message=said,
                          phase=((pod or {}).get("status") or {}).get("phase", ""),
                          node=((pod or {}).get("spec") or {}).get("nodeName", "") or "")
    if outcome == "admitted":
        row.severity = P1
        row.finding = (f"quota not enforced: {gpus} GPU(s) requested with {remaining} left in {quota}, "
                       f"the pod was accepted{' and bound to ' + row.node if row.node else ''}")
    elif outcome in ("blocked", "queued", "approval") and not said:
        row.finding = "the user got no message saying why the pod does not run"
    elif outcome == "rejected":
        row.finding = f"rejected for another reason than quota: HTTP {r.status} {r.message}"
    if pod and cleanup:
        tenant.call("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", body={"gracePeriodSeconds": 0})
    return row


# -- usage against quota through the run -------------------------------------------------------------------

class QuotaReading(_Row):
    """One reading of a tenant's GPU quota: ``row`` is its ``quota_samples`` row, the table's own model
    (``table.py`` ``QuotaSample``: the quota's GPU accounting as its status reports it); the rest is what the
    table's row leaves out: the quota's pod count, the GPUs the tenant's pods really hold, and the finding."""

    row: QuotaSample
    pods_gpus: int | None = None  # sum of GPU requests of bound, non-terminal pods
    hard_pods: int | None = None
    used_pods: int | None = None
    used_ratio: float | None = None
    finding: str = ""


def sample_quotas(admin: KubeCaller, namespaces: Iterable[str] | Mapping[str, str]) -> list[QuotaReading]:
    """One reading per GPU quota in each namespace (``namespaces``: a mapping names each namespace's tenant;
    otherwise the tenant is the namespace's name)."""
    tenants = dict(namespaces) if isinstance(namespaces, Mapping) else {ns: ns for ns in namespaces}
    rows = []
    for ns, tenant in tenants.items():
        base = QuotaSample(ts=utcnow(), tenant=tenant, namespace=ns, resource=GPU_QUOTA_KEY, quota="",
                           source="resourcequota status")
        qs = admin.call("GET", f"/api/v1/namespaces/{ns}/resourcequotas")
        pods = admin.call("GET", f"/api/v1/namespaces/{ns}/pods")
        held = sum(pod_gpus(p) for p in (pods.body or {}).get("items") or [] if holds_gpus(p)) if pods.ok else None
        for q in (qs.body or {}).get("items") or [] if qs.ok else []:
            st = q.get("status") or {}
            hard_map = st.get("hard") or (q.get("spec") or {}).get("hard") or {}
            if GPU_QUOTA_KEY not in hard_map:
                continue
            hard, used = _int(hard_map.get(GPU_QUOTA_KEY)), _int((st.get("used") or {}).get(GPU_QUOTA_KEY))
            row = QuotaReading(row=replace(base, quota=q["metadata"]["name"], hard=hard, used=used), pods_gpus=held,
                               hard_pods=_int(hard_map.get("pods")), used_pods=_int((st.get("used") or {}).get("pods")),
                               used_ratio=round(used / hard, 4) if hard and used is not None else None)
            if hard is not None and held is not None and held > hard:
                row.finding = f"P1: pods hold {held} GPU(s), over the quota of {hard}"
            elif used is not None and held is not None and used < held:
                row.finding = f"quota accounting shows {used} used while pods hold {held}"
            rows.append(row)
        if not qs.ok:
            rows.append(QuotaReading(row=base, pods_gpus=held,
                                     finding=f"not verified: quota list answered HTTP {qs.status} {qs.message}"))
    return rows


# -- two tenants competing ---------------------------------------------------------------------------------

class TenantShare(_Row):
    """A tenant's share of the GPU-seconds used in the window, beside its entitlement and its waits."""

    tenant: str
    workloads: int
    started: int
    gpu_seconds: float
    share: float | None
    entitled_share: float | None = None
    share_vs_entitled: float | None = None
    wait_mean_s: float | None = None
    wait_p50_s: float | None = None
    wait_p95_s: float | None = None
    wait_max_s: float | None = None
    never_started: int = 0


def _field(row: Any, *names: str) -> Any:
    for n in names:
        v = row.get(n) if isinstance(row, dict) else getattr(row, n, None)
        if v is not None and not (isinstance(v, float) and pd.isna(v)) and v is not pd.NaT:
            return v
    return None


def tenant_shares(workloads: Iterable[Any] | pd.DataFrame, quotas: dict[str, int] | None = None,
                  now: Any = None) -> list[TenantShare]:
    """Each tenant's share of GPU-seconds and its waits, from workload rows (dicts, models or a DataFrame).

    A row needs ``tenant``, ``gpus``, ``submitted``/``submitted_at``, ``started``/``started_at`` and
    ``finished``/``finished_at``; running workloads count up to ``now``; never-started ones wait until ``now``.
    """
    rows = workloads.to_dict("records") if isinstance(workloads, pd.DataFrame) else list(workloads)
    now_t = parse_time(now) if now is not None else utcnow()
    agg: dict[str, dict] = {}
    for w in rows:
        tenant = str(_field(w, "tenant", "namespace"))
        a = agg.setdefault(tenant, {"n": 0, "started": 0, "gs": 0.0, "waits": [], "never": 0})
        a["n"] += 1
        gpus = float(_field(w, "gpus", "gpu_request") or 0)
        sub = parse_time(_ts(_field(w, "submitted_at", "submitted", "created_at")))
        start = parse_time(_ts(_field(w, "started_at", "started", "scheduled_at")))
        end = parse_time(_ts(_field(w, "finished_at", "finished"))) or now_t
        if start is not None:
            a["started"] += 1
            a["gs"] += gpus * max((end - start).total_seconds(), 0.0)
            if sub is not None:
                a["waits"].append(max((start - sub).total_seconds(), 0.0))
        else:
            a["never"] += 1
            if sub is not None:
                a["waits"].append(max((now_t - sub).total_seconds(), 0.0))
    total = sum(a["gs"] for a in agg.values())
    qtotal = sum((quotas or {}).get(t, 0) for t in agg) if quotas else 0
    out = []
    for tenant, a in sorted(agg.items()):
        waits = pd.Series(a["waits"], dtype=float)
        share = round(a["gs"] / total, 4) if total else None
        ent = round(quotas[tenant] / qtotal, 4) if quotas and qtotal and tenant in quotas else None
        out.append(TenantShare(
            tenant=tenant, workloads=a["n"], started=a["started"], gpu_seconds=round(a["gs"], 3), share=share,
            entitled_share=ent, share_vs_entitled=round(share / ent, 4) if share is not None and ent else None,
            wait_mean_s=_r(waits.mean()), wait_p50_s=_r(waits.quantile(0.5)), wait_p95_s=_r(waits.quantile(0.95)),
            wait_max_s=_r(waits.max()), never_started=a["never"]))
    return out


def _ts(v: Any) -> Any:
    return v.to_pydatetime() if isinstance(v, pd.Timestamp) else v


def _r(v: Any) -> float | None:
    return None if v is None or pd.isna(v) else round(float(v), 3)
