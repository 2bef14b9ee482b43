"""What a GPU DRA driver publishes for a KWOK GPU node, as pure functions (``resource.k8s.io/v1``, Kubernetes
v1.37; attribute names after NVIDIA's DRA driver for GPUs: ``type``, ``uuid``, ``productName``, ``brand``,
``architecture``, ``cudaComputeCapability``, ``driverVersion``, capacity ``memory``).

Per GPU ``i`` of a node, in one pool named after the node:
- ``gpu-<i>``: the whole card (``type: gpu``), capacity ``memory``; it consumes the card's whole counter set;
- ``gpu-<i>-mig-<profile>-<k>`` (MIG-capable models): MIG-like partitions (``type: mig``, ``profile``,
  ``parentUUID``) that consume compute and memory slices of the same counter set (partitionable devices);
- ``gpu-<i>-shared``: the card shared by memory (``type: shared``), ``allowMultipleAllocations`` with a
  ``memory`` capacity each claim consumes a part of (consumable capacity); its first share takes the whole
  counter set, so a shared card is neither given whole nor partitioned.

A ResourceSlice holds either counter sets or devices (API validation), at most 8 counter sets and 64 devices
that consume counters: the pool is one counter slice per 8 cards and one device slice per card."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from gpupoc.controlplane.exporter_gpus import GPU_MODELS, model_key
from gpupoc.kube.dra import API_VERSION, DRIVER, MIG_CLASS, SHARED_CLASS, WHOLE_CLASS  # noqa: F401 (the names)

EXTENDED_RESOURCE = "nvidia.com/gpu"
COMPUTE_SLICES, MEMORY_SLICES = 7, 8  # a MIG-capable card: 7 compute slices, 8 memory slices
COUNTER_SETS_PER_SLICE = 8
SHARE_DEFAULT_GI = 10  # what a shared-card claim consumes when it names no memory
_UUID_NS = uuid.UUID("5d0e3c1a-7b7e-4a55-9a4e-3f1f0d2c8b61")


@dataclass(frozen=True)
class GpuModel:
    """What the driver says of one model: product, architecture, compute capability, memory (GiB), MIG."""

    product: str
    architecture: str
    compute_capability: str
    memory_gi: int
    mig: bool


@dataclass(frozen=True)
class MigProfile:
    """A MIG-like partition: compute slices of 7, memory slices of 8, and how many fit on one card."""

    name: str  # e.g. 1g.10gb
    compute: int
    memory_slices: int
    instances: int


MODELS = {
    "nvidia h100 80gb hbm3": GpuModel("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", 80, True),
    "nvidia l40s": GpuModel("NVIDIA L40S", "Ada Lovelace", "8.9.0", 45, False),
}
MIG_PROFILES = (MigProfile("1g.10gb", 1, 1, 7), MigProfile("3g.40gb", 3, 4, 2))


def gpu_model(gpu_model_name: str) -> GpuModel:
    """The plan pool's ``gpu_model`` as the driver describes it; an unknown model gets its memory from the
    exporter's table when known (else 0 GiB) and no MIG."""
    key = model_key(gpu_model_name)
    if key in MODELS:
        return MODELS[key]
    spec = GPU_MODELS.get(key)
    return GpuModel(gpu_model_name, "unknown", "0.0.0", (spec.memory_mib // 1024) if spec else 0, False)


def _str(v: str) -> dict:
    return {"string": v}


def _counter_set_name(i: int) -> str:
    return f"gpu-{i}-counters"


def _card_counters(model: GpuModel) -> dict:
    return {"compute-slices": {"value": str(COMPUTE_SLICES)}, "memory-slices": {"value": str(MEMORY_SLICES)},
            "memory": {"value": f"{model.memory_gi}Gi"}}


def _gpu_uuid(node: str, i: int) -> str:
    return f"GPU-{uuid.uuid5(_UUID_NS, f'{node}/{i}')}"


def _attributes(node: str, i: int, model: GpuModel, kind: str) -> dict:
    return {"type": _str(kind), "uuid": _str(_gpu_uuid(node, i)), "productName": _str(model.product),
            "brand": _str("Nvidia"), "architecture": _str(model.architecture),
            "cudaComputeCapability": {"version": model.compute_capability}, "index": {"int": i}}


def whole_device(node: str, i: int, model: GpuModel) -> dict:
    return {"name": f"gpu-{i}", "attributes": _attributes(node, i, model, "gpu"),
            "capacity": {"memory": {"value": f"{model.memory_gi}Gi"}},
            "consumesCounters": [{"counterSet": _counter_set_name(i), "counters": _card_counters(model)}]}


def mig_devices(node: str, i: int, model: GpuModel) -> list[dict]:
    """Every placement of every profile (the allocator's counters keep them from overlapping)."""
    out = []
    for p in MIG_PROFILES if model.mig else ():
        memory = f"{model.memory_gi * p.memory_slices // MEMORY_SLICES}Gi"
        for k in range(p.instances):
            attrs = {**_attributes(node, i, model, "mig"), "profile": _str(p.name),
                     "parentUUID": _str(_gpu_uuid(node, i)),
                     "uuid": _str(f"MIG-{uuid.uuid5(_UUID_NS, f'{node}/{i}/{p.name}/{k}')}")}
            out.append({"name": f"gpu-{i}-mig-{p.name.replace('.', '-')}-{k}", "attributes": attrs,
                        "capacity": {"memory": {"value": memory}},
                        "consumesCounters": [{"counterSet": _counter_set_name(i), "counters": {
                            "compute-slices": {"value": str(p.compute)},
                            "memory-slices": {"value": str(p.memory_slices)}, "memory": {"value": memory}}}]})
    return out


def shared_device(node: str, i: int, model: GpuModel) -> dict:
    policy = {"default": f"{SHARE_DEFAULT_GI}Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}
    return {"name": f"gpu-{i}-shared", "attributes": _attributes(node, i, model, "shared"),
            "allowMultipleAllocations": True,
            "capacity": {"memory": {"value": f"{model.memory_gi}Gi", "requestPolicy": policy}},
            "consumesCounters": [{"counterSet": _counter_set_name(i), "counters": _card_counters(model)}]}


def _slice(node: str, node_uid: str | None, name: str, count: int, spec: dict) -> dict:
    md: dict = {"name": name, "labels": {"gpupoc.io/dra-node": node}}
    if node_uid:  # a driver's slices go with their node (garbage collection)
        md["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid,
                                  "controller": True}]
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": md,
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                  "resourceSliceCount": count}, **spec}}


def node_slices(node: str, gpus: int, gpu_model_name: str, node_uid: str | None = None) -> list[dict]:
    """The node's pool: its counter slices, then one device slice per card."""
    model = gpu_model(gpu_model_name)
    groups = [range(s, min(s + COUNTER_SETS_PER_SLICE, gpus)) for s in range(0, gpus, COUNTER_SETS_PER_SLICE)]
    count = len(groups) + gpus
    out = [_slice(node, node_uid, f"{node}-{DRIVER}-counters-{g}", count, {"sharedCounters": [
        {"name": _counter_set_name(i), "counters": _card_counters(model)} for i in grp]})
        for g, grp in enumerate(groups)]
    for i in range(gpus):
        devices = [whole_device(node, i, model), *mig_devices(node, i, model), shared_device(node, i, model)]
        out.append(_slice(node, node_uid, f"{node}-{DRIVER}-gpu-{i}", count, {"devices": devices}))
    return out


def _class(name: str, kind: str, extended: str | None = None) -> dict:
    expr = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == '{kind}'"
    spec: dict = {"selectors": [{"cel": {"expression": expr}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def device_classes() -> list[dict]:
    """Whole cards (serving ``nvidia.com/gpu`` too), MIG-like partitions, shared cards."""
    return [_class(WHOLE_CLASS, "gpu", EXTENDED_RESOURCE), _class(MIG_CLASS, "mig"), _class(SHARED_CLASS, "shared")]
