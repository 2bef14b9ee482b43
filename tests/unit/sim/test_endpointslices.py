"""Services and their EndpointSlices: a loopback ClusterIP, endpoints from the selected pods with the
controller's conditions, named target ports, and slices gone with their Service."""

from __future__ import annotations

import ipaddress

from gpupoc.sim.api.service_defaults import SERVICE_CIDR, on_update
from gpupoc.sim.controllers.endpointslices import MANAGED_BY, SERVICE_NAME, ready_addresses

from .service_helpers import NS, Controllers, create, deployment_body, make_ready, make_state


def service_body(name: str = "web", target: object = "http") -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": target}]}}


def serving_state(tmp_path, replicas: int = 3, faults=()):
    state = make_state(tmp_path, faults=faults)
    create(state, "deployments", deployment_body(replicas=replicas))
    ctl = Controllers(state)
    ctl.turn()
    return state, ctl, state.store.list("pods", NS)


def test_a_service_gets_a_loopback_cluster_ip_that_an_update_keeps(tmp_path):
    state = make_state(tmp_path)
    a = create(state, "services", service_body("a"))
    b = create(state, "services", service_body("b"))
    ips = {a["spec"]["clusterIP"], b["spec"]["clusterIP"]}
    assert len(ips) == 2 and all(ipaddress.ip_address(ip) in SERVICE_CIDR and ipaddress.ip_address(ip).is_loopback
                                 for ip in ips)
    assert a["spec"]["ports"][0]["protocol"] == "TCP" and a["spec"]["type"] == "ClusterIP"
    changed = {**a, "spec": {**a["spec"], "clusterIP": "", "clusterIPs": []}}
    on_update("services", a, changed)
    assert changed["spec"]["clusterIP"] == a["spec"]["clusterIP"]


def test_endpoints_carry_ready_serving_and_terminating_as_the_controller_sets_them(tmp_path):
    state, ctl, pods = serving_state(tmp_path)
    create(state, "services", service_body(target="http"))
    make_ready(state, pods[:2])
    make_ready(state, pods[2:], ready=False)
    pods[1]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    state.store.update("pods", pods[1])
    ctl.slices.run_pass()
    [eps] = state.store.list("endpointslices", NS)
    assert eps["metadata"]["labels"] == {SERVICE_NAME: "web", MANAGED_BY: "endpointslice-controller.k8s.io"}
    assert eps["ports"] == [{"port": 8080, "protocol": "TCP", "name": "http"}] and eps["addressType"] == "IPv4"
    by_pod = {e["targetRef"]["name"]: e["conditions"] for e in eps["endpoints"]}
    assert by_pod[pods[0]["metadata"]["name"]] == {"ready": True, "serving": True, "terminating": False}
    assert by_pod[pods[1]["metadata"]["name"]] == {"ready": False, "serving": True, "terminating": True}
    assert by_pod[pods[2]["metadata"]["name"]] == {"ready": False, "serving": False, "terminating": False}
    assert ready_addresses(state, NS, "web", "http") == [(pods[0]["status"]["podIP"], 8080)]


def test_a_pod_without_an_ip_or_ended_is_no_endpoint_and_a_slice_changes_only_with_its_pods(tmp_path):
    state, ctl, pods = serving_state(tmp_path, replicas=2)
    create(state, "services", service_body(target=8080))
    make_ready(state, pods[:1])
    ctl.slices.run_pass()
    [eps] = state.store.list("endpointslices", NS)
    assert [e["targetRef"]["name"] for e in eps["endpoints"]] == [pods[0]["metadata"]["name"]]
    rv = eps["metadata"]["resourceVersion"]
    assert ctl.slices.run_pass() == 0 and eps["metadata"]["resourceVersion"] == rv
    pods[0]["status"]["phase"] = "Failed"
    state.store.update("pods", pods[0])
    ctl.slices.run_pass()
    assert state.store.list("endpointslices", NS)[0]["endpoints"] == []


def test_deleting_a_service_deletes_its_slices(tmp_path):
    state, ctl, pods = serving_state(tmp_path, replicas=1)
    create(state, "services", service_body())
    ctl.slices.run_pass()
    assert state.store.list("endpointslices", NS)
    state.store.delete("services", NS, "web")
    ctl.slices.run_pass()
    assert not state.store.list("endpointslices", NS)


def test_endpoints_stale_keeps_a_deleted_pod_ready_in_the_slice(tmp_path):
    state = make_state(tmp_path, faults=["endpoints-stale"])
    create(state, "deployments", deployment_body(replicas=2))
    ctl = Controllers(state)
    ctl.turn()
    pods = state.store.list("pods", NS)
    create(state, "services", service_body())
    make_ready(state, pods)
    ctl.slices.run_pass()
    gone = pods[0]["metadata"]["name"]
    pods[0]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    state.store.update("pods", pods[0])
    ctl.slices.run_pass()
    state.store.delete("pods", NS, gone)
    ctl.slices.run_pass()
    [eps] = state.store.list("endpointslices", NS)
    stale = next(e for e in eps["endpoints"] if e["targetRef"]["name"] == gone)
    assert stale["conditions"]["ready"] is True, "the fault should keep the dead pod ready"
    assert (pods[0]["status"]["podIP"], 8080) in ready_addresses(state, NS, "web", "http")


def test_readiness_ignored_sends_traffic_to_an_unready_pod(tmp_path):
    for faults, expected in (((), False), (("readiness-ignored",), True)):
        state = make_state(tmp_path / str(bool(faults)), faults=faults)
        create(state, "deployments", deployment_body(replicas=1))
        ctl = Controllers(state)
        ctl.turn()
        [pod] = state.store.list("pods", NS)
        create(state, "services", service_body())
        make_ready(state, [pod], ready=False)
        ctl.slices.run_pass()
        [eps] = state.store.list("endpointslices", NS)
        assert eps["endpoints"][0]["conditions"]["ready"] is expected


def test_a_lost_node_s_replica_leaves_the_ready_endpoints_but_stays_under_endpoints_stale(tmp_path):
    from gpupoc.sim.controllers.endpointslices import ready_endpoints, unreachable
    from gpupoc.sim.controllers.nodes import fail_node
    from gpupoc.sim.faults import Fault

    for faults, stays in ((frozenset(), False), (frozenset({Fault.ENDPOINTS_STALE}), True)):
        state, ctl, pods = serving_state(tmp_path / str(stays), replicas=1, faults=faults)
        create(state, "services", service_body())
        make_ready(state, pods)
        ctl.slices.run_pass()
        [(_, _, node)] = ready_endpoints(state, NS, "web", "http")
        assert node == "inference-node-1" and not unreachable(state, node)
        fail_node(state, node)  # the node controller marks its pods not ready at once
        ctl.slices.run_pass()
        left = ready_endpoints(state, NS, "web", "http")
        assert bool(left) is stays, (faults, left)
        assert unreachable(state, node), "a lost node's endpoint answers nothing, ready or not"


def test_under_endpoints_lagging_a_slice_follows_its_pods_only_after_its_delay(tmp_path, monkeypatch):
    import time

    from gpupoc.sim.behaviours import Behaviour
    from gpupoc.sim.controllers import endpointslices as E

    state, ctl, pods = serving_state(tmp_path, replicas=1)
    state.behaviours = frozenset({Behaviour.ENDPOINTS_LAGGING})
    create(state, "services", service_body())
    ctl.slices.run_pass()  # the slice is created at once; changes to it lag
    make_ready(state, pods)
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    ctl.slices.run_pass()
    assert E.ready_addresses(state, NS, "web", "http") == [], "not yet: the change waits"
    now[0] += E.LAG_SECONDS[1]
    ctl.slices.run_pass()
    assert E.ready_addresses(state, NS, "web", "http") == [(pods[0]["status"]["podIP"], 8080)]
