"""The audit source is fresh: a probe request shows up in it within ``max_audit_delay_seconds``.

The probe is a ConfigMap ``gpupoc-audit-probe-<random>`` the runner creates and deletes in
``platform.namespace`` (the rendered audit policy logs it; any policy that logs writes does).
"""

from __future__ import annotations

import secrets
import time
from datetime import datetime, timezone

from gpupoc.plan.classes import TestClass
from gpupoc.preflight.audit_sources import audit_source
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, ok
from gpupoc.preflight.registry import check

POLL_SECONDS = 0.25


def _time(event: dict) -> datetime | None:
    raw = event.get("stageTimestamp") or event.get("requestReceivedTimestamp")
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")) if raw else None
    except ValueError:
        return None


def _probe(ctx: PreflightContext, name: str) -> str:
    """Create and delete the probe ConfigMap as the runner; '' or why it could not."""
    ns = ctx.plan.platform.namespace
    runner = ctx.runner()
    r = runner.call("POST", f"/api/v1/namespaces/{ns}/configmaps",
                    body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                        "name": name, "namespace": ns, "labels": {"gpupoc.io/probe": "audit"}}, "data": {}})
    if not r.ok:
        return f"the probe ConfigMap could not be created (HTTP {r.status}: {r.message})"
    runner.call("DELETE", f"/api/v1/namespaces/{ns}/configmaps/{name}", body={})
    return ""


@check("audit", "the audit source shows a probe request within max_audit_delay_seconds",
       classes=(TestClass.AUDIT_TRAIL.value, TestClass.TENANT_ISOLATION.value))
def audit_fresh(ctx: PreflightContext) -> list[CheckResult]:
    source = audit_source(ctx.plan)
    limit = ctx.plan.test_classes.audit_trail.thresholds.max_audit_delay_seconds
    if source is None:
        return [failed("audit", "", "the plan names no audit source", "set evidence_sources.audit_log_path (or "
                       "evidence_sources.audit) to where the API server's audit events arrive")]
    start = source.position()
    name = f"gpupoc-audit-probe-{secrets.token_hex(4)}"
    t0 = time.monotonic()
    problem = _probe(ctx, name)
    if problem:
        return [failed("audit", source.where, problem, ctx.manifests_fix)]
    newest: datetime | None = None
    while True:
        events = source.events_since(start)
        if any((e.get("objectRef") or {}).get("name") == name for e in events):
            return [ok("audit", source.where, f"the probe request arrived after {time.monotonic() - t0:.1f} s "
                       f"(limit {limit:g} s)")]
        stamps = [t for t in (_time(e) for e in events) if t is not None]
        newest = max(stamps + ([newest] if newest else []), default=newest)
        if time.monotonic() - t0 > limit:
            break
        time.sleep(POLL_SECONDS)
    age = (f"its newest event is {(datetime.now(timezone.utc) - newest).total_seconds():.0f} s old" if newest
           else "nothing arrived in it meanwhile")
    return [failed("audit", source.where, f"the probe request did not arrive within {limit:g} s ({age}): "
                   "the source is stale or does not log the runner's writes",
                   "point the audit source at the live stream (the log the API server writes now, the webhook "
                   "receiver it posts to), include the rules of `gpupoc cluster manifests --audit-policy`, or raise "
                   "test_classes.audit_trail.thresholds.max_audit_delay_seconds for a delayed export")]
