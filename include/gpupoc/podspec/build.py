"""Build the pod a workload runs in, from the plan, as typed ``kubernetes.client`` models.

``build_pod`` is pure: the same arguments give the same pod (no clock, no cluster). The scheduler
adapter of the plan decorates it (``gpupoc.podspec.adapters``).
"""

from __future__ import annotations

from kubernetes.client import (
    Configuration,
    V1Container,
    V1EnvVar,
    V1ObjectMeta,
    V1Pod,
    V1PodSchedulingGate,
    V1PodSpec,
    V1ResourceRequirements,
    V1Toleration,
)

from gpupoc.plan.document import Plan
from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.kube.resources import GPU, GPUCORES, GPUMEM, GPUMEM_PERCENTAGE
from gpupoc.plan.model import Tenant, Workload
from gpupoc.podspec import labels as L
from gpupoc.podspec.adapters import decorate
from gpupoc.podspec.dra_share import container_claims, is_dra_share, pod_claims
from gpupoc.podspec.gangs import gang_of
from gpupoc.podspec.lifecycle import lifecycle_annotations

BASE_CONTAINER = "base"  # KubernetesPodOperator reads logs and exit codes of this container
# One configuration for every model built here: a model given none deep-copies the client's default, which
# was four fifths of the time to build a bulk shard's pods (some 6,000 copies for 334 pods).
_MODELS = Configuration()


def build_pod(workload: Workload, tenant: Tenant, plan: Plan, *, run_id: str, test_class: str,
              wave_gate: bool, name: str | None = None, priority_class: str | None = None,
              role: str = "wave") -> V1Pod:
    """The pod for one ``workload`` of ``tenant`` in a test class run.

    ``wave_gate`` holds the pod back with the scheduling gate ``gpupoc.io/wave-release`` until the pipeline
    releases the whole wave. ``priority_class`` overrides the workload's (a wave entry may do so). A replica
    of a multi-pod workload (``name`` is its wave item) joins its gang in the adapter's own grouping.
    """
    pool = plan.pool(workload.pool)
    pc = priority_class or workload.priority_class
    test_class = str(getattr(test_class, "value", test_class))
    pod_labels = {
        L.RUN_ID: L.safe_label_value(run_id),
        L.TEST_CLASS: L.safe_label_value(test_class),
        L.TENANT: tenant.name,
        L.WORKLOAD: workload.name,
        L.TASK_TYPE: workload.task_type,
        L.POOL: pool.name,
        L.PRIORITY_CLASS: pc,
        L.ROLE: L.safe_label_value(role.replace(":", ".")),
    }
    annotations = {L.RUN_ID_RAW: run_id, **lifecycle_annotations(workload)}
    if workload.expected_exit_code is not None:
        annotations[L.EXPECTED_EXIT] = str(workload.expected_exit_code)
    if workload.expected_reason:
        annotations[L.EXPECTED_REASON] = workload.expected_reason
    if name:
        annotations[L.ITEM] = name
    gang = gang_of(plan, test_class, name, run_id) if workload.is_gang else None
    share = is_dra_share(plan, workload)
    if gang is not None:
        annotations[L.GANG_KEY] = gang.key
    pod = V1Pod(
        local_vars_configuration=_MODELS,
        api_version="v1",
        kind="Pod",
        metadata=V1ObjectMeta(local_vars_configuration=_MODELS, name=name, namespace=tenant.namespace,
                              labels=pod_labels, annotations=annotations),
        spec=V1PodSpec(
            local_vars_configuration=_MODELS,
            containers=[V1Container(
                local_vars_configuration=_MODELS,
                name=BASE_CONTAINER,
                image=workload.image,
                command=list(workload.command) or None,
                args=list(workload.args) or None,
                env=workload_env(workload, tenant, run_id=run_id, test_class=test_class),
                resources=resources(workload, dra_share=share),
            )],
            resource_claims=pod_claims(workload) if share else None,
            restart_policy="Never",
            priority_class_name=pc,
            node_selector=dict(pool.node_selector),
            tolerations=[V1Toleration(local_vars_configuration=_MODELS, key=t.key, operator=t.operator,
                                      value=t.value, effect=t.effect, toleration_seconds=t.toleration_seconds)
                         for t in pool.tolerations] or None,
            scheduling_gates=([V1PodSchedulingGate(name=PIPELINE_GATE, local_vars_configuration=_MODELS)]
                              if wave_gate else None),
            active_deadline_seconds=workload.active_deadline_seconds,
        ),
    )
    return decorate(pod, plan.platform, tenant, workload, priority_class=pc, gang=gang)


def workload_env(workload: Workload, tenant: Tenant, *, run_id: str, test_class: str) -> list[V1EnvVar]:
    """The plan's env, plus WORKLOAD_* from the catalogue fields and GPUPOC_* context (the plan's env wins)."""
    env: dict[str, str] = {
        "WORKLOAD_DURATION_SECONDS": _num(workload.duration_seconds),
        "GPUPOC_RUN_ID": run_id,
        "GPUPOC_TEST_CLASS": test_class,
        "GPUPOC_TENANT": tenant.name,
        "GPUPOC_WORKLOAD": workload.name,
        "GPUPOC_TASK_TYPE": workload.task_type,
    }
    if workload.expected_exit_code is not None:
        env["WORKLOAD_EXIT_CODE"] = str(workload.expected_exit_code)
    if workload.gpu_util is not None:
        env["WORKLOAD_GPU_UTIL"] = _num(workload.gpu_util)
    if workload.gpu_mem_mib is not None:
        env["WORKLOAD_GPU_MEM_MIB"] = str(workload.gpu_mem_mib)
    env.update(workload.env)
    return [V1EnvVar(name=k, value=v, local_vars_configuration=_MODELS) for k, v in env.items()]


def resources(workload: Workload, dra_share: bool = False) -> V1ResourceRequirements:
    """Requests and limits; GPUs are requested and limited alike (extended resources must be equal).
    ``dra_share``: the GPUs are the pod's shared-card claim (``dra_share.py``), not ``nvidia.com/gpu``."""
    requests = {"cpu": workload.cpu, "memory": workload.memory_request}
    limits = {"memory": workload.memory_limit}
    if workload.cpu_limit:
        limits["cpu"] = workload.cpu_limit
    if dra_share:
        return V1ResourceRequirements(requests=requests, limits=limits, claims=container_claims(),
                                      local_vars_configuration=_MODELS)
    if workload.gpus:
        requests[GPU] = str(workload.gpus)
        limits[GPU] = str(workload.gpus)
    share = workload.vgpu
    if workload.gpus and share is not None:  # HAMi reads its vGPU resources from the limits
        for name, value in ((GPUMEM, share.memory_mib), (GPUMEM_PERCENTAGE, share.memory_percentage),
                            (GPUCORES, share.cores)):
            if value is not None:
                limits[name] = str(value)
    return V1ResourceRequirements(requests=requests, limits=limits, local_vars_configuration=_MODELS)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)
