"""The figures and small tables shown with each item, one named step per item, from the latest evidence of
each test class. Counted figures come from ``gpupoc.report.measures`` (the rows their verdicts judge), so the
summary and the body say the same; units are string-table keys (``unit.*``), worded where they are shown."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from gpupoc.report import cost_figures, measures as M, replay_figures, service_figures
from gpupoc.report.frames import Details, Runs, cols as _cols, load, num as _num, table
from gpupoc.report.models import EvidenceTable, Figure
from gpupoc.report.security import attempts_table


def permission_isolation(runs: Runs) -> Details:
    """Forbidden attempts denied (ISO-03's rows), every cross-tenant attempt with its HTTP status, quotas."""
    f: list[Figure] = []
    t: list[EvidenceTable] = []
    ap = load(runs, "tenant_isolation", "access_probes")
    denied = M.forbidden_denied(ap)
    if denied is not None:
        bad = M.unexpected_answers(ap)
        f += [Figure.of("forbidden_denied", denied), Figure(label="cross_tenant_attempts",
                                                             value=len(M.cross_tenant(ap))),
              Figure.of("expected_answers", M.expected_answers(ap))]
        t.append(attempts_table(ap, "tenant_isolation/access_probes"))
        if len(bad):
            t.append(table("unexpected_outcomes", _cols(bad, "actor_tenant", "target_namespace", "action",
                                                        "http_status", "message"), source="tenant_isolation/access_probes"))
    qs = load(runs, "tenant_isolation", "quota_samples")
    if not qs.empty:
        agg = qs.groupby(["namespace", "resource"], as_index=False).agg(hard=("hard", "max"), max_used=("used", "max"))
        t.append(table("quota_usage", agg, source="tenant_isolation/quota_samples"))
    return f, t


def task_records(runs: Runs) -> Details:
    """Every attempt's outcome across the classes, the ledger against the audit log, the artifact hand-over."""
    total = lost = 0
    outcomes: dict[str, int] = {}
    for ev in runs.values():
        wr = ev.load("workload_runs")
        if not wr.empty and "outcome" in wr:
            total += len(wr)
            lost += int((wr["outcome"].isna() | (wr["outcome"] == "lost")).sum())
            for k, n in wr["outcome"].value_counts().items():
                outcomes[str(k)] = outcomes.get(str(k), 0) + int(n)
    f = [Figure(label="workloads", value=total), Figure(label="lost", value=lost)]
    f += [Figure(label=f"outcome_{k}", value=n) for k, n in sorted(outcomes.items()) if k != "lost"]
    t: list[EvidenceTable] = []
    am = load(runs, "audit_trail", "audit_matches")
    matched = M.audit_matched(am)
    if matched is not None:
        f.append(Figure.of("audit_matched", matched))
        t.append(table("audit_matches", _cols(am, "ledger_action", "actor", "verb", "resource", "namespace",
                                              "matched", "delay_seconds"), 10, "audit_trail/audit_matches"))
    art = load(runs, "audit_trail", "artifacts")
    if not art.empty:
        t.append(table("artifacts", _cols(art, "path", "size_bytes", "producer", "consumer", "verified", "sha256"),
                       source="audit_trail/artifacts"))
    return f, t


def queue_explainability(runs: Runs) -> Details:
    """Waits the platform explained (QC-05's rows), the queue in the order it was served, the preemptions."""
    f: list[Figure] = []
    t: list[EvidenceTable] = []
    ex = load(runs, "queue_congestion", "explanations")
    explained = M.waits_explained(ex)
    if explained is not None:
        need = ex[ex["explained"].notna()]
        f.append(Figure.of("waits_explained", explained))
        unseen = M.waits_unobserved(ex)
        if unseen:
            f.append(Figure(label="waits_unobserved", value=unseen, check="QC-05"))
        t.append(table("explanations", _cols(need, "pod", "platform_reason", "platform_message",
                                             "reconstructed_bottleneck", "ahead_count", "explained"), 6,
                       "queue_congestion/explanations"))
        if "expected_wait_seconds" in ex:  # the queue in the order it was served, expected against actual
            order = ex.sort_values(["wait_seconds", "pod"], na_position="last")
            t.append(table("queue_order", _cols(order, "pod", "priority_class", "gpus", "reconstructed_bottleneck",
                                                "expected_wait_seconds", "wait_seconds"), 15,
                           "queue_congestion/explanations"))
    wr = load(runs, "queue_congestion", "workload_runs")
    if not wr.empty and "outcome" in wr:
        moved = wr[wr["outcome"].isin(["preempted", "evicted"])]
        f.append(Figure(label="preempted_or_evicted", value=len(moved)))
        if len(moved):
            t.append(table("preemptions", _cols(moved, "pod", "priority_class", "outcome", "outcome_by",
                                                "outcome_message", "outcome_at"), source="queue_congestion/workload_runs"))
    return f, t


def failure_evidence(runs: Runs) -> Details:
    """Complete evidence chains (FR-01's rows, a part that does not apply counted complete), logs, GPU release."""
    fr = load(runs, "fault_recovery", "failure_records")
    chains = M.chains_complete(fr)
    sf, st = service_figures.recovery_details(runs)  # a node failure under a serving replica, beside them
    if chains is None:
        return sf, st
    f = [Figure(label="scenarios", value=len(fr)), Figure.of("chains_complete", chains),
         Figure.of("logs_readable", M.logs_readable(fr)),
         Figure(label="max_gpu_release", value=_num(fr["gpu_release_seconds"].max()), unit="unit.seconds")]
    gaps = fr[~M.chain_complete(fr)]
    t = [table("incomplete_records", _cols(gaps, "scenario", "logs_readable", "events", "gpu_release_seconds",
                                           "verified", "reason"), source="fault_recovery/failure_records")] \
        if len(gaps) else []
    return f + sf, t + st


def _by_team(ut: pd.DataFrame) -> pd.DataFrame:
    return ut.groupby("namespace", as_index=False).agg(
        allocated_gpu_hours=("allocated_gpu_hours", "sum"), used_gpu_hours=("used_gpu_hours", "sum"),
        util_avg=("util_avg", "mean"), mem_mib_avg=("mem_mib_avg", "mean"))


SLICES = "utilization/vgpu_utilization"


def _by_slice(vu: pd.DataFrame) -> pd.DataFrame:
    """Each vGPU slice over the run: granted against used (memory, cores), GPU-hours as fractions of its card."""
    return vu.groupby(["namespace", "pod", "gpu_uuid"], as_index=False, sort=True).agg(
        share=("share", "max"), mem_allocated_mib=("mem_allocated_mib", "max"),
        mem_used_mib_max=("mem_used_mib_max", "max"), cores_allocated=("cores_allocated", "max"),
        util_avg=("util_avg", "mean"), allocated_gpu_hours=("allocated_gpu_hours", "sum"),
        used_gpu_hours=("used_gpu_hours", "sum"))


def utilization_reports(runs: Runs) -> Details:
    """Teams, pools and time buckets covered; utilization by team and by pool and task type; on vGPU slices,
    each slice's grant against its use."""
    ut = load(runs, "utilization", "utilization")
    if ut.empty:
        return [], []
    f = [Figure(label="teams", value=int(ut["namespace"].nunique())),
         Figure(label="pools", value=int(ut["pool"].nunique())),
         Figure(label="buckets", value=int(ut["bucket"].nunique()))]
    tt = ut.groupby(["pool", "task_type"], as_index=False).agg(util_avg=("util_avg", "mean"),
                                                               util_p95=("util_p95", "max"))
    sf, st = service_figures.serving_utilization(runs)
    f, t = f + sf, [table("by_team", _by_team(ut), source="utilization/utilization"),
                    table("by_pool_task_type", tt, source="utilization/utilization")] + st
    vu = load(runs, "utilization", "vgpu_utilization")
    if not vu.empty:
        by = _by_slice(vu)
        f.append(Figure(label="vgpu_slices", value=len(by)))
        t.append(table("by_slice", by, source=SLICES))
    return f, t


def cost_attribution(runs: Runs) -> Details:
    """GPU-hours allocated and used, by team; on vGPU slices also as fractions of the cards the slices hold; their
    cost in the plan's currency (``cost_figures``)."""
    ut = load(runs, "utilization", "utilization")
    if ut.empty:
        return [], []
    alloc, used = float(ut["allocated_gpu_hours"].sum()), float(ut["used_gpu_hours"].sum())
    f = [Figure(label="allocated_gpu_hours", value=round(alloc, 2), unit="unit.gpu_hours"),
         Figure(label="used_gpu_hours", value=round(used, 2), unit="unit.gpu_hours")]
    f += service_figures.serving_cost(runs)  # the online services' share of them
    by = _by_team(ut)
    t = [table("by_team", by[["namespace", "allocated_gpu_hours", "used_gpu_hours"]], source="utilization/utilization")]
    vu = load(runs, "utilization", "vgpu_utilization")
    if not vu.empty:
        f.append(Figure(label="slice_gpu_hours", value=round(float(vu["allocated_gpu_hours"].sum()), 2),
                        unit="unit.gpu_hours"))
        teams = vu.groupby("namespace", as_index=False).agg(
            slices=("pod", "nunique"), allocated_gpu_hours=("allocated_gpu_hours", "sum"),
            used_gpu_hours=("used_gpu_hours", "sum"))
        t.append(table("by_team_slices", teams, source=SLICES))
    cf, ct = cost_figures.cost_details(runs)  # the same GPU-hours in money, by the plan's prices
    return f + cf, t + ct


def scheduling_policy(runs: Runs) -> Details:
    """Waits by priority, resubmissions, lower priorities overtaking, the online services' SLO and preempted
    serving replicas, start-up latency, and a replayed history's waits."""
    f: list[Figure] = []
    t: list[EvidenceTable] = []
    wr = load(runs, "queue_congestion", "workload_runs")
    if not wr.empty:
        g = wr.groupby(["priority_class", "priority"], as_index=False).agg(
            workloads=("pod", "count"), wait_p50_seconds=("wait_seconds", "median"),
            wait_max_seconds=("wait_seconds", "max"))
        t.append(table("wait_by_priority", g.sort_values("priority", ascending=False),
                       source="queue_congestion/workload_runs"))
        if "attempt" in wr:
            f.append(Figure(label="resubmitted", value=int((wr["attempt"].fillna(1) > 1).sum())))
    po = runs.get("queue_congestion")
    po_path = po.run_dir / "validation" / "derived" / "priority_order.parquet" if po else None
    if po_path and po_path.is_file():
        f.append(Figure(label="overtaken_by_lower", value=int(pd.read_parquet(po_path)["overtaken_by_lower"].sum())))
    for sf, st in (service_figures.slo_details(runs), startup_figures(runs)):  # the online services' SLO
        f, t = f + sf, t + st
    rf, rt = replay_figures.item_details("scheduling_policy", runs)  # a replayed history's waits beside the platform's
    return f + rf, t + rt


def monitoring_integration(runs: Runs) -> Details:
    """Alerts fired (FR-15's rows), failures whose record names an alert (FR-13's), GPUs with metrics."""
    f: list[Figure] = []
    alerts = load(runs, "fault_recovery", "alerts")
    if "fault_recovery" in runs and runs["fault_recovery"].status("alerts").verified:
        f.append(Figure(label="alerts", value=len(alerts), check="FR-15", count=len(alerts)))
    alerted = M.failures_alerted(load(runs, "fault_recovery", "failure_records"))
    if alerted is not None:
        f.append(Figure.of("failures_alerted", alerted))
    ut = load(runs, "utilization", "utilization")
    if not ut.empty:
        f.append(Figure(label="gpus_with_metrics", value=int(ut["gpu_uuid"].nunique())))
    return f, []


def startup_figures(runs: Runs) -> Details:
    """The wave's start-up latency per phase beside the Kubernetes SLO (p99 of creation to running at most
    5 s), per pod condition (kube-burner's quantiles), and its scheduling pace."""
    sl = load(runs, "queue_congestion", "startup_latency")
    ph = load(runs, "queue_congestion", "startup_phases")
    f: list[Figure] = []
    tables = []
    if not ph.empty:
        slo = ph[ph["phase"] == "startup"]
        p99 = _num(slo["p99_ms"].iloc[0]) if not slo.empty and "p99_ms" in slo else None
        if p99 is not None:
            f.append(Figure(label="startup_p99_ms", value=p99, unit="unit.ms"))
        tables.append(table("startup_phases", _cols(ph, "phase", "pods", "coverage", "p50_ms", "p90_ms", "p99_ms",
                                                    "max_ms", "slo_p99_ms", "within_slo", "sources", "refused"),
                            source="queue_congestion/startup_phases"))
    if not sl.empty:
        pace = _num(sl["pods_per_second"].iloc[0]) if "pods_per_second" in sl else None
        f.append(Figure(label="scheduling_pods_per_second", value=pace, unit="unit.pods_per_second"))
        tables.append(table("startup_latency", _cols(sl, "condition", "pods", "p50_ms", "p95_ms", "p99_ms",
                                                     "submission", "source"), source="queue_congestion/startup_latency"))
    return f, tables


STEPS: dict[str, Callable[[Runs], Details]] = {
    "permission_isolation": permission_isolation, "task_records": task_records,
    "queue_explainability": queue_explainability, "failure_evidence": failure_evidence,
    "utilization_reports": utilization_reports, "cost_attribution": cost_attribution,
    "scheduling_policy": scheduling_policy, "monitoring_integration": monitoring_integration,
}


def item_details(item: str, runs: Runs) -> Details:
    """The figures and tables shown with one item (none for an item judged by reviewers)."""
    step = STEPS.get(item)
    return step(runs) if step else ([], [])


def failure_records_table(runs: Runs) -> EvidenceTable | None:
    fr = load(runs, "fault_recovery", "failure_records")
    if fr.empty:
        return None
    return table("failure_records", _cols(fr, "scenario", "trigger", "platform_behaviour", "user_visible",
                                          "operator_visible", "recovery", "logs_readable", "events", "airflow_retries",
                                          "platform_restarts", "alerts", "gpu_release_seconds", "reason"), 50,
                 "fault_recovery/failure_records")
