"""The last steps: the suites' parameters say which cases the plan provokes and are stored with the run, cleanup ends the GPU lease even
when a delete fails (and names the fix), and the verdict fails the run on a failed check or a missing validation."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import GpupocError, ValidationFailed
from gpupoc.pipeline.k8s import METADATA_LIST, Response
from gpupoc.steps import finish
from gpupoc.steps.markers import DONE_FILE

from .conftest import TC, wave_pod, write_plan


def test_the_default_plan_provokes_no_gang_and_keeps_its_thresholds(make_ctx):
    ctx = make_ctx()
    params = finish.suite_parameters(ctx)
    assert params["gangs_in_wave"] is False and params["platform_requeues"] is False
    assert params["max_wait_seconds"] == ctx.spec.thresholds.max_wait_seconds
    assert "fair_share_defined" not in params and "reclaim_defined" not in params  # tenant isolation's own


def test_a_queue_plan_provokes_gangs_a_fair_share_and_a_reclaim(tmp_path, make_ctx):
    plan = write_plan(tmp_path / "kueue", "kueue")
    assert finish.suite_parameters(make_ctx(plan=plan))["gangs_in_wave"] is True
    isolation = finish.suite_parameters(make_ctx(plan=plan, test_class="tenant_isolation"))
    assert isolation["fair_share_defined"] is True and isolation["reclaim_defined"] is True


def test_a_plan_that_expects_the_platform_to_requeue_says_so_to_the_suites(tmp_path, make_ctx):
    plan = write_plan(tmp_path / "rq", change=lambda d: d["test_classes"][TC]["resubmission"].update(
        platform_requeues=True))
    assert finish.suite_parameters(make_ctx(plan=plan))["platform_requeues"] is True


def test_the_suite_parameters_are_stored_with_the_run_s_evidence_and_its_manifest(tmp_path, make_ctx):
    from gpupoc.evidence import RunEvidence

    ctx = make_ctx(plan=write_plan(tmp_path / "kueue", "kueue"))
    params = finish.store_suite_parameters(ctx)
    assert ctx.read_file("suite_parameters") == params == finish.suite_parameters(ctx)
    ctx.writer.write_manifest(window_start="2026-12-01T09:00:00Z", window_end="2026-12-01T09:10:00Z",
                              plan_hash="0" * 64)
    assert RunEvidence.open(ctx.run_dir).suite_parameters == params
    assert params["gangs_in_wave"] is True and "max_wait_seconds" in params


def test_cleanup_deletes_the_wave_s_pods_and_ends_the_lease(make_ctx):
    ctx = make_ctx(task="cleanup")
    for item in ctx.items[:3]:
        p = wave_pod(ctx, item, gates=(), phase="Succeeded")
        ctx.factory.api.pods[(p["metadata"]["namespace"], p["metadata"]["name"])] = p
    assert finish.cleanup(ctx) == {"deleted": 3}
    assert ctx.factory.api.pods == {} and ctx.files(DONE_FILE).is_file()
    lists = [path for method, path, _, _ in ctx.factory.api.calls if method == "GET" and path.endswith("/pods")]
    assert lists == [], "the deletecollection answers name the pods deleted: the wave is not listed again"
    asked = {a for (method, path, _, _), a in zip(ctx.factory.api.calls, ctx.factory.api.accepts)
             if method == "DELETE" and path.endswith("/pods")}
    assert asked == {METADATA_LIST}, "each deletecollection asks for the deleted pods' metadata only"


def test_a_failed_delete_still_ends_the_lease_and_names_the_fix(make_ctx):
    ctx = make_ctx(task="cleanup")
    p = wave_pod(ctx, ctx.items[0], gates=())
    api = ctx.factory.api
    api.pods[(p["metadata"]["namespace"], p["metadata"]["name"])] = p
    real = api.call

    def refuse_deletes(method, path, **kw):
        if method == "DELETE":
            return Response(403, {"kind": "Status", "message": "forbidden"})
        return real(method, path, **kw)

    api.call = refuse_deletes
    with pytest.raises(GpupocError, match="delete them with kubectl and rerun cleanup"):
        finish.cleanup(ctx)
    assert ctx.files(DONE_FILE).is_file(), "the next class must not wait for this one's lease"


def test_the_verdict_fails_a_run_whose_check_failed_and_one_never_validated():
    finish.verdict({"success": True})
    with pytest.raises(ValidationFailed, match="QC-05"):
        finish.verdict({"success": False, "failed_checks": ["QC-05"], "summary_path": "validation/summary.json"})
    with pytest.raises(GpupocError, match="the validate task did not run"):
        finish.verdict(None)


def test_cleanup_deletes_each_namespaces_wave_with_one_request_or_pod_by_pod_where_refused(make_ctx):
    ctx = make_ctx(task="cleanup")
    api = ctx.factory.api
    for item in ctx.items[:4]:
        p = wave_pod(ctx, item, gates=(), phase="Succeeded")
        api.pods[(p["metadata"]["namespace"], p["metadata"]["name"])] = p
    namespaces = sorted({ns for ns, _ in api.pods})
    refused_ns = namespaces[0]
    real = api.call

    def no_collection_delete_in_one(method, path, **kw):
        if method == "DELETE" and path == f"/api/v1/namespaces/{refused_ns}/pods":
            return Response(403, {"kind": "Status", "message": "cannot deletecollection"})
        return real(method, path, **kw)

    api.call = no_collection_delete_in_one
    assert finish.cleanup(ctx) == {"deleted": 4}
    assert api.pods == {}
    deletes = [path for method, path, _, _ in api.calls if method == "DELETE"]
    assert all(path.startswith(f"/api/v1/namespaces/{refused_ns}/pods/") for path in deletes
               if path.count("/") == 6), "only the refusing namespace's pods were deleted one by one"
    assert {f"/api/v1/namespaces/{ns}/pods" for ns in namespaces[1:]} <= set(deletes)
    lists = {path for method, path, _, _ in api.calls if method == "GET" and path.endswith("/pods")}
    assert lists == {f"/api/v1/namespaces/{refused_ns}/pods"}, "only the refusing namespace is listed"
