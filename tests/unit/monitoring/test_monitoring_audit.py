"""monitoring/audit: audit.k8s.io/v1 events (JSON lines) as one row per request."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from gpupoc.monitoring.audit import AUDIT_COLUMNS, read_audit_log
from gpupoc.monitoring.results import Window


def _event(stage, audit_id, ts, code=200, decision="allow", **ref):
    return {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": audit_id,
            "stage": stage, "requestURI": "/api/v1/namespaces/team-vision/pods/p/log", "verb": "get",
            "user": {"username": "system:serviceaccount:team-nlp:runner", "uid": "sa-team-nlp",
                     "groups": ["system:serviceaccounts", "system:serviceaccounts:team-nlp", "system:authenticated"]},
            "sourceIPs": ["127.0.0.1"], "userAgent": "kubectl/v1.32.0",
            "objectRef": {"resource": "pods", "namespace": "team-vision", "name": "p", "apiVersion": "v1", **ref},
            "responseStatus": {"metadata": {}, "code": code},
            "requestReceivedTimestamp": ts, "stageTimestamp": ts,
            "annotations": {"authorization.k8s.io/decision": decision,
                            "authorization.k8s.io/reason": "" if decision == "forbid" else "RBAC: allowed"}}


def test_one_row_per_request_with_who_what_and_decision(tmp_path):
    log = tmp_path / "audit.log"
    events = [_event("RequestReceived", "a1", "2026-11-30T07:00:00.000001Z", code=None, subresource="log"),
              _event("ResponseComplete", "a1", "2026-11-30T07:00:00.002000Z", code=403, decision="forbid",
                     subresource="log"),
              _event("ResponseComplete", "a2", "2026-11-30T07:00:01.000000Z")]
    log.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    res = read_audit_log(log)
    assert res.verified
    df = res.frame
    assert list(df.columns) == AUDIT_COLUMNS
    assert list(df["audit_id"]) == ["a1", "a2"]
    denied = df.iloc[0]
    assert (denied["user"], denied["verb"], denied["resource"], denied["subresource"]) == \
        ("system:serviceaccount:team-nlp:runner", "get", "pods", "log")
    assert (denied["namespace"], denied["name"], denied["code"], denied["decision"]) == ("team-vision", "p", 403, "forbid")
    assert denied["timestamp"] == datetime(2026, 11, 30, 7, 0, 0, 2000, tzinfo=timezone.utc)


def test_window_and_bad_lines(tmp_path):
    log = tmp_path / "audit.log"
    log.write_text(json.dumps(_event("ResponseComplete", "a1", "2026-11-30T07:00:00Z")) + "\nnot json\n")
    res = read_audit_log(log, Window(datetime(2026, 11, 30, 6, tzinfo=timezone.utc),
                                     datetime(2026, 11, 30, 8, tzinfo=timezone.utc)))
    assert res.verified and len(res.frame) == 1 and "1 unparseable" in res.reason
    empty = read_audit_log(log, Window(datetime(2026, 12, 1, tzinfo=timezone.utc),
                                       datetime(2026, 12, 2, tzinfo=timezone.utc)))
    assert not empty.verified and "no audit events" in empty.reason


def test_missing_audit_log_is_not_verified_with_the_path(tmp_path):
    res = read_audit_log(tmp_path / "missing.log")
    assert not res.verified and res.source.endswith("missing.log") and "--audit-log-path" in res.reason
