"""collect_evidence: every attempt of every wave item read back with its outcome, the class's own tables,
the operator's submissions in the ledger, and the run's manifest."""

from __future__ import annotations

from collections import Counter

import pyarrow.parquet as pq

from gpupoc.common.stopwatch import Stopwatch
from gpupoc.common.timefmt import parse_time, utcnow
from gpupoc.monitoring.intake_count import intake_refusals, receiver_records
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.attempts import gather
from gpupoc.pipeline.audit import Ledger
from gpupoc.pipeline.k8s import service_account_actor
from gpupoc.pipeline.observe import list_events, scheduling_events
from gpupoc.pipeline.watch_resume import ResumedLists, SavedCollection, from_records, resume
from gpupoc.pipeline.preemptors import Facts, KnownPod, known_pod
from gpupoc.pipeline.runs import attempt_runs
from gpupoc.pipeline.scheduler_objects import kueue_cluster_queues, priority_queues
from gpupoc.plan import class_items, plan_hash
from gpupoc.plan.platforms import identity
from gpupoc.podspec import labels as L
from gpupoc.steps.attempt_decision import decisions
from gpupoc.steps.context import RunContext
from gpupoc.steps.markers import COLLECTOR_API, COLLECTOR_STAGES, OBSERVED_PODS, OBSERVER_LISTS, RELEASE_FILE
from gpupoc.classes.definition import CollectedSoFar
from gpupoc.classes.registry import definition
from gpupoc.steps.startup import startup_rows
from gpupoc.steps.replay import REPLAY_TABLES, collect_replay, is_replay
from gpupoc.steps.wave import SNAPSHOT_SOURCE


def collect(ctx: RunContext, started_at: str | None) -> dict:
    """Read every attempt of every wave item back with its outcome, build the class's tables, write the
    manifest. A class whose preflight failed ran nothing: its tables say why (``steps.preflight``)."""
    from gpupoc.steps.preflight import collect_not_run, missing_prerequisites
    from gpupoc.steps.service_collect import collect_services, expected_tables

    missing = missing_prerequisites(ctx)
    if missing:
        return collect_not_run(ctx, started_at, missing)
    watch = Stopwatch("collect_evidence")
    timelines, runs, summary, facts, so_far = _attempts(ctx, watch)  # the wave's pods and events go here
    class_def = definition(ctx.test_class)
    with watch.stage("class collector"):
        summary.update((class_def.collector(ctx, timelines, runs, so_far) if class_def.collector else None) or {})
    with watch.stage("services"):
        summary.update(collect_services(ctx, runs, facts))  # a replica's preemptor: as QC-13's
    replayed = is_replay(ctx)
    if replayed:  # the history's waits beside the platform's, and the capacity question
        with watch.stage("replay"):
            summary.update(collect_replay(ctx, runs))
    platform = {r["key"]: r["value"] for r in _read_table(ctx, "platform_info")}
    end = utcnow()
    with watch.stage("alert intake"):
        intake = intake_refusals(receiver_records(ctx.plan), parse_time(started_at), end)
    ctx.writer.write_json(COLLECTOR_STAGES, watch.as_dict())
    with watch.stage("manifest"):  # in the task's log only: the stages' file is one the manifest hashes
        ctx.writer.write_manifest(window_start=started_at or end, window_end=end, plan_hash=plan_hash(ctx.plan),
                                  platform=platform,
                                  expected_tables=(*class_def.tables, *(REPLAY_TABLES if replayed else ()),
                                                   *expected_tables(ctx)),
                                  extra={"test_class": ctx.test_class, "summary": summary, "intake": intake,
                                         **identity(ctx.plan)})
    return {"run_dir": str(ctx.run_dir), **{k: v for k, v in summary.items() if not isinstance(v, (list, dict))}}


def _attempts(ctx: RunContext, watch: Stopwatch) -> tuple[list, list[dict], dict, Facts, CollectedSoFar]:
    """Every attempt read back with its outcome: the ``workload_runs``, ``startup_latency`` and ledger rows, the
    attempts' timelines for the class's collector, the summary so far, the facts preemptors were resolved on
    (the services' replicas are judged on them too) and the scheduling events for the class's collector. The
    pods, events and records it reads (10,000 pods and their events are hundreds of MiB) are gone once it
    returns, before the class's collector. Each stage is timed."""
    admin = ctx.admin("collect evidence")
    with watch.stage("resume lists"):
        lists = resumed_lists(ctx)
    with watch.stage("pods"):
        pods = W.list_pods(lists or admin.inner, ctx.namespaces, ctx.selector)
        if ctx.holds_as_observed(pods):  # unchanged since the observer saved them (10,000 pods: 60 MB not made again)
            ctx.writer.copy_json(OBSERVED_PODS, "pods")
        else:
            ctx.writer.write_json("pods", pods)
        ctx.hold_observed_pods(pods)
    release = ctx.read_file(RELEASE_FILE, {}) or {}
    items = {i["workload_key"]: i["namespace"] for i in ctx.items}
    with watch.stage("platform records"):
        records = ctx.platform_records(events=list_events(lists, ctx.namespaces) if lists else None)
    if lists:
        ctx.writer.write_json(COLLECTOR_API, lists.stats())
        lists = None  # the wave's pods and events are let go of with the lists
    probes = {i.name: ctx.plan.tenant(i.tenant).namespace for i in class_items(ctx.plan, ctx.test_class)}
    with watch.stage("attempts"):
        attempts = gather(items, pods, ctx.observed_pods(), ctx.submissions(), records, also=probes)
    with watch.stage("preemption facts"):
        facts = preemption_facts(ctx, records)
    with watch.stage("workload runs"):
        timelines, runs = attempt_runs(ctx.plan, ctx.test_class, attempts, release.get("rows") or [],
                                       records.events, decisions(ctx), facts)
        for r in runs:
            r["run_id"] = ctx.run_id
        ctx.writer.write("workload_runs", runs, source=SNAPSHOT_SOURCE)
    with watch.stage("ledger"):
        _ledger_submissions(ctx, pods)
    with watch.stage("startup latency"):
        startup, phases, startup_summary = startup_rows(ctx, pods)
        ctx.writer.write("startup_latency", startup, source=SNAPSHOT_SOURCE)
        ctx.writer.write("startup_phases", phases, source=SNAPSHOT_SOURCE)
    outcomes = Counter(a.outcome.outcome.value for a in attempts)
    summary = {"pods": len(pods), "expected": len(ctx.items), "attempts": len(attempts),
               "outcomes": dict(sorted(outcomes.items())),
               "resubmitted": sum(1 for a in attempts if a.number > 1),
               "release_spread_seconds": release.get("release_spread_seconds"),
               "arrival_spread_seconds": release.get("arrival_spread_seconds"), **startup_summary}
    return timelines, runs, summary, facts, CollectedSoFar(scheduling_events(records.events))


def resumed_lists(ctx: RunContext) -> ResumedLists | None:
    """The observer's lists of the wave's pods and its events, caught up with the cluster by a watch from
    where the observer left them (``pipeline/watch_resume.py``); None when it saved none (a wave under
    ``RESUME_FROM_PODS`` pods: listed again) or the client cannot watch."""
    entries = ctx.read_file(OBSERVER_LISTS, []) or []
    reader = ctx.reader()
    if not entries or not callable(getattr(reader, "stream", None)):
        return None
    meanwhile = ctx.hold_audit_reads  # the audit log read while the watches wait for the API server's bookmark
    if not all(isinstance(e, dict) for e in entries):  # names alone (an observer of an earlier version)
        return resume(reader, [c for name in entries for c in from_records(ctx.read_file(name, []) or [])],
                      meanwhile=meanwhile)
    # each watch opens at once; the objects (some 150 MB at 10,000 pods) load while it waits for the bookmark
    return resume(reader, [SavedCollection.from_dict({**e, "items": []}) for e in entries],
                  load=lambda i: _saved_objects(ctx, entries[i]), meanwhile=meanwhile)


def _saved_objects(ctx: RunContext, entry: dict) -> list[dict] | None:
    """A saved list's objects: its file's, or for a pod list the observer's pods it names (None when one is
    missing: the list is read again)."""
    if "file" in entry:
        return [o for c in from_records(ctx.read_file(entry["file"], []) or []) for o in c.items]
    ctx.hold_observed_pods([])
    held = ctx.observed_pods()
    pods = [held.get(tuple(key.split("/", 1))) for key in entry.get("pods") or []]
    return None if any(p is None for p in pods) else pods


def preemption_facts(ctx: RunContext, records) -> Facts:
    """Where a preemptor is looked for beyond the wave (``pipeline/preemptors.py``): the services' replicas the
    observer saw, the owners' uids and the audit log's deletes (``records``), the audit log's bindings in any
    namespace, any other pod as the administrator reads it now, and each namespace's queue as the cluster
    says (under Kueue, the ClusterQueue of the tenant's LocalQueue)."""
    from gpupoc.pipeline.service_history import Replica
    from gpupoc.steps.service_observer import REPLICAS_FILE

    reader = ctx.reader()
    facts = Facts(uids=dict(records.uids), deletions=records.deletions, lookup=lambda key: _read_pod(reader, key))
    for r in ctx.read_file(REPLICAS_FILE, []) or []:
        facts.add(known_pod(Replica.from_dict(r).pod))
    facts.uids.update(gang_group_members(ctx))  # kube-scheduler names a gang preemptor by its PodGroup's uid
    facts.bindings = ctx.audit_bindings()
    shared = kueue_cluster_queues(reader, ctx.plan) if W.adapter_name(ctx.plan) == "kueue" else None
    facts.queues = priority_queues(ctx.plan, shared)
    return facts


def gang_group_members(ctx: RunContext) -> dict[str, str]:
    """PodGroup uid -> ``ns/name`` of one pod of its gang (they share one priority), for the groups the run made."""
    from gpupoc.steps.gangs import GANG_GROUPS

    groups = ctx.read_file(GANG_GROUPS, {}) or {}
    pods = ctx.observed_pods() if groups else {}
    out = {}
    for uid, g in groups.items():
        member = next((f"{ns}/{name}" for (ns, name), p in sorted(pods.items()) if ns == g.get("namespace")
                       and ((p.get("metadata") or {}).get("labels") or {}).get(L.GANG) == g.get("gang")), None)
        if member:
            out[uid] = member
    return out


def _read_pod(reader, key: str) -> KnownPod | None:
    """The pod ``ns/name`` as the API serves it now (None when gone or unreadable)."""
    ns, name = key.split("/", 1)
    r = reader.call("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
    return known_pod(r.body) if r.ok and isinstance(r.body, dict) else None


def _read_table(ctx: RunContext, table: str) -> list[dict]:
    path = ctx.writer.table_path(table)
    if not path.is_file():
        return []
    return pq.read_table(path).to_pylist()


def _ledger_submissions(ctx: RunContext, pods: list[dict]) -> None:
    """The operator's pod creations, as each tenant, into the ledger (the operator calls the API itself)."""
    ledger = Ledger(ctx.run_dir / "ledger" / "wave.jsonl", task="wave")
    by_ns = {t.namespace: t for t in ctx.plan.tenants}
    operator_roles = {L.safe_label_value(r) for r in definition(ctx.test_class).roles}
    for p in sorted(pods, key=lambda p: p["metadata"].get("creationTimestamp") or ""):
        m = p["metadata"]
        t = by_ns.get(m["namespace"])
        if t is None or (m.get("labels") or {}).get(L.ROLE, "wave") not in operator_roles:
            continue  # a probe created it and its own task ledgered the request
        ledger.record(service_account_actor(t.kube_context, t.namespace, t.service_account), "create",
                      at=parse_time(m.get("creationTimestamp")), resource="pods", namespace=m["namespace"],
                      name=m["name"], method="POST", path=f"/api/v1/namespaces/{m['namespace']}/pods", status=201,
                      outcome="allowed", purpose="submit workload (KubernetesPodOperator)")
