"""How a wave task's attempt ended, decided once from the records the evidence reads, and recorded for the
observer and the evidence (``files/decision-<item>-try<N>.json``).

The wave task (``GpuWorkloadOperator``, or the headless runner standing in for it) calls ``decide`` when its pod
ended: the outcome comes from ``attempts.classify_attempt`` on the pod now or as the observer last saw it, the
events, the owners' conditions and the audit log's deletes (``RunContext.platform_records``), so the task
never calls lost what the evidence will call preempted or evicted; whether the task's retry submits the item
again follows from that outcome (``attempts.next_attempt``). A pod that vanished with no record yet is read
again for a few seconds (an audit log reaches its file after the request). ``task_view`` gives the observer
every decision recorded so far.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

from gpupoc.common.outcomes import WorkloadOutcome
from gpupoc.pipeline.attempts import NextAttempt, TaskDecision, classify_attempt, next_attempt
from gpupoc.pipeline.open_items import TaskState, TaskView
from gpupoc.pipeline.workload_outcome import OutcomeRecord, Rejection
from gpupoc.steps.context import RunContext
from gpupoc.steps.markers import DECISION_PREFIX
# How long a vanished pod with no record of why is read again before it counts as lost.
SETTLE_SECONDS = 6.0
SETTLE_STEP_SECONDS = 1.0


def _read_pod(ctx: RunContext, namespace: str, name: str) -> dict | None:
    r = ctx.reader().call("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    return r.body if r.ok and isinstance(r.body, dict) else None


def attempt_outcome(ctx: RunContext, namespace: str, name: str, settle_s: float = SETTLE_SECONDS) -> OutcomeRecord:
    """The outcome of pod ``namespace/name`` from every record the evidence reads (see module docstring)."""
    key = (namespace, name)
    deadline = time.monotonic() + settle_s
    while True:
        pod = _read_pod(ctx, namespace, name)
        last = pod or ctx.observed_pods().get(key)
        outcome = classify_attempt(key, last, pod is not None, ctx.platform_records([namespace]))
        if outcome.outcome is not WorkloadOutcome.LOST or time.monotonic() >= deadline:
            return outcome
        time.sleep(SETTLE_STEP_SECONDS)


def decide(ctx: RunContext, item: str, namespace: str, name: str, try_number: int,
           settle_s: float = SETTLE_SECONDS) -> tuple[OutcomeRecord, TaskDecision | None]:
    """The attempt's outcome and, once the attempt is over, the task's decision, recorded in the evidence."""
    outcome = attempt_outcome(ctx, namespace, name, settle_s)
    if not outcome.outcome.final:
        return outcome, None  # still there: the task's retry reattaches to it, nothing was decided
    policy = ctx.spec.resubmission
    decision = TaskDecision(item, namespace, name, try_number, outcome.outcome, outcome.evidence(),
                            next_attempt(outcome.outcome, try_number, policy.limit, policy.platform_requeues),
                            datetime.now(timezone.utc))
    _write(ctx, decision)
    return outcome, decision


def record_refusal(ctx: RunContext, item: str, namespace: str, try_number: int, rejection: Rejection) -> TaskDecision:
    """A try whose pod the platform refused at admission: rejected, and no further attempt (the same request
    would be refused again)."""
    decision = TaskDecision(item, namespace, None, try_number, WorkloadOutcome.REJECTED,
                            f"rejected (admission: HTTP {rejection.status} {rejection.message})", NextAttempt.NONE,
                            datetime.now(timezone.utc))
    _write(ctx, decision)
    return decision


def task_message(decision: TaskDecision) -> str:
    """What the wave task says of its attempt, in the words the evidence keeps: ``lost: pod team-nlp/x (none:
    vanished; no event, condition or audit record says why)``, ``preempted: pod a/b by system:kube-scheduler at
    … (audit log: …)``, ``rejected: item qc-… (admission: HTTP 403 …)``."""
    said = decision.evidence
    if said.startswith(decision.outcome.value):
        said = said[len(decision.outcome.value):].lstrip()
    what = f"pod {decision.namespace}/{decision.pod}" if decision.pod else f"item {decision.item}"
    return f"{decision.outcome.value}: {what} {said}".rstrip()


def _write(ctx: RunContext, decision: TaskDecision) -> None:
    ctx.writer.write_json(f"{DECISION_PREFIX}{decision.item}-try{decision.try_number}", decision.to_dict())


def decisions(ctx: RunContext) -> list[TaskDecision]:
    """Every decision the run's wave tasks recorded, in the order of their tries."""
    import json

    files = sorted(ctx.writer.files_dir.glob(f"{DECISION_PREFIX}*.json")) if ctx.writer.files_dir.is_dir() else []
    out = []
    for path in files:
        try:
            out.append(TaskDecision.from_dict(json.loads(path.read_text(encoding="utf-8"))))
        except (ValueError, KeyError):
            continue  # being written: the next look reads it
    return sorted(out, key=lambda d: (d.item, d.try_number))


def task_view(ctx: RunContext, states: dict[str, TaskState] | None = None) -> TaskView:
    """What the observer knows of the wave's tasks: their decisions so far, and their states when known."""
    view = TaskView(states=states)
    for d in decisions(ctx):
        if d.pod:
            view.decisions[(d.namespace, d.pod)] = d
        else:
            view.refused[d.item] = d
    return view
