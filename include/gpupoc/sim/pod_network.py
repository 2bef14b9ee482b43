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
