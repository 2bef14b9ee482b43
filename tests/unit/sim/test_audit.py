"""Audit policy and audit.k8s.io/v1 event format."""

import json

from gpupoc.sim.audit import AuditLog, AuditRecord, level_for

USER = {"username": "system:serviceaccount:team-a:runner", "groups": ["system:authenticated"]}


def rec(**kw):
    base = dict(request_uri="/api/v1/namespaces/team-b/pods/x/log", verb="get", user=USER, source_ip="127.0.0.1",
                user_agent="kubectl", received="2026-01-01T00:00:00.000000Z", resource="pods", subresource="log",
                namespace="team-b", name="x")
    base.update(kw)
    return AuditRecord(**base)


def test_policy_levels():
    assert level_for(rec()) == "Metadata"  # pods/log read
    assert level_for(rec(subresource="", verb="get", code=200)) is None  # plain pod read is not audited
    assert level_for(rec(subresource="", verb="create", code=201)) == "RequestResponse"
    assert level_for(rec(resource="configmaps", subresource="", verb="update")) == "Metadata"
    assert level_for(rec(resource="secrets", subresource="", verb="list")) == "Metadata"
    assert level_for(rec(resource="nodes", subresource="", verb="list", code=403)) == "Metadata"
    assert level_for(rec(resource="nodes", subresource="", verb="list", code=401)) == "Metadata"
    assert level_for(rec(resource="selfsubjectaccessreviews", subresource="", verb="create")) == "Metadata"


def test_audit_gaps_drop_quota_changes_only():
    q = rec(resource="resourcequotas", subresource="", verb="patch")
    assert level_for(q, audit_gaps=True) is None
    assert level_for(q, audit_gaps=False) == "RequestResponse"
    assert level_for(rec(subresource="", verb="create"), audit_gaps=True) == "RequestResponse"


def test_denied_request_event_fields(tmp_path):
    log = AuditLog(tmp_path / "audit.log")
    r = rec(code=403, decision="forbid",
            status={"status": "Failure", "message": "pods \"x\" is forbidden: ...", "reason": "Forbidden"})
    log.record(r)
    log.close()
    ev = json.loads((tmp_path / "audit.log").read_text().splitlines()[0])
    assert ev["kind"] == "Event" and ev["apiVersion"] == "audit.k8s.io/v1"
    assert ev["level"] == "Metadata" and ev["stage"] == "ResponseComplete"
    assert ev["verb"] == "get" and ev["user"] == USER
    assert ev["objectRef"] == {"resource": "pods", "namespace": "team-b", "name": "x", "apiVersion": "v1",
                               "subresource": "log"}
    assert ev["responseStatus"]["code"] == 403 and ev["responseStatus"]["reason"] == "Forbidden"
    assert ev["annotations"] == {"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": ""}
    assert ev["requestReceivedTimestamp"].endswith("Z") and ev["stageTimestamp"].endswith("Z")


def test_request_response_level_carries_objects_but_never_secret_data(tmp_path):
    log = AuditLog(tmp_path / "a.log")
    ev = log.record(rec(resource="pods", subresource="", verb="create", code=201, request_object={"kind": "Pod"},
                        response_object={"kind": "Pod", "metadata": {"name": "x"}}))
    assert ev["requestObject"] == {"kind": "Pod"} and ev["responseObject"]["metadata"]["name"] == "x"
    ev = log.record(rec(resource="secrets", subresource="", verb="create", code=201,
                        request_object={"kind": "Secret", "data": {"token": "c2VjcmV0"}}))
    assert "requestObject" not in ev
    log.close()
    assert "c2VjcmV0" not in (tmp_path / "a.log").read_text()


def test_unaudited_request_writes_nothing(tmp_path):
    log = AuditLog(tmp_path / "b.log")
    assert log.record(rec(resource="nodes", subresource="", verb="list")) is None
    assert not (tmp_path / "b.log").exists()


def test_metadata_only_log_keeps_every_event_but_writes_no_bodies(tmp_path):
    log = AuditLog(tmp_path / "m.log", metadata_only=True)
    ev = log.record(rec(subresource="", verb="create", code=201, request_object={"kind": "Pod"},
                        response_object={"kind": "Pod", "metadata": {"name": "x"}}))
    assert ev["level"] == "Metadata" and "requestObject" not in ev and "responseObject" not in ev
    assert ev["objectRef"] == {"resource": "pods", "namespace": "team-b", "name": "x", "apiVersion": "v1"}
    assert log.record(rec(subresource="", verb="get", code=200)) is None, "the policy still decides what is logged"
    lines = (tmp_path / "m.log").read_text().splitlines()
    assert len(lines) == 1 and "requestObject" not in lines[0]
