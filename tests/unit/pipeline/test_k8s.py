"""The client factory's errors, the raw caller, request-info parsing and GPU accounting helpers."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import yaml

from gpupoc.common.api_retry import ApiGaveUp, RetryPolicy
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.k8s import (
    ApiCaller, ClientFactory, Response, holds_gpus, pod_gpus, request_info, server_version,
    service_account_actor, service_account_groups,
)

TOKEN = "s3cr3t-token-value-never-printed"


def write_kubeconfig(path, server: str, token: str = TOKEN, context: str = "team-a") -> str:
    cfg = {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": "c", "user": "u", "namespace": "team-a"}}],
    }
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


class _Handler(BaseHTTPRequestHandler):
    answers: dict[str, tuple[int, dict]] = {}
    scripts: dict[str, list[tuple[int, dict, dict]]] = {}  # path -> answers given in turn (code, body, headers)
    hits: list[str] = []
    agents: list[str] = []

    def do_GET(self):  # noqa: N802
        path = self.path.split("?")[0]
        self.hits.append(path)
        self.agents.append(self.headers.get("User-Agent", ""))
        headers: dict = {}
        if self.scripts.get(path):
            code, body, headers = self.scripts[path].pop(0)
        else:
            code, body = self.answers.get(path, (404, {"kind": "Status", "code": 404, "message": "not found"}))
        data = json.dumps(body).encode()
        self.send_response(code)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET  # noqa: N815

    def log_message(self, *args):
        pass


@pytest.fixture
def api_server():
    srv = HTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_caller_returns_forbidden_answers_instead_of_raising(tmp_path, api_server):
    msg = 'pods "x" is forbidden: User "system:serviceaccount:team-a:runner" cannot get resource "pods"'
    _Handler.answers = {"/api/v1/namespaces/b/pods/x": (403, {"kind": "Status", "code": 403, "message": msg})}
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{api_server.server_port}")
    r = ClientFactory(kc).caller("team-a").call("GET", "/api/v1/namespaces/b/pods/x")
    assert (r.status, r.ok, r.message) == (403, False, msg)


def _status(code: int, reason: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
            "message": reason, "details": {"retryAfterSeconds": 0}}


def test_caller_retries_throttled_and_unavailable_answers_that_carry_retry_after(tmp_path, api_server):
    ok = {"kind": "PodList", "items": []}
    _Handler.hits = []
    _Handler.scripts = {"/api/v1/namespaces/a/pods": [(429, _status(429, "TooManyRequests"), {"Retry-After": "0"}),
                                                      (503, _status(503, "ServiceUnavailable"), {"Retry-After": "0"}),
                                                      (200, ok, {})]}
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{api_server.server_port}")
    r = ClientFactory(kc).caller("team-a").call("GET", "/api/v1/namespaces/a/pods")
    assert (r.status, r.body) == (200, ok) and len(_Handler.hits) == 3


def _fake_caller(kc: str, policy: RetryPolicy = RetryPolicy()) -> tuple[ApiCaller, list[float]]:
    """A caller whose waits are recorded, not slept, on a clock that advances by them."""
    slept: list[float] = []
    factory = ClientFactory(kc)
    caller = ApiCaller("team-a", factory.api_client("team-a"), policy=policy, sleep=slept.append,
                       clock=lambda: sum(slept))
    return caller, slept


def test_caller_returns_a_5xx_without_retry_after_at_once_and_backs_off_on_a_503_without_it(tmp_path, api_server):
    _Handler.hits = []
    ok = {"kind": "PodList", "items": []}
    _Handler.scripts = {"/x": [(500, _status(500, "InternalError"), {})],
                        "/z": [(503, _status(503, "ServiceUnavailable"), {})] * 2 + [(200, ok, {})]}
    caller, slept = _fake_caller(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{api_server.server_port}"))
    assert caller.call("GET", "/x").status == 500 and _Handler.hits == ["/x"], "client-go retries only with Retry-After"
    assert caller.call("GET", "/z").status == 200 and _Handler.hits.count("/z") == 3
    assert len(slept) == 2 and 0 < slept[0] < slept[1], f"a 503 without Retry-After backs off, growing: {slept}"
    _Handler.scripts = {}


def test_caller_gives_up_with_an_error_naming_the_endpoint_and_the_fix_never_the_last_429(tmp_path, api_server):
    _Handler.hits = []
    _Handler.scripts = {"/y": [(429, _status(429, "TooManyRequests"), {"Retry-After": "2"})] * 30}
    caller, slept = _fake_caller(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{api_server.server_port}"),
                                 RetryPolicy(attempts=4))
    with pytest.raises(ApiGaveUp) as err:
        caller.call("GET", "/y")
    assert err.value.status == 429 and "GET http://127.0.0.1" in err.value.endpoint and "/y" in err.value.endpoint
    assert "HTTP 429" in err.value.reason and "flow schema" in err.value.fix and "submission qps" in err.value.fix
    assert slept == [2.0, 2.0, 2.0], "each wait is the Retry-After the server said; the 4th send is the last"
    assert _Handler.hits == ["/y"] * 4, "one request per send: the HTTP library neither waits nor sends again"
    assert isinstance(err.value, SourceUnavailable) and TOKEN not in str(err.value)
    _Handler.scripts = {}


def test_unauthorized_token_raises_source_unavailable_naming_context_and_fix_without_the_token(tmp_path, api_server):
    _Handler.answers = {"/version": (401, {"kind": "Status", "code": 401, "message": "Unauthorized"})}
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{api_server.server_port}")
    with pytest.raises(SourceUnavailable) as e:
        server_version(ClientFactory(kc).caller("team-a"))
    text = str(e.value)
    assert "401" in text and "team-a" in text and "renew the token" in e.value.fix
    assert TOKEN not in text


def test_unreachable_server_raises_source_unavailable_with_endpoint(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    with pytest.raises(SourceUnavailable) as e:
        ClientFactory(kc, timeout=2).caller("team-a").call("GET", "/version")
    assert f"127.0.0.1:{port}" in e.value.endpoint
    assert "unreachable" in e.value.reason and "cluster is running" in e.value.fix
    assert TOKEN not in str(e.value)


def test_unknown_context_lists_the_fix(tmp_path):
    kc = write_kubeconfig(tmp_path / "kc", "http://127.0.0.1:1")
    with pytest.raises(SourceUnavailable) as e:
        ClientFactory(kc).caller("nope")
    assert "'nope'" in e.value.reason and "get-contexts" in e.value.fix


def test_missing_kubeconfig_names_the_path(tmp_path):
    with pytest.raises(SourceUnavailable) as e:
        ClientFactory(str(tmp_path / "absent")).caller("admin")
    assert str(tmp_path / "absent") in e.value.endpoint


def test_factory_reuses_one_client_per_context(tmp_path):
    kc = write_kubeconfig(tmp_path / "kc", "http://127.0.0.1:1")
    f = ClientFactory(kc)
    assert f.api_client("team-a") is f.api_client("team-a")
    f.close()


def test_each_component_gets_its_own_client_whose_user_agent_names_it(tmp_path, api_server):
    _Handler.answers = {"/version": (200, {"gitVersion": "v1.37.2"})}
    _Handler.agents = []
    f = ClientFactory(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{api_server.server_port}"))
    assert f.api_client("team-a", "observer") is f.api_client("team-a", "observer")
    assert f.api_client("team-a", "observer") is not f.api_client("team-a", "submitter")
    f.caller("team-a", "observer").call("GET", "/version")
    f.caller("team-a", "submitter").call("GET", "/version")
    f.caller("team-a").call("GET", "/version")
    assert _Handler.agents[0].startswith("gpupoc-observer/"), _Handler.agents
    assert _Handler.agents[1].startswith("gpupoc-submitter/"), _Handler.agents
    assert not _Handler.agents[2].startswith("gpupoc-"), "a caller without a component keeps the client's own agent"
    f.close()


@pytest.mark.parametrize("method,path,query,expected", [
    ("GET", "/api/v1/namespaces/a/pods/x/log", None, ("get", "pods", "a", "x", "log", "")),
    ("GET", "/api/v1/namespaces/a/pods", None, ("list", "pods", "a", "", "", "")),
    ("GET", "/api/v1/namespaces/a/pods", {"watch": "True"}, ("watch", "pods", "a", "", "", "")),
    ("POST", "/api/v1/namespaces/a/pods", None, ("create", "pods", "a", "", "", "")),
    ("PATCH", "/api/v1/namespaces/a/resourcequotas/q", None, ("patch", "resourcequotas", "a", "q", "", "")),
    ("DELETE", "/api/v1/namespaces/a/pods", None, ("deletecollection", "pods", "a", "", "", "")),
    ("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", None,
     ("create", "subjectaccessreviews", "", "", "", "authorization.k8s.io")),
    ("GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/a/workloads/w", None, ("get", "workloads", "a", "w", "",
                                                                          "kueue.x-k8s.io")),
    # a proxy's path after it is the proxied path, not the subresource (the request-info filter's Parts)
    ("GET", "/api/v1/namespaces/a/services/svc:http/proxy/healthz", None, ("get", "services", "a", "svc:http",
                                                                         "proxy", "")),
    ("PATCH", "/apis/apps/v1/namespaces/a/deployments/d/scale", None, ("patch", "deployments", "a", "d", "scale",
                                                                     "apps")),
])
def test_request_info_matches_the_audit_object_ref(method, path, query, expected):
    i = request_info(method, path, query)
    assert (i.verb, i.resource, i.namespace, i.name, i.subresource, i.api_group) == expected


def test_service_account_identity_has_the_kubernetes_groups():
    a = service_account_actor("team-a", "team-a", "runner")
    assert a.username == "system:serviceaccount:team-a:runner"
    assert a.groups == ("system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated")
    assert service_account_groups("kubernetes-admin") == ()


def test_pod_gpus_counts_requests_then_limits_and_holds_only_while_bound_and_live():
    pod = {"spec": {"nodeName": "n1", "containers": [
        {"resources": {"limits": {"nvidia.com/gpu": "2"}}},
        {"resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": "1"}}}]},
        "status": {"phase": "Running"}}
    assert pod_gpus(pod) == 3 and holds_gpus(pod)
    assert not holds_gpus({**pod, "status": {"phase": "Failed"}})
    assert not holds_gpus({"spec": {"containers": []}, "status": {"phase": "Pending"}})


def test_response_message_hides_success_bodies():
    secret = Response(200, {"kind": "Secret", "metadata": {"name": "t"}, "data": {"token": "c2VjcmV0"}})
    assert "c2VjcmV0" not in secret.message and "Secret t" in secret.message
    assert "2 item" in Response(200, {"kind": "PodList", "items": [{}, {}]}).message


def test_factory_uses_a_custom_loader_per_context():
    made = []

    class Client:
        class configuration:  # noqa: N801 - mimics ApiClient.configuration
            host = "https://cluster.example:6443"

        def __init__(self, ctx):
            made.append(ctx)

    f = ClientFactory(loader=Client)
    assert f("team-a").endpoint == "https://cluster.example:6443"
    f("team-a")
    assert made == ["team-a"]


def test_whoami_reads_the_self_subject_review_or_falls_back(fake_caller, k8s_status):
    from gpupoc.pipeline.k8s import Actor, whoami

    c = fake_caller("admin").on("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", Response(201, {
        "status": {"userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]}}}))
    assert whoami(c) == Actor("admin", "kubernetes-admin", ("system:masters",))
    fallback = Actor("admin", "")
    assert whoami(fake_caller("admin"), fallback) is fallback
    with pytest.raises(SourceUnavailable, match="selfsubjectreviews"):
        whoami(fake_caller("admin"))
