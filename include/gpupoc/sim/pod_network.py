"""The simulated pod network: where on this host a pod's address is reached.

A pod IP of the simulated cluster is ``10.A.B.C`` (the nodes' ``podCIDR`` range); its process containers
listen on ``127.A.B.C``, an address of the loopback range every Linux host routes to itself, so that pods of
many replicas each bind their own ``containerPort`` and the API server's proxy, the kubelet's probes and
other pods reach each one by its address. ClusterIPs (``api/service_defaults.py`` ``SERVICE_CIDR``) are in
the loopback range too.
"""

from __future__ import annotations

BIND_ENV = "GPUPOC_POD_ADDRESS"  # the address a process container listens on (set by the kubelet)


def host_address(pod_ip: str) -> str:
    """The loopback address where the pod ``pod_ip`` listens (an address already loopback stays)."""
    parts = pod_ip.split(".")
    if len(parts) != 4 or parts[0] == "127":
        return pod_ip
    return ".".join(["127", *parts[1:]])


def service_env(store, namespace: str) -> dict[str, str]:
    """``{SVC}_SERVICE_HOST``, ``{SVC}_SERVICE_PORT`` and ``{SVC}_SERVICE_PORT_{NAME}`` of the namespace's Services
    (``pkg/kubelet/envvars/envvars.go`` ``FromServices``)."""
    out: dict[str, str] = {}
    for svc in store.list("services", namespace):
        spec = svc.get("spec") or {}
        ip, ports = spec.get("clusterIP"), spec.get("ports") or []
        if not ip or ip == "None" or not ports:
            continue
        prefix = svc["metadata"]["name"].upper().replace("-", "_")
        out[f"{prefix}_SERVICE_HOST"] = ip
        out[f"{prefix}_SERVICE_PORT"] = str(ports[0]["port"])
        for port in ports:
            if port.get("name"):
                out[f"{prefix}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = str(port["port"])
    return out
