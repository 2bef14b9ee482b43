"""KWOK nodes from the plan's pools: each pool's ``nodes`` named as the simulated cluster names them
(``<pool>-node-<i>``, or the pool's own ``node_names``), its ``node_selector`` labels, the GPU product label from
``gpu_model``, ``nvidia.com/gpu`` capacity, and a taint for each NoSchedule/NoExecute toleration the pool's pods
carry (system tolerations under ``node.kubernetes.io/`` excepted: the node lifecycle controller sets those)."""

from __future__ import annotations

from gpupoc.kube.labels import KWOK_ANNOTATION
from gpupoc.kube.resources import GPU

PRODUCT_LABEL = "nvidia.com/gpu.product"  # GPU feature discovery's label: the model with '-' for spaces
SYSTEM_TAINT_PREFIX = "node.kubernetes.io/"


def node_names(pool) -> list[str]:
    """The pool's node names: those the plan lists, then ``<pool>-node-<i>`` (the simulated cluster's naming,
    ``gpupoc.sim.config.Pool.node_names``) up to ``pool.nodes``."""
    names = list(pool.node_names)[: pool.nodes]
    i = 1
    while len(names) < pool.nodes:
        candidate = f"{pool.name}-node-{i}"
        if candidate not in names:
            names.append(candidate)
        i += 1
    return names


def gpu_product(gpu_model: str) -> str:
    """``NVIDIA H100 80GB HBM3`` -> ``NVIDIA-H100-80GB-HBM3``."""
    return "-".join(gpu_model.split())


def taints(pool) -> list[dict]:
    out: list[dict] = []
    for t in pool.tolerations:
        if not t.key or t.key.startswith(SYSTEM_TAINT_PREFIX) or t.effect not in ("NoSchedule", "NoExecute"):
            continue
        taint = {"key": t.key, "value": t.value if t.operator == "Equal" and t.value else "present",
                 "effect": t.effect}
        if taint not in out:
            out.append(taint)
    return out


def node_object(pool, name: str) -> dict:
    """One KWOK Node: kwok fills its conditions, addresses and heartbeats (stages.py)."""
    capacity = {"cpu": "96", "memory": "1Ti", "pods": "110", "ephemeral-storage": "1843Gi",
                GPU: str(pool.gpus_per_node)}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "type": "kwok", PRODUCT_LABEL: gpu_product(pool.gpu_model),
              "nvidia.com/gpu.count": str(pool.gpus_per_node), "gpupoc.io/pool": pool.name,
              **pool.node_selector}
    spec: dict = {}
    if taints(pool):
        spec["taints"] = taints(pool)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels,
                         "annotations": {KWOK_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"}},
            "spec": spec,
            "status": {"capacity": capacity, "allocatable": dict(capacity),
                       "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux"}}}


def node_objects(pools) -> list[dict]:
    """Every pool's nodes, in plan order."""
    return [node_object(p, n) for p in pools for n in node_names(p)]
