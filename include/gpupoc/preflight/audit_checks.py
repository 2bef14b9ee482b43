"""The audit source is fresh: a probe request shows up in it within ``max_audit_delay_seconds``.

The source is the plan's (``gpupoc.monitoring.audit_source.plan_audit_source``: a file, the audit webhook
receiver's record or an export command), read as the classes read it; the probe is the runner's dry-run create
of ConfigMap ``gpupoc-audit-probe-<random>`` in ``platform.namespace`` (``audit_fresh``; the rendered audit
policy logs it, as does any policy that logs writes).
"""

from __future__ import annotations

from gpupoc.monitoring.audit_source import audit_fresh, plan_audit_source
from gpupoc.plan.classes import TestClass
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, ok
from gpupoc.preflight.registry import check

POLL_SECONDS = 0.25


@check("audit", "the audit source shows a probe request within max_audit_delay_seconds",
       classes=(TestClass.AUDIT_TRAIL.value, TestClass.TENANT_ISOLATION.value))
def audit_source_fresh(ctx: PreflightContext) -> list[CheckResult]:
    source = plan_audit_source(ctx.plan)
    limit = ctx.plan.test_classes.audit_trail.thresholds.max_audit_delay_seconds
    if source is None:
        return [failed("audit", "", "the plan names no audit source", "set evidence_sources.audit (file, webhook "
                       "or command; docs/faults-and-audit.md) or evidence_sources.audit_log_path")]
    res = audit_fresh(source, ctx.runner(), ctx.plan.platform.namespace, float(limit), poll_s=POLL_SECONDS)
    if res.fresh:
        return [ok("audit", res.source, f"the probe request arrived after {res.delay_s:.1f} s (limit {limit:g} s)")]
    return [failed("audit", res.source, res.reason, ctx.manifests_fix if res.refused else res.fix)]
