"""The audit webhook receiver: kube-apiserver's EventList batches become JSON lines; anything else is refused
with the reason; a forged batch without the bearer token is refused with 401, counted beside the record and
never recorded; Secret data never reaches the record."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from gpupoc.monitoring.audit_webhook import parse_batch, serve
from gpupoc.monitoring.intake_auth import IntakeAuth, refused, refused_path


def event(name: str, **extra) -> dict:
    return {"level": "Metadata", "auditID": f"id-{name}", "stage": "ResponseComplete", "verb": "create",
            "user": {"username": "kubernetes-admin"}, "objectRef": {"resource": "pods", "name": name}, **extra}


def event_list(*items: dict, version: str = "audit.k8s.io/v1") -> dict:
    return {"kind": "EventList", "apiVersion": version, "metadata": {}, "items": list(items)}


@pytest.fixture
def receiver(tmp_path, request):
    token = getattr(request, "param", None)
    httpd = serve("127.0.0.1", 0, tmp_path / "rec" / "audit.jsonl", IntakeAuth(token=token))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", tmp_path / "rec" / "audit.jsonl"
    httpd.shutdown()
    httpd.server_close()


def post(url: str, doc: object, token: str | None = None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url + "/audit", data=json.dumps(doc).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_each_batch_item_becomes_one_event_line_in_arrival_order(receiver):
    url, record = receiver
    assert record.read_text() == "", "the record exists (empty) as soon as the receiver runs"
    assert post(url, event_list(event("a"), event("b")))[0] == 200
    assert post(url, event_list(event("c")))[0] == 200
    got = lines(record)
    assert [e["objectRef"]["name"] for e in got] == ["a", "b", "c"]
    assert all(e["kind"] == "Event" and e["apiVersion"] == "audit.k8s.io/v1" for e in got)


@pytest.mark.parametrize("doc,why", [
    (event("single"), "expected an audit.k8s.io/v1 EventList"),
    (event_list(event("x"), version="audit.k8s.io/v1beta1"), "--audit-webhook-version=audit.k8s.io/v1"),
    ({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": ["nope"]}, "items must be a list"),
])
def test_what_is_not_an_audit_event_list_is_refused_with_the_reason(receiver, doc, why):
    url, record = receiver
    status, text = post(url, doc)
    assert status == 400 and why in text
    assert lines(record) == []


@pytest.mark.parametrize("receiver", ["s3cret-token"], indirect=True)
def test_a_forged_batch_without_the_token_is_refused_counted_and_never_recorded(receiver):
    url, record = receiver
    forged = event("forged", user={"username": "system:serviceaccount:team-nlp:runner"})
    status, text = post(url, event_list(forged))
    assert status == 401 and "no bearer token" in text
    assert post(url, event_list(forged), token="f0rged-guess")[0] == 401
    assert post(url, event_list(event("b")), token="s3cret-token")[0] == 200
    assert [e["objectRef"]["name"] for e in lines(record)] == ["b"], "only the batch with the token is recorded"
    counted = refused(record)
    assert counted is not None and counted.refused == 2 and counted.authenticated
    kept = lines(refused_path(record))
    assert [r["reason"] for r in kept if "reason" in r] == ["no bearer token", "wrong bearer token"]
    assert all(r["remote"] == "127.0.0.1" and r["path"] == "/audit" for r in kept if "reason" in r)
    kept_text = refused_path(record).read_text() + record.read_text()
    assert "s3cret-token" not in kept_text and "f0rged-guess" not in kept_text, "no token is ever kept"


def test_secret_data_is_dropped_from_request_and_response_objects(receiver):
    url, record = receiver
    secret = {"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "reg"}, "data": {"token": "c2VjcmV0"}}
    post(url, event_list(event("reg", level="RequestResponse", requestObject=secret, responseObject=secret)))
    [ev] = lines(record)
    assert "data" not in ev["requestObject"] and "data" not in ev["responseObject"]
    assert ev["requestObject"]["metadata"]["name"] == "reg" and "c2VjcmV0" not in record.read_text()


def test_parse_batch_refuses_a_body_that_is_not_json():
    with pytest.raises(ValueError, match="body is not JSON"):
        parse_batch(b"{not json")
