"""The EndpointSlice controller: one ``discovery.k8s.io/v1`` EndpointSlice per Service with a selector.

As kube-controller-manager's (kubernetes ``pkg/controller/endpointslice/reconciler.go``,
``staging/src/k8s.io/endpointslice/utils.go`` ``podToEndpoint``, ``ShouldPodBeInEndpoints``): every pod of the
Service's namespace matching its selector that has a pod IP and has not ended is an endpoint with its address,
``nodeName``, a ``targetRef`` to the pod and the conditions ``ready`` (the pod is Ready and not terminating),
``serving`` (Ready) and ``terminating`` (being deleted). The slice is named ``<service>-<5 chars>``, labelled
``kubernetes.io/service-name`` and ``endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io``,
owned by the Service, ``addressType`` IPv4, and carries the Service's ports with ``targetPort`` resolved
(a named port is looked up in the first matching pod's containers). A slice is written only when its content
changes; a Service's deletion deletes its slices. Writes are audited under ``endpointslice-controller``.
Which pod is ready and what a slice keeps are the reactors ``endpoint_ready`` and ``slice_endpoints``
(``sim/reactors.py``; the fault profiles ``endpoints-stale`` and ``readiness-ignored`` replace them).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from gpupoc.sim.admission import generate_name
from gpupoc.sim.api.service_defaults import selector_matches
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors
from gpupoc.sim.controllers.replicasets import owner_ref
from gpupoc.sim.behaviours import Behaviour, seeded
from gpupoc.sim.pod_state import TERMINAL
from gpupoc.sim.store import Conflict, json_copy

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
DISCOVERY = "/apis/discovery.k8s.io/v1"
ENDPOINTSLICE_CONTROLLER = actors.service_account("kube-system", "endpointslice-controller",
                                                  "kube-controller-manager",
                                                  "system:controller:endpointslice-controller")


def in_endpoints(pod: dict) -> bool:
    """``ShouldPodBeInEndpoints``: a pod IP, and not Succeeded or Failed."""
    status = pod.get("status") or {}
    return bool(status.get("podIP")) and status.get("phase") not in TERMINAL


def endpoint_of(pod: dict, ready: bool) -> dict:
    """``podToEndpoint``: the pod as an endpoint with its conditions (``ready``: ``reactors.endpoint_ready``)."""
    terminating = bool(pod["metadata"].get("deletionTimestamp"))
    meta = pod["metadata"]
    out = {"addresses": [pod["status"]["podIP"]],
           "conditions": {"ready": ready and not terminating, "serving": ready, "terminating": terminating},
           "targetRef": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}}
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        out["nodeName"] = node
    return out


def resolve_target_port(port: dict, pods: list[dict]) -> int | None:
    """A Service port's ``targetPort``: a number, or a container port's name looked up in the pods."""
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for pod in pods:
        for container in (pod.get("spec") or {}).get("containers") or []:
            for cp in container.get("ports") or []:
                if cp.get("name") == target:
                    return int(cp["containerPort"])
    return None


def slice_ports(service: dict, pods: list[dict]) -> list[dict]:
    out = []
    for port in (service.get("spec") or {}).get("ports") or []:
        number = resolve_target_port(port, pods)
        if number is None:
            continue
        item = {"port": number, "protocol": port.get("protocol", "TCP")}
        item["name"] = port.get("name", "")
        out.append(item)
    return out


def service_pods(state: ClusterState, service: dict) -> list[dict]:
    selector = {"matchLabels": (service.get("spec") or {}).get("selector") or {}}
    return [p for p in state.store.list("pods", service["metadata"]["namespace"])
            if in_endpoints(p) and selector_matches(selector, p["metadata"].get("labels"))]


def slices_of(state: ClusterState, service: dict) -> list[dict]:
    name = service["metadata"]["name"]
    return [s for s in state.store.list("endpointslices", service["metadata"]["namespace"])
            if (s["metadata"].get("labels") or {}).get(SERVICE_NAME) == name
            and (s["metadata"].get("labels") or {}).get(MANAGED_BY) == CONTROLLER_NAME]


@dataclass
class EndpointSliceController:
    """Keeps every Service's EndpointSlice equal to its ready and not-ready pods. Under the ``endpoints-lagging``
    behaviour a slice's change is written only once it has waited a seeded 1-3 s, as a controller with an
    ``--endpointslice-updates-batch-period`` and a slow informer does (``pkg/controller/endpointslice``)."""

    state: ClusterState
    pending: dict[tuple[str, str], tuple[str, float]] = field(default_factory=dict)  # service -> (change, since)

    def run_pass(self) -> int:
        changed = 0
        services = self.state.store.list("services")
        for service in services:
            if (service.get("spec") or {}).get("selector"):
                changed += self.sync(service)
        names = {(s["metadata"]["namespace"], s["metadata"]["name"]) for s in services}
        for eps in list(self.state.store.list("endpointslices")):
            labels = eps["metadata"].get("labels") or {}
            if labels.get(MANAGED_BY) == CONTROLLER_NAME and \
                    (eps["metadata"]["namespace"], labels.get(SERVICE_NAME)) not in names:
                self._delete(eps)
                changed += 1
        return changed

    def sync(self, service: dict) -> int:
        pods = service_pods(self.state, service)
        endpoints = [endpoint_of(p, self.state.reactors.endpoint_ready(p)) for p in pods]
        ports = slice_ports(service, pods)
        existing = slices_of(self.state, service)
        endpoints, ports = self.state.reactors.slice_endpoints(existing[0] if existing else None, endpoints, ports)
        endpoints.sort(key=lambda e: e["targetRef"]["name"])
        for extra in existing[1:]:
            self._delete(extra)
        if existing:
            eps = existing[0]
            if eps.get("endpoints") == endpoints and eps.get("ports") == ports:
                self.pending.pop(_key(service), None)
                return 0
            if self._lagging(service, endpoints, ports):
                return 0
            eps["endpoints"], eps["ports"] = endpoints, ports
            self.state.store.update("endpointslices", eps)
            actors.audit_write(self.state, ENDPOINTSLICE_CONTROLLER, "update", eps, resource="endpointslices",
                               api_path=DISCOVERY)
            return 1
        return self._create(service, endpoints, ports)

    def _lagging(self, service: dict, endpoints: list[dict], ports: list[dict]) -> bool:
        """Under ``endpoints-lagging``: True while this change has waited less than its delay."""
        if not self.state.behaves(Behaviour.ENDPOINTS_LAGGING):
            return False
        key, change = _key(service), json.dumps([endpoints, ports], sort_keys=True)
        noticed = self.pending.get(key)
        if noticed is None or noticed[0] != change:
            noticed = self.pending[key] = (change, time.monotonic())
        delay = seeded(self.state.behaviour_seed, "endpoints", key, change).uniform(*LAG_SECONDS)
        if time.monotonic() - noticed[1] < delay:
            return True  # the controller loop's next tick looks again
        self.pending.pop(key, None)
        return False

    def _create(self, service: dict, endpoints: list[dict], ports: list[dict]) -> int:
        meta = service["metadata"]
        body = {"metadata": {"name": generate_name(f"{meta['name'][:57]}-"), "namespace": meta["namespace"],
                             "generateName": f"{meta['name'][:57]}-",
                             "labels": {SERVICE_NAME: meta["name"], MANAGED_BY: CONTROLLER_NAME},
                             "ownerReferences": [owner_ref(service)]},
                "addressType": "IPv4", "endpoints": endpoints, "ports": ports}
        try:
            eps = self.state.store.create("endpointslices", json_copy(body))
        except Conflict:
            return 0
        actors.audit_write(self.state, ENDPOINTSLICE_CONTROLLER, "create", eps, resource="endpointslices",
                           api_path=DISCOVERY, code=201)
        return 1

    def _delete(self, eps: dict) -> None:
        self.state.store.delete("endpointslices", eps["metadata"]["namespace"], eps["metadata"]["name"])
        actors.audit_write(self.state, ENDPOINTSLICE_CONTROLLER, "delete", eps, resource="endpointslices",
                           api_path=DISCOVERY, request_object=actors.DELETE_OPTIONS)


LAG_SECONDS = (1.0, 3.0)  # endpoints-lagging: how long a slice's change waits


def _key(service: dict) -> tuple[str, str]:
    return service["metadata"]["namespace"], service["metadata"]["name"]


def ready_addresses(state: ClusterState, namespace: str, service: str, port_name: str | None) -> list[tuple[str, int]]:
    """The (address, port) of every ready endpoint of a Service's slices, for ``port_name`` (or its only port)."""
    return [(address, port) for address, port, _ in ready_endpoints(state, namespace, service, port_name)]


def ready_endpoints(state: ClusterState, namespace: str, service: str,
                    port_name: str | None) -> list[tuple[str, int, str | None]]:
    """(address, port, node) of every ready endpoint of a Service's slices, for ``port_name`` (or its only port)."""
    svc = state.store.get("services", namespace, service)
    if svc is None:
        return []
    out = []
    for eps in slices_of(state, svc):
        ports = eps.get("ports") or []
        port = next((p for p in ports if p.get("name", "") == (port_name or "")), None)
        if port is None and port_name is None and len(ports) == 1:
            port = ports[0]
        if port is None:
            continue
        for endpoint in eps.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready"):
                out.extend((a, int(port["port"]), endpoint.get("nodeName")) for a in endpoint.get("addresses") or [])
    return out


def unreachable(state: ClusterState, node: str | None) -> bool:
    """An endpoint on a node that failed (``nodes.fail_node``: power or network lost) answers nothing: a
    connection to it hangs as to a host that is gone. A node whose kubelet only stopped still serves."""
    return node is not None and node in state.node_failures
