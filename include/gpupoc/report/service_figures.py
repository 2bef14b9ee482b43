"""The online services in the report's items (docs/services.md, docs/report.md), from the same rows their
checks judge: each service's SLO through the congestion wave and the serving replicas preempted (with the
scheduling-policy item), a node failure under a serving replica (with the failure-evidence item), and the
serving GPUs allocated against used (with the utilization and cost items).

Counted figures come from ``gpupoc.report.measures`` and name their check; the bounds shown beside the
recovery times are the ones the checks were judged with (the run's stored validation result).
"""

from __future__ import annotations

import json

import pandas as pd

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import measures as M
from gpupoc.report.frames import Details, Runs, cols, load, num, table
from gpupoc.report.models import EvidenceTable, Figure

SLO_COLUMNS = ("service", "tenant", "availability_pct", "slo_availability_pct", "worst_p95_ms", "slo_p95_ms",
               "worst_p99_ms", "slo_p99_ms", "breach_seconds", "unready_answers", "late_sent", "late_read",
               "harness_lag_pct", "max_harness_lag_pct", "held", "reason")
PREEMPTION_COLUMNS = ("service", "pod", "node", "priority", "preemptor", "preemptor_priority", "preempted_by_higher",
                      "ended_at")
RECOVERY_SUITE = "fault_recovery.service_recovery"
BOUNDS = {"SVC-06": "max_endpoint_removal_seconds", "SVC-08": "max_replica_replacement_seconds",
          "SVC-09": "max_slo_breach_seconds"}  # check -> the bound it judged, shown beside the time
RECOVERY_COLUMNS = ("service", "node", "injection", "failed_at", "victim_pods", "endpoint_removed",
                    "endpoint_removal_seconds", "max_endpoint_removal_seconds", "replacement_pod", "replacement_ready",
                    "replacement_seconds", "max_replica_replacement_seconds", "breach_seconds",
                    "max_slo_breach_seconds", "unready_answers", "reason")


def slo_details(runs: Runs) -> Details:
    """Each online service's SLO through the congestion wave (SVC-01..03's rows) and the serving replicas
    preempted, by whom and at what priority (SVC-04's rows)."""
    f: list[Figure] = []
    t: list[EvidenceTable] = []
    slo = load(runs, "queue_congestion", "service_slo")
    measured = M.traffic_measured(slo)
    if measured is not None and measured.total:
        f.append(Figure.of("services_measured", measured))
        held = M.slo_held(slo)
        if held is not None and held.total:
            f.append(Figure.of("services_slo_held", held))
            f.append(Figure(label="services_availability_min", value=lowest_availability(slo), unit="unit.percent"))
        lagged = M.slo_harness_lag(slo)
        if lagged is not None and lagged.count:  # the harness's own lag left an SLO not verified: say so
            f.append(Figure.of("services_slo_harness_lag", lagged))
        late = harness_late(slo)
        if late:
            f.append(Figure(label="services_harness_late", value=late))
        t.append(table("service_slo", cols(slo, *SLO_COLUMNS), source="queue_congestion/service_slo"))
    rep = load(runs, "queue_congestion", "service_replicas")
    if not rep.empty and "end" in rep:
        pre = M.serving_preemptions(rep)
        by_higher = M.preempted_by_higher(rep)
        f.append(Figure.of("serving_preempted_by_higher", by_higher) if by_higher is not None and by_higher.total
                 else Figure(label="serving_preempted", value=len(pre)))
        if len(pre):
            t.append(table("serving_preemptions", cols(pre, *PREEMPTION_COLUMNS),
                           source="queue_congestion/service_replicas"))
    return f, t


def _stored(ev: RunEvidence | None, suite: str) -> dict:
    """The run's stored validation result of ``suite`` (empty when it has none)."""
    if ev is None:
        return {}
    try:
        return json.loads((ev.run_dir / "validation" / f"{suite}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def judged(ev: RunEvidence | None, suite: str, check: str) -> bool:
    """Whether the run's validation of ``suite`` judged ``check`` (its plan provoked the check's case)."""
    return any(((r.get("expectation_config") or {}).get("meta") or {}).get("check_id") == check
               for r in _stored(ev, suite).get("results") or [])


def check_bounds(ev: RunEvidence | None, suite: str) -> dict[str, float]:
    """The bound (``max_value``) each check of ``suite`` was judged with in the run, by the bound's parameter
    name (``BOUNDS``); empty when the run stored no such result."""
    out = {}
    for r in _stored(ev, suite).get("results") or []:
        config = r.get("expectation_config") or {}
        name = BOUNDS.get((config.get("meta") or {}).get("check_id", ""))
        bound = (config.get("kwargs") or {}).get("max_value")
        if name and isinstance(bound, (int, float)):
            out[name] = float(bound)
    return out


def recovery_details(runs: Runs) -> Details:
    """A node failure under a serving replica (SVC-05..10's rows): the dead endpoint removed, the replacement
    ready, the seconds of traffic that missed the SLO, each beside the bound it was judged by."""
    rec = load(runs, "fault_recovery", "service_recovery")
    if rec.empty:
        return [], []
    f = [Figure(label="service_node_failures", value=len(rec))]
    for label, m in (("service_endpoint_removed", M.endpoints_removed(rec)),
                     ("service_replacement_ready", M.replacements_ready(rec))):
        if m is not None and m.total:
            f.append(Figure.of(label, m))
    for label, column in (("max_endpoint_removal", "endpoint_removal_seconds"),
                          ("max_service_replacement", "replacement_seconds"), ("max_service_breach", "breach_seconds")):
        if column in rec and rec[column].notna().any():
            f.append(Figure(label=label, value=num(rec[column].max()), unit="unit.seconds"))
    shown = rec.assign(**check_bounds(runs.get("fault_recovery"), RECOVERY_SUITE))
    return f, [table("service_recovery", cols(shown, *RECOVERY_COLUMNS), source="fault_recovery/service_recovery")]


def _serving(runs: Runs) -> pd.DataFrame:
    """The utilization rows when they tell serving GPUs apart: some row serves, or UTL-10 judged them (the plan
    runs online services); else none (a plan without services marks no row serving)."""
    ut = load(runs, "utilization", "utilization")
    if ut.empty or "serving" not in ut:
        return ut.iloc[0:0]
    if M.truthy(ut["serving"]).any() or judged(runs.get("utilization"), "utilization.utilization", "UTL-10"):
        return ut
    return ut.iloc[0:0]


def serving_utilization(runs: Runs) -> Details:
    """Serving GPUs against the rest: GPUs, GPU-hours allocated and used, mean utilization (UTL-10's column)."""
    ut = _serving(runs)
    if ut.empty:
        return [], []
    serving = ut[M.truthy(ut["serving"])]
    f = [Figure(label="serving_gpus", value=int(serving["gpu_uuid"].nunique()) if "gpu_uuid" in ut else None)]
    by = ut.assign(serving=M.truthy(ut["serving"])).groupby("serving", as_index=False).agg(
        gpus=("gpu_uuid", "nunique"), allocated_gpu_hours=("allocated_gpu_hours", "sum"),
        used_gpu_hours=("used_gpu_hours", "sum"), util_avg=("util_avg", "mean"))
    by = by.sort_values("serving", ascending=False)
    return f, [table("serving_gpus", by, source="utilization/utilization")]


def serving_cost(runs: Runs) -> list[Figure]:
    """GPU-hours the online services were allocated and used."""
    ut = _serving(runs)
    if ut.empty:
        return []
    serving = ut[M.truthy(ut["serving"])]
    return [Figure(label="serving_allocated_gpu_hours", value=round(float(serving["allocated_gpu_hours"].sum()), 2),
                   unit="unit.gpu_hours"),
            Figure(label="serving_used_gpu_hours", value=round(float(serving["used_gpu_hours"].sum()), 2),
                   unit="unit.gpu_hours")]


def harness_late(slo: pd.DataFrame) -> int:
    """Requests the load generator sent or read late (its own lag, counted apart from the SLO)."""
    return sum(int(pd.to_numeric(slo[c], errors="coerce").fillna(0).sum()) for c in ("late_sent", "late_read")
               if c in slo)


def lowest_availability(slo: pd.DataFrame) -> float | None:
    """The lowest availability (%) of the measured services."""
    if slo.empty or "availability_pct" not in slo:
        return None
    return num(slo["availability_pct"].min())
