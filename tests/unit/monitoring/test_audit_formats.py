"""The audit command formats: kube-apiserver Events in any wrapping, EKS CloudWatch pages, AKS Log Analytics
rows (both table layouts) and GKE Cloud Audit Logs entries mapped to Events."""

from __future__ import annotations

import json

import pytest

from gpupoc.monitoring.audit_formats import FormatError, gke_event, object_ref, to_events
from gpupoc.pipeline.audit import find_audit_event
from gpupoc.common.timefmt import parse_time


def ev(name: str, verb: str = "patch") -> dict:
    return {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": f"id-{name}",
            "stage": "ResponseComplete", "verb": verb, "user": {"username": "kubernetes-admin"},
            "objectRef": {"resource": "resourcequotas", "namespace": "team-nlp", "name": name, "apiVersion": "v1"},
            "responseStatus": {"code": 200}, "requestReceivedTimestamp": "2026-12-01T08:00:00.100000Z",
            "stageTimestamp": "2026-12-01T08:00:00.200000Z"}


@pytest.mark.parametrize("text", [
    "\n".join(json.dumps(ev(n)) for n in "ab") + "\n",
    json.dumps([ev("a"), ev("b")]),
    json.dumps({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": [ev("a"), ev("b")]}),
])
def test_kube_apiserver_events_are_read_as_lines_arrays_or_event_lists(text):
    assert [e["objectRef"]["name"] for e in to_events(text, "audit-events")] == ["a", "b"]


def test_eks_pages_carry_each_event_in_its_message():
    page = {"events": [{"logStreamName": "kube-apiserver-audit-0123", "timestamp": 1795000000000,
                        "message": json.dumps(ev("a")), "eventId": "1"},
                       {"logStreamName": "kube-apiserver-audit-0123", "message": "not json", "eventId": "2"}],
            "searchedLogStreams": []}
    text = json.dumps(page) + "\n" + json.dumps({"events": [{"message": json.dumps(ev("b"))}]})
    assert [e["objectRef"]["name"] for e in to_events(text, "eks")] == ["a", "b"]


def test_aks_rows_of_both_table_layouts_become_events():
    legacy = {"TableName": "PrimaryResult", "Category": "kube-audit-admin", "log_s": json.dumps(ev("a"))}
    specific = {"TableName": "PrimaryResult", "AuditId": "id-b", "Level": "Metadata", "Stage": "ResponseComplete",
                "Verb": "patch", "User": json.dumps({"username": "kubernetes-admin"}),
                "ObjectRef": json.dumps({"resource": "resourcequotas", "namespace": "team-nlp", "name": "b"}),
                "ResponseStatus": json.dumps({"code": 200}), "RequestReceivedTime": "2026-12-01T08:00:01.5Z",
                "StageReceivedTime": "2026-12-01T08:00:01.6Z", "RequestUri": "/api/v1/x", "SourceIps": "[]"}
    a, b = to_events(json.dumps([legacy, specific]), "aks")
    assert a["auditID"] == "id-a"
    assert (b["auditID"], b["verb"], b["user"]["username"], b["objectRef"]["name"], b["stageTimestamp"]) == (
        "id-b", "patch", "kubernetes-admin", "b", "2026-12-01T08:00:01.6Z")


GKE_CREATE = {
    "insertId": "abc123", "logName": "projects/p/logs/cloudaudit.googleapis.com%2Factivity",
    "operation": {"id": "9f1c-audit-id", "producer": "k8s.io", "first": True, "last": True},
    "protoPayload": {
        "@type": "type.googleapis.com/google.cloud.audit.AuditLog",
        "authenticationInfo": {"principalEmail": "system:serviceaccount:team-nlp:runner"},
        "authorizationInfo": [{"granted": True, "permission": "io.k8s.core.v1.pods.create",
                               "resource": "core/v1/namespaces/team-nlp/pods/train-1"}],
        "methodName": "io.k8s.core.v1.pods.create", "resourceName": "core/v1/namespaces/team-nlp/pods/train-1",
        "requestMetadata": {"callerIp": "10.0.0.7", "callerSuppliedUserAgent": "gpupoc/1.0"},
        "serviceName": "k8s.io", "status": {},
        "request": {"@type": "core.k8s.io/v1.Pod", "metadata": {"name": "train-1"}}},
    "resource": {"type": "k8s_cluster", "labels": {"cluster_name": "poc", "location": "europe-west4"}},
    "timestamp": "2026-12-01T08:00:02.345678Z", "receiveTimestamp": "2026-12-01T08:00:03Z",
    "labels": {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": "RBAC: allowed"}}


def test_a_gke_entry_maps_to_the_event_the_matcher_finds():
    e = gke_event(GKE_CREATE)
    assert (e["auditID"], e["verb"], e["user"]["username"], e["responseStatus"]["code"]) == (
        "9f1c-audit-id", "create", "system:serviceaccount:team-nlp:runner", 201)
    assert e["objectRef"] == {"apiGroup": "", "apiVersion": "v1", "namespace": "team-nlp", "resource": "pods",
                              "name": "train-1"}
    assert e["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert e["requestObject"] == {"metadata": {"name": "train-1"}} and e["level"] == "RequestResponse"
    found = find_audit_event([e], username="system:serviceaccount:team-nlp:runner", verb="create",
                             resource="pods", namespace="team-nlp", name="train-1",
                             at=parse_time("2026-12-01T08:00:02Z"))
    assert found is e


def test_a_denied_gke_entry_is_a_403_with_decision_forbid():
    entry = json.loads(json.dumps(GKE_CREATE))
    p = entry["protoPayload"]
    p.update(methodName="io.k8s.core.v1.pods.log.get", resourceName="core/v1/namespaces/team-nlp/pods/train-1/log",
             status={"code": 7, "message": "pods \"train-1\" is forbidden"}, authorizationInfo=[{"granted": False}])
    p.pop("request")
    entry["labels"] = {}
    e = to_events(json.dumps([entry]), "gke")[0]
    assert (e["verb"], e["objectRef"]["subresource"], e["responseStatus"]["code"], e["level"]) == (
        "get", "log", 403, "Metadata")
    assert e["annotations"] == {"authorization.k8s.io/decision": "forbid"}


@pytest.mark.parametrize("name,ref", [
    ("rbac.authorization.k8s.io/v1/namespaces/a/rolebindings/b",
     {"apiGroup": "rbac.authorization.k8s.io", "apiVersion": "v1", "namespace": "a", "resource": "rolebindings",
      "name": "b"}),
    ("core/v1/nodes/n1", {"apiGroup": "", "apiVersion": "v1", "resource": "nodes", "name": "n1"}),
    ("kueue.x-k8s.io/v1beta1/clusterqueues", {"apiGroup": "kueue.x-k8s.io", "apiVersion": "v1beta1",
                                              "resource": "clusterqueues"}),
])
def test_gke_resource_names_give_the_object_reference(name, ref):
    assert object_ref(name) == ref


@pytest.mark.parametrize("text,fmt,why", [
    ("{\"kind\": \"Pod\"}", "audit-events", "not an audit.k8s.io Event"),
    ("[{\"no\": \"payload\"}]", "gke", "not a Cloud Logging LogEntry"),
    ("{}\nnot json\n", "eks", "line 2 is not JSON"),
    ("[]", "splunk", "unknown audit format"),
])
def test_output_in_another_format_is_refused_with_the_reason(text, fmt, why):
    with pytest.raises(FormatError, match=why):
        to_events(text, fmt)
