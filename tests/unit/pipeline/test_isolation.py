"""Cross-tenant probes, their access reviews and audit proof, over-quota submission, quota samples, shares."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from gpupoc.common.timefmt import rfc3339
from gpupoc.pipeline.isolation import (
    P1, Targets, attach_audit, classify_submission, observe_quotas, probes_for, rbac_denied, run_isolation_probes,
    sample_quotas, submit_over_quota, tenant_shares,
)
from gpupoc.pipeline.k8s import Response, service_account_actor

A = service_account_actor("team-a", "team-a", "runner")
B = service_account_actor("team-b", "team-b", "runner")


def rbac_403(path: str) -> Response:
    ns = re.search(r"/namespaces/([^/]+)", path).group(1)
    return Response(403, {"kind": "Status", "code": 403, "reason": "Forbidden",
                          "message": f'User "x" cannot get resource "pods" in API group "" in the namespace "{ns}"'})


def make_cluster(fake_caller, leak: dict[str, Response] | None = None):
    """Admin lists real names and answers reviews 'denied'; tenants are denied outside their namespace,
    except for requests in ``leak`` ((method, path regex) -> answer)."""
    admin = fake_caller("admin")
    for ns in ("team-a", "team-b"):
        admin.on("GET", f"/api/v1/namespaces/{ns}/pods", Response(200, {"items": [
            {"metadata": {"name": f"{ns}-pending"}, "status": {"phase": "Pending"}},
            {"metadata": {"name": f"{ns}-train"}, "status": {"phase": "Running"}}]}))
        admin.on("GET", f"/api/v1/namespaces/{ns}/secrets", Response(200, {"items": [
            {"metadata": {"name": f"{ns}-registry-token"}}]}))
        admin.on("GET", f"/api/v1/namespaces/{ns}/resourcequotas", Response(200, {"items": [
            {"metadata": {"name": f"{ns}-gpu"}}]}))
        admin.on("GET", f"/api/v1/namespaces/{ns}/resourcequotas/{ns}-gpu", Response(200, {
            "metadata": {"name": f"{ns}-gpu"}, "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}}))
    admin.on("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
             lambda p, q, body: Response(201, {"status": {"allowed": False, "reason": "no RBAC policy matched"}}))
    admin.on("DELETE", ".*", Response(200, {}))
    admin.on("PATCH", ".*", Response(200, {}))
    tenants = {}
    for actor in (A, B):
        c = fake_caller(actor.context)
        c.on("GET", ".*", lambda p, q, b: rbac_403(p))
        c.on("POST", ".*", lambda p, q, b: rbac_403(p))
        c.on("PATCH", ".*", lambda p, q, b: rbac_403(p))
        for (method, pattern), answer in (leak or {}).items():
            c.on(method, pattern, answer)
        tenants[actor.context] = c
    callers = {"admin": admin, **tenants}
    return callers, admin


def test_every_ordered_pair_gets_every_probe_and_a_correct_cluster_denies_all(fake_caller):
    callers, admin = make_cluster(fake_caller)
    rows = run_isolation_probes(callers.__getitem__, "admin", [A, B])
    assert len(rows) == 2 * len(probes_for(Targets("x")))
    assert {(r.actor, r.target_namespace) for r in rows} == {("team-a", "team-b"), ("team-b", "team-a")}
    assert all(r.allowed is False and r.sar_allowed is False and r.sar_agrees for r in rows)
    assert not [r for r in rows if r.finding]
    # probes target real objects, preferring a pod that ran (its log exists)
    log = next(r for r in rows if r.action == "read_logs" and r.target_namespace == "team-b")
    assert (log.name, log.subresource, log.verb) == ("team-b-train", "log", "get")
    # writes are dry runs
    writes = [c for c in callers["team-a"].calls if c[0] in ("POST", "PATCH")]
    assert writes and all(("dryRun", "All") in c[2] for c in writes)


def test_an_allowed_log_read_is_a_p1_finding(fake_caller):
    log = Response(200, None, "epoch=1 loss=0.6\n")
    callers, _ = make_cluster(fake_caller, leak={("GET", r".*/pods/[^/]+/log"): log})
    rows = run_isolation_probes(callers.__getitem__, "admin", [A, B])
    leaked = [r for r in rows if r.allowed]
    assert {r.action for r in leaked} == {"read_logs"}
    assert all(r.severity == P1 and "pods/log" in r.finding and r.sar_agrees is False for r in leaked)


def test_an_allowed_create_whose_dry_run_was_ignored_is_deleted_by_the_admin(fake_caller):
    created = Response(201, {"kind": "Pod", "metadata": {"name": "isolation-probe-team-a", "uid": "u1"}})
    callers, admin = make_cluster(fake_caller, leak={("POST", r"/api/v1/namespaces/team-b/pods"): created})
    admin.on("GET", r"/api/v1/namespaces/team-b/pods/isolation-probe-team-a", created)  # really stored
    rows = run_isolation_probes(callers.__getitem__, "admin", [A, B])
    assert [r.action for r in rows if r.allowed] == ["create_pod"]
    assert ("DELETE", "/api/v1/namespaces/team-b/pods/isolation-probe-team-a") in [c[:2] for c in admin.calls]


def test_an_allowed_quota_patch_that_was_only_a_dry_run_is_not_undone(fake_caller):
    raised = Response(200, {"spec": {"hard": {"requests.nvidia.com/gpu": "16"}}})
    callers, admin = make_cluster(fake_caller, leak={("PATCH", r".*/resourcequotas/team-b-gpu"): raised})
    rows = run_isolation_probes(callers.__getitem__, "admin", [A, B])
    assert [r.action for r in rows if r.allowed] == ["patch_quota"]
    assert not [c for c in admin.calls if c[0] == "PATCH"]  # the stored quota still says 8


@pytest.mark.parametrize("status,message,expected", [
    (403, 'User "u" cannot list resource "secrets"', True),
    (401, "Unauthorized", True),
    (403, 'pods "p" is forbidden: exceeded quota: team-b-gpu, requested: ...', False),
    (404, 'pods "p" not found', False),
    (200, "", False),
    (503, "unavailable", None),
])
def test_rbac_denied_tells_authorization_from_admission_and_lookups(status, message, expected):
    assert rbac_denied(Response(status, {"kind": "Status", "message": message})) is expected


def _forbid(actor, verb, resource, ns, name, at, sub=""):
    return {"auditID": f"{verb}{resource}{sub}{name}", "stage": "ResponseComplete", "verb": verb,
            "user": {"username": actor.username},
            "objectRef": {"resource": resource, "namespace": ns, "name": name, "subresource": sub},
            "responseStatus": {"code": 403}, "requestReceivedTimestamp": rfc3339(at), "stageTimestamp": rfc3339(at),
            "annotations": {"authorization.k8s.io/decision": "forbid"}}


def test_attach_audit_proves_denials_and_flags_unrecorded_ones(fake_caller):
    callers, _ = make_cluster(fake_caller)
    rows = run_isolation_probes(callers.__getitem__, "admin", [A], target_namespaces=["team-b"])
    assert {(r.actor, r.target_namespace) for r in rows} == {("team-a", "team-b")}
    logged = [r for r in rows if r.action != "get_secret"]
    events = [_forbid(A, r.verb, r.resource, r.target_namespace, r.name if r.verb != "create" else "",
                      datetime.fromisoformat(r.at.replace("Z", "+00:00")) + timedelta(milliseconds=3), r.subresource)
              for r in logged]
    attach_audit(rows, events)
    assert all(r.audit_matched for r in logged)
    [secret] = [r for r in rows if r.action == "get_secret"]
    assert secret.audit_matched is False and "no audit event" in secret.finding


def test_classify_submission_outcomes():
    msg = ('pods "over-quota-a" is forbidden: exceeded quota: team-a-gpu, requested: requests.nvidia.com/gpu=9, '
           'used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=8')
    assert classify_submission(403, msg, None) == ("blocked", msg)
    gated = {"spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]},
             "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                             "reason": "SchedulingGated",
                                                             "message": "Scheduling is blocked due to non-empty "
                                                                        "scheduling gates"}]}}
    assert classify_submission(201, "", gated)[0] == "queued"
    assert classify_submission(201, "", {"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})[0] == "admitted"
    approval = {"metadata": {"annotations": {"platform.example/approval": "pending"}}, "spec": {}, "status": {}}
    assert classify_submission(201, "", approval)[0] == "approval"


def _over_quota_cluster(fake_caller, answer: Response):
    c = fake_caller("team-a")
    c.on("GET", r".*/resourcequotas/team-a-gpu", Response(200, {"status": {
        "hard": {"requests.nvidia.com/gpu": "8"}, "used": {"requests.nvidia.com/gpu": "6"}}}))
    c.on("POST", r".*/pods", answer)
    c.on("GET", r".*/pods/over-quota-a", Response(200, {"metadata": {"name": "over-quota-a"},
                                                         "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}))
    c.on("DELETE", r".*", Response(200, {}))
    return c


def test_over_quota_asks_one_more_than_remaining_and_records_the_block_message(fake_caller):
    msg = 'pods "x" is forbidden: exceeded quota: team-a-gpu, requested: requests.nvidia.com/gpu=3'
    c = _over_quota_cluster(fake_caller, Response(403, {"kind": "Status", "code": 403, "message": msg}))
    seen = {}
    row = submit_over_quota(c, "team-a", "team-a", "team-a-gpu",
                            lambda name, gpus: seen.setdefault("pod", {"metadata": {"name": name}, "gpus": gpus}),
                            observe_s=0)
    assert (row.remaining_gpus, row.requested_gpus, seen["pod"]["gpus"]) == (2, 3, 3)
    assert (row.outcome, row.user_message, row.finding) == ("blocked", msg, "")


def test_over_quota_pod_that_runs_is_a_p1_and_is_cleaned_up(fake_caller):
    c = _over_quota_cluster(fake_caller, Response(201, {"metadata": {"name": "over-quota-a"}}))
    row = submit_over_quota(c, "team-a", "team-a", "team-a-gpu", lambda n, g: {"metadata": {"name": n}},
                            observe_s=1, poll_s=0.05)
    assert row.outcome == "admitted" and row.severity == P1 and "n1" in row.finding
    assert c.calls[-1][0] == "DELETE"


def test_quota_samples_flag_pods_holding_more_than_the_quota(fake_caller):
    admin = fake_caller("admin")
    admin.on("GET", r".*/resourcequotas", Response(200, {"items": [{"metadata": {"name": "team-a-gpu"}, "status": {
        "hard": {"requests.nvidia.com/gpu": "4", "pods": "10"}, "used": {"requests.nvidia.com/gpu": "4"}}}]}))
    pod = lambda n, phase: {"spec": {"nodeName": "n1", "containers": [  # noqa: E731
        {"resources": {"limits": {"nvidia.com/gpu": str(n)}}}]}, "status": {"phase": phase}}
    admin.on("GET", r".*/pods", Response(200, {"items": [pod(4, "Running"), pod(2, "Running"), pod(8, "Failed")]}))
    [s] = sample_quotas(admin, ["team-a"])
    assert (s.hard_gpus, s.used_gpus, s.pods_gpus, s.used_ratio) == (4, 4, 6, 1.0)
    assert s.finding.startswith("P1") and "6 GPU(s)" in s.finding


def test_tenant_shares_split_gpu_seconds_and_report_wait_percentiles():
    t = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    rows = [
        {"tenant": "a", "gpus": 4, "submitted_at": t, "started_at": t, "finished_at": t + timedelta(seconds=100)},
        {"tenant": "a", "gpus": 4, "submitted_at": t, "started_at": t + timedelta(seconds=10),
         "finished_at": t + timedelta(seconds=110)},
        {"tenant": "b", "gpus": 2, "submitted_at": rfc3339(t), "started_at": rfc3339(t + timedelta(seconds=50)),
         "finished_at": rfc3339(t + timedelta(seconds=150))},
        {"tenant": "b", "gpus": 2, "submitted_at": t, "started_at": None, "finished_at": None},
    ]
    shares = {s.tenant: s for s in tenant_shares(pd.DataFrame(rows), quotas={"a": 8, "b": 8},
                                                  now=t + timedelta(seconds=200))}
    assert shares["a"].gpu_seconds == 800 and shares["b"].gpu_seconds == 200
    assert (shares["a"].share, shares["b"].share) == (0.8, 0.2)
    assert shares["b"].entitled_share == 0.5 and shares["b"].share_vs_entitled == 0.4
    assert shares["b"].never_started == 1 and shares["b"].wait_max_s == 200
    assert shares["a"].wait_p50_s == 5


def test_observe_quotas_samples_until_stopped(fake_caller):
    import threading

    admin = fake_caller("admin")
    admin.on("GET", r".*/resourcequotas", Response(200, {"items": [{"metadata": {"name": "q"}, "status": {
        "hard": {"requests.nvidia.com/gpu": "4"}, "used": {"requests.nvidia.com/gpu": "1"}}}]}))
    admin.on("GET", r".*/pods", Response(200, {"items": []}))
    stop = threading.Event()
    threading.Timer(0.25, stop.set).start()
    rows = observe_quotas(admin, ["team-a"], duration_s=10, interval_s=0.1, stop=stop)
    assert 2 <= len(rows) <= 5 and all(r.used_gpus == 1 for r in rows)
    assert len(observe_quotas(admin, ["team-a"], duration_s=0, interval_s=1)) == 1


def test_plan_actions_and_pairs_select_the_probes(fake_caller):
    assert [p.action for p in probes_for(Targets("b"), ["read_secrets", "read_logs"])] == [
        "read_logs", "list_secrets", "get_secret"]
    with pytest.raises(ValueError, match="unknown action 'exec'"):
        probes_for(Targets("b"), ["exec"])
    callers, _ = make_cluster(fake_caller)
    rows = run_isolation_probes(callers.__getitem__, "admin", [A, B], actions=["patch_quota"],
                                pairs=[("team-b", "team-a")])
    assert [(r.actor, r.target_namespace, r.action) for r in rows] == [("team-b", "team-a", "patch_quota")]


def test_access_reviews_can_be_left_out(fake_caller):
    callers, admin = make_cluster(fake_caller)
    rows = run_isolation_probes(callers.__getitem__, "admin", [A, B], actions=["list_pods"], access_review=False)
    assert all(r.sar_allowed is None and r.sar_agrees is None and r.allowed is False for r in rows)
    assert not [c for c in admin.calls if "subjectaccessreviews" in c[1]]


def test_another_tenant_s_service_is_probed_by_scale_patch_and_proxy_with_its_real_names(fake_caller):
    callers, admin = make_cluster(fake_caller)
    admin.on("GET", "/apis/apps/v1/namespaces/team-b/deployments", Response(200, {"items": [
        {"metadata": {"name": "svc-infer-abc"}}]}))
    admin.on("GET", "/api/v1/namespaces/team-b/services", Response(200, {"items": [
        {"metadata": {"name": "svc-infer-abc"}}]}))
    rows = run_isolation_probes(callers.__getitem__, "admin", [A, B],
                                actions=["scale_service", "patch_service", "proxy_service"])
    at_b = {r.action: r for r in rows if r.target_namespace == "team-b"}
    assert set(at_b) == {"scale_service", "patch_service", "proxy_service"} and all(r.allowed is False for r in rows)
    assert (at_b["scale_service"].resource, at_b["scale_service"].subresource, at_b["scale_service"].name) == (
        "deployments", "scale", "svc-infer-abc")
    assert (at_b["proxy_service"].verb, at_b["proxy_service"].subresource) == ("get", "proxy")
    assert at_b["patch_service"].resource == "services" and at_b["patch_service"].verb == "patch"


def test_an_allowed_scale_whose_dry_run_was_ignored_is_scaled_back(fake_caller):
    scaled = Response(200, {"spec": {"replicas": 0}})
    callers, admin = make_cluster(fake_caller, leak={("PATCH", r".*/deployments/svc/scale"): scaled})
    replicas = iter([2, 0])  # before the attempt, then as stored after it
    admin.on("GET", "/apis/apps/v1/namespaces/team-b/deployments/svc",
             lambda p, q, b: Response(200, {"spec": {"replicas": next(replicas)}}))
    rows = run_isolation_probes(callers.__getitem__, "admin", [A], targets={"team-b": Targets("team-b",
                                deployment="svc")}, target_namespaces=["team-b"], actions=["scale_service"])
    assert [r.action for r in rows if r.allowed] == ["scale_service"] and rows[0].severity == P1
    assert ("PATCH", "/apis/apps/v1/namespaces/team-b/deployments/svc/scale") in [c[:2] for c in admin.calls]
    assert [c[3] for c in admin.calls if c[0] == "PATCH"] == [{"spec": {"replicas": 2}}]
