"""DRA GPUs on the real control plane (``gpupoc controlplane up --dra``): the KWOK GPU nodes lose their device
plugin's ``nvidia.com/gpu`` capacity, and each publishes the ResourceSlices a GPU DRA driver would
(``dra_slices.py``), with the DeviceClasses that select whole cards, MIG-like partitions and shared cards.
kube-scheduler's DynamicResources plugin then allocates the claims; a pod asking ``nvidia.com/gpu`` is served
from whole cards (the class's ``extendedResourceName``). Also the claim builders the tests and bench use."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import yaml

from gpupoc.controlplane.dra_slices import DRIVER, WHOLE_CLASS, device_classes, node_slices
from gpupoc.controlplane.nodes import node_names
from gpupoc.kube.resources import GPU

TOLERATED = ("kwok.x-k8s.io/node", GPU)


def dra_nodes(nodes: list[dict]) -> list[dict]:
    """The nodes without ``nvidia.com/gpu`` in capacity and allocatable: kube-scheduler gives a pod's
    ``nvidia.com/gpu`` to DRA only on nodes that do not advertise it (NodeResourcesFit)."""
    out = []
    for n in nodes:
        status = dict(n.get("status") or {})
        for key in ("capacity", "allocatable"):
            status[key] = {k: v for k, v in (status.get(key) or {}).items() if k != GPU}
        out.append({**n, "status": status})
    return out


def dra_objects(pools, node_uids: dict[str, str] | None = None) -> list[dict]:
    """The DeviceClasses and every pool node's ResourceSlices (owned by the node when its UID is known)."""
    uids = node_uids or {}
    slices = [s for p in pools for n in node_names(p) for s in node_slices(n, p.gpus_per_node, p.gpu_model,
                                                                            uids.get(n))]
    return [*device_classes(), *slices]


def publish_dra(cp, pools) -> float:
    """Apply the classes and slices (server-side, so a resumed start changes nothing); the seconds it took."""
    t0 = time.monotonic()
    listed = json.loads(cp.run_kubectl("get", "nodes", "-o", "json").stdout)["items"]
    uids = {n["metadata"]["name"]: n["metadata"]["uid"] for n in listed}
    objects = dra_objects(pools, uids)
    path = cp.layout.config / "dra.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")
    cp.run_kubectl("apply", "--server-side", "--field-manager", DRIVER, "-f", str(path), timeout=300)
    return time.monotonic() - t0


def claim_template(name: str, namespace: str, device_class: str = WHOLE_CLASS, count: int = 1,
                   memory: str | None = None, selector: str | None = None) -> dict:
    """A ResourceClaimTemplate asking ``count`` devices of a class (``memory``: the share of a shared card)."""
    exactly: dict = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    if memory:
        exactly["capacity"] = {"requests": {"memory": memory}}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def claim_pod(name: str, namespace: str, template: str, labels: dict | None = None, node: str | None = None) -> dict:
    """A pod whose one container uses the claim made from ``template`` (tolerating the GPU nodes' taints;
    ``node``: only that node, by its hostname label)."""
    spec: dict = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                  "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
                  "tolerations": [{"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in TOLERATED]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                            "labels": labels or {}}, "spec": spec}


@dataclass(frozen=True)
class AllocatedDevice:
    """One device of a claim's ``status.allocation``: its node (the pool) and device, and what it consumed."""

    claim: str
    pool: str
    device: str
    consumed: dict


def allocated_devices(claim: dict) -> list[AllocatedDevice]:
    """The devices kube-scheduler allocated to a claim (none while it is pending)."""
    alloc = (claim.get("status") or {}).get("allocation") or {}
    name = claim["metadata"]["name"]
    return [AllocatedDevice(name, r["pool"], r["device"], r.get("consumedCapacity") or {})
            for r in (alloc.get("devices") or {}).get("results") or [] if r.get("driver") == DRIVER]

