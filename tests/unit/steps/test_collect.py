"""collect_evidence: every attempt read back with its outcome, one workload_runs row per attempt, the operator's
submissions in the ledger as each tenant (a probe's own pods are not), and a manifest that names what is missing."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from gpupoc.evidence.writer import MANIFEST
from gpupoc.plan import plan_hash
from gpupoc.podspec import labels as L
from gpupoc.steps import collect
from gpupoc.classes.registry import definition

from .conftest import wave_pod

TERMINATED = {"containerStatuses": [{"name": "base", "state": {"terminated": {
    "exitCode": 0, "reason": "Completed", "startedAt": "2026-11-30T09:00:05Z", "finishedAt": "2026-11-30T09:00:35Z"}}}]}


def finished(ctx, probe_too=False):
    api = ctx.factory.api
    for item in ctx.items:
        p = wave_pod(ctx, item, gates=(), phase="Succeeded", **TERMINATED)
        api.pods[(p["metadata"]["namespace"], p["metadata"]["name"])] = p
    if probe_too:
        p = wave_pod(ctx, ctx.items[0], suffix="probe", gates=(), phase="Succeeded")
        p["metadata"]["labels"][L.ROLE] = "over-quota"
        api.pods[(p["metadata"]["namespace"], p["metadata"]["name"])] = p
    return ctx


def test_every_attempt_has_one_row_with_its_outcome(make_ctx):
    ctx = finished(make_ctx(task="collect_evidence"))
    out = collect.collect(ctx, "2026-11-30T08:59:00Z")
    runs = pq.read_table(ctx.writer.table_path("workload_runs")).to_pylist()
    assert len(runs) == out["attempts"] == len(ctx.items) == out["expected"]
    assert {r["outcome"] for r in runs} == {"succeeded"} and {r["run_id"] for r in runs} == {ctx.run_id}


def test_the_manifest_carries_the_plan_hash_and_lists_a_table_nobody_wrote(make_ctx):
    ctx = finished(make_ctx(task="collect_evidence"))
    collect.collect(ctx, None)
    manifest = json.loads((ctx.run_dir / MANIFEST).read_text())
    assert manifest["plan_hash"] == plan_hash(ctx.plan)
    expected = set(definition(ctx.test_class).tables)
    assert expected <= set(manifest["tables"])
    unwritten = {n for n, t in manifest["tables"].items() if not t["path"]}
    assert unwritten and unwritten <= set(manifest["not_verified"]), "a table no task wrote is not verified"
    assert manifest["tables"]["workload_runs"]["verified"] is True


def test_the_operator_s_pods_are_ledgered_as_their_tenant_and_a_probe_s_are_not(make_ctx):
    ctx = finished(make_ctx(task="collect_evidence"), probe_too=True)
    collect.collect(ctx, None)
    lines = (ctx.run_dir / "ledger" / "wave.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert len(entries) == len(ctx.items), "one create per operator pod, none for the probe's pod"
    by_ns = {t.namespace: t for t in ctx.plan.tenants}
    assert all(e["username"] == f"system:serviceaccount:{e['namespace']}:{by_ns[e['namespace']].service_account}"
               and (e["verb"], e["resource"], e["status"]) == ("create", "pods", 201) for e in entries)


def test_the_manifest_counts_what_the_evidence_receivers_refused_during_the_run(make_ctx, tmp_path, monkeypatch):
    from gpupoc.monitoring.intake_auth import IntakeAuth, RefusalLog

    record = tmp_path / "alerts.jsonl"
    log = RefusalLog(record)
    log.started(IntakeAuth(token="t"))
    log.add("10.0.0.9", "/alerts", "no bearer token")
    monkeypatch.setattr(collect, "receiver_records", lambda plan: {"alert_receiver": record})
    ctx = finished(make_ctx(task="collect_evidence"))
    collect.collect(ctx, "2020-01-01T00:00:00Z")
    manifest = json.loads((ctx.run_dir / MANIFEST).read_text())
    assert manifest["intake"] == {"alert_receiver": {"record": str(record), "refused": 1, "authenticated": True}}


UID = "039f34ac-5d2e-4b7a-9c1e-2f6a8b9d0e11"


def test_a_wave_pod_preempted_by_a_service_replica_named_by_uid_alone_is_judged_preempted_by_a_higher_one(make_ctx):
    ctx = finished(make_ctx(task="collect_evidence"))
    api, item = ctx.factory.api, ctx.items[0]
    victim = api.pods[(item["namespace"], f"{item['workload_key']}-x1")]
    victim["metadata"]["deletionTimestamp"] = "2026-11-30T09:00:40Z"
    victim["spec"].update(priority=1000, nodeName="inference-node-1")
    victim["status"] = {"phase": "Running", "conditions": [{
        "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
        "lastTransitionTime": "2026-11-30T09:00:10Z"}]}
    name = victim["metadata"]["name"]
    api.events.append({"metadata": {"namespace": item["namespace"]}, "reason": "Preempted",
                       "involvedObject": {"kind": "Pod", "namespace": item["namespace"], "name": name},
                       "message": f"Preempted by pod {UID} on node inference-node-1",
                       "lastTimestamp": "2026-11-30T09:00:10Z"})
    replica = {"metadata": {"namespace": "team-serving", "name": "svc-infer-7d9f-abcde", "uid": UID},
               "spec": {"priority": 1_000_000, "nodeName": "inference-node-1"}}
    ctx.writer.write_json("service_replicas", [{"pod": replica, "first_seen": "2026-11-30T09:00:00+00:00"}])
    collect.collect(ctx, None)
    rows = pq.read_table(ctx.writer.table_path("workload_runs")).to_pylist()
    row = next(r for r in rows if r["pod"] == name)
    assert (row["outcome"], row["preempted_by_higher"], row["preemptor"], row["preemption_judged"]) == \
        ("preempted", True, "team-serving/svc-infer-7d9f-abcde", "judged")
