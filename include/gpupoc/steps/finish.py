"""The last steps of a run: validate the evidence, delete the wave's pods (ending the lease), give the verdict."""

from __future__ import annotations

from pathlib import Path

from gpupoc.classes.registry import definition
from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.exceptions import GpupocError, PrerequisiteMissing, ValidationFailed
from gpupoc.pipeline import wave as W
from gpupoc.steps.context import RunContext
from gpupoc.steps.markers import DONE_FILE
from gpupoc.validation.runner import validate_run


def validate(ctx: RunContext, run_dir: str) -> dict:
    """Run the class's expectation suites over the evidence (results and Data Docs beside the evidence), with
    the suites' parameters stored with the run first: revalidation reads back the very same ones."""
    from gpupoc.steps.preflight import missing_prerequisites

    summary = validate_run(run_dir, parameters=suite_parameters(ctx))
    failed = list(getattr(summary, "failed_checks", None) or [c.check_id for c in summary.checks
                                                              if c.verdict.value == "fail"])
    missing = missing_prerequisites(ctx)
    return {"success": not failed and not missing, "failed_checks": failed, "prerequisites_missing": missing,
            "test_class": ctx.test_class,
            "summary_path": str(Path(run_dir) / "validation" / "summary.json"),
            "data_docs_index": summary.data_docs_index}


def suite_parameters(ctx: RunContext) -> dict:
    """The suites' parameters: the class's thresholds, its resubmission expectation, which of the shared cases a
    check ``requires`` the plan provokes (gangs in the wave, services), and the class's own parameters from its
    definition (tenant isolation: a fair share, a reclaim probe)."""
    th = getattr(ctx.spec, "thresholds", None)
    params = th.model_dump(mode="json") if th is not None else {}
    own = definition(ctx.test_class).suite_parameters
    return {**params, "platform_requeues": ctx.spec.resubmission.platform_requeues,
            "gangs_in_wave": any(i.gang for i in ctx.wave_items()),
            **(own(ctx.spec) if own is not None else {}),
            "services_defined": bool(ctx.spec.services),
            "service_traffic_defined": any(s.traffic for s in ctx.spec.services),
            "service_failures_defined": bool(getattr(ctx.spec, "service_failures", None))}


def store_suite_parameters(ctx: RunContext) -> dict:
    """Store the suites' parameters with the run's evidence as soon as its plan is read (``validate_plan``):
    a run whose validate task never ran is still judged with them, never with a plan read later."""
    params = suite_parameters(ctx)
    ctx.writer.write_suite_parameters(params)
    return params


def cleanup(ctx: RunContext) -> dict:
    """Delete the pods the wave kept for evidence (the operator keeps them: on_finish_action keep_pod)."""
    from gpupoc.steps.gangs import delete_pod_groups
    from gpupoc.steps.preflight import end_lease_without_cleanup, missing_prerequisites

    if missing_prerequisites(ctx):
        return end_lease_without_cleanup(ctx)
    from gpupoc.podspec.service import service_selector
    from gpupoc.steps.services import delete_leftovers

    admin = ctx.admin("delete the wave's pods after collecting evidence")
    try:
        errors = delete_leftovers(ctx)  # a service whose delete task failed: its Deployment first
        deleted = 0
        for selector in (ctx.selector, service_selector(ctx.run_id, ctx.test_class)):
            count, failed = W.delete_selected(admin, ctx.namespaces, selector, lister=admin.inner)
            deleted, errors = deleted + count, errors + failed
        errors += delete_pod_groups(ctx)
    finally:
        ctx.writer.write_json(DONE_FILE, {"at": rfc3339(utcnow())})  # ends this class's GPU lease
    if errors:
        raise GpupocError(f"{len(errors)} pod(s) of {ctx.dag_id}/{ctx.run_id} could not be deleted: {errors[:3]}; "
                          "delete them with kubectl and rerun cleanup")
    return {"deleted": deleted}


def verdict(validation: dict | None) -> None:
    """Fail the run when a check failed (after evidence is published and pods are cleaned up)."""
    if not validation:
        raise GpupocError("no validation result: the validate task did not run; see its upstream tasks")
    if validation.get("prerequisites_missing"):
        raise PrerequisiteMissing(validation.get("test_class", "this class"), validation["prerequisites_missing"])
    if not validation.get("success"):
        raise ValidationFailed("run", validation.get("failed_checks") or [], validation.get("summary_path", ""))
