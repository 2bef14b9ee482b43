"""Cross-tenant probes, their access reviews and audit proof."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest

from gpupoc.common.timefmt import rfc3339
from gpupoc.classes.tenant_isolation.isolation import (
    P1, Targets, attach_audit, probes_for, rbac_denied, run_isolation_probes,
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
