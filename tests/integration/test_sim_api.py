"""The simulated cluster's Kubernetes API through the real `kubernetes` client (a started server)."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
import urllib.error
import urllib.request

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.waiting import until, wait_for

pytestmark = pytest.mark.integration

TOLERATE_GPU = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def gpu_pod(name, gpus=1, seconds=2, labels=None, exit_code=0, **spec):
    env = [{"name": "WORKLOAD_DURATION_SECONDS", "value": str(seconds)},
           {"name": "WORKLOAD_EXIT_CODE", "value": str(exit_code)}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"restartPolicy": "Never", "tolerations": TOLERATE_GPU,
                     "containers": [{"name": "base", "image": "gpupoc/virtual:1", "env": env,
                                     "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}], **spec}}


def core(sim, context="admin"):
    return client.CoreV1Api(sim.client(context))


def raw(sim, path, token=None, method="GET", body=None, timeout=30.0):
    """A plain request to the plain-HTTP port: (status, parsed body)."""
    req = urllib.request.Request(sim.http_url + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        data, status = exc.read(), exc.code
    try:
        return status, json.loads(data)
    except ValueError:
        return status, data.decode()


def read_log(api, name, ns, **kw) -> str:
    """The pod log as text (the client's ``str`` return type keeps the bytes repr, so read the raw body)."""
    return api.read_namespaced_pod_log(name, ns, _preload_content=False, **kw).data.decode()


def wait_phase(api, ns, name, phases=("Succeeded", "Failed"), timeout=120):
    """Until the pod's phase is one of ``phases``; the timeout guards a stall (pods here run seconds)."""
    return wait_for(f"pod {ns}/{name} to reach {phases}", lambda: api.read_namespaced_pod(name, ns),
                    lambda pod: pod.status.phase in phases, step_seconds=timeout, poll=0.2,
                    describe=lambda pod: f"phase {pod.status.phase}")


def test_admin_crud_on_configmaps(sim_server):
    api = core(sim_server)
    cm = api.create_namespaced_config_map("team-vision", {"metadata": {"name": "c1"}, "data": {"a": "1"}})
    assert cm.metadata.uid and cm.metadata.resource_version
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_config_map("team-vision", {"metadata": {"name": "c1"}, "data": {}})
    assert exc.value.status == 409
    assert json.loads(exc.value.body)["reason"] == "AlreadyExists"
    api.patch_namespaced_config_map("c1", "team-vision", {"data": {"b": "2"}})
    got = api.read_namespaced_config_map("c1", "team-vision")
    assert got.data == {"a": "1", "b": "2"}
    got.data = {"c": "3"}
    api.replace_namespaced_config_map("c1", "team-vision", got)
    assert api.read_namespaced_config_map("c1", "team-vision").data == {"c": "3"}
    stale = got
    stale.metadata.resource_version = "1"
    with pytest.raises(ApiException) as exc:
        api.replace_namespaced_config_map("c1", "team-vision", stale)
    assert exc.value.status == 409 and json.loads(exc.value.body)["reason"] == "Conflict"
    names = [c.metadata.name for c in api.list_namespaced_config_map("team-vision").items]
    assert "c1" in names and "artifact-index" in names
    api.delete_namespaced_config_map("c1", "team-vision")
    with pytest.raises(ApiException) as exc:
        api.read_namespaced_config_map("c1", "team-vision")
    body = json.loads(exc.value.body)
    assert exc.value.status == 404 and body["message"] == 'configmaps "c1" not found'


def test_pod_lifecycle_with_selectors_patch_and_log(sim_server):
    api = core(sim_server)
    created = api.create_namespaced_pod("team-nlp", gpu_pod("life-1", labels={"dag_id": "d", "run": "1"}))
    assert created.metadata.name == "life-1" and created.spec.priority == 1000
    listed = api.list_namespaced_pod("team-nlp", label_selector="dag_id=d,already_checked!=True,!airflow-worker")
    assert [p.metadata.name for p in listed.items] == ["life-1"]
    assert listed.metadata.resource_version
    pod = wait_phase(api, "team-nlp", "life-1")
    assert pod.status.phase == "Succeeded"
    assert pod.status.container_statuses[0].state.terminated.exit_code == 0
    by_field = api.list_pod_for_all_namespaces(field_selector="status.phase=Succeeded,metadata.name=life-1")
    assert len(by_field.items) == 1
    api.patch_namespaced_pod("life-1", "team-nlp", {"metadata": {"labels": {"already_checked": "True"}}})
    assert not api.list_namespaced_pod("team-nlp", label_selector="dag_id=d,already_checked!=True").items
    log = read_log(api, "life-1", "team-nlp", container="base", timestamps=True)
    first = log.splitlines()[0]
    assert first[:4].isdigit() and first[10] == "T" and first.split(" ", 1)[0].endswith("Z")
    tail = read_log(api, "life-1", "team-nlp", container="base", tail_lines=1)
    assert len(tail.splitlines()) == 1
    with pytest.raises(ApiException) as exc:
        api.read_namespaced_pod_log("life-1", "team-nlp", container="base", previous=True)
    assert exc.value.status == 400
    events = api.list_namespaced_event("team-nlp", field_selector="involvedObject.name=life-1")
    reasons = {e.reason for e in events.items}
    assert {"Scheduled", "Started"} <= reasons
    again = api.list_namespaced_event("team-nlp", field_selector="involvedObject.name=life-1",
                                      resource_version=events.metadata.resource_version,
                                      resource_version_match="NotOlderThan")
    assert len(again.items) == len(events.items)
    api.delete_namespaced_pod("life-1", "team-nlp", body={})
    with pytest.raises(ApiException) as exc:
        api.read_namespaced_pod("life-1", "team-nlp")
    assert exc.value.status == 404
    audited = {(e["verb"], e["level"]): e for e in sim_server.audit_events()
               if e.get("objectRef", {}).get("name") == "life-1" and e["objectRef"]["resource"] == "pods"}
    create = audited[("create", "RequestResponse")]
    assert create["requestObject"]["metadata"] == {"name": "life-1", "labels": {"dag_id": "d", "run": "1"}}
    assert create["responseObject"]["metadata"]["uid"] == created.metadata.uid
    assert create["responseStatus"]["code"] == 201
    assert ("patch", "RequestResponse") in audited and ("delete", "RequestResponse") in audited
    assert audited[("get", "Metadata")]["objectRef"]["subresource"] == "log"


def test_followed_log_closes_when_the_container_ends(sim_server):
    api = core(sim_server)
    api.create_namespaced_pod("team-vision", gpu_pod("follow-1", seconds=3))
    wait_phase(api, "team-vision", "follow-1", phases=("Running",))
    resp = api.read_namespaced_pod_log("follow-1", "team-vision", container="base", follow=True, timestamps=True,
                                       _preload_content=False, _request_timeout=300)
    lines = resp.data.decode().strip().splitlines()
    assert lines, "followed log returned no lines"
    assert lines[-1].endswith(" workload finished"), f"the follow closed before the container ended: {lines[-3:]}"
    assert api.read_namespaced_pod("follow-1", "team-vision").status.phase == "Succeeded"
    api.delete_namespaced_pod("follow-1", "team-vision")


def test_tenant_denied_in_other_namespace_with_exact_message_and_audit(sim_server):
    tenant = core(sim_server, "team-vision")
    assert tenant.list_namespaced_pod("team-vision").items is not None
    with pytest.raises(ApiException) as exc:
        tenant.read_namespaced_pod_log("anything", "team-nlp")
    assert exc.value.status == 403
    body = json.loads(exc.value.body)
    assert body["kind"] == "Status" and body["reason"] == "Forbidden"
    assert body["message"] == ('pods "anything" is forbidden: User "system:serviceaccount:team-vision:runner" cannot '
                               'get resource "pods/log" in API group "" in the namespace "team-nlp"')
    denied = [e for e in sim_server.audit_events()
              if e["responseStatus"]["code"] == 403 and e.get("objectRef", {}).get("subresource") == "log"
              and e["objectRef"].get("namespace") == "team-nlp"]
    assert denied, "no audit event for the denied log read"
    ev = denied[-1]
    assert ev["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert ev["user"]["username"] == "system:serviceaccount:team-vision:runner"
    assert ev["verb"] == "get" and ev["objectRef"]["name"] == "anything"
    assert sim_server.tokens["team-vision"] not in sim_server.audit_log.read_text()


def test_unauthenticated_requests_get_401(sim_server):
    for token in (None, "wrong-token"):
        status, body = raw(sim_server, "/api/v1/namespaces/team-vision/pods", token)
        assert status == 401 and body["reason"] == "Unauthorized" and body["kind"] == "Status"
    status, _ = raw(sim_server, "/healthz")
    assert status == 200


def quota_gpus(api, namespace: str = "team-serving") -> int:
    rq = api.read_namespaced_resource_quota(f"{namespace}-gpu", namespace)
    return int(rq.spec.hard["requests.nvidia.com/gpu"])


def test_quota_exceeded_is_403(sim_server):
    api = core(sim_server, "team-serving")
    hard = quota_gpus(api)
    api.create_namespaced_pod("team-serving", gpu_pod("q-big", gpus=hard, seconds=30))  # pending pods count too
    try:
        with pytest.raises(ApiException) as exc:
            api.create_namespaced_pod("team-serving", gpu_pod("q-more", gpus=2))
        body = json.loads(exc.value.body)
        assert exc.value.status == 403
        assert body["message"] == ('pods "q-more" is forbidden: exceeded quota: team-serving-gpu, requested: '
                                   f"requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu={hard}, limited: "
                                   f"requests.nvidia.com/gpu={hard}")
        # the quota controller's next pass; a stall guard
        wait_for("the quota's used GPUs to show q-big",
                 lambda: api.read_namespaced_resource_quota("team-serving-gpu", "team-serving").status,
                 lambda st: st.used.get("requests.nvidia.com/gpu") == str(hard), step_seconds=60, poll=0.2)
    finally:
        core(sim_server).delete_namespaced_pod("q-big", "team-serving", grace_period_seconds=0)


def test_watch_streams_changes_from_a_resource_version(sim_server):
    api = core(sim_server)
    rv = api.list_namespaced_pod("team-nlp").metadata.resource_version
    seen: list[tuple[str, str]] = []

    def consume():
        w = watch.Watch()
        for ev in w.stream(api.list_namespaced_pod, "team-nlp", resource_version=rv, timeout_seconds=600,
                           field_selector="metadata.name=watch-1"):
            seen.append((ev["type"], ev["object"].status.phase))
            if ev["type"] == "DELETED":
                w.stop()

    t = threading.Thread(target=consume)
    t.start()
    api.create_namespaced_pod("team-nlp", gpu_pod("watch-1", seconds=1))
    wait_phase(api, "team-nlp", "watch-1")
    api.delete_namespaced_pod("watch-1", "team-nlp")
    t.join(600)  # it ends at the DELETED event
    types = [s[0] for s in seen]
    assert types[0] == "ADDED" and types[-1] == "DELETED" and "MODIFIED" in types
    assert ("MODIFIED", "Succeeded") in seen


def test_watch_times_out_after_timeout_seconds(sim_server):
    """The server ends a watch at its timeoutSeconds: a watch without one is still open when it has ended."""
    path = "/api/v1/namespaces/team-vision/events?watch=true&fieldSelector=involvedObject.name%3Dnobody"
    untimed: dict = {}

    def hold_open() -> None:
        try:
            untimed["answer"] = raw(sim_server, path + "&timeoutSeconds=3600", sim_server.admin_token, timeout=3600)
        except (OSError, http.client.HTTPException) as exc:  # the server stopping at the end of the session
            untimed["broken"] = exc

    t = threading.Thread(target=hold_open, daemon=True)
    t.start()
    status, body = raw(sim_server, path + "&timeoutSeconds=1", sim_server.admin_token)
    assert status == 200 and body in ("", {}), (status, body)
    assert t.is_alive() and not untimed, "only the watch whose timeoutSeconds passed was ended"


def test_scheduling_gate_removed_by_patch_lets_the_pod_run(sim_server):
    api = core(sim_server)
    gated = gpu_pod("gated-1", seconds=1, schedulingGates=[{"name": "gpupoc.io/wave"}])
    api.create_namespaced_pod("team-vision", gated)
    time.sleep(1)
    pod = api.read_namespaced_pod("gated-1", "team-vision")
    cond = [c for c in pod.status.conditions if c.type == "PodScheduled"][0]
    assert (cond.status, cond.reason) == ("False", "SchedulingGated") and pod.spec.node_name is None
    api.patch_namespaced_pod("gated-1", "team-vision",
                             {"spec": {"schedulingGates": [{"name": "gpupoc.io/wave", "$patch": "delete"}]}})
    assert wait_phase(api, "team-vision", "gated-1").status.phase == "Succeeded"
    api.delete_namespaced_pod("gated-1", "team-vision")


def test_pod_spec_is_immutable_except_allowed_fields(sim_server):
    api = core(sim_server)
    api.create_namespaced_pod("team-vision", gpu_pod("immut-1", seconds=1, schedulingGates=[{"name": "g"}]))
    with pytest.raises(ApiException) as exc:
        api.patch_namespaced_pod("immut-1", "team-vision", {"spec": {"restartPolicy": "Always"}})
    assert exc.value.status == 422 and "pod updates may not change fields" in json.loads(exc.value.body)["message"]
    api.delete_namespaced_pod("immut-1", "team-vision")


def test_cordon_by_strategic_merge_patch(sim_server):
    api = core(sim_server)
    api.patch_node("training-node-3", {"spec": {"unschedulable": True}})
    assert api.read_node("training-node-3").spec.unschedulable is True
    api.patch_node("training-node-3", {"spec": {"unschedulable": None}})
    assert not api.read_node("training-node-3").spec.unschedulable


def test_access_reviews(sim_server):
    authz = client.AuthorizationV1Api(sim_server.client("team-vision"))
    ssar = authz.create_self_subject_access_review({"spec": {"resourceAttributes": {
        "namespace": "team-nlp", "verb": "get", "resource": "pods", "subresource": "log"}}})
    assert ssar.status.allowed is False
    ssar = authz.create_self_subject_access_review({"spec": {"resourceAttributes": {
        "namespace": "team-vision", "verb": "create", "resource": "pods"}}})
    assert ssar.status.allowed is True
    admin = client.AuthorizationV1Api(sim_server.client("admin"))
    sar = admin.create_subject_access_review({"spec": {
        "user": "system:serviceaccount:team-nlp:runner", "groups": ["system:serviceaccounts:team-nlp"],
        "resourceAttributes": {"namespace": "team-nlp", "verb": "list", "resource": "pods"}}})
    assert sar.status.allowed is True and "RoleBinding" in sar.status.reason
    kinds = [e["objectRef"]["resource"] for e in sim_server.audit_events() if "objectRef" in e]
    assert "selfsubjectaccessreviews" in kinds and "subjectaccessreviews" in kinds


def test_impersonation_by_admin(sim_server):
    status, body = raw(sim_server, "/api/v1/namespaces/team-nlp/pods", sim_server.admin_token)
    assert status == 200
    req = urllib.request.Request(sim_server.http_url + "/api/v1/namespaces/team-nlp/pods",
                                 headers={"Authorization": f"Bearer {sim_server.admin_token}",
                                          "Impersonate-User": "system:serviceaccount:team-vision:runner"})
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req, timeout=10)
    assert exc.value.code == 403
    ev = [e for e in sim_server.audit_events() if e.get("impersonatedUser")][-1]
    assert ev["impersonatedUser"]["username"] == "system:serviceaccount:team-vision:runner"
    assert ev["user"]["username"] == "kubernetes-admin"


def test_discovery_documents(sim_server):
    tok = sim_server.admin_token
    status, version = raw(sim_server, "/version", tok)
    assert status == 200 and version["gitVersion"].startswith("v1.")
    _, v1 = raw(sim_server, "/api/v1", tok)
    by_name = {r["name"]: r for r in v1["resources"]}
    assert by_name["pods"]["shortNames"] == ["po"] and by_name["pods"]["namespaced"] is True
    assert by_name["pods/log"]["verbs"] == ["get"]
    assert by_name["resourcequotas"]["shortNames"] == ["quota"]
    assert by_name["nodes"]["namespaced"] is False
    _, groups = raw(sim_server, "/apis", tok)
    names = {g["name"] for g in groups["groups"]}
    assert {"kueue.x-k8s.io", "scheduling.k8s.io", "rbac.authorization.k8s.io", "authorization.k8s.io"} <= names
    _, sched = raw(sim_server, "/apis/scheduling.k8s.io/v1", tok)
    assert sched["resources"][0]["shortNames"] == ["pc"]
    status, body = raw(sim_server, "/api/v1/foos", tok)
    assert status == 404 and body["reason"] == "NotFound"


def test_kueue_objects_and_visibility_api(sim_server):
    custom = client.CustomObjectsApi(sim_server.client("admin"))
    cqs = custom.list_cluster_custom_object("kueue.x-k8s.io", "v1beta1", "clusterqueues")
    assert {c["metadata"]["name"] for c in cqs["items"]} == {"training-cq", "inference-cq"}
    summary = custom.get_cluster_custom_object("visibility.kueue.x-k8s.io", "v1beta2", "clusterqueues",
                                               "training-cq/pendingworkloads")
    assert summary["kind"] == "PendingWorkloadsSummary" and isinstance(summary["items"], list)
    tenant = client.CustomObjectsApi(sim_server.client("team-vision"))
    lq = tenant.get_namespaced_custom_object("visibility.kueue.x-k8s.io", "v1beta2", "team-vision", "localqueues",
                                             "training/pendingworkloads")
    assert lq["kind"] == "PendingWorkloadsSummary"


def test_metrics_are_served_without_a_token(sim_server):
    status, text = raw(sim_server, "/metrics")
    assert status == 200 and "DCGM_FI_DEV_GPU_UTIL" in text
    status, text = raw(sim_server, "/metrics/kube-state")
    assert status == 200 and "kube_node_status_condition" in text


def test_plain_http_kubeconfig_serves_python_clients(sim_server):
    api = client.CoreV1Api(sim_server.client("team-nlp", http=True))
    assert api.api_client.configuration.host.startswith("http://")
    assert api.read_namespaced_resource_quota("team-nlp-gpu", "team-nlp").spec.hard["pods"] == "60"


def test_tls_endpoint_uses_the_kubeconfig_ca(sim_server):
    ctx = ssl.create_default_context(cafile=str(sim_server.data_dir / "pki" / "ca.crt"))
    req = urllib.request.Request(sim_server.url + "/version",
                                 headers={"Authorization": f"Bearer {sim_server.admin_token}"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
        assert json.loads(resp.read())["major"] == "1"


@pytest.mark.parametrize("sim_server", ["cross-tenant-logs"], indirect=True)
def test_cross_tenant_logs_fault_lets_a_tenant_read_foreign_logs(sim_server):
    admin = core(sim_server)
    admin.create_namespaced_pod("team-nlp", gpu_pod("secret-job", seconds=1))
    wait_phase(admin, "team-nlp", "secret-job")
    tenant = core(sim_server, "team-vision")
    assert read_log(tenant, "secret-job", "team-nlp").strip()
    with pytest.raises(ApiException) as exc:
        tenant.list_namespaced_pod("team-nlp")
    assert exc.value.status == 403
    ev = [e for e in sim_server.audit_events() if e.get("objectRef", {}).get("subresource") == "log"][-1]
    assert ev["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert ev["objectRef"]["namespace"] == "team-nlp"


@pytest.mark.parametrize("sim_server", ["audit-gaps"], indirect=True)
def test_audit_gaps_fault_hides_quota_changes(sim_server):
    api = core(sim_server)
    api.patch_namespaced_resource_quota("team-nlp-gpu", "team-nlp",
                                        {"spec": {"hard": {"requests.nvidia.com/gpu": "10"}}})
    api.patch_namespaced_config_map("artifact-index", "team-nlp", {"data": {"x": "1"}})
    refs = [e.get("objectRef", {}) for e in sim_server.audit_events()]
    assert any(r.get("resource") == "configmaps" for r in refs)
    assert not any(r.get("resource") == "resourcequotas" for r in refs)


# -- in-process servers: behaviour that needs control over the state -----------------------------
def _in_process(tmp_path, history=50_000):
    """A bootstrapped state served in this process without controllers (tests drive pod status)."""
    from gpupoc.sim.bootstrap import bootstrap
    from gpupoc.sim.cluster import ClusterState, make_identities
    from gpupoc.sim.config import load_cluster_config
    from gpupoc.sim.store import Store

    state = ClusterState(config=load_cluster_config(), data_dir=tmp_path, store=Store(history=history))
    state.identities = make_identities(state.config)
    bootstrap(state)
    token = state.identity_for_context("admin")[0]
    return state, {"Authorization": f"Bearer {token}"}


def _running_pod(state, name="p", ns="team-vision"):
    pod = {"metadata": {"name": name, "namespace": ns},
           "spec": {"nodeName": "training-node-1", "containers": [{"name": "base", "image": "x"}]},
           "status": {"phase": "Running", "containerStatuses": [{"name": "base", "ready": True, "restartCount": 0,
                                                                 "image": "x", "imageID": "",
                                                                 "state": {"running": {}}}]}}
    return state.store.create("pods", pod)


def test_watch_from_a_too_old_resource_version_gets_an_expired_error_event(tmp_path):
    import asyncio

    import aiohttp
    from gpupoc.sim.server import start_server

    async def scenario():
        state, headers = _in_process(tmp_path, history=5)
        server = await start_server(state, run_controllers=False)
        try:
            async with aiohttp.ClientSession(headers=headers) as s:
                async with s.get(f"{server.url}/api/v1/pods?watch=true&resourceVersion=2") as r:
                    assert r.status == 200
                    line = json.loads(await r.content.readline())
        finally:
            await server.stop()
        return line

    ev = asyncio.run(scenario())
    assert ev["type"] == "ERROR"
    assert ev["object"]["code"] == 410 and ev["object"]["reason"] == "Expired"
    assert ev["object"]["message"].startswith("too old resource version: 2")


def test_a_handler_bug_answers_500_and_the_server_keeps_serving(tmp_path, monkeypatch):
    import asyncio

    import aiohttp
    from gpupoc.sim.api import app as app_mod
    from gpupoc.sim.server import start_server

    async def broken(ctx, spec):
        raise RuntimeError("boom")

    monkeypatch.setitem(app_mod._GENERIC, "list", broken)

    async def scenario():
        state, headers = _in_process(tmp_path)
        server = await start_server(state, run_controllers=False)
        try:
            async with aiohttp.ClientSession(headers=headers) as s:
                async with s.get(f"{server.url}/api/v1/namespaces/team-vision/configmaps") as r:
                    first = (r.status, await r.json())
                async with s.get(f"{server.url}/api/v1/namespaces/team-vision/configmaps/artifact-index") as r:
                    second = r.status
        finally:
            await server.stop()
        return first, second

    (status, body), second = asyncio.run(scenario())
    assert status == 500 and body["reason"] == "InternalError" and "boom" in body["message"]
    assert second == 200


def test_hundreds_of_watches_and_followed_logs_do_not_stall(tmp_path):
    import asyncio

    import aiohttp
    from gpupoc.sim.server import start_server

    async def scenario():
        state, headers = _in_process(tmp_path)
        _running_pod(state)
        log = state.logs.get("team-vision", "p", "base", create=True)
        log.append("hello")
        server = await start_server(state, run_controllers=False)
        conn = aiohttp.TCPConnector(limit=0)
        try:
            async with aiohttp.ClientSession(headers=headers, connector=conn) as s:
                rv = str(state.store.rv)

                async def one_watch():
                    url = f"{server.url}/api/v1/namespaces/team-nlp/configmaps?watch=true&resourceVersion={rv}"
                    async with s.get(url, params={"timeoutSeconds": "3600"}) as r:  # only the event ends it
                        return json.loads(await r.content.readline())["object"]["metadata"]["name"]

                async def one_follow():
                    url = f"{server.url}/api/v1/namespaces/team-vision/pods/p/log?follow=True&timestamps=True"
                    async with s.get(url) as r:
                        return (await r.text()).splitlines()

                watches = [asyncio.create_task(one_watch()) for _ in range(300)]
                follows = [asyncio.create_task(one_follow()) for _ in range(100)]
                await until("300 watches open", lambda: state.store.watch_count >= 300, step_seconds=60,
                            seen=lambda: f"{state.store.watch_count} open")
                state.store.create("configmaps", {"metadata": {"name": "ping", "namespace": "team-nlp"}})
                log.append("bye")
                pod = state.store.get("pods", "team-vision", "p")
                pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 0, "reason": "Completed"}}
                pod["status"]["phase"] = "Succeeded"
                state.store.update("pods", pod)
                log.close()
                names = await asyncio.gather(*watches)  # every stream answers (bench/sim_streams.py times it)
                lines = await asyncio.gather(*follows)
        finally:
            await server.stop()
        return names, lines

    names, lines = asyncio.run(scenario())
    assert names == ["ping"] * 300
    assert all(len(ls) == 2 and ls[0].endswith(" hello") and ls[1].endswith(" bye") for ls in lines)


def test_node_fail_and_recover_from_the_command_line(start_sim):
    import subprocess
    import sys

    sim = start_sim()
    api = core(sim)

    def gpupoc(*args):
        return subprocess.run([sys.executable, "-m", "gpupoc.cli", "sim", "node", *args,
                               "--kubeconfig", str(sim.kubeconfig)], capture_output=True, text=True, timeout=60)

    res = gpupoc("fail", "training-node-2")
    assert res.returncode == 0, res.stderr
    assert "node/training-node-2 failed" in res.stdout
    ready = [c for c in api.read_node("training-node-2").status.conditions if c.type == "Ready"][0]
    assert ready.status == "Unknown"
    res = gpupoc("recover", "training-node-2")
    assert res.returncode == 0, res.stderr
    ready = [c for c in api.read_node("training-node-2").status.conditions if c.type == "Ready"][0]
    assert ready.status == "True"
    res = gpupoc("fail", "no-such-node")
    assert res.returncode == 2 and 'nodes \\"no-such-node\\" not found' in res.stderr or "not found" in res.stderr
    tenant = subprocess.run([sys.executable, "-c", (
        "import json,urllib.request;"
        f"r=urllib.request.Request('{sim.http_url}/apis/sim.gpupoc.io/v1/nodes/training-node-1/fail',"
        f"data=b'{{}}',method='POST',headers={{'Authorization':'Bearer {sim.tokens['team-nlp']}'}});"
        "\ntry:\n urllib.request.urlopen(r)\nexcept Exception as e:\n print(e.code)")],
        capture_output=True, text=True, timeout=30)
    assert tenant.stdout.strip() == "403"


def test_server_dry_run_checks_quota_without_creating(sim_server):
    api = core(sim_server, "team-serving")
    ok = api.create_namespaced_pod("team-serving", gpu_pod("dry-1", gpus=1), dry_run="All")
    assert ok.metadata.name == "dry-1"
    with pytest.raises(ApiException) as exc:
        api.read_namespaced_pod("dry-1", "team-serving")
    assert exc.value.status == 404
    with pytest.raises(ApiException) as exc:
        api.create_namespaced_pod("team-serving", gpu_pod("dry-2", gpus=quota_gpus(api) + 1), dry_run="All")
    assert exc.value.status == 403 and "exceeded quota: team-serving-gpu" in json.loads(exc.value.body)["message"]


def test_delete_collection_of_pods_by_label(sim_server):
    api = core(sim_server)
    for i in range(3):
        api.create_namespaced_pod("team-nlp", gpu_pod(f"coll-{i}", seconds=60, labels={"batch": "coll"}))
    api.delete_collection_namespaced_pod("team-nlp", label_selector="batch=coll")
    # a stall guard: the pods go within their grace period
    wait_for("the collection's pods to go",
             lambda: [p.metadata.name for p in api.list_namespaced_pod("team-nlp", label_selector="batch=coll").items],
             lambda left: not left, step_seconds=120, poll=0.3)


def test_watch_with_label_selector_reports_leaving_the_selection_as_deleted(sim_server):
    api = core(sim_server)
    api.create_namespaced_config_map("team-nlp", {"metadata": {"name": "sel-1", "labels": {"tier": "gold"}}})
    seen: list[str] = []

    def consume():
        w = watch.Watch()
        for ev in w.stream(api.list_namespaced_config_map, "team-nlp", label_selector="tier=gold",
                           timeout_seconds=600):
            seen.append(ev["type"])
            if len(seen) == 3:
                w.stop()

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    wait_for("the watch's first event", lambda: list(seen), bool, step_seconds=60, poll=0.1)  # it is listening
    api.patch_namespaced_config_map("sel-1", "team-nlp", {"metadata": {"labels": {"tier": "silver"}}})
    api.patch_namespaced_config_map("sel-1", "team-nlp", {"metadata": {"labels": {"tier": "gold"}}})
    wait_for("the watch to see the selection left and joined again", lambda: list(seen), lambda v: len(v) >= 3,
             step_seconds=60, poll=0.1)
    assert seen == ["ADDED", "DELETED", "ADDED"]


def test_deleting_a_namespace_deletes_its_objects(sim_server):
    api = core(sim_server)
    api.create_namespace({"metadata": {"name": "scratch"}})
    api.create_namespaced_config_map("scratch", {"metadata": {"name": "c"}})
    api.create_namespaced_pod("scratch", gpu_pod("p", seconds=60))
    wait_phase(api, "scratch", "p", phases=("Running",))
    gone = json.loads(api.delete_namespace("scratch", _preload_content=False).data)
    assert gone["kind"] == "Namespace" and gone["status"]["phase"] == "Terminating"
    # a stall guard: the namespace's pods go within their grace period
    wait_for("the deleted namespace's pods to go",
             lambda: [p.metadata.name for p in api.list_namespaced_pod("scratch").items], lambda left: not left,
             step_seconds=120, poll=0.3)
    assert not api.list_namespaced_config_map("scratch").items
    with pytest.raises(ApiException) as exc:
        api.read_namespace("scratch")
    assert exc.value.status == 404


def test_watches_of_disconnected_clients_are_released(tmp_path):
    import asyncio

    import aiohttp
    from gpupoc.sim.server import start_server

    async def scenario():
        state, headers = _in_process(tmp_path)
        server = await start_server(state, run_controllers=False)
        try:
            s = aiohttp.ClientSession(headers=headers, connector=aiohttp.TCPConnector(limit=0))
            resps = [await s.get(f"{server.url}/api/v1/pods?watch=true") for _ in range(50)]
            await until("50 watches open", lambda: state.store.watch_count >= 50, step_seconds=60,
                        seen=lambda: f"{state.store.watch_count} open")
            opened = state.store.watch_count
            for r in resps:
                r.close()
            await s.close()
            await until("the closed watches released", lambda: state.store.watch_count == 0, step_seconds=60,
                        seen=lambda: f"{state.store.watch_count} still open")
            return opened, state.store.watch_count
        finally:
            await server.stop()

    assert asyncio.run(scenario()) == (50, 0)


def test_list_pagination_with_limit_and_continue(sim_server):
    api = core(sim_server)
    first = client.RbacAuthorizationV1Api(sim_server.client()).list_cluster_role_binding(limit=1)
    assert len(first.items) == 1 and first.metadata._continue and first.metadata.remaining_item_count >= 1
    rest = api.list_namespace(limit=2)
    names = [n.metadata.name for n in rest.items]
    while rest.metadata._continue:
        rest = api.list_namespace(limit=2, _continue=rest.metadata._continue)
        names += [n.metadata.name for n in rest.items]
    assert names == sorted(n.metadata.name for n in api.list_namespace().items)
    status, body = raw(sim_server, "/api/v1/namespaces?limit=1&continue=garbage", sim_server.admin_token)
    assert status == 400 and body["reason"] == "BadRequest"
