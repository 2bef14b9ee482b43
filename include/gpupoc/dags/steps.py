"""The steps every test-class DAG runs, as plain functions the DAG's tasks call.

Each step is a transaction: it derives its paths from (plan, dag id, run id), overwrites what an earlier
try wrote, and returns only paths and small summaries (XCom). Cluster calls go through a ledger, so every
action the pipeline takes is recorded (who, what, when) for the audit-trail class.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from gpupoc.dags.markers import OBSERVING_FILE, RELEASE_FILE
from gpupoc.exceptions import ConfigError, GpupocError, SourceUnavailable
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.common import plan_path
from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.pipeline.congestion import Observation

SNAPSHOT_SOURCE = "kubernetes-api"
# kubeadm's name for the cluster administrator: used when the API server cannot say who we are.
DEFAULT_ADMIN_USER = "kubernetes-admin"


def whoami(caller) -> dict:
    """The caller's user as the API server sees it (SelfSubjectReview, Kubernetes >= 1.28)."""
    r = caller.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                    body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    info = ((r.body or {}).get("status") or {}).get("userInfo") or {} if r.ok and isinstance(r.body, dict) else {}
    if info.get("username"):
        return {"username": info["username"], "groups": info.get("groups") or [], "source": "selfsubjectreviews"}
    return {"username": DEFAULT_ADMIN_USER, "groups": [], "source": f"default (selfsubjectreviews: HTTP {r.status})"}


@dataclass
class RunContext:
    """One run of one test class: its plan, evidence writer, clients and ledger."""

    plan_file: str
    dag_id: str
    run_id: str
    test_class: str
    task: str = ""
    _factory: Any = field(default=None, repr=False)

    @cached_property
    def plan(self):
        from gpupoc.pipeline.operator import load_plan_file

        return load_plan_file(self.plan_file)

    @cached_property
    def spec(self):
        return self.plan.test_class(self.test_class)

    @cached_property
    def writer(self):
        from gpupoc.evidence import EvidenceWriter

        return EvidenceWriter(self.plan.evidence_root_path, self.dag_id, self.run_id)

    @property
    def run_dir(self) -> Path:
        return self.writer.run_dir

    @cached_property
    def factory(self):
        from gpupoc.pipeline.k8s import ClientFactory

        kubeconfig = self.plan.kubeconfig_path
        return self._factory or ClientFactory(str(kubeconfig) if kubeconfig else None)

    @cached_property
    def ledger(self):
        from gpupoc.pipeline.audit import Ledger

        return Ledger(self.run_dir / "ledger" / f"{self.task or 'task'}.jsonl", task=self.task)

    def admin_actor(self):
        """The administrator as the audit log names it (found by check_access, see ``whoami``)."""
        from gpupoc.pipeline.k8s import Actor

        who = self.read_file("identity", {}) or {}
        return Actor(self.plan.platform.admin_context or "in-cluster", who.get("username") or DEFAULT_ADMIN_USER,
                     tuple(who.get("groups") or ()))

    def admin(self, purpose: str = ""):
        """The administrator's client; every request lands in this task's ledger."""
        from gpupoc.pipeline.audit import LedgerCaller

        ctx = self.plan.platform.admin_context or "in-cluster"
        return LedgerCaller(self.factory.caller(ctx), self.admin_actor(), self.ledger, purpose)

    def tenant(self, name: str, purpose: str = ""):
        from gpupoc.pipeline.audit import LedgerCaller
        from gpupoc.pipeline.k8s import service_account_actor

        t = self.plan.tenant(name)
        actor = service_account_actor(t.kube_context, t.namespace, t.service_account)
        return LedgerCaller(self.factory.caller(t.kube_context), actor, self.ledger, purpose)

    @cached_property
    def items(self) -> list[dict]:
        from gpupoc.dags.classes import wave_roles

        return W.prepare_wave(self.plan, self.test_class, wave_roles(self.test_class))

    @property
    def namespaces(self) -> list[str]:
        return sorted({t.namespace for t in self.plan.tenants})

    @property
    def selector(self) -> str:
        return W.selector(self.run_id, self.test_class)

    def hold_timeout_s(self) -> float:
        """How long the wave may take once released: the longest acceptable wait plus the longest workload."""
        durations = [self.plan.workload(i.workload).duration_seconds for i in _items(self)]
        return self.plan.longest_acceptable_wait_seconds() + max(durations, default=0) + 120

    def observe_timeout_s(self) -> float:
        """The observer's deadline: the gate's hold, the wave, and every resubmission the plan allows."""
        durations = [self.plan.workload(i.workload).duration_seconds for i in _items(self)]
        policy = self.spec.resubmission
        again = policy.limit * (policy.wait_seconds + max(durations, default=0))
        return self.spec.gate_timeout_seconds + self.hold_timeout_s() + again

    def reader(self):
        """The administrator's client for reads the ledger does not record (observing, collecting)."""
        return self.factory.caller(self.plan.platform.admin_context or "in-cluster")

    def observed_pods(self) -> dict[tuple[str, str], dict]:
        """The last state of every pod the observer saw, by (namespace, name)."""
        pods = self.read_file("observed_pods", []) or []
        return {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}

    def submissions(self):
        """The operator's records of every pod it submitted (or whose creation was refused)."""
        from gpupoc.pipeline.attempts import Submission

        files = sorted(self.writer.files_dir.glob("submission-*.json")) if self.writer.files_dir.is_dir() else []
        return [Submission.from_dict(json.loads(p.read_text(encoding="utf-8"))) for p in files]

    def platform_records(self):
        """What the platform recorded about the wave's pods: events, owners' conditions, audited deletes."""
        from gpupoc.pipeline.attempts import Evidence
        from gpupoc.pipeline.audit_deletes import pod_deletions
        from gpupoc.pipeline.observe import list_events, owner_statements

        reader = self.reader()
        owner, uids = owner_statements(reader, self.plan, self.namespaces)
        audit = self.plan.evidence_sources.audit_log_path
        deletions = pod_deletions(self.plan.resolve_path(audit), self.namespaces) if audit else {}
        return Evidence(list_events(reader, self.namespaces), owner, deletions, uids)

    def files(self, name: str) -> Path:
        return self.run_dir / "files" / f"{name}.json"

    def read_file(self, name: str, default: Any = None) -> Any:
        p = self.files(name)
        return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else default


def _items(ctx: RunContext):
    from gpupoc.plan import class_items

    keys = {i["workload_key"] for i in ctx.items}
    return [i for i in class_items(ctx.plan, ctx.test_class) if i.name in keys]


# ---- validate_plan ----
def validate_plan(plan_param: str | None, dag_id: str, run_id: str, test_class: str, params: dict) -> dict:
    """Load and check the plan; ConfigError lists every problem with its path. Records the run's parameters."""
    from gpupoc.plan import load_plan, plan_hash

    path = plan_path(plan_param)
    plan = load_plan(path)  # raises ConfigError("…: N error(s)\n  - tenants[1].quota.gpus: …")
    spec = plan.test_class(test_class)
    if not spec.enabled:
        raise ConfigError(str(path), [f"test_classes.{test_class}.enabled: false; enable the class in the plan "
                                      "or pause this DAG"])
    ctx = RunContext(str(path), dag_id, run_id, test_class)
    from gpupoc.dags.markers import STALE_MARKERS

    for marker in STALE_MARKERS:  # a cleared run starts over: no lease, release or done marker of a past try
        ctx.files(marker).unlink(missing_ok=True)
    started = utcnow()
    ctx.writer.write_json("run_params", {"params": params, "plan_file": str(path), "started_at": rfc3339(started)})
    return {"plan": str(path), "plan_hash": plan_hash(plan), "run_dir": str(ctx.run_dir),
            "started_at": rfc3339(started), "pods": len(ctx.items)}


# ---- check_access ----
def check_access(ctx: RunContext) -> dict:
    """Record the platform's version and configuration; prove each tenant may create pods in its namespace."""
    from gpupoc.pipeline.k8s import server_version

    who = whoami(ctx.factory.caller(ctx.plan.platform.admin_context or "in-cluster"))
    ctx.writer.write_json("identity", who)
    admin = ctx.admin("record platform version and configuration")
    version = server_version(admin)
    rows = [{"key": "kubernetes.gitVersion", "value": version.get("gitVersion"), "source": "/version"},
            {"key": "kubernetes.platform", "value": version.get("platform"), "source": "/version"},
            {"key": "adapter", "value": W.adapter_name(ctx.plan), "source": "plan"},
            {"key": "admin.username", "value": who["username"], "source": who["source"]},
            {"key": "scheduler_name", "value": ctx.plan.platform.scheduler_name or "default-scheduler",
             "source": "plan"}]
    nodes = admin.call("GET", "/api/v1/nodes")
    if nodes.ok:
        items = (nodes.body or {}).get("items") or []
        gpus = sum(int(str(((n.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu", 0))) for n in items)
        rows += [{"key": "nodes", "value": str(len(items)), "source": "/api/v1/nodes"},
                 {"key": "gpus.allocatable", "value": str(gpus), "source": "/api/v1/nodes"}]
        ctx.writer.write_json("nodes", [{"name": n["metadata"]["name"], "labels": n["metadata"].get("labels"),
                                         "allocatable": (n.get("status") or {}).get("allocatable")} for n in items])
    pcs = admin.call("GET", "/apis/scheduling.k8s.io/v1/priorityclasses")
    if pcs.ok:
        for pc in (pcs.body or {}).get("items") or []:
            rows.append({"key": f"priorityclass.{pc['metadata']['name']}", "value": str(pc.get("value")),
                         "source": "/apis/scheduling.k8s.io/v1/priorityclasses"})
    denied = []
    for t in ctx.plan.tenants:
        r = ctx.tenant(t.name, "check access").call(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            body={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                  "spec": {"resourceAttributes": {"namespace": t.namespace, "verb": "create", "resource": "pods"}}})
        allowed = bool(r.ok and ((r.body or {}).get("status") or {}).get("allowed"))
        rows.append({"key": f"tenant.{t.name}.can_create_pods", "value": str(allowed).lower(),
                     "source": "selfsubjectaccessreviews"})
        if not allowed:
            denied.append(f"tenants[{ctx.plan.tenants.index(t)}].context: context {t.kube_context!r} may not create "
                          f"pods in namespace {t.namespace!r} (HTTP {r.status}: {r.message}); grant it or fix the "
                          "context")
    ctx.writer.write("platform_info", rows, source="kubernetes-api")
    if denied:
        raise ConfigError(ctx.plan_file, denied)
    return {"version": version.get("gitVersion"), "tenants": len(ctx.plan.tenants)}


# ---- release_gate (under the class's cluster lease) ----
def release_gate(ctx: RunContext, observer_wait_s: float = 60.0) -> dict:
    """Wait until every pod of the wave exists and the observer has taken its first snapshot, then lift the
    pipeline's gate of all of them at once (without the observer after ``observer_wait_s``: recorded)."""
    from gpupoc.pipeline import waits

    expected = [i["workload_key"] for i in ctx.items]
    admin = ctx.admin("release the wave")
    deadline = time.monotonic() + observer_wait_s
    waits.write_note(ctx.run_dir, "release_gate", "the observer's first snapshot", observer_wait_s)
    while not ctx.files(OBSERVING_FILE).is_file() and time.monotonic() < deadline:
        time.sleep(0.5)
    observer_ready = ctx.files(OBSERVING_FILE).is_file()

    def refused() -> set[str]:
        return {s.item for s in ctx.submissions() if s.rejection is not None}

    def waiting(missing: list[str], left_s: float) -> None:
        waits.write_note(ctx.run_dir, "release_gate", f"{len(missing)} of {len(expected)} wave pods to be created "
                         f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''})", left_s)

    try:
        rel = W.release_wave(admin, ctx.namespaces, ctx.selector, expected, timeout_s=ctx.spec.gate_timeout_seconds,
                             refused=refused, on_waiting=waiting)
    finally:
        waits.clear_note(ctx.run_dir, "release_gate")
    ctx.writer.write_json(RELEASE_FILE, {**rel.to_dict(), "observer_ready": observer_ready})
    return {"found": rel.found, "missing": rel.missing, "arrival_spread_seconds": rel.arrival_spread_seconds,
            "release_spread_seconds": rel.release_spread_seconds, "errors": rel.errors[:5],
            "observer_ready": observer_ready}


# ---- observe ----
def observe(ctx: RunContext) -> dict:
    """Queue snapshots every few seconds from before the release until every wave item has an outcome;
    kept as files (observations, the last state of every pod seen) and ``queue_snapshots``."""
    from gpupoc.pipeline import waits
    from gpupoc.pipeline.observe import observe_wave, snapshot_rows

    interval = float(getattr(ctx.spec, "snapshot_interval_seconds", 3))
    policy = ctx.spec.resubmission
    acc: list[dict] = list(ctx.read_file("observations", []) or [])
    seen_pods: dict[str, dict] = {_pod_key(p): p for p in ctx.read_file(OBSERVED_PODS, []) or []}
    last_write = [time.monotonic()]

    def keep(snap) -> None:
        acc.extend(o.to_dict() for o in snap.observations)
        seen_pods.update({_pod_key(p): p for p in snap.pods})
        if not ctx.files(OBSERVING_FILE).is_file():
            ctx.writer.write_json(OBSERVING_FILE, {"first_snapshot_at": rfc3339(utcnow())})
        if time.monotonic() - last_write[0] > 15:
            _save_observed(ctx, acc, seen_pods)
            last_write[0] = time.monotonic()

    def waiting(open_items, left_s: float) -> None:
        names = ", ".join(o.item for o in open_items[:4]) + (" ..." if len(open_items) > 4 else "")
        waits.write_note(ctx.run_dir, "observe", f"{len(open_items)} wave item outcome(s) ({names})", left_s)

    caller = ctx.reader()  # reads only: not ledgered
    items = {i["workload_key"]: i["namespace"] for i in ctx.items}
    try:
        result = observe_wave(caller, ctx.namespaces, ctx.selector, items, interval_s=interval,
                              timeout_s=ctx.observe_timeout_s(), plan=ctx.plan, resubmit_limit=policy.limit,
                              resubmit_wait_s=policy.wait_seconds, on_snapshot=keep, on_waiting=waiting)
    finally:
        waits.clear_note(ctx.run_dir, "observe")
    _save_observed(ctx, acc, seen_pods)
    obs = [Observation.from_dict(d) for d in acc]
    tenants = {t.namespace: t.name for t in ctx.plan.tenants}
    rows = snapshot_rows(obs, tenants, SNAPSHOT_SOURCE)
    ctx.writer.write("queue_snapshots", rows, source=SNAPSHOT_SOURCE)
    return {"snapshots": len({d["taken_at"] for d in acc}), "rows": len(rows),
            "open_at_deadline": [o.item for o in result.open]}


OBSERVED_PODS = "observed_pods"


def _pod_key(p: dict) -> str:
    return f"{p['metadata']['namespace']}/{p['metadata']['name']}"


def _save_observed(ctx: RunContext, observations: list[dict], pods: dict[str, dict]) -> None:
    ctx.writer.write_json("observations", observations)
    ctx.writer.write_json(OBSERVED_PODS, [pods[k] for k in sorted(pods)])


# ---- collect_evidence ----
def collect(ctx: RunContext, started_at: str | None) -> dict:
    """Read every attempt of every wave item back with its outcome, build the class's tables, write the
    manifest."""
    from gpupoc.dags.classes import collect_class, expected_tables
    from gpupoc.pipeline.attempts import gather
    from gpupoc.pipeline.runs import attempt_runs

    admin = ctx.admin("collect evidence")
    pods = W.list_pods(admin.inner, ctx.namespaces, ctx.selector)
    ctx.writer.write_json("pods", pods)
    release = ctx.read_file(RELEASE_FILE, {}) or {}
    items = {i["workload_key"]: i["namespace"] for i in ctx.items}
    records = ctx.platform_records()
    attempts = gather(items, pods, ctx.observed_pods(), ctx.submissions(), records)
    timelines, runs = attempt_runs(ctx.plan, ctx.test_class, attempts, release.get("rows") or [], records.events)
    for r in runs:
        r["run_id"] = ctx.run_id
    ctx.writer.write("workload_runs", runs, source=SNAPSHOT_SOURCE)
    _ledger_submissions(ctx, pods)
    outcomes = Counter(a.outcome.outcome.value for a in attempts)
    summary = {"pods": len(pods), "expected": len(ctx.items), "attempts": len(attempts),
               "outcomes": dict(sorted(outcomes.items())),
               "resubmitted": sum(1 for a in attempts if a.number > 1),
               "release_spread_seconds": release.get("release_spread_seconds"),
               "arrival_spread_seconds": release.get("arrival_spread_seconds")}
    summary.update(collect_class(ctx, timelines, runs) or {})
    platform = {r["key"]: r["value"] for r in _read_table(ctx, "platform_info")}
    from gpupoc.plan import plan_hash

    ctx.writer.write_manifest(window_start=started_at or utcnow(), window_end=utcnow(), plan_hash=plan_hash(ctx.plan),
                              platform=platform, expected_tables=expected_tables(ctx.test_class),
                              extra={"test_class": ctx.test_class, "summary": summary})
    return {"run_dir": str(ctx.run_dir), **{k: v for k, v in summary.items() if not isinstance(v, (list, dict))}}


def _read_table(ctx: RunContext, table: str) -> list[dict]:
    path = ctx.writer.table_path(table)
    if not path.is_file():
        return []
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def _ledger_submissions(ctx: RunContext, pods: list[dict]) -> None:
    """The operator's pod creations, as each tenant, into the ledger (the operator calls the API itself)."""
    from gpupoc.pipeline.audit import Ledger
    from gpupoc.pipeline.k8s import service_account_actor

    from gpupoc.dags.classes import wave_roles
    from gpupoc.podspec import labels as L

    ledger = Ledger(ctx.run_dir / "ledger" / "wave.jsonl", task="wave")
    by_ns = {t.namespace: t for t in ctx.plan.tenants}
    operator_roles = {L.safe_label_value(r) for r in wave_roles(ctx.test_class)}
    for p in sorted(pods, key=lambda p: p["metadata"].get("creationTimestamp") or ""):
        m = p["metadata"]
        t = by_ns.get(m["namespace"])
        if t is None or (m.get("labels") or {}).get(L.ROLE, "wave") not in operator_roles:
            continue  # a probe created it and its own task ledgered the request
        ledger.record(service_account_actor(t.kube_context, t.namespace, t.service_account), "create",
                      at=parse_time(m.get("creationTimestamp")), resource="pods", namespace=m["namespace"],
                      name=m["name"], method="POST", path=f"/api/v1/namespaces/{m['namespace']}/pods", status=201,
                      outcome="allowed", purpose="submit workload (KubernetesPodOperator)")


# ---- validate / publish / cleanup / verdict ----
def validate(ctx: RunContext, run_dir: str) -> dict:
    """Run the class's expectation suites over the evidence (results and Data Docs beside the evidence)."""
    from gpupoc.validation.runner import validate_run

    params = _thresholds(ctx)
    summary = validate_run(run_dir, parameters=params)
    failed = list(getattr(summary, "failed_checks", None) or [c.check_id for c in summary.checks
                                                              if c.verdict.value == "fail"])
    return {"success": not failed, "failed_checks": failed, "summary_path": str(Path(run_dir) / "validation" /
                                                                                 "summary.json"),
            "data_docs_index": summary.data_docs_index}


def _thresholds(ctx: RunContext) -> dict:
    """The suites' parameters: the class's thresholds and its resubmission expectation."""
    th = getattr(ctx.spec, "thresholds", None)
    params = th.model_dump(mode="json") if th is not None else {}
    return {**params, "platform_requeues": ctx.spec.resubmission.platform_requeues}


def cleanup(ctx: RunContext) -> dict:
    """Delete the pods the wave kept for evidence (the operator keeps them: on_finish_action keep_pod)."""
    from gpupoc.dags.markers import DONE_FILE

    admin = ctx.admin("delete the wave's pods after collecting evidence")
    try:
        pods = W.list_pods(admin.inner, ctx.namespaces, ctx.selector)
        errors = W.delete_pods(admin, pods)
    finally:
        ctx.writer.write_json(DONE_FILE, {"at": rfc3339(utcnow())})  # ends this class's cluster lease
    if errors:
        raise GpupocError(f"{len(errors)} pod(s) of {ctx.dag_id}/{ctx.run_id} could not be deleted: {errors[:3]}; "
                          "delete them with kubectl and rerun cleanup")
    return {"deleted": len(pods)}


def verdict(validation: dict | None) -> None:
    """Fail the run when a check failed (after evidence is published and pods are cleaned up)."""
    from gpupoc.exceptions import ValidationFailed

    if not validation:
        raise GpupocError("no validation result: the validate task did not run; see its upstream tasks")
    if not validation.get("success"):
        raise ValidationFailed("run", validation.get("failed_checks") or [], validation.get("summary_path", ""))


__all__ = ["RunContext", "SourceUnavailable", "check_access", "cleanup", "collect", "observe", "release_gate",
           "validate", "validate_plan", "verdict"]
