"""Fault recovery: provoke a failure, then record its evidence chain.

Each record answers the five questions of a failure record: how it was triggered (what, when, by whom), what
the platform did (phase, reason, container state, events), what the user saw (status message and log, read
with the tenant's own token, and whether the log survives the failure), what operators saw (Warning events,
alerts) and how it recovered (Airflow and platform retries, how long the GPUs took to be released). A piece
that could not be observed makes the record not verified, with the reason.

Node failure injection is pluggable (``NodeInjector``): the simulator's admin endpoint, an operator-supplied
command, or ``kubectl cordon`` + ``drain``; every injection is recorded.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Callable

from pydantic import BaseModel, ConfigDict

from gpupoc.pipeline.audit import iso, parse_time, utcnow
from gpupoc.pipeline.gpus import GpuProbe
from gpupoc.pipeline.injectors import (  # noqa: F401 - re-exported for the DAGs
    CommandInjector, Injection, NodeInjector, SimNodeInjector, kubectl_drain_injector,
)
from gpupoc.pipeline.k8s import KubeCaller, pod_gpus

P1 = "P1"
IMAGE_ERRORS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")


class Scenario(str, Enum):
    NON_ZERO_EXIT = "non-zero-exit"
    MISSING_IMAGE = "missing-image"
    OOM_KILL = "oom-kill"
    NODE_FAILURE = "node-failure"
    HANG_TIMEOUT = "hang-timeout"


# Kubernetes itself emits Warning events for these (pull errors; NodeNotReady, TaintManagerEviction); a plain
# non-zero exit, an OOM kill or a hang leaves none, so operators depend on alerts there.
WARNING_SCENARIOS = (Scenario.MISSING_IMAGE, Scenario.NODE_FAILURE)


class FaultRecord(BaseModel):
    """The evidence chain of one provoked failure."""

    model_config = ConfigDict(extra="forbid")

    scenario: str
    tenant: str
    namespace: str
    pod: str
    node: str = ""
    # trigger
    trigger: str
    trigger_method: str
    triggered_at: str
    triggered_by: str
    injections: str = "[]"  # JSON list of Injection
    submitted_at: str = ""
    failure_at: str = ""
    # platform behaviour
    phase: str = ""
    status_reason: str = ""
    status_message: str = ""
    container_state: str = ""  # waiting | running | terminated | gone
    container_reason: str = ""
    container_message: str = ""
    exit_code: int | None = None
    events: str = "[]"  # JSON list of "Type Reason: message"
    # what the user saw
    user_status_message: str = ""
    user_log_readable_during: bool | None = None
    user_log_readable_after: bool | None = None
    user_log_tail: str = ""
    # what operators saw
    warning_events: int = 0
    warning_reasons: str = ""
    alerts: str = ""
    # recovery
    recovery_action: str = ""
    airflow_retries: int | None = None
    platform_restarts: int = 0
    gpus_requested: int = 0
    gpus_held_at_failure: int | None = None
    gpus_released: bool | None = None
    release_s: float | None = None
    release_source: str = ""
    # verdict
    verified: bool = False
    reason: str = ""
    findings: str = ""
    severity: str = ""


AlertSource = Callable[[datetime, datetime], list[str]]


@dataclass
class FaultContext:
    """Who and what a scenario uses: the tenant's own caller, the administrator, GPU and alert sources."""

    tenant_name: str
    namespace: str
    tenant: KubeCaller
    admin: KubeCaller
    gpu_probes: dict[str, GpuProbe] = field(default_factory=dict)  # name -> probe
    injector: NodeInjector | None = None
    alerts: AlertSource | None = None
    poll_s: float = 0.5
    release_timeout_s: float = 30.0
    by: str = ""  # who triggers workload-spec failures; default: the tenant whose token submitted the pod


def _pod(c: KubeCaller, ns: str, name: str) -> dict | None:
    r = c.call("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
    return r.body if r.ok and isinstance(r.body, dict) else None


def container_state(pod: dict | None) -> tuple[str, str, str, int | None, int]:
    """(state, reason, message, exit code, restartCount) of the first container; last state when restarted."""
    if pod is None:
        return "gone", "", "", None, 0
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if not statuses:
        return "", "", "", None, 0
    cs = statuses[0]
    restarts = int(cs.get("restartCount") or 0)
    state = cs.get("state") or {}
    last = (cs.get("lastState") or {}).get("terminated")
    for kind in ("terminated", "waiting", "running"):
        if kind in state and state[kind] is not None:
            s = state[kind]
            if kind != "terminated" and last:  # restarted: the failure is in lastState
                return kind, last.get("reason") or s.get("reason", ""), last.get("message") or s.get("message", ""), \
                    last.get("exitCode"), restarts
            return kind, s.get("reason", ""), s.get("message", ""), s.get("exitCode"), restarts
    return "", "", "", None, restarts


def failure_seen(scenario: Scenario, pod: dict | None) -> bool:
    """True once the pod shows the failure the scenario provokes."""
    if pod is None:
        return scenario in (Scenario.NODE_FAILURE, Scenario.HANG_TIMEOUT)
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
          poll_s: float) -> tuple[dict | None, bool]:
    deadline = time.monotonic() + timeout_s
    pod = None
    while True:
        pod = _pod(c, ns, name)
        if until(pod):
            return pod, True
        if time.monotonic() >= deadline:
            return pod, False
        time.sleep(poll_s)


def _events(c: KubeCaller, ns: str, pod: str) -> list[dict] | None:
    r = c.call("GET", f"/api/v1/namespaces/{ns}/events", query={"fieldSelector": f"involvedObject.name={pod}"})
    if not r.ok:
        return None
    items = [e for e in (r.body or {}).get("items") or [] if (e.get("involvedObject") or {}).get("name") == pod]
    def when(e: dict) -> tuple:
        t = e.get("eventTime") or e.get("lastTimestamp") or e.get("firstTimestamp") or \
            (e.get("metadata") or {}).get("creationTimestamp")
        rv = (e.get("metadata") or {}).get("resourceVersion") or "0"
        return (parse_time(t) or utcnow(), int(rv) if str(rv).isdigit() else 0)
    return sorted(items, key=when)


def _log(c: KubeCaller, ns: str, pod: str) -> tuple[bool, str]:
    r = c.call("GET", f"/api/v1/namespaces/{ns}/pods/{pod}/log", query={"tailLines": "20"})
    return r.ok and bool(r.text.strip()), r.text if r.ok else f"HTTP {r.status}: {r.message}"


def wait_released(ctx: FaultContext, pod: str, since: datetime) -> dict[str, tuple[int | None, float | None]]:
    """Poll every GPU probe until it reports 0 for the pod: probe -> (GPUs first seen, seconds to 0 or None)."""
    out: dict[str, tuple[int | None, float | None]] = {}
    pending = dict(ctx.gpu_probes)
    first: dict[str, int | None] = {}
    deadline = time.monotonic() + ctx.release_timeout_s
    while pending:
        for name, probe in list(pending.items()):
            held = probe(ctx.namespace, pod)
            first.setdefault(name, held)
            if held == 0:
                out[name] = (first[name], round((utcnow() - since).total_seconds(), 3))
                del pending[name]
            elif held is None:
                out[name] = (None, None)
                del pending[name]
        if not pending or time.monotonic() >= deadline:
            break
        time.sleep(ctx.poll_s)
    for name in pending:
        out[name] = (first.get(name), None)
    return out


def _fmt_event(e: dict) -> str:
    count = e.get("count") or 1
    return f"{e.get('type', '')} {e.get('reason', '')}: {e.get('message', '')}" + (f" (x{count})" if count > 1 else "")


def build_record(ctx: FaultContext, scenario: Scenario, pod_name: str, *, trigger: str, injections: list[Injection],
                 failure_at: datetime, pod: dict | None, submitted_at: str = "", log_during: tuple[bool, str] | None = None,
                 airflow_retries: int | None = None, release_action: Callable[[], Injection] | None = None,
                 held_at_failure: int | None = None) -> FaultRecord:
    """Assemble the evidence chain for a pod that has failed (``pod`` as last seen by the administrator).

    ``release_action`` (e.g. the pipeline deleting a pod stuck in ImagePullBackOff) runs after the user's and
    operators' views are recorded; GPU release is then timed from that action, else from ``failure_at``.
    ``held_at_failure``: GPUs the pod held when the failure began, if sampled before (e.g. before a node failed).
    """
    first = injections[0] if injections else None
    rec = FaultRecord(
        scenario=scenario.value, tenant=ctx.tenant_name, namespace=ctx.namespace, pod=pod_name, trigger=trigger,
        trigger_method=first.method if first else "workload-spec", triggered_at=first.at if first else submitted_at,
        triggered_by=first.by if first else (ctx.by or f"{ctx.tenant_name} (pod submitted with its own token)"),
        injections=json.dumps([i.model_dump() for i in injections]),
        submitted_at=submitted_at, failure_at=iso(failure_at), airflow_retries=airflow_retries)
    reasons, findings = [], []
    if pod is not None:
        st = pod.get("status") or {}
        rec.node = (pod.get("spec") or {}).get("nodeName", "") or ""
        rec.phase, rec.status_reason, rec.status_message = st.get("phase", ""), st.get("reason", ""), st.get("message", "")
        rec.gpus_requested = pod_gpus(pod)
    (rec.container_state, rec.container_reason, rec.container_message, rec.exit_code,
     rec.platform_restarts) = container_state(pod)
    # what the user saw: the pod status and log with the tenant's own token
    upod = _pod(ctx.tenant, ctx.namespace, pod_name)
    if upod is not None:
        _, ureason, umsg, ucode, _ = container_state(upod)
        ust = upod.get("status") or {}
        rec.user_status_message = " | ".join(x for x in (ust.get("phase", ""), ust.get("reason", ""), ureason, umsg,
                                                        ust.get("message", ""),
                                                        f"exit code {ucode}" if ucode is not None else "") if x)
    if log_during is not None:
        rec.user_log_readable_during = log_during[0]
    readable, text = _log(ctx.tenant, ctx.namespace, pod_name)
    rec.user_log_readable_after = readable if upod is not None else None
    rec.user_log_tail = "\n".join((text if readable else (log_during or (False, text))[1]).splitlines()[-10:])
    if upod is not None and not readable and scenario is not Scenario.MISSING_IMAGE:
        findings.append("the log is not readable after the failure: the user cannot tell what went wrong")
    # what operators saw
    events = _events(ctx.admin, ctx.namespace, pod_name)
    if events is None:
        reasons.append("events could not be listed as the administrator")
        events = []
    rec.events = json.dumps([_fmt_event(e) for e in events])
    warnings = [e for e in events if e.get("type") == "Warning"]
    rec.warning_events = len(warnings)
    rec.warning_reasons = ",".join(sorted({e.get("reason", "") for e in warnings}))
    if scenario in WARNING_SCENARIOS and not warnings:
        findings.append("no Warning event recorded the failure: operators see nothing in the events")
    if ctx.alerts is None:
        reasons.append("no alert source configured: alerts not verified")
    else:
        try:
            rec.alerts = ",".join(sorted(set(ctx.alerts(failure_at, utcnow()))))
            if not warnings and not rec.alerts:
                findings.append("operators saw neither a Warning event nor an alert")
        except Exception as e:  # noqa: BLE001 - a broken alert source is recorded, not fatal
            reasons.append(f"alert source failed: {e}")
    # recovery: GPUs back
    release_since = failure_at
    held_before = {n: p(ctx.namespace, pod_name) for n, p in ctx.gpu_probes.items()}
    if release_action is not None:
        done = release_action()
        injections = [*injections, done]
        rec.injections = json.dumps([i.model_dump() for i in injections])
        rec.recovery_action = f"{done.action} by {done.by} at {done.at}: {done.detail}"
        release_since = utcnow()
    if not ctx.gpu_probes:
        reasons.append("no GPU allocation source configured: release not verified")
    else:
        res = wait_released(ctx, pod_name, release_since)
        rec.release_source = ",".join(sorted(res))
        firsts = [h for h in [held_at_failure, *held_before.values(), *(h for h, _ in res.values())] if h is not None]
        rec.gpus_held_at_failure = max(firsts) if firsts else None
        unknown = [n for n, (h, _) in res.items() if h is None]
        secs = [s for h, s in res.values() if h is not None]
        if unknown:
            reasons.append(f"GPU source(s) {', '.join(unknown)} could not answer")
        if secs:
            rec.gpus_released = all(s is not None for s in secs)
            rec.release_s = max(secs) if rec.gpus_released else None
            if not rec.gpus_released:
                leaking = [n for n, (h, s) in res.items() if h and s is None]
                findings.append(f"GPUs not released within {ctx.release_timeout_s:g}s of the failure "
                                f"(still held per {', '.join(leaking)})")
                rec.severity = P1
    if airflow_retries is None:
        reasons.append("Airflow retries not recorded (the driver ran outside a task)")
    rec.findings = "; ".join(findings)
    rec.reason = "; ".join(reasons)
    rec.verified = not reasons
    return rec


def run_scenario(ctx: FaultContext, scenario: Scenario, manifest: dict, *, fail_timeout_s: float = 60.0,
                 task_timeout_s: float = 10.0, run_before_fail_s: float = 1.0, airflow_retries: int | None = None,
                 cleanup: bool = True) -> FaultRecord:
    """Submit ``manifest`` as the tenant, provoke ``scenario``, and record the evidence chain.

    missing-image and hang-timeout end the way the operator's fail-fast and execution timeout end them: the
    pipeline deletes the pod (recorded as the recovery action); node-failure fails the pod's node mid-run
    through ``ctx.injector`` and recovers it afterwards.
    """
    ns = ctx.namespace
    injections: list[Injection] = []
    submitted = utcnow()
    r = ctx.tenant.call("POST", f"/api/v1/namespaces/{ns}/pods", body=manifest)
    if not r.ok:
        raise RuntimeError(f"{scenario.value}: submitting pod {manifest.get('metadata', {}).get('name')!r} as "
                           f"{ctx.tenant_name} answered HTTP {r.status}: {r.message}")
    name = r.body["metadata"]["name"]
    node = ""
    try:
        pv = _provoke(ctx, scenario, name, injections, fail_timeout_s, task_timeout_s, run_before_fail_s)
        node = pv.node
        action = None
        if pv.ok and scenario is Scenario.MISSING_IMAGE:
            action = lambda: _pipeline_delete(ctx, name, "fail-fast on the image pull error")  # noqa: E731
        elif pv.ok and scenario is Scenario.HANG_TIMEOUT:
            action = lambda: _pipeline_delete(ctx, name, f"task timeout of {task_timeout_s:g}s reached")  # noqa: E731
        rec = build_record(ctx, scenario, name, trigger=_trigger(scenario, manifest, task_timeout_s),
                           injections=injections, failure_at=pv.failed_at or utcnow(), pod=pv.pod,
                           submitted_at=iso(submitted), log_during=pv.log_during, airflow_retries=airflow_retries,
                           release_action=action, held_at_failure=pv.held)
        ok = pv.ok
        if not ok:
            rec.verified = False
            rec.reason = "; ".join(x for x in (f"the failure was not observed within {fail_timeout_s:g}s",
                                               rec.reason) if x)
        return rec
    finally:
        if node and ctx.injector is not None and scenario is Scenario.NODE_FAILURE:
            ctx.injector.recover(node)
        if cleanup:
            ctx.tenant.call("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", body={"gracePeriodSeconds": 0})


def _trigger(scenario: Scenario, manifest: dict, task_timeout_s: float) -> str:
    image = ((manifest.get("spec") or {}).get("containers") or [{}])[0].get("image")
    return {
        Scenario.NON_ZERO_EXIT: "workload exits with a non-zero code",
        Scenario.MISSING_IMAGE: f"pod image {image!r} does not exist",
        Scenario.OOM_KILL: "workload allocates memory beyond its limit",
        Scenario.NODE_FAILURE: "the pod's node fails mid-run",
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


def _held(ctx: FaultContext, name: str) -> int | None:
    values = [v for v in (p(ctx.namespace, name) for p in ctx.gpu_probes.values()) if v is not None]
    return max(values) if values else None


def _provoke(ctx: FaultContext, scenario: Scenario, name: str, injections: list[Injection], fail_timeout_s: float,
             task_timeout_s: float, run_before_fail_s: float) -> Provoked:
    """Wait for (or cause) the failure."""
    ns = ctx.namespace
    if scenario not in (Scenario.NODE_FAILURE, Scenario.HANG_TIMEOUT):
        pod, ok = _wait(ctx.admin, ns, name, lambda p: failure_seen(scenario, p), fail_timeout_s, ctx.poll_s)
        finished = _finished_at(pod) if scenario is not Scenario.MISSING_IMAGE else None
        return Provoked(pod, ok, _log(ctx.tenant, ns, name), ((pod or {}).get("spec") or {}).get("nodeName") or "",
                        finished)
    pod, ok = _wait(ctx.admin, ns, name, lambda p: (p or {}).get("status", {}).get("phase") == "Running",
                    fail_timeout_s, ctx.poll_s)
    if not ok:
        phase = ((pod or {}).get("status") or {}).get("phase")
        raise RuntimeError(f"{scenario.value}: pod {ns}/{name} never ran within {fail_timeout_s:g}s (phase {phase}); "
                           "check capacity and quota")
    node = pod["spec"]["nodeName"]
    time.sleep(run_before_fail_s if scenario is Scenario.NODE_FAILURE else task_timeout_s)
    log_during = _log(ctx.tenant, ns, name)
    if scenario is Scenario.HANG_TIMEOUT:
        pod = _pod(ctx.admin, ns, name)
        return Provoked(pod, not failure_seen(Scenario.HANG_TIMEOUT, pod), log_during, node, utcnow())
    if ctx.injector is None:
        raise RuntimeError("node-failure: no node injector configured; set the plan's node-failure injection")
    held = _held(ctx, name)
    injected_at = utcnow()
    injections.append(ctx.injector.fail(node))
    pod, ok = _wait(ctx.admin, ns, name, lambda p: failure_seen(scenario, p), fail_timeout_s, ctx.poll_s)
    return Provoked(pod, ok, log_during, node, injected_at, held)


def _finished_at(pod: dict | None) -> datetime | None:
    for cs in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
        t = ((cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get("terminated") or {})
        if t.get("finishedAt"):
            return parse_time(t["finishedAt"])
    return None


def _pipeline_delete(ctx: FaultContext, name: str, why: str) -> Injection:
    at = iso(utcnow())
    r = ctx.tenant.call("DELETE", f"/api/v1/namespaces/{ctx.namespace}/pods/{name}", body={})
    return Injection(method="pipeline-delete", action="delete pod", target=f"{ctx.namespace}/{name}", at=at,
                     by=ctx.tenant_name, command=f"DELETE pods/{name}", ok=r.ok or r.status == 404,
                     detail=f"{why}; HTTP {r.status}")
