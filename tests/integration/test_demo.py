"""`gpupoc demo` end to end: a real Airflow, the simulated cluster and monitoring, the five test classes,
the report and its decision; then the report triggered through the REST API with the trigger form's scores,
then the demo again on a cluster with a fault profile (Airflow reused), then `gpupoc down`.

To fit the test suite's time it runs a reduced plan: plans/default.yaml with the smaller waves and shorter
workloads of tests/integration/data/demo_small.yaml (the same classes, tenants, pools and checks).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from gpupoc.common.processes import pid_alive
from gpupoc.demo.pids import PidFile
from gpupoc.demo.runner import CLASS_DAGS, DemoOptions, run_demo
from gpupoc.demo.services import DemoPaths, stop_everything
from gpupoc.pipeline.common import repo_root

from tests.integration.plans import small_demo_plan as small_plan
from tests.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow-demo")]
SCORES = {"reviewer": "Wang Fang", "reviewer_role": "business", "ui_usability": 4,
          "ui_usability_comment": "found every run in two clicks", "documentation": 2,
          "documentation_comment": "no quick start", "training_cost": 5}


@pytest.fixture(scope="module")
def env():
    """A private var directory (pytest's tmp dirs can be rotated away by parallel sessions); down at the end."""
    root = Path(tempfile.mkdtemp(prefix="gpupoc-demo-it-"))
    plan = small_plan(root / "plans" / "small.yaml")  # its ../var/evidence is <root>/var/evidence
    paths = DemoPaths(repo_root(), root / "var")
    yield paths, plan
    stop_everything(paths)
    shutil.rmtree(root, ignore_errors=True)


def _demo(paths: DemoPaths, plan: Path, faults: str = "", classes: tuple[str, ...] = CLASS_DAGS):
    lines: list[str] = []
    t0 = time.monotonic()
    result = run_demo(DemoOptions(repo=repo_root(), plan=plan, faults=faults, port=0, var_dir=paths.var,
                                  timeout=1200, out=lines.append, classes=classes))
    print(f"\ndemo (faults: {faults or 'none'}) in {time.monotonic() - t0:.0f} s: {result.to_dict()}")
    print("\n".join(lines[-20:]))
    return result, lines


@pytest.mark.timeout(1200)
def test_the_demo_on_a_correct_cluster_runs_every_class_and_ends_with_a_reasoned_decision_and_report(env):
    paths, plan = env
    result, lines = _demo(paths, plan)
    report = json.loads((result.outcome.report_dir / "report.json").read_text())
    items = {i["id"]: i for i in report["items"] if not i["id"].startswith("check:")}
    assert result.outcome.decision in {"go-live", "limited-go-live"}, result.to_dict()
    must = {k: v["verdict"] for k, v in items.items() if v["tier"] == "must"}
    assert must and set(must.values()) == {"pass"}, f"every must item passes on a correct cluster: {must}"
    assert all(v["evidence"] for v in items.values() if v["tier"] == "must"), "each must item links its evidence"
    if result.outcome.decision != "go-live":
        assert result.outcome.reasons, "a decision short of go-live names its reasons"
        assert all("→" in r for r in result.outcome.reasons), result.outcome.reasons
    assert {items[k]["verdict"] for k in ("ui_usability", "documentation", "training_cost")} == {"pass"}, \
        "the plan's scorecard file scored the experience items"
    assert result.outcome.html.is_file() and (result.outcome.report_dir / "report.json").is_file()
    assert not [s for s in report["sources"] if s["problems"]], "the pipeline's own runs prove themselves"
    from tests.unit.report.agreement import disagreements

    assert disagreements(report) == [], "every figure counts the rows its verdict judged; the summary says the same"
    subject, cov = report["subject"], report["coverage"]
    assert subject["simulated"] is True and subject["platform"] and subject["kubernetes_version"], subject
    assert cov["scored_items"] == 3 and cov["passed"] + cov["failed"] + cov["not_applicable"] + cov["not_verified"] \
        == cov["data_checks"] + cov["scored_items"], cov
    na = {e["check"]: e["reason"] for e in cov["not_applicable_checks"]}
    assert na.get("QC-07") == "the platform offers no expected wait", na  # kube-scheduler offers no ETA
    assert set(result.runs) == set(CLASS_DAGS)
    # progress: one line per change, with the DAG, its state and task counts; the closing block
    line = re.compile(r"\[\s*\d+:\d\d\] (poc_\w+)\s+(queued|running|success|failed)\s")
    progress = [ln for ln in lines if line.match(ln)]
    # past ten minutes the stamp has no padding ("[10:02] poc_…"): the DAG is the pattern's group, not a field
    assert {line.match(ln).group(1) for ln in progress} >= set(CLASS_DAGS)
    assert any("success " in ln for ln in progress)
    assert len(progress) == len(set(progress)), "no line repeats an unchanged state"
    last = {line.match(ln).group(1): ln for ln in progress}
    # the small plan preempts nothing: no Airflow task of any class may fail (a service's load task included)
    assert not [ln for ln in last.values() if "failed " in ln.split("  ", 1)[-1]], last
    text = "\n".join(lines)
    assert f"Decision: {result.outcome.decision}" in text
    assert f"Report: {result.outcome.html}" in text
    from gpupoc.report.bundle import bundle_path, verify

    for name in ("summary.html", "report.md", "report.json", "report.junit.xml"):
        assert f"        {result.outcome.report_dir / name}" in text, f"the demo prints the path of {name}"
    assert f"        {bundle_path(result.outcome.report_dir)}" in text and verify(bundle_path(result.outcome.report_dir)).ok
    pdf = result.outcome.report_dir / "report.pdf"
    assert (f"        {pdf}" in text) == pdf.is_file() and (pdf.is_file() or "make test-deps" in text)
    assert re.search(r"Airflow UI: http://127\.0\.0\.1:\d+  \(login: admin, password in \S+\)", text)
    from gpupoc.airflow_runtime.settings import admin_password

    assert admin_password(paths.airflow) not in text, "the demo's log never shows a password"
    # every process is recorded by pid and alive
    table = PidFile.load(paths.pids)
    assert {"sim", "monitoring-prometheus", "monitoring-alertmanager", "monitoring-receiver",
            "airflow-api-server", "airflow-scheduler", "airflow-triggerer", "airflow-dag-processor"} <= set(table.entries)
    assert all(table.alive().values()), table.alive()
    saved = json.loads(paths.result.read_text())
    assert saved["decision"] == result.outcome.decision and saved["report_run"] == result.report_run


def _latest(paths: DemoPaths, dag_id: str) -> Path:
    runs = sorted((paths.var / "evidence" / dag_id).glob("*/manifest.json"), key=lambda m: m.stat().st_mtime)
    assert runs, f"{dag_id} kept no evidence"
    return runs[-1].parent


def _table(run_dir: Path, name: str) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(run_dir / "tables" / f"{name}.parquet").to_pylist()


def test_each_class_kept_the_facts_that_happened_on_the_cluster(env):
    """The first demo's evidence, class by class (real Airflow, the real operator, the simulated cluster)."""
    paths, _ = env
    tenants = {"team-vision", "team-nlp", "team-serving"}

    qc = _latest(paths, "poc_queue_congestion")
    runs = _table(qc, "workload_runs")
    assert len(runs) == 8 and {r["phase"] for r in runs} == {"Succeeded"}
    release = json.loads((qc / "files" / "release.json").read_text())
    releasing = json.loads((qc / "files" / "releasing.json").read_text())["at"]
    assert release["observer_ready"] and all(r["by_this_try"] for r in release["rows"]), release["rows"]
    assert min(r["released_at"] for r in release["rows"]) >= releasing, \
        "each pod's release is when its gate's patch was sent, once the release began"
    lease = json.loads((qc / "files" / "lease.json").read_text())
    assert lease["pool"] == "gpupoc_cluster" and lease["acquired_at"] <= min(
        r["submitted_at"] for r in runs).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "the lease came before the first pod"
    assert all(r["outcome"] == "succeeded" and r["final_attempt"] for r in runs), runs
    expl = {e["pod"]: e for e in _table(qc, "explanations")}
    waited = [r for r in runs if (r["wait_seconds"] or 0) > 5]
    assert waited, "28 training GPUs asked of 24: someone waited"
    assert all(expl[r["pod"]]["explained"] and "Insufficient nvidia.com/gpu" in expl[r["pod"]]["platform_message"]
               for r in waited), [expl[r["pod"]] for r in waited]

    iso = _latest(paths, "poc_tenant_isolation")
    probes = _table(iso, "access_probes")
    cross = [p for p in probes if not p["action"].startswith("over_quota_")]
    pairs = {(p["actor_tenant"], p["target_namespace"]) for p in cross}
    assert pairs == {(a, b) for a in tenants for b in tenants if a != b}, "every ordered pair of tenants"
    assert {p["action"] for p in cross} >= {"list_pods", "get_pod", "read_logs", "get_secret", "create_pod",
                                            "patch_quota"}
    assert all(p["http_status"] == 403 and p["allowed"] is False and p["access_review_allowed"] is False
               for p in cross), [p for p in cross if p["allowed"] or p["http_status"] != 403][:3]
    assert all(p["audit_matched"] for p in cross), "each attempt is in the platform's audit log"
    over = [p for p in probes if p["action"].startswith("over_quota_")]
    assert [p["action"] for p in over] == ["over_quota_blocked"] and "exceeded quota" in over[0]["message"]
    samples = _table(iso, "quota_samples")
    per_tenant = {t: [s for s in samples if s["tenant"] == t and s["resource"] == "requests.nvidia.com/gpu"]
                  for t in tenants}
    assert all(len(v) >= 3 and all(s["used"] <= s["hard"] for s in v) for v in per_tenant.values()), per_tenant
    shares = {s["tenant"]: s for s in json.loads((iso / "files" / "tenant_shares.json").read_text())}
    assert {"team-vision", "team-nlp"} <= set(shares) and all(shares[t]["share"] > 0 for t in ("team-vision", "team-nlp"))

    ut = _latest(paths, "poc_utilization")
    util = _table(ut, "utilization")
    assert util and all(r["tenant"] in tenants for r in util), "every row names its team"
    assert len({r["bucket"] for r in util}) >= 2, "a view over time"
    assert all(r["allocated_gpu_hours"] + 1e-9 >= r["used_gpu_hours"] for r in util)
    idle = [r for r in util if r["task_type"] == "notebook"]
    busy = [r for r in util if r["task_type"] == "training"]
    assert idle and busy and max(r["util_avg"] for r in idle) < 5 < min(r["util_avg"] for r in busy), \
        "the allocated-but-idle GPUs read idle, the training ones busy"

    fr = _latest(paths, "poc_fault_recovery")
    records = {r["scenario"]: r for r in _table(fr, "failure_records")}
    assert set(records) == {"nonzero_exit", "missing_image", "oom", "hang", "node_failure"}
    for name, r in records.items():
        assert r["verified"], (name, r["reason"])
        assert all(r[k] for k in ("trigger", "platform_behaviour", "user_visible", "operator_visible", "recovery")), r
        assert r["alerts"], f"{name}: operators were alerted"
    assert "OOMKilled" in records["oom"]["platform_behaviour"] and "exit 137" in records["oom"]["platform_behaviour"]
    assert "ImagePullBackOff" in records["missing_image"]["user_visible"]
    assert records["nonzero_exit"]["logs_readable"] is True
    assert "recover node" in records["node_failure"]["recovery"]
    recovery = _table(fr, "service_recovery")
    assert recovery and recovery[0]["endpoint_removed"] and recovery[0]["replacement_ready"], recovery
    slo = _table(qc, "service_slo")
    assert [r["held"] for r in slo] == [True] and slo[0]["sent"] > 0, "the online service kept its SLO"
    alerts = {a["alertname"] for a in _table(fr, "alerts")}
    assert "PodFailed" in alerts and alerts & {"GpuXidError", "GpuNodeNotReady"}, alerts

    au = _latest(paths, "poc_audit_trail")
    ledger = _table(au, "ledger")
    assert any(e["verb"] == "patch" and e["resource"] == "resourcequotas" and e["actor"] == "kubernetes-admin"
               for e in ledger), "the administrator's quota change is in the ledger"
    assert {e["actor"].rsplit(":", 2)[-2] for e in ledger if e["actor"].startswith("system:serviceaccount:")} <= tenants
    matches = _table(au, "audit_matches")
    assert matches and all(m["matched"] for m in matches), [m for m in matches if not m["matched"]][:3]
    art = _table(au, "artifacts")
    assert len(art) == 1 and art[0]["verified"] and re.fullmatch(r"[0-9a-f]{64}", art[0]["sha256"])
    assert art[0]["producer"].startswith("at-train-artifact-") and art[0]["consumer"].startswith("at-eval-artifact-"), \
        "a consumer pod read the artifact the producer wrote and printed the same sha256"
    consumer_runs = [r for r in _table(au, "workload_runs") if r["role"] == "artifact-consumer"]
    assert len(consumer_runs) == 1 and consumer_runs[0]["phase"] == "Succeeded"
    # Kubernetes times have whole seconds: the consumer may start in the second the producer ended
    assert consumer_runs[0]["started_at"] >= max(r["finished_at"] for r in _table(au, "workload_runs")
                                                if r["role"] == "artifact-producer"), "consumed after produced"


@pytest.mark.timeout(900)
def test_the_report_triggered_through_the_rest_api_keeps_the_trigger_forms_scores(env):
    from gpupoc.airflow_runtime.client import AirflowClient
    from gpupoc.exceptions import ApiError
    from gpupoc.plan import load_plan
    from gpupoc.report.airflow import report_out_dir

    paths, _ = env
    client = AirflowClient.for_home(paths.airflow)
    with pytest.raises(ApiError) as exc:  # the form bounds scores to 1-5
        client.trigger("poc_report", {**SCORES, "training_cost": 6})
    assert exc.value.status == 400, exc.value
    run = client.trigger("poc_report", SCORES)
    final = client.wait_run("poc_report", run["dag_run_id"], timeout=1500, poll=3)
    assert final["state"] == "success", final
    out = report_out_dir(load_plan(paths.plan), run["dag_run_id"])
    card = {s["item"]: s for s in json.loads((out / "scorecard.json").read_text())}
    assert {k: (v["reviewer"], v["score"]) for k, v in card.items()} == {
        "ui_usability": ("Wang Fang", 4), "documentation": ("Wang Fang", 2), "training_cost": ("Wang Fang", 5)}
    assert card["documentation"]["comment"] == "no quick start"
    report = json.loads((out / "report.json").read_text())
    items = {i["id"]: i for i in report["items"]}
    assert items["documentation"]["verdict"] == "fail", "a score of 2 fails the experience item"
    assert items["training_cost"]["verdict"] == "pass"
    assert "Wang Fang" in json.dumps(items["ui_usability"], ensure_ascii=False)


@pytest.mark.timeout(1200)
def test_the_demo_on_a_cluster_leaking_logs_across_tenants_ends_in_postpone_and_down_stops_everything(env):
    paths, plan = env
    before = PidFile.load(paths.pids)
    # only the class the fault concerns runs again; the report takes the other classes' evidence of the first demo
    result, lines = _demo(paths, plan, faults="cross-tenant-logs", classes=("poc_tenant_isolation",))
    assert set(result.runs) == {"poc_tenant_isolation"}
    assert any("only some classes ran" in ln for ln in lines)
    assert result.outcome.decision == "postpone", result.to_dict()
    assert result.outcome.open_items.get("permission_isolation") == "fail", result.outcome.open_items
    assert any("isolation" in r.lower() for r in result.outcome.reasons), result.outcome.reasons
    after = PidFile.load(paths.pids)
    assert after.entries["airflow-scheduler"].pid == before.entries["airflow-scheduler"].pid, "Airflow reused"
    assert after.entries["sim"].pid != before.entries["sim"].pid, "a fresh cluster with the fault profile"
    assert json.loads((paths.sim / "sim.json").read_text())["faults"] == ["cross-tenant-logs"]

    recorded = list(after.entries.values())
    stop_everything(paths)
    assert PidFile.load(paths.pids).entries == {}
    wait_for("every recorded process to stop", lambda: [e.name for e in recorded if pid_alive(e.pid, e.mark)],
             lambda alive: not alive, step_seconds=30, poll=0.2)
