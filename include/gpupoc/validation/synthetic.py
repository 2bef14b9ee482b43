"""Synthetic evidence of a correctly behaving platform, per test class, for tests, demos and benchmarks.

``write_run`` lays tables out as the evidence collector does: ``<root>/<dag_id>/<run_id>/tables/*.parquet``
and ``manifest.json`` (rows, sha256, source, verified, reason, window, plan hash).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from gpupoc.classes.queue_congestion.table import ExplanationRow

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=timezone.utc)
TENANTS = ["team-vision", "team-nlp", "team-serving"]
SIM_PLATFORM = {"kubernetes.gitVersion": "v1.32.0", "adapter": "kube-scheduler", "platform.name": "gpupoc-sim",
                "plan.name": "synthetic", "window.timezone": "UTC", "nodes.simulated": "3", "nodes": "3"}


def _t(seconds: float) -> pd.Timestamp:
    return pd.Timestamp(T0 + timedelta(seconds=float(seconds)))


def workload_runs(n: int = 12, test_class: str = "queue_congestion") -> pd.DataFrame:
    """A wave released at t=10 s: priorities honoured, every workload finished."""
    rows = []
    for i in range(n):
        prio_class, prio = [("gpupoc-high", 1000), ("gpupoc-normal", 100), ("gpupoc-low", 10)][i % 3]
        wait = {1000: 2, 100: 20, 10: 60}[prio] + i
        tenant = TENANTS[i % 3]
        pool = "training" if i % 4 else "inference"
        rows.append(dict(
            run_id="r1", test_class=test_class, tenant=tenant, namespace=tenant, pod=f"wave-{i}",
            workload="train-small" if pool == "training" else "serve", task_type="training" if pool == "training"
            else "inference", priority_class=prio_class, priority=prio, gpus=1 + i % 2, pool=pool,
            node=f"{pool}-0", submitted_at=_t(0), released_at=_t(10), scheduled_at=_t(10 + wait),
            started_at=_t(11 + wait), finished_at=_t(40 + wait), wait_seconds=float(wait), phase="Succeeded",
            exit_code=0, reason="Completed", attempt=1, role="wave", item=f"wave-{i}", outcome="succeeded",
            outcome_reason="Completed", outcome_source="pod status", outcome_explained=False, final_attempt=True,
            submitted_by="pipeline"))
    return pd.DataFrame(rows)


def explanations(n: int = 12) -> pd.DataFrame:
    """One row per workload (the class's row model); the first two never waited long enough to need an
    explanation."""
    rows = []
    for i in range(n):
        need = i >= 2
        rows.append(asdict(ExplanationRow(
            pod=f"wave-{i}", namespace=TENANTS[i % 3], needs_explanation=need,
            platform_reason="Unschedulable" if need else None,
            platform_message="0/3 nodes are available: 3 Insufficient nvidia.com/gpu." if need else None,
            reconstructed_bottleneck="capacity" if need else "none", ahead_count=i, explained=True if need else None,
            eta_offered=False)))
    return pd.DataFrame(rows)


def queue_snapshots(n: int = 8) -> pd.DataFrame:
    return pd.DataFrame({
        "ts": [_t(10 + 3 * i) for i in range(n)], "pod": [f"wave-{i}" for i in range(n)],
        "namespace": [TENANTS[i % 3] for i in range(n)], "phase": ["Pending"] * n,
        "reason": ["Unschedulable"] * n, "message": ["0/3 nodes are available: 3 Insufficient nvidia.com/gpu."] * n,
        "position": list(range(n)), "eta_seconds": [None] * n, "source": ["pod.status.conditions"] * n})


def access_probes() -> pd.DataFrame:
    rows = []
    for a in TENANTS:
        for b in TENANTS:
            if a == b:
                continue
            for action, res, sub, verb in [("list_pods", "pods", "", "list"), ("read_logs", "pods", "log", "get"),
                                           ("read_secrets", "secrets", "", "get")]:
                rows.append(dict(actor_tenant=a, target_namespace=b, action=action, resource=res, subresource=sub,
                                 verb=verb, http_status=403, allowed=False, expected_allowed=False,
                                 access_review_allowed=False, audit_matched=True,
                                 message=f'User "system:serviceaccount:{a}:runner" cannot {verb} resource '
                                         f'"{res}" in API group "" in the namespace "{b}"'))
    rows.append(dict(actor_tenant="team-nlp", target_namespace="team-nlp", action="over_quota_blocked",
                     resource="pods", verb="create", http_status=403, allowed=False, expected_allowed=False,
                     message='pods "over-quota-0" is forbidden: exceeded quota: team-nlp-gpu, requested: '
                             'requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=8, limited: '
                             'requests.nvidia.com/gpu=8'))
    return pd.DataFrame(rows)


def quota_samples(n: int = 6) -> pd.DataFrame:
    return pd.DataFrame([dict(ts=_t(5 * i), tenant=t, namespace=t, resource="requests.nvidia.com/gpu", hard=8.0,
                              used=float(min(8, 2 * i))) for i in range(n) for t in TENANTS])


def utilization(hours: int = 4) -> pd.DataFrame:
    rows = []
    for h in range(hours):
        for g, (ns, pool, tt) in enumerate([("team-vision", "training", "training"),
                                            ("team-nlp", "training", "training"),
                                            ("team-serving", "inference", "inference"),
                                            ("team-nlp", "inference", "idle")]):
            util = max(0.0, [85.0, 60.0, 35.0, 3.0][g] - h)
            rows.append(dict(bucket=_t(3600 * h), namespace=ns, pod=f"{tt}-{g}", task_type=tt, pool=pool,
                             node=f"{pool}-0", gpu_uuid=f"GPU-{g:04d}", util_avg=util, util_p95=min(100.0, util + 8),
                             mem_mib_avg=[60000.0, 40000.0, 12000.0, 500.0][g], allocated_gpu_hours=1.0,
                             used_gpu_hours=util / 100.0, samples=240))
    return pd.DataFrame(rows)


def vgpu_utilization(hours: int = 2) -> pd.DataFrame:
    """HAMi's slices of one L40S: a 12000-MiB, 40 % slice (counts 0.4 of the card) and a 3000-MiB one without a
    core limit (counts its memory share, 0.0651), each hour."""
    rows = []
    for h in range(hours):
        for i, (pod, mem, cores, used, util) in enumerate([("infer-slice-0", 12000.0, 40.0, 9000.0, 35.0),
                                                          ("infer-slice-1", 3000.0, 0.0, 2500.0, 20.0)]):
            share = max(mem / 46068.0, cores / 100.0)
            rows.append(dict(bucket=_t(3600 * h), namespace="team-serving", pod=pod, container_index="0",
                             gpu_uuid="GPU-0002", node="inference-0", tenant="team-serving", task_type="inference",
                             card_mib=46068.0, mem_allocated_mib=mem, mem_used_mib_avg=used, mem_used_mib_max=used,
                             cores_allocated=cores, util_avg=util, share=round(share, 4), samples=240,
                             allocated_gpu_hours=share, used_gpu_hours=util / 100.0))
    return pd.DataFrame(rows)


SYN_MODELS = {"training": "NVIDIA H100 80GB HBM3", "inference": "NVIDIA L40S"}


def cost_allocation(hours: int = 4) -> pd.DataFrame:
    """``utilization()`` priced as the cost step prices it (example figures), each pool offering 3 GPUs."""
    from gpupoc.costing.allocation import PoolCapacity, allocate
    from gpupoc.costing.prices import Prices
    from gpupoc.costing.rows import Holders, buckets, evidence_rows, usage_rows

    prices = Prices.model_validate({"currency": "EUR", "examples": True, "gpu_hour": {
        SYN_MODELS["training"]: {"per_hour": 2.5, "source": "example figure"},
        SYN_MODELS["inference"]: {"per_hour": 0.9, "source": "example figure"}}})
    ut = utilization(hours)
    rows = usage_rows(ut, None, Holders(SYN_MODELS, frozenset({"team-serving"})))
    alloc = allocate(rows, [PoolCapacity(p, m, 3.0 * hours) for p, m in SYN_MODELS.items()], prices,
                     buckets(ut, T0, T0 + timedelta(hours=hours)))
    return pd.DataFrame(evidence_rows(alloc, prices))


def failure_records() -> pd.DataFrame:
    rows = []
    for k, (scenario, trig, beh, user) in enumerate([
        ("nonzero-exit", "workload exits with code 3", "container terminated, phase Failed",
         "exit code 3, reason Error"),
        ("missing-image", "image does not exist", "ErrImagePull then ImagePullBackOff", 'Failed to pull image "x"'),
        ("oom", "memory above limit", "container killed", "OOMKilled, exit 137"),
        ("node-failure", "node stopped posting status", "NodeNotReady, pods evicted", "pod Failed, reason NodeLost"),
        ("hang", "no progress past timeout", "deleted at timeout", "task timed out")]):
        rows.append(dict(scenario=scenario, trigger=trig, platform_behaviour=beh, user_visible=user,
                         operator_visible="events + alert GpupocPodFailed", recovery="GPUs released, retried once",
                         logs_readable=True, events="Pulling; Started; BackOff"[: 8 + 4 * k], airflow_retries=1,
                         platform_restarts=0, alerts="GpupocPodFailed", gpu_release_seconds=2.0 + k, verified=True,
                         reason="", pod=f"fault-{scenario}", namespace="team-nlp"))
    return pd.DataFrame(rows)


def fault_runs() -> pd.DataFrame:
    """The fault scenarios' workloads: each starts, then fails (the missing image never starts)."""
    rows = []
    for k, (sc, reason, code) in enumerate([("nonzero-exit", "Error", 3), ("missing-image", "ImagePullBackOff", None),
                                            ("oom", "OOMKilled", 137), ("node-failure", "NodeLost", None),
                                            ("hang", "DeadlineExceeded", None)]):
        started = None if sc == "missing-image" else _t(5 * k + 3)
        rows.append(dict(run_id="r1", test_class="fault_recovery", tenant="team-nlp", namespace="team-nlp",
                         pod=f"fault-{sc}", workload=sc, task_type="failing", priority_class="gpupoc-normal",
                         priority=100, gpus=1, pool="training", node="training-0", submitted_at=_t(5 * k),
                         started_at=started, finished_at=_t(5 * k + 20 + 5 * k), phase="Failed", exit_code=code,
                         reason=reason, attempt=1, role=f"injection:{sc}", scenario=sc, item=f"fault-{sc}",
                         outcome="evicted" if sc == "node-failure" else "failed", outcome_reason=reason,
                         outcome_source="pod status", final_attempt=True, submitted_by="pipeline"))
    return pd.DataFrame(rows)


def alerts() -> pd.DataFrame:
    return pd.DataFrame([dict(alertname="GpupocPodFailed", state="firing", severity="warning", namespace="team-nlp",
                              pod=f"fault-{i}", starts_at=_t(60 * i), source="alertmanager") for i in range(3)])


def audit_matches() -> pd.DataFrame:
    acts = ["create_pod", "create_pod", "quota_change", "delete_pod", "get_log"]
    return pd.DataFrame([dict(ledger_action=a, actor="system:serviceaccount:team-nlp:runner" if a != "quota_change"
                              else "admin", verb={"create_pod": "create", "quota_change": "patch",
                                                  "delete_pod": "delete", "get_log": "get"}[a],
                              resource="resourcequotas" if a == "quota_change" else "pods", namespace="team-nlp",
                              name=f"obj-{i}", at=_t(i * 5), audit_event_id=f"ev-{i}", matched=True,
                              delay_seconds=0.2) for i, a in enumerate(acts)])


def artifacts() -> pd.DataFrame:
    return pd.DataFrame([dict(path="model/checkpoint.bin", sha256="ab" * 32, producer="team-nlp/train-0",
                              consumer="team-nlp/eval-0", namespace="team-nlp", size_bytes=1024)])


def memory_isolation() -> pd.DataFrame:
    """The memory-isolation probe on the default cluster: no node shares its cards, the case cannot arise."""
    return pd.DataFrame([dict(sharing="none", shared_gpu=False, isolated=None,
                              reason="no node shares its GPUs between pods")])


def vgpu_slices() -> pd.DataFrame:
    """The vGPU slices probe on the default cluster: no node slices its cards' memory, the case cannot arise."""
    return pd.DataFrame([dict(sharing="none", memory_slices=False, overcommitted=None, slice_released=None,
                              reason="no node gives pods slices of a GPU's memory")])


def good_tables(test_class: str) -> dict[str, pd.DataFrame]:
    """Tables a correctly behaving platform yields for one test class."""
    if test_class == "queue_congestion":
        return {"workload_runs": workload_runs(), "explanations": explanations(),
                "queue_snapshots": queue_snapshots()}
    if test_class == "tenant_isolation":
        return {"workload_runs": workload_runs(6, test_class), "access_probes": access_probes(),
                "quota_samples": quota_samples(), "memory_isolation": memory_isolation(),
                "vgpu_slices": vgpu_slices()}
    if test_class == "utilization":
        return {"workload_runs": workload_runs(6, test_class), "utilization": utilization(),
                "cost_allocation": cost_allocation()}
    if test_class == "fault_recovery":
        return {"failure_records": failure_records(), "alerts": alerts(), "workload_runs": fault_runs()}
    if test_class == "audit_trail":
        return {"workload_runs": workload_runs(3, test_class), "audit_matches": audit_matches(),
                "artifacts": artifacts()}
    raise ValueError(f"unknown test class {test_class!r}")


def write_run(root: str | Path, test_class: str, run_id: str, tables: dict[str, pd.DataFrame | None],
              not_verified: dict[str, str] | None = None, window_end: datetime | None = None,
              platform: dict[str, str] | None = None, parameters: dict | None = None,
              store_parameters: bool = True) -> Path:
    """Write tables and manifest with the evidence writer; a None table is recorded as not collected.
    ``platform``: the manifest's platform facts (default: the simulated cluster's, as a run records them);
    ``parameters``: the suite parameters stored with the run, over the suites' defaults (as a plan that
    provokes none of the ``requires`` cases stores them); ``store_parameters=False`` stores none, as runs written
    before the parameters were stored."""
    from gpupoc.evidence import EvidenceWriter
    from gpupoc.validation.parameters import default_parameters
    from gpupoc.validation.suites import load_suites

    w = EvidenceWriter(root, f"poc_{test_class}", run_id)
    if store_parameters:
        w.write_suite_parameters({**default_parameters(test_class, load_suites()), **(parameters or {})})
    for name, df in tables.items():
        reason = (not_verified or {}).get(name, "")
        if df is None:
            w.mark_not_verified(name, reason or "not collected: synthetic gap", source="synthetic")
        else:
            w.write(name, df.to_dict("records"), source="synthetic", verified=not reason, reason=reason)
    end = window_end or T0 + timedelta(hours=1)
    w.write_manifest(window_start=end - timedelta(hours=1), window_end=end, plan_hash="0" * 64,
                     platform=SIM_PLATFORM if platform is None else platform, extra={"test_class": test_class})
    return w.run_dir


def utilization_samples(gpus: int = 64, days: float = 7, step_seconds: int = 15, seed: int = 1) -> pd.DataFrame:
    """Raw per-GPU samples for the benchmark: ``gpus`` series of ``days`` at ``step_seconds``."""
    rng = np.random.default_rng(seed)
    n = int(days * 86400 / step_seconds)
    ts = pd.date_range(T0, periods=n, freq=f"{step_seconds}s")
    teams = np.array(TENANTS)
    frames = []
    for g in range(gpus):
        pool = "training" if g < gpus * 3 // 4 else "inference"
        frames.append(pd.DataFrame({
            "ts": ts, "gpu_uuid": f"GPU-{g:04d}", "namespace": teams[g % 3], "pod": f"job-{g % 16}",
            "task_type": "training" if pool == "training" else "inference", "pool": pool, "node": f"{pool}-{g // 8}",
            "util": rng.uniform(0, 100, n).astype("float32"),
            "mem_mib": rng.uniform(0, 80000, n).astype("float32"), "step_seconds": np.int16(step_seconds)}))
    df = pd.concat(frames, ignore_index=True)
    for c in ("gpu_uuid", "namespace", "pod", "task_type", "pool", "node"):
        df[c] = df[c].astype("category")
    return df


def write_good_root(root, run_id: str = "scheduled__1"):
    """An evidence root of a correctly behaving platform: one validated run of every test class."""
    from gpupoc.plan.classes import TestClass
    from gpupoc.validation import validate_run

    for tc in TestClass:
        validate_run(write_run(root, tc.value, run_id, good_tables(tc.value)))
    return root
