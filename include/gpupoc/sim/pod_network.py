"""The simulated pod network: where on this host a pod's address is reached.

A pod IP of the simulated cluster is ``10.A.B.C`` (the nodes' ``podCIDR`` range); its process containers
listen on ``127.A.B.C``, an address of the loopback range every Linux host routes to itself, so that pods of
many replicas each bind their own ``containerPort`` and the API server's proxy, the kubelet's probes and
other pods reach each one by its address. ClusterIPs (``api/service_defaults.py``) are in the loopback range
too.

Several simulated clusters on one host each take a network of their own (``claim_network``): a slot of five
second octets, four for pod addresses (up to 1,024 nodes) and one for ClusterIPs, held by a lock file under
``NETWORKS_DIR`` while the cluster runs (a dead owner's slot is taken over). A cluster state that claimed none
(built in-process, as the unit tests do) uses ``Network()``: pods in ``10.244.0.0/14``, ClusterIPs in
``127.96.0.0/16``.
"""

from __future__ import annotations

import ipaddress
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from gpupoc.common.processes import process_running

BIND_ENV = "GPUPOC_POD_ADDRESS"  # the address a process container listens on (set by the kubelet)
NETWORKS_DIR = Path(tempfile.gettempdir()) / "gpupoc-sim-networks"
FIRST_OCTET, SLOT_OCTETS, SLOTS = 8, 5, 48   # slot k: octets 8 + 5k .. 8 + 5k + 4 (the last: ClusterIPs)


@dataclass(frozen=True)
class Network:
    """One cluster's addresses: pod IPs ``10.<pod_octet + n // 256>.<n % 256>.<seq>`` for its n-th node, and
    ClusterIPs in ``127.<service_octet>.0.0/16``."""

    pod_octet: int = 244
    service_octet: int = 96

    @property
    def service_cidr(self) -> ipaddress.IPv4Network:
        return ipaddress.ip_network(f"127.{self.service_octet}.0.0/16")

    def pod_ip(self, node_index: int, seq: int) -> str:
        return f"10.{self.pod_octet + node_index // 256}.{node_index % 256}.{2 + (seq - 1) % 253}"


def claim_network(directory: Path = NETWORKS_DIR) -> tuple[Network, Callable[[], None]]:
    """The lowest free slot's network for this process, and how to give it back."""
    directory.mkdir(parents=True, exist_ok=True)
    for slot in range(SLOTS):
        lock = directory / f"slot-{slot:02d}"
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                owner = int(lock.read_text() or "0")
            except (OSError, ValueError):
                continue
            if owner and not process_running(owner):
                lock.unlink(missing_ok=True)  # its cluster died without giving the slot back: take it over
                try:
                    fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                except FileExistsError:
                    continue
            else:
                continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        base = FIRST_OCTET + SLOT_OCTETS * slot
        return Network(pod_octet=base, service_octet=base + SLOT_OCTETS - 1), lambda: lock.unlink(missing_ok=True)
    raise OSError(f"all {SLOTS} simulated-cluster networks under {directory} are taken; stop a cluster "
                  "(gpupoc down) or remove the lock files of clusters that no longer run")


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
