"""Audit trail: an administrator's quota change, the artifact hand-over from producer to consumer pod,
and the pipeline's ledger matched against the platform's audit log."""

from __future__ import annotations

from typing import TYPE_CHECKING

import hashlib
import time

from gpupoc.common.timefmt import parse_time, utcnow
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline import wave as W
from gpupoc.steps.probes.common import (
    gpu_quota_name,
    probe_manifest,
    wait_for_release,
    waiting,
)

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext


def quota_change(ctx: RunContext) -> dict:
    """An administrator changes a tenant's GPU quota and restores it; both land in the ledger."""
    from gpupoc.classes.audit_trail.quota_change import change_quota, restore_quota

    qc = ctx.spec.quota_change
    if qc is None:
        return {"skipped": "no quota_change in the plan"}
    t = ctx.plan.tenant(qc.tenant)
    admin = ctx.admin("quota change by an administrator")
    change = change_quota(admin, t.namespace, gpu_quota_name(admin, t.namespace), qc.gpus)
    if qc.restore:
        time.sleep(2)
        change = restore_quota(admin, change)
    ctx.writer.write_json("quota_change", change.model_dump(mode="json"))
    return {"changed": change.change_status, "restored": change.restored}


def artifact_hand_over(ctx: RunContext) -> dict:
    """Once the producer has finished, record its artifact: path, sha256, producer and consumer."""
    from gpupoc.classes.audit_trail.artifacts import hand_over

    art = ctx.spec.artifact
    if art is None:
        return {"skipped": "no artifact in the plan"}
    wait_for_release(ctx, ctx.spec.gate_timeout_seconds)
    t = ctx.plan.tenant(art.producer.tenant)
    caller = ctx.tenant(t.name, "artifact hand-over")
    deadline = time.monotonic() + ctx.hold_timeout_s()
    producer = None
    with waiting(ctx, "the artifact producer to finish, then its consumer", ctx.hold_timeout_s()):
        while time.monotonic() < deadline:
            pods = W.list_pods(caller, [t.namespace], ctx.selector + ",gpupoc.io/role=artifact-producer")
            done = [p for p in pods if (p.get("status") or {}).get("phase") in W.TERMINAL]
            if done:
                producer = done[-1]["metadata"]["name"]
                break
            time.sleep(2)
        if producer is None:
            ctx.writer.write_json("artifact", {"verified": False, "reason": "the producer pod did not finish in time"})
            return {"verified": False}
        consumer, why = _run_consumer(ctx, art, caller, t.namespace, producer, deadline)
    rec = hand_over(caller, t.namespace, producer, consumer=consumer or "pipeline")
    if why:
        rec.reason = "; ".join(x for x in (why, rec.reason) if x)
    ctx.writer.write_json("artifact", rec.model_dump(mode="json"))
    return {"verified": rec.row.verified, "sha256": rec.row.sha256 or "", "consumer": rec.row.consumer}


def _run_consumer(ctx: RunContext, art, producer_caller, namespace: str, producer: str,
                  deadline: float) -> tuple[str, str]:
    """Start the plan's consumer workload with ``--artifact <the path the producer reported>`` as the
    consumer's tenant, and wait for it to end: (its pod name, "") or ("", why the pipeline hashes instead)."""
    from gpupoc.classes.audit_trail.artifacts import parse_artifact_lines
    from gpupoc.plan import class_items
    from gpupoc.podspec import labels as L

    log = producer_caller.call("GET", f"/api/v1/namespaces/{namespace}/pods/{producer}/log")
    lines = parse_artifact_lines(log.text) if log.ok else []
    item = next((i for i in class_items(ctx.plan, ctx.test_class) if i.role == "artifact-consumer"), None)
    if not lines or item is None:
        return "", ("" if lines else "the producer reported no artifact path for a consumer to read")
    ct = ctx.plan.tenant(art.consumer.tenant)
    body = probe_manifest(ctx, art.consumer.workload, ct.name, item.name, role="artifact-consumer")
    # stable per run (str hash() is salted per process): a retry finds its pod (409) instead of making another
    body["metadata"]["name"] = f"{item.name}-{hashlib.sha256(ctx.run_id.encode()).hexdigest()[:8]}"
    body["metadata"]["annotations"][L.ITEM] = item.name
    container = body["spec"]["containers"][0]
    container["args"] = [*(container.get("args") or []), "--artifact", lines[-1].path]
    consumer = ctx.tenant(ct.name, "artifact consumer")
    name = body["metadata"]["name"]
    r = consumer.call("POST", f"/api/v1/namespaces/{ct.namespace}/pods", body=body)
    if not r.ok and r.status != 409:  # 409: a retry of this task created it already
        return "", f"the consumer pod could not be created: HTTP {r.status} {r.message}"
    while time.monotonic() < deadline:
        got = consumer.call("GET", f"/api/v1/namespaces/{ct.namespace}/pods/{name}")
        phase = ((got.body or {}).get("status") or {}).get("phase") if got.ok else None
        if phase == "Succeeded":
            return name, ""
        if phase == "Failed":
            return name, f"the consumer pod {name} failed; see its log"
        time.sleep(2)
    return name, f"the consumer pod {name} did not finish in time"


def _match_audit(ctx: RunContext, entries) -> int | None:
    """The ``audit_matches`` table: the ledger's writes matched against the plan's audit source (waiting for a
    batching or lagging source to deliver them); the number matched, None when the source gave nothing."""
    from gpupoc.classes.audit_trail.rows import audit_matches
    from gpupoc.monitoring.audit_source import caught_up, plan_audit_source
    from gpupoc.pipeline.audit import match_ledger

    source = plan_audit_source(ctx.plan)
    if source is None:
        ctx.writer.mark_not_verified("audit_matches", "the plan names no audit source; set evidence_sources.audit "
                                     "(file, webhook or command) or evidence_sources.audit_log_path", "plan")
        return None
    verbs = {"create", "patch", "update", "delete"}
    times = [parse_time(e.at) for e in entries if e.status and e.resource and e.verb in verbs]
    since, until = (min(times), max(times)) if times else (utcnow(), utcnow())

    def all_matched(events: list[dict]) -> bool:
        return all(m.row.matched for m in match_ledger(entries, events, verbs=verbs) if m.required)

    try:
        events = caught_up(source, since, until, done=all_matched)
    except (OSError, SourceUnavailable) as exc:
        ctx.writer.mark_not_verified("audit_matches", f"audit source unreadable: {exc}", source.origin)
        return None
    ms = match_ledger(entries, events, verbs=verbs)
    ctx.writer.write("audit_matches", audit_matches(ms, required_only=False), source=source.origin)
    return sum(1 for m in ms if m.row.matched)


def collect_audit(ctx: RunContext, timelines, runs, _so_far=None) -> dict:
    """The pipeline's ledger (every task's actions) matched against the platform's audit source."""
    from gpupoc.classes.audit_trail.rows import ledger_rows
    from gpupoc.pipeline.audit import read_ledger

    entries = read_ledger(ctx.run_dir / "ledger")
    ctx.writer.write("ledger", ledger_rows(entries), source="pipeline ledger")
    matched = _match_audit(ctx, entries)
    write_artifacts(ctx)
    return {"ledger_entries": len(entries), "audit_matched": matched}


def write_artifacts(ctx: RunContext) -> None:
    """``artifacts``: the row of the hand-over the ``artifact_hand_over`` task saved, or not verified with its
    reason when no artifact was reported."""
    from gpupoc.classes.audit_trail.artifacts import HandOver
    from gpupoc.classes.audit_trail.rows import artifacts

    art = ctx.read_file("artifact") or {}
    rec = HandOver.model_validate(art) if "row" in art else None
    if rec is not None and rec.reported:
        ctx.writer.write("artifacts", artifacts([rec]),
                         source="producer log + " + ("volume" if rec.row.consumer in (None, "", "pipeline")
                                                     else "consumer pod log"))
    else:
        ctx.writer.mark_not_verified("artifacts", art.get("reason") or "no artifact hand-over recorded",
                                     "artifact_hand_over task")
