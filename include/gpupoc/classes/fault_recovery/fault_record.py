"""The evidence record of one provoked failure, and what it is assembled from.

Each record answers the five questions of a failure record: how it was triggered (what, when, by whom), what
the platform did (phase, reason, container state, events), what the user saw (status message and log, read
with the tenant's own token, and whether the log survives the failure), what operators saw (Warning events,
alerts) and how it recovered (Airflow and platform retries, how long the GPUs took to be released). A piece
that could not be observed makes the record not verified, with the reason.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Callable

from pydantic import BaseModel, ConfigDict

from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.classes.fault_recovery.gpus import GpuProbe
from gpupoc.classes.fault_recovery.injectors import NODE_LOSS_METHODS, Injection, NodeInjector
from gpupoc.pipeline.k8s import KubeCaller, pod_gpus

P1 = "P1"
_TICK = timedelta(seconds=1)
IMAGE_ERRORS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")


class Scenario(str, Enum):
    """The provoked failures; values are the plan's injection kinds, and ``node_drain`` for a node_failure
    injection through a drain (an eviction, not a failure)."""

    NON_ZERO_EXIT = "nonzero_exit"
    MISSING_IMAGE = "missing_image"
    OOM_KILL = "oom"
    NODE_FAILURE = "node_failure"
    NODE_DRAIN = "node_drain"
    HANG_TIMEOUT = "hang"


# Kubernetes itself emits Warning events for these (pull errors; NodeNotReady once a node is lost); a plain
# non-zero exit, an OOM kill or a hang leaves none, so operators depend on alerts there. A node failure counts
# only when the injection made the node fail (``NODE_LOSS_METHODS``): a taint or a drain evicts with Normal
# events (TaintManagerEviction, Killing) and the node stays Ready.
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
    disruption: str = ""  # the pod's DisruptionTarget condition: "reason: message" (who took it away, and how)
    events: str = "[]"  # JSON list of "Type Reason: message"
    # what the user saw
    user_status_message: str = ""
    user_log_readable_during: bool | None = None
    user_log_readable_after: bool | None = None
    user_log_tail: str = ""
    user_log_note: str = ""  # why the log check does not apply (e.g. no container ever started)
    # what operators saw
    warning_events: int = 0
    failure_event_missing: bool = False  # a pull error or node loss that no Warning event recorded
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


# (start, end) -> alerts seen in the window: names, or dicts with alertname and namespace/pod/node labels
AlertSource = Callable[[datetime, datetime], list]


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
    alert_wait_s: float = 0.0  # keep asking the alert source this long (rules fire after their `for`)
    poll_s: float = 0.5
    release_timeout_s: float = 30.0
    by: str = ""  # who triggers workload-spec failures; default: the tenant whose token submitted the pod


def read_pod(c: KubeCaller, ns: str, name: str) -> dict | None:
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


def disruption_of(pod: dict | None) -> str:
    """The pod's ``DisruptionTarget`` condition as "reason: message" ('' without one): DeletionByTaintManager,
    EvictionByEvictionAPI, PreemptionByScheduler, ..."""
    for c in ((pod or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == "DisruptionTarget" and c.get("status") == "True":
            return ": ".join(x for x in (c.get("reason") or "", c.get("message") or "") if x)
    return ""


def never_started(pod: dict | None) -> bool:
    """True when the pod's containers never ran: every container is waiting (e.g. on an image pull), none has
    a last terminated state or a restart, and none reports having started."""
    statuses = ((pod or {}).get("status") or {}).get("containerStatuses") or []
    if not statuses:
        return False
    for cs in statuses:
        state = cs.get("state") or {}
        if "waiting" not in state or state.get("running") or state.get("terminated") or cs.get("started") \
                or int(cs.get("restartCount") or 0) or (cs.get("lastState") or {}).get("terminated"):
            return False
    return True


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


def read_log(c: KubeCaller, ns: str, pod: str) -> tuple[bool, str]:
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


def relevant_alerts(ctx: FaultContext, since: datetime, pod: str, node: str) -> list[str]:
    """Alert names about this pod, its namespace-wide alerts or its node, polled up to ``ctx.alert_wait_s``."""
    deadline = time.monotonic() + ctx.alert_wait_s
    while True:
        names = set()
        for a in ctx.alerts(since, utcnow()):
            if isinstance(a, str):
                names.add(a)
                continue
            ns, p, n = a.get("namespace") or "", a.get("pod") or "", a.get("node") or a.get("hostname") or ""
            if (ns == ctx.namespace and p in ("", pod)) or (node and n == node):
                names.add(a.get("alertname", ""))
        names.discard("")
        if names or time.monotonic() >= deadline:
            return sorted(names)
        time.sleep(min(ctx.poll_s * 4, 2.0))


def receiver_alerts(record: str) -> AlertSource:
    """Alerts from the webhook receiver's record (``gpupoc.monitoring.alerts.alerts_from_receiver``)."""
    def source(start: datetime, end: datetime) -> list[dict]:
        from gpupoc.monitoring.alerts import alerts_from_receiver
        from gpupoc.monitoring.results import Window

        res = alerts_from_receiver(record, Window(start, max(end, start + _TICK)))
        return res.frame.to_dict("records") if res.verified else []
    return source


def prometheus_alerts(prom, step: float = 5.0) -> AlertSource:
    """Pending and firing alerts from Prometheus's ``ALERTS`` series."""
    def source(start: datetime, end: datetime) -> list[dict]:
        from gpupoc.monitoring.alerts import alerts_from_prometheus
        from gpupoc.monitoring.results import Window

        res = alerts_from_prometheus(prom, Window(start, max(end, start + _TICK), step))
        return res.frame.to_dict("records") if res.verified else []
    return source


def build_record(ctx: FaultContext, scenario: Scenario, pod_name: str, *, trigger: str, injections: list[Injection],
                 failure_at: datetime, pod: dict | None, submitted_at: str = "",
                 log_during: tuple[bool, str] | None = None,
                 airflow_retries: int | None = None, release_action: Callable[[], Injection] | None = None,
                 held_at_failure: int | None = None) -> FaultRecord:
    """Assemble the evidence chain for a pod that has failed (``pod`` as last seen by the administrator):
    the trigger, what the platform did, what the user saw, what operators saw, and the recovery.

    ``release_action`` (e.g. the pipeline deleting a pod stuck in ImagePullBackOff) runs after the user's and
    operators' views are recorded; GPU release is then timed from that action, else from ``failure_at``.
    ``held_at_failure``: GPUs the pod held when the failure began, if sampled before (e.g. before a node failed).
    """
    rec = _triggered(ctx, scenario, pod_name, trigger, injections, failure_at, submitted_at, airflow_retries)
    reasons: list[str] = []  # what could not be verified
    findings: list[str] = []  # what the platform got wrong
    _platform_behaviour(rec, pod)
    _user_view(ctx, rec, pod, log_during, findings)
    _operator_view(ctx, rec, scenario, failure_at, reasons, findings, injections[0] if injections else None)
    _recovery(ctx, rec, injections, failure_at, release_action, held_at_failure, reasons, findings)
    if airflow_retries is None:
        reasons.append("Airflow retries not recorded (the driver ran outside a task)")
    rec.findings = "; ".join(findings)
    rec.severity = P1 if findings else ""  # a broken evidence chain fails a must item
    rec.reason = "; ".join(reasons)
    rec.verified = not reasons
    return rec


def _triggered(ctx: FaultContext, scenario: Scenario, pod_name: str, trigger: str, injections: list[Injection],
               failure_at: datetime, submitted_at: str, airflow_retries: int | None) -> FaultRecord:
    """The record's trigger: how, when and by whom the failure was provoked (the first injection, else the
    workload's own spec as its tenant submitted it)."""
    first = injections[0] if injections else None
    return FaultRecord(
        scenario=scenario.value, tenant=ctx.tenant_name, namespace=ctx.namespace, pod=pod_name, trigger=trigger,
        trigger_method=first.method if first else "workload-spec", triggered_at=first.at if first else submitted_at,
        triggered_by=first.by if first else (ctx.by or f"{ctx.tenant_name} (pod submitted with its own token)"),
        injections=json.dumps([i.model_dump() for i in injections]),
        submitted_at=submitted_at, failure_at=rfc3339(failure_at), airflow_retries=airflow_retries)


def _platform_behaviour(rec: FaultRecord, pod: dict | None) -> None:
    """What the platform did: the pod's node, phase, reason and message, GPUs, and its container's state."""
    if pod is not None:
        st = pod.get("status") or {}
        rec.node = (pod.get("spec") or {}).get("nodeName", "") or ""
        rec.phase, rec.status_reason = st.get("phase", ""), st.get("reason", "")
        rec.status_message = st.get("message", "")
        rec.gpus_requested = pod_gpus(pod)
        rec.disruption = disruption_of(pod)
    (rec.container_state, rec.container_reason, rec.container_message, rec.exit_code,
     rec.platform_restarts) = container_state(pod)


def _user_view(ctx: FaultContext, rec: FaultRecord, pod: dict | None, log_during: tuple[bool, str] | None,
               findings: list[str]) -> None:
    """What the user saw with the tenant's own token: the pod's status and its log during and after the
    failure (a log that never existed, because no container started, is not a defect)."""
    upod = read_pod(ctx.tenant, ctx.namespace, rec.pod)
    if upod is not None:
        _, ureason, umsg, ucode, _ = container_state(upod)
        ust = upod.get("status") or {}
        rec.user_status_message = " | ".join(x for x in (ust.get("phase", ""), ust.get("reason", ""), ureason, umsg,
                                                        ust.get("message", ""),
                                                        f"exit code {ucode}" if ucode is not None else "") if x)
    if log_during is not None:
        rec.user_log_readable_during = log_during[0]
    readable, text = read_log(ctx.tenant, ctx.namespace, rec.pod)
    rec.user_log_readable_after = readable if upod is not None else None
    rec.user_log_tail = "\n".join((text if readable else (log_during or (False, text))[1]).splitlines()[-10:])
    if upod is None:
        rec.user_log_note = "log not checked: the tenant could not read the pod after the failure"
    elif not readable and never_started(pod if pod is not None else upod):
        # no container ever ran, so there is no log to lose: the check does not apply (not a platform defect)
        rec.user_log_readable_after = None
        rec.user_log_note = (f"log not applicable: no container started ({rec.container_reason or 'never ran'}); "
                             "the status message is what the user sees")
    elif not readable:
        findings.append("the log is not readable after the failure: the user cannot tell what went wrong")


def _operator_view(ctx: FaultContext, rec: FaultRecord, scenario: Scenario, failure_at: datetime,
                   reasons: list[str], findings: list[str], first: Injection | None) -> None:
    """What operators saw: the pod's events as the administrator lists them, and the alerts of the window."""
    events = _events(ctx.admin, ctx.namespace, rec.pod)
    if events is None:
        reasons.append("events could not be listed as the administrator")
        events = []
    rec.events = json.dumps([_fmt_event(e) for e in events])
    warnings = [e for e in events if e.get("type") == "Warning"]
    rec.warning_events = len(warnings)
    rec.warning_reasons = ",".join(sorted({e.get("reason", "") for e in warnings}))
    if scenario in WARNING_SCENARIOS and not warnings and (first is None or first.method in NODE_LOSS_METHODS):
        rec.failure_event_missing = True
        findings.append("no Warning event recorded the failure: operators see nothing in the events")
    if ctx.alerts is None:
        reasons.append("no alert source configured: alerts not verified")
        return
    try:
        rec.alerts = ",".join(relevant_alerts(ctx, failure_at, rec.pod, rec.node))
        if not warnings and not rec.alerts:
            findings.append("operators saw neither a Warning event nor an alert")
    except Exception as e:  # noqa: BLE001 - a broken alert source is recorded, not fatal
        reasons.append(f"alert source failed: {e}")


def _recovery(ctx: FaultContext, rec: FaultRecord, injections: list[Injection], failure_at: datetime,
              release_action: Callable[[], Injection] | None, held_at_failure: int | None,
              reasons: list[str], findings: list[str]) -> None:
    """The recovery: the pipeline's own release action, if any, then the GPUs given back (timed from that
    action, else from the failure) as every GPU source sees it."""
    release_since = failure_at
    held_before = {n: p(ctx.namespace, rec.pod) for n, p in ctx.gpu_probes.items()}
    if release_action is not None:
        done = release_action()
        rec.injections = json.dumps([i.model_dump() for i in [*injections, done]])
        rec.recovery_action = f"{done.action} by {done.by} at {done.at}: {done.detail}"
        release_since = utcnow()
    if not ctx.gpu_probes:
        reasons.append("no GPU allocation source configured: release not verified")
        return
    res = wait_released(ctx, rec.pod, release_since)
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
