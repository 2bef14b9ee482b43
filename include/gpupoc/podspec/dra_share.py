"""A vGPU share (a workload's ``vgpu.memory_mib``) as a DRA claim under ``platform.options.gpus: dra``.

Instead of ``nvidia.com/gpu`` (which would give whole cards), the pod claims ``gpus`` shared cards from a
ResourceClaimTemplate of the DeviceClass ``shared-gpu.gpupoc.io``, each request consuming the share's memory
of a card's ``memory`` capacity (consumable capacity, Kubernetes v1.37 beta). kube-scheduler allocates the claim
and records the device and what it consumed in the claim's ``status.allocation``. The templates are part of the
plan's manifests (``gpupoc cluster manifests``), one per shared workload in each tenant namespace.
"""

from __future__ import annotations

import math

from kubernetes.client import Configuration, CoreV1ResourceClaim, V1PodResourceClaim

from gpupoc.kube.dra import API_VERSION, SHARED_CLASS

SHARE_CLAIM = "gpu-share"  # the pod's claim name, and the template's request name
_MODELS = Configuration()


def is_dra_share(plan, workload) -> bool:
    """The workload asks a share of its GPUs and the plan's GPUs are DRA devices."""
    return bool(plan.platform.options.dra and workload.vgpu is not None and workload.gpus)


def template_name(workload) -> str:
    return f"{workload.name}-{SHARE_CLAIM}"


def share_memory(workload) -> str:
    """The share in whole GiB, rounded up (the shared device's request policy: steps of 1Gi)."""
    return f"{max(1, math.ceil(workload.vgpu.memory_mib / 1024))}Gi"


def share_template(workload, namespace: str, labels: dict[str, str] | None = None) -> dict:
    """The ResourceClaimTemplate a shared workload's pods claim from in ``namespace``."""
    exactly = {"deviceClassName": SHARED_CLASS, "allocationMode": "ExactCount", "count": workload.gpus,
               "capacity": {"requests": {"memory": share_memory(workload)}}}
    return {"apiVersion": API_VERSION, "kind": "ResourceClaimTemplate",
            "metadata": {"name": template_name(workload), "namespace": namespace, "labels": dict(labels or {})},
            "spec": {"spec": {"devices": {"requests": [{"name": SHARE_CLAIM, "exactly": exactly}]}}}}


def pod_claims(workload) -> list[V1PodResourceClaim]:
    return [V1PodResourceClaim(local_vars_configuration=_MODELS, name=SHARE_CLAIM,
                               resource_claim_template_name=template_name(workload))]


def container_claims() -> list[CoreV1ResourceClaim]:
    return [CoreV1ResourceClaim(local_vars_configuration=_MODELS, name=SHARE_CLAIM)]
