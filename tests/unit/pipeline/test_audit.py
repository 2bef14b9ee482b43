"""The pipeline's ledger and its match against the audit log."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from gpupoc.common.timefmt import parse_time, rfc3339
from gpupoc.pipeline.audit import (
    Ledger, LedgerCaller, find_audit_event, match_ledger, read_ledger,
)
from gpupoc.pipeline.k8s import Actor, Response

ADMIN = Actor("admin", "kubernetes-admin", ("system:masters",))
TENANT = Actor("team-a", "system:serviceaccount:team-a:runner", (), "team-a")
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)


def audit_event(user: str, verb: str, resource: str, ns: str, name: str, at: datetime, *, sub: str = "",
                code: int = 200, decision: str = "allow", audit_id: str = "", stage: str = "ResponseComplete",
                impersonated: str | None = None) -> dict:
    ev = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "stage": stage,
          "auditID": audit_id or f"{verb}-{name}-{at.timestamp()}", "verb": verb, "user": {"username": user},
          "objectRef": {"resource": resource, "namespace": ns, "name": name, "apiVersion": "v1",
                        **({"subresource": sub} if sub else {})},
          "responseStatus": {"code": code}, "requestReceivedTimestamp": rfc3339(at),
          "stageTimestamp": rfc3339(at + timedelta(milliseconds=40)),
          "annotations": {"authorization.k8s.io/decision": decision}}
    if impersonated:
        ev["impersonatedUser"] = {"username": impersonated}
    return ev


def test_ledger_rewrites_its_file_on_a_rerun_and_reads_a_directory(tmp_path):
    first = Ledger(tmp_path / "ledger" / "task_a.jsonl", task="task_a")
    first.record(ADMIN, "patch", resource="resourcequotas", namespace="team-a", name="q", status=200)
    first.record(ADMIN, "patch", resource="resourcequotas", namespace="team-a", name="q", status=200)
    rerun = Ledger(tmp_path / "ledger" / "task_a.jsonl", task="task_a")
    rerun.record(ADMIN, "get", resource="pods", namespace="team-a", name="p", status=200)
    Ledger(tmp_path / "ledger" / "task_b.jsonl", task="task_b").record(TENANT, "list", resource="pods",
                                                                          namespace="team-a", status=200)
    entries = read_ledger(tmp_path / "ledger")
    assert [(e.task, e.verb) for e in entries] == [("task_a", "get"), ("task_b", "list")]


def test_ledger_caller_records_who_what_when_and_the_created_name(tmp_path, fake_caller, k8s_status):
    inner = fake_caller("team-a")
    inner.on("POST", "/api/v1/namespaces/team-a/pods",
             Response(201, {"kind": "Pod", "metadata": {"name": "train-abc12", "namespace": "team-a"}}))
    inner.on("GET", "/api/v1/namespaces/team-b/pods", k8s_status(403, "forbidden"))
    ledger = Ledger(tmp_path / "l.jsonl")
    c = LedgerCaller(inner, TENANT, ledger, purpose="probe")
    c.call("POST", "/api/v1/namespaces/team-a/pods", body={"metadata": {"generateName": "train-"}})
    c.call("GET", "/api/v1/namespaces/team-b/pods")
    a, b = read_ledger(ledger.path)
    assert (a.verb, a.resource, a.namespace, a.name, a.status, a.outcome) == ("create", "pods", "team-a",
                                                                            "train-abc12", 201, "allowed")
    assert (b.verb, b.namespace, b.status, b.outcome, b.username) == ("list", "team-b", 403, "denied",
                                                                     TENANT.username)
    assert parse_time(a.at) <= parse_time(a.finished_at)


def test_match_ledger_finds_each_action_once_with_its_delay(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl")
    e1 = ledger.record(ADMIN, "patch", at=T0, resource="resourcequotas", namespace="team-a", name="q", status=200)
    e2 = ledger.record(ADMIN, "patch", at=T0 + timedelta(seconds=2), resource="resourcequotas", namespace="team-a",
                       name="q", status=200)
    events = [audit_event(ADMIN.username, "patch", "resourcequotas", "team-a", "q", T0 + timedelta(seconds=2.01),
                          audit_id="second"),
              audit_event(ADMIN.username, "patch", "resourcequotas", "team-a", "q", T0 + timedelta(milliseconds=5),
                          audit_id="first"),
              audit_event(ADMIN.username, "patch", "resourcequotas", "team-a", "q", T0, audit_id="first",
                          stage="RequestReceived")]
    rows = match_ledger([e1, e2], events)
    assert [(r.seq, r.row.matched, r.row.audit_event_id) for r in rows] == [(1, True, "first"), (2, True, "second")]
    assert rows[0].row.delay_seconds == pytest.approx(0.045, abs=1e-6)


def test_match_ledger_flags_an_action_missing_from_the_audit_log(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl")
    e = ledger.record(ADMIN, "patch", at=T0, resource="resourcequotas", namespace="team-a", name="q", status=200)
    other_user = audit_event("someone-else", "patch", "resourcequotas", "team-a", "q", T0)
    too_late = audit_event(ADMIN.username, "patch", "resourcequotas", "team-a", "q", T0 + timedelta(minutes=5))
    wrong_ns = audit_event(ADMIN.username, "patch", "resourcequotas", "team-b", "q", T0)
    [row] = match_ledger([e], [other_user, too_late, wrong_ns])
    assert not row.row.matched and "no audit event" in row.finding and "resourcequotas team-a/q" in row.finding


def test_match_ledger_skips_requests_that_never_reached_the_server(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl")
    e = ledger.record(ADMIN, "get", at=T0, resource="pods", namespace="a", name="p", status=0, outcome="unreachable")
    assert match_ledger([e], []) == []


def test_find_audit_event_honours_impersonation_subresource_and_decision():
    ev = audit_event("kubernetes-admin", "get", "pods", "team-b", "p", T0, sub="log", code=403, decision="forbid",
                     impersonated=TENANT.username)
    kw = dict(username=TENANT.username, verb="get", resource="pods", namespace="team-b", name="p", at=T0)
    assert find_audit_event([ev], subresource="log", decision="forbid", **kw) is ev
    assert find_audit_event([ev], subresource="", decision="forbid", **kw) is None
    assert find_audit_event([ev], subresource="log", decision="allow", **kw) is None


def test_unaudited_reads_are_matched_but_not_required(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl")
    read = ledger.record(ADMIN, "get", at=T0, resource="resourcequotas", namespace="a", name="q", status=200)
    secret = ledger.record(ADMIN, "get", at=T0, resource="secrets", namespace="a", name="s", status=200)
    denied = ledger.record(TENANT, "list", at=T0, resource="pods", namespace="b", status=403)
    rows = {r.seq: r for r in match_ledger([read, secret, denied], [])}
    assert not rows[read.seq].required and rows[read.seq].finding == ""
    assert rows[secret.seq].required and rows[secret.seq].finding
    assert rows[denied.seq].required and rows[denied.seq].finding


def test_audit_events_reads_the_monitoring_table_and_refuses_a_missing_log(tmp_path):
    from gpupoc.exceptions import SourceUnavailable
    from gpupoc.monitoring.audit import read_audit_log
    from gpupoc.pipeline.audit import audit_events

    ev = audit_event(TENANT.username, "get", "pods", "team-b", "p", T0, sub="log", code=403, decision="forbid",
                     audit_id="a1")
    log = tmp_path / "audit.log"
    log.write_text(json.dumps(ev) + "\n")
    [back] = audit_events(read_audit_log(log))
    assert back["objectRef"]["subresource"] == "log" and back["responseStatus"]["code"] == 403
    found = find_audit_event([back], username=TENANT.username, verb="get", resource="pods", namespace="team-b",
                             name="p", subresource="log", decision="forbid", at=T0)
    assert found is back
    assert audit_events(log)[0]["auditID"] == "a1"
    with pytest.raises(SourceUnavailable, match="audit log not found"):
        audit_events(tmp_path / "absent.log")


def test_an_unknown_identity_matches_on_the_request_and_reports_the_audited_user(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl")
    e = ledger.record(Actor("admin", ""), "patch", at=T0, resource="resourcequotas", namespace="a", name="q",
                      status=200)
    [row] = match_ledger([e], [audit_event("kubernetes-admin", "patch", "resourcequotas", "a", "q", T0)])
    assert row.row.matched and row.audit_user == "kubernetes-admin"
