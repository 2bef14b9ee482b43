"""Keyword arguments for ``KubernetesPodOperator`` that submit exactly the pod ``build_pod`` describes."""

from __future__ import annotations

import copy
from typing import Any

from kubernetes.client import ApiClient

from gpupoc.plan.classes import TestClass
from gpupoc.plan.document import Plan
from gpupoc.plan.model import Tenant, Workload
from gpupoc.plan.replay import replay_span_seconds
from gpupoc.podspec.build import build_pod

STARTUP_MARGIN_SECONDS = 60


# Operator settings the pipeline relies on (the plan decides the pod and the startup timeout). Intervals are
# whole seconds (sent verbatim as timeoutSeconds). A gated wave waits pending for up to a minute while it is
# submitted, so its triggers check every 5 s, not every second: at 200 pods on 2 cores that leaves the CPU to
# the scheduler submitting the wave (ratio to direct submission 3.28 at 2 s, 2.95 at 5 s;
# bench/orchestration_overhead.py). Noticing a start late costs nothing: the pod's end is what the task waits for.
KPO_DEFAULTS: dict = {
    "deferrable": True,
    "startup_check_interval_seconds": 5,
    "poll_interval": 5,
    "do_xcom_push": False,
    "on_finish_action": "keep_pod",  # the pipeline deletes pods once their evidence is collected
    # a triggerer handing a trigger to another (one restarted or late with its heartbeat) cancels its own copy
    # as if a user had: deleting the pod then would end a running attempt (a service's load, a wave pod) for
    # nothing; the run's cleanup deletes every pod it left, a user's "mark failed" included
    "on_kill_action": "keep_pod",
    "durable": True,                 # Airflow 3.3's reattach_on_restart: a retry reuses the running pod
    "get_logs": True,
    "log_events_on_failure": True,
    # no event watch per pending pod in the triggerer (one watch per wave pod at 1,000 pods): the observer
    # records the platform's events for the evidence, and a failed pod's task still logs them
    "log_events_on_startup": False,
}


def identity_kwargs(plan: Plan, tenant: Tenant | None) -> dict[str, Any]:
    """How the operator authenticates: the tenant's kubeconfig context (admin's when ``tenant`` is None)."""
    p = plan.platform
    context = tenant.kube_context if tenant is not None else p.admin_context
    if p.in_cluster:
        return {"in_cluster": True, "kubernetes_conn_id": None}
    if p.kubernetes_conn_id:
        return {"kubernetes_conn_id": p.kubernetes_conn_id, "cluster_context": context}
    return {"kubernetes_conn_id": None, "config_file": str(plan.kubeconfig_path), "cluster_context": context}


def startup_timeout_seconds(plan: Plan, test_class: str, wave_gate: bool) -> int:
    """Pending time the operator tolerates: the longest acceptable wait, plus the gate's hold when gated (and a
    replayed wave's schedule: its last item is released that long after the first)."""
    hold = 0.0
    if wave_gate:
        hold = plan.test_class(test_class).gate_timeout_seconds + replay_span_seconds(plan, test_class)
    return int(plan.longest_acceptable_wait_seconds() + hold + STARTUP_MARGIN_SECONDS)


def kpo_kwargs(workload: Workload, tenant: Tenant, plan: Plan, *, run_id: str, test_class: TestClass | str,
               wave_gate: bool, name: str | None = None, priority_class: str | None = None, role: str = "wave",
               serializable: bool = False) -> dict[str, Any]:
    """Operator arguments for one workload, submitted as its tenant, deferrable, pod kept for evidence.

    The pod from ``build_pod`` travels as ``full_pod_spec`` (it carries the wave gate, which has no
    operator argument); the fields the operator has arguments for are passed as those too, with the same
    values, except that env lives only in ``env_vars`` (the operator concatenates env lists). ``serializable=True`` gives plain JSON values instead of ``kubernetes.client`` models (the pod as
    ``pod_template_dict``) so the result can travel through XCom into ``expand_kwargs``.
    ``on_finish_action="keep_pod"``: the pipeline deletes pods after it has collected their evidence.
    """
    tc = TestClass(test_class).value
    pod = build_pod(workload, tenant, plan, run_id=run_id, test_class=tc, wave_gate=wave_gate, name=name,
                    priority_class=priority_class, role=role)
    c = pod.spec.containers[0]
    kwargs: dict[str, Any] = {
        "namespace": pod.metadata.namespace,
        "name": pod.metadata.name or workload.name,
        "random_name_suffix": True,
        "image": c.image,
        "cmds": list(c.command or []),
        "arguments": list(c.args or []),
        "labels": dict(pod.metadata.labels),
        "annotations": dict(pod.metadata.annotations),
        "node_selector": dict(pod.spec.node_selector or {}),
        "priority_class_name": pod.spec.priority_class_name,
        "schedulername": pod.spec.scheduler_name,
        "active_deadline_seconds": pod.spec.active_deadline_seconds,
        **identity_kwargs(plan, tenant),
        "startup_timeout_seconds": startup_timeout_seconds(plan, tc, wave_gate),
        **KPO_DEFAULTS,
    }
    template = copy.deepcopy(pod)
    template.spec.containers[0].env = None
    if serializable:
        api = ApiClient()
        kwargs["env_vars"] = {e.name: e.value for e in c.env or []}
        kwargs["tolerations"] = api.sanitize_for_serialization(pod.spec.tolerations or [])
        kwargs["pod_template_dict"] = api.sanitize_for_serialization(template)
    else:
        kwargs["env_vars"] = list(c.env or [])
        kwargs["tolerations"] = list(pod.spec.tolerations or [])
        kwargs["container_resources"] = c.resources
        kwargs["full_pod_spec"] = template
    return kwargs


def pod_model(manifest: dict):
    """A pod manifest (plain JSON) as a ``kubernetes.client.V1Pod``."""
    import json

    class _Response:  # what ApiClient.deserialize reads
        data = json.dumps(manifest)

    return ApiClient().deserialize(_Response(), "V1Pod")


def pod_kwargs(manifest: dict, plan: Plan, tenant: Tenant) -> dict[str, Any]:
    """Operator arguments that submit exactly ``manifest`` (a pod the pipeline built, not a wave item's) as
    ``tenant``, pod kept for its log."""
    pod = pod_model(manifest)
    c = pod.spec.containers[0]
    template = copy.deepcopy(pod)
    template.spec.containers[0].env = None
    return {"namespace": pod.metadata.namespace, "name": pod.metadata.name, "random_name_suffix": True,
            "image": c.image, "cmds": list(c.command or []), "arguments": list(c.args or []),
            "labels": dict(pod.metadata.labels or {}), "annotations": dict(pod.metadata.annotations or {}),
            "node_selector": dict(pod.spec.node_selector or {}), "tolerations": list(pod.spec.tolerations or []),
            "env_vars": list(c.env or []), "container_resources": c.resources, "full_pod_spec": template,
            "priority_class_name": pod.spec.priority_class_name, "schedulername": pod.spec.scheduler_name,
            "startup_timeout_seconds": int(plan.longest_acceptable_wait_seconds() + STARTUP_MARGIN_SECONDS),
            **identity_kwargs(plan, tenant)}
