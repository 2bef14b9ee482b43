"""The first check of every class run: the preflight checks its class needs (``gpupoc.preflight``).

The result is evidence (``files/preflight.json``). When a prerequisite is missing the task fails before
anything is submitted; the run's evidence then records every table of the class as not verified, naming the
missing piece and its fix, so the report shows the class's items as not verified for that reason, and the
run's verdict fails. Nothing of the class runs half.
"""

from __future__ import annotations

from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.evidence.reader import PREREQUISITE_PREFIX
from gpupoc.exceptions import PrerequisiteMissing
from gpupoc.plan import plan_hash
from gpupoc.plan.platforms import identity
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import PreflightReport
from gpupoc.preflight.runner import run_preflight
from gpupoc.steps.context import RunContext
from gpupoc.steps.markers import DONE_FILE, PREFLIGHT_FILE
from gpupoc.classes.registry import definition


def preflight(ctx: RunContext) -> dict:
    """Run the class's prerequisite checks, record them, fail naming what is missing."""
    report = run_preflight(PreflightContext(ctx.plan, ctx.factory, test_class=ctx.test_class))
    ctx.writer.write_json(PREFLIGHT_FILE, report.to_dict())
    if not report.passed:
        raise PrerequisiteMissing(ctx.test_class, report.missing_pieces())
    return {"checks": len(report.results), "seconds": round(sum(report.seconds.values()), 2)}


def missing_prerequisites(ctx: RunContext) -> list[str]:
    """What this run's preflight found missing (empty when it passed or did not run)."""
    data = ctx.read_file(PREFLIGHT_FILE)
    return PreflightReport.from_dict(data).missing_pieces() if data else []


def not_run_reason(missing: list[str]) -> str:
    return f"{PREREQUISITE_PREFIX} (preflight): " + "; ".join(missing)


def collect_not_run(ctx: RunContext, started_at: str | None, missing: list[str]) -> dict:
    """The evidence of a class that did not run: every table not verified, naming the missing pieces."""
    reason = not_run_reason(missing)
    class_def = definition(ctx.test_class)
    for table in class_def.tables:
        ctx.writer.mark_not_verified(table, reason, source="preflight")
    summary = {"prerequisites_missing": missing}
    ctx.writer.write_manifest(window_start=started_at or utcnow(), window_end=utcnow(), plan_hash=plan_hash(ctx.plan),
                              expected_tables=class_def.tables, extra={"test_class": ctx.test_class, "summary": summary,
                                                                            **identity(ctx.plan)})
    return {"run_dir": str(ctx.run_dir), "prerequisites_missing": len(missing)}


def end_lease_without_cleanup(ctx: RunContext) -> dict:
    """Nothing was submitted: end the run's lease without asking the cluster."""
    ctx.writer.write_json(DONE_FILE, {"at": rfc3339(utcnow())})
    return {"deleted": 0, "skipped": "prerequisites missing: nothing was submitted"}
