"""Fault recovery: provoke a failure (non-zero exit, missing image, OOM kill, node failure, hang past the
task timeout), then record its evidence chain (``gpupoc.classes.fault_recovery.fault_record``).

Node failure injection is pluggable (``gpupoc.classes.fault_recovery.injectors``): the simulator's admin endpoint, an
operator-supplied command, a NoExecute taint, or ``kubectl cordon`` + ``drain`` (scenario ``node_drain``: an
eviction, not a failure); every injection is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.exceptions import ApiError, GpupocError
from gpupoc.classes.fault_recovery.fault_record import (  # noqa: F401 - re-exported for the DAGs
    IMAGE_ERRORS,
    P1,
    WARNING_SCENARIOS,
    AlertSource,
    FaultContext,
    FaultRecord,
    Scenario,
    read_log,
    read_pod,
    relevant_alerts,
    build_record,
    container_state,
    disruption_of,
    prometheus_alerts,
    receiver_alerts,
    wait_released,
)
from gpupoc.classes.fault_recovery.injectors import (  # noqa: F401 - re-exported for the DAGs
    CommandInjector,
    Injection,
    NodeInjector,
    SimNodeInjector,
    TaintInjector,
    build_injector,
    kubectl_drain_injector,
)
from gpupoc.pipeline.k8s import KubeCaller

NODE_SCENARIOS = (Scenario.NODE_FAILURE, Scenario.NODE_DRAIN)  # a node injection ends the pod


def failure_seen(scenario: Scenario, pod: dict | None) -> bool:
    """True once the pod shows the failure the scenario provokes."""
    if pod is None:
        return scenario in (*NODE_SCENARIOS, Scenario.HANG_TIMEOUT)
    phase = (pod.get("status") or {}).get("phase")
    kind, reason, _, code, _ = container_state(pod)
    if scenario is Scenario.MISSING_IMAGE:
        return reason in IMAGE_ERRORS
    if scenario is Scenario.OOM_KILL:
        return reason == "OOMKilled"
    if scenario is Scenario.NON_ZERO_EXIT:
        return phase == "Failed" or (code not in (None, 0)) or reason == "CrashLoopBackOff"
    return phase in ("Failed", "Succeeded") or bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _wait(c: KubeCaller, ns: str, name: str, until: Callable[[dict | None], bool], timeout_s: float,
          poll_s: float, seen: list[dict] | None = None) -> tuple[dict | None, bool]:
    """Poll the pod until ``until(pod)``: (the pod, True), or (its last read, False) after ``timeout_s``;
    ``seen`` keeps the last read that found the pod."""
    deadline = time.monotonic() + timeout_s
    pod = None
    while True:
        pod = read_pod(c, ns, name)
        if pod is not None and seen is not None:
            seen[:] = [pod]
        if until(pod):
            return pod, True
        if time.monotonic() >= deadline:
            return pod, False
        time.sleep(poll_s)


def run_scenario(ctx: FaultContext, scenario: Scenario, manifest: dict, *, fail_timeout_s: float = 60.0,
                 task_timeout_s: float = 10.0, run_before_fail_s: float = 1.0, airflow_retries: int | None = None,
                 cleanup: bool = True, name: str | None = None, node: str | None = None,
                 recover_after_s: float | None = 0.0, observe_s: float = 0.0) -> FaultRecord:
    """Submit ``manifest`` as the tenant, provoke ``scenario``, and record the evidence chain.

    missing_image and hang end the way the operator's fail-fast and execution timeout end them: the pipeline
    deletes the pod (recorded as the recovery action), missing_image after watching the pull errors for up to
    ``observe_s``. node_failure fails ``node`` (default: the pod's node) ``run_before_fail_s`` after the pod
    started, through ``ctx.injector``, and recovers it ``recover_after_s`` after the injection (None: never).
    ``name`` is the plan's scenario name (default: the kind).
    """
    ns = ctx.namespace
    injections: list[Injection] = []
    submitted = utcnow()
    r = ctx.tenant.call("POST", f"/api/v1/namespaces/{ns}/pods", body=manifest)
    if not r.ok:
        raise ApiError(r.status, r.body if isinstance(r.body, dict) else r.text,
                       f"{scenario.value}: POST pods as {ctx.tenant_name} "
                       f"({manifest.get('metadata', {}).get('name')!r}; fix the manifest or the tenant's quota)")
    pod_name = r.body["metadata"]["name"]
    failed_node = ""
    pv = None
    rec: FaultRecord | None = None
    try:
        pv = _provoke(ctx, scenario, pod_name, injections, fail_timeout_s, task_timeout_s, run_before_fail_s,
                      node, observe_s)
        failed_node = pv.node if scenario in NODE_SCENARIOS else ""
        why = {Scenario.MISSING_IMAGE: "fail-fast on the image pull error",
               Scenario.HANG_TIMEOUT: f"task timeout of {task_timeout_s:g}s reached"}.get(scenario)
        action = (lambda: _pipeline_delete(ctx, pod_name, why)) if pv.ok and why else None
        rec = build_record(ctx, scenario, pod_name, trigger=_trigger(scenario, manifest, task_timeout_s,
                                                                 getattr(ctx.injector, "method", "")),
                           injections=injections, failure_at=pv.failed_at or utcnow(), pod=pv.pod,
                           submitted_at=rfc3339(submitted), log_during=pv.log_during, airflow_retries=airflow_retries,
                           release_action=action, held_at_failure=pv.held)
        ok = pv.ok
        rec.disruption = rec.disruption or disruption_of(pv.last_seen)
        if name:
            rec.scenario = name
        if not ok:
            rec.verified = False
            rec.reason = "; ".join(x for x in (f"the failure was not observed within {fail_timeout_s:g}s",
                                               rec.reason) if x)
        return rec
    finally:
        if failed_node and ctx.injector is not None and recover_after_s is not None:
            since = (utcnow() - pv.failed_at).total_seconds() if pv.failed_at else 0.0
            time.sleep(max(recover_after_s - since, 0.0))
            done = ctx.injector.recover(failed_node)
            if rec is not None and done is not None:  # the node's recovery is part of the record's recovery
                rec.injections = json.dumps([*json.loads(rec.injections), done.model_dump()])
                rec.recovery_action = "; ".join(x for x in (rec.recovery_action, f"{done.action} node {failed_node} "
                                                 f"by {done.by} at {done.at}" + ("" if done.ok else " (FAILED)")) if x)
        if cleanup:
            ctx.tenant.call("DELETE", f"/api/v1/namespaces/{ns}/pods/{pod_name}", body={"gracePeriodSeconds": 0})


def _trigger(scenario: Scenario, manifest: dict, task_timeout_s: float, method: str = "") -> str:
    image = ((manifest.get("spec") or {}).get("containers") or [{}])[0].get("image")
    if scenario is Scenario.NODE_FAILURE and method == "taint":
        return "the pod's node gets a NoExecute taint mid-run (its pods are evicted as a lost node's; the node " \
               "itself stays up)"
    return {
        Scenario.NON_ZERO_EXIT: "workload exits with a non-zero code",
        Scenario.MISSING_IMAGE: f"pod image {image!r} does not exist",
        Scenario.OOM_KILL: "workload allocates memory beyond its limit",
        Scenario.NODE_FAILURE: "the pod's node fails mid-run",
        Scenario.NODE_DRAIN: "the pod's node is drained mid-run (planned maintenance: an eviction through the "
                             "Eviction API, not a failure)",
        Scenario.HANG_TIMEOUT: f"workload hangs past the task timeout of {task_timeout_s:g}s",
    }[scenario]


@dataclass
class Provoked:
    pod: dict | None
    ok: bool
    log_during: tuple[bool, str] | None = None
    node: str = ""
    failed_at: datetime | None = None  # when the failure began (finishedAt, the injection), if known
    held: int | None = None  # GPUs held just before an injected failure
    last_seen: dict | None = None  # the pod as last seen before it was gone (an injection's eviction)


def _held(ctx: FaultContext, name: str) -> int | None:
    values = [v for v in (p(ctx.namespace, name) for p in ctx.gpu_probes.values()) if v is not None]
    return max(values) if values else None


def _provoke(ctx: FaultContext, scenario: Scenario, name: str, injections: list[Injection], fail_timeout_s: float,
             task_timeout_s: float, run_before_fail_s: float, node: str | None = None,
             observe_s: float = 0.0) -> Provoked:
    """Wait for (or cause) the failure."""
    ns = ctx.namespace
    began = utcnow()
    if scenario not in (*NODE_SCENARIOS, Scenario.HANG_TIMEOUT):
        pod, ok = _wait(ctx.admin, ns, name, lambda p: failure_seen(scenario, p), fail_timeout_s, ctx.poll_s)
        if ok and scenario is Scenario.MISSING_IMAGE and observe_s > 0:  # let the back-off show, as a user sees it
            pod, _ = _wait(ctx.admin, ns, name, lambda p: container_state(p)[1] == "ImagePullBackOff", observe_s,
                           ctx.poll_s)
        if ok and scenario is Scenario.MISSING_IMAGE and ctx.alerts is not None and ctx.alert_wait_s > 0:
            # the stuck pod stays until operators were alerted (or alert_wait_s): deleting it first would
            # cancel the pending alert, and the record would say operators saw nothing
            relevant_alerts(ctx, began, name, ((pod or {}).get("spec") or {}).get("nodeName") or "")
        finished = _finished_at(pod) if scenario is not Scenario.MISSING_IMAGE else None
        return Provoked(pod, ok, read_log(ctx.tenant, ns, name), ((pod or {}).get("spec") or {}).get("nodeName") or "",
                        finished)
    pod, ok = _wait(ctx.admin, ns, name, lambda p: (p or {}).get("status", {}).get("phase") == "Running",
                    fail_timeout_s, ctx.poll_s)
    if not ok:
        phase = ((pod or {}).get("status") or {}).get("phase")
        raise GpupocError(f"{scenario.value}: pod {ns}/{name} never ran within {fail_timeout_s:g}s (phase {phase}); "
                          "free capacity in its pool or raise fail_timeout_s")
    ran_on = pod["spec"]["nodeName"]
    time.sleep(run_before_fail_s if scenario in NODE_SCENARIOS else task_timeout_s)
    log_during = read_log(ctx.tenant, ns, name)
    if scenario is Scenario.HANG_TIMEOUT:
        pod = read_pod(ctx.admin, ns, name)
        return Provoked(pod, not failure_seen(Scenario.HANG_TIMEOUT, pod), log_during, ran_on, utcnow())
    if ctx.injector is None:
        raise GpupocError("node-failure: no node injector configured; set the plan's node_failure injection's "
                          "injector (sim, command, taint or drain)")
    target = node or ran_on
    held = _held(ctx, name)
    injected_at = utcnow()
    done, last_seen = _inject(ctx, target, name)
    injections.append(done)
    seen = [last_seen] if last_seen else []
    pod, ok = _wait(ctx.admin, ns, name, lambda p: failure_seen(scenario, p), fail_timeout_s, ctx.poll_s, seen)
    return Provoked(pod, ok, log_during, target, injected_at, held, seen[0] if seen else None)


def _inject(ctx: FaultContext, node: str, name: str) -> tuple[Injection, dict | None]:
    """Run the injector's fail while watching the pod (a drain returns only once its pods are gone): the
    injection, and the pod as last seen meanwhile (its DisruptionTarget says who took it away)."""
    out: dict = {}

    def fail() -> None:
        try:
            out["done"] = ctx.injector.fail(node)
        except Exception as exc:  # noqa: BLE001 - re-raised below, in the scenario's thread
            out["error"] = exc

    worker = threading.Thread(target=fail, name=f"inject-{node}", daemon=True)
    worker.start()
    last = None
    while worker.is_alive():
        last = read_pod(ctx.admin, ctx.namespace, name) or last
        worker.join(min(ctx.poll_s, 0.2))
    if "error" in out:
        raise out["error"]
    return out["done"], read_pod(ctx.admin, ctx.namespace, name) or last


def _finished_at(pod: dict | None) -> datetime | None:
    for cs in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
        t = ((cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get("terminated") or {})
        if t.get("finishedAt"):
            return parse_time(t["finishedAt"])
    return None


def _pipeline_delete(ctx: FaultContext, name: str, why: str) -> Injection:
    at = rfc3339(utcnow())
    r = ctx.tenant.call("DELETE", f"/api/v1/namespaces/{ctx.namespace}/pods/{name}", body={})
    return Injection(method="pipeline-delete", action="delete pod", target=f"{ctx.namespace}/{name}", at=at,
                     by=ctx.tenant_name, command=f"DELETE pods/{name}", ok=r.ok or r.status == 404,
                     detail=f"{why}; HTTP {r.status}")
