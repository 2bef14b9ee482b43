"""The bulk wave: the class's items in shards of one tenant, each submitted and watched by one task.

``operator_items`` are the items the per-pod operator submits (none when the wave goes in bulk); ``shards`` the
bulk tasks' shards (none otherwise), chosen by the class's ``submission`` (``plan.submission_spec``).
``submit_shard`` runs one shard (``pipeline.bulk_shard``) with the per-pod path's own records and decisions:
each submission as the operator records it (a batch per file: ``steps.submission_files``), a refusal at admission
recorded as rejected (``attempt_decision.record_refusal``), each ended attempt decided by
``attempt_decision.decide`` (the same classification the observer and the evidence use), a failed pod's log
tail in the task's log. The observer, release, collection and checks are the same for both paths.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import ClassVar

from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.exceptions import ConfigError
from gpupoc.pipeline.attempts import NextAttempt, Submission
from gpupoc.pipeline.bulk_rate import Answer, TokenBucket
from gpupoc.pipeline.bulk_shard import CreatedPod, Hooks, Shard, ShardPod, ShardRunner
from gpupoc.pipeline.workload_outcome import Rejection
from gpupoc.steps.attempt_decision import decide, record_refusal
from gpupoc.steps.context import RunContext, task_component
from gpupoc.steps.markers import RELEASE_BEGUN
from gpupoc.steps.shard_files import CREATED_PREFIX, SHARD_PREFIX, TRANSITIONS_PREFIX
from gpupoc.steps.submission_files import SubmissionBatches

log = logging.getLogger(__name__)
# The run's tasks that run beside every shard from its start to the wave's end: the observer and the release.
ALONGSIDE_SHARDS = 2
MAX_SHARD_SIZE = 5000  # plan.submission_spec: shard_size le


def in_bulk(ctx: RunContext) -> bool:
    return ctx.spec.submission.bulk(len(ctx.items))


def operator_items(ctx: RunContext) -> list[dict]:
    """The items one ``GpuWorkloadOperator`` task each submits: all of them, unless the wave goes in bulk."""
    return [] if in_bulk(ctx) else ctx.items


def shards(ctx: RunContext, slots: int | None = None) -> list[dict]:
    """The bulk tasks' shards: each tenant's items in plan order, ``shard_size`` at a time (none when the wave
    goes through the operator). ``slots``: the tasks the orchestrator runs at once (``check_slots``)."""
    if not in_bulk(ctx):
        return []
    size = ctx.spec.submission.shard_size
    by_ns: dict[str, list[dict]] = {}
    for i in ctx.items:
        by_ns.setdefault(i["namespace"], []).append(i)
    out = []
    for ns, items in by_ns.items():
        for start in range(0, len(items), size):
            part = items[start:start + size]
            out.append({"shard": len(out), "namespace": ns, "cluster_context": part[0]["cluster_context"],
                        "items": [i["workload_key"] for i in part]})
    check_slots(ctx, out, slots)
    return out


def check_slots(ctx: RunContext, parts: list[dict], slots: int | None) -> None:
    """Refuse shards that cannot all run at once: each shard task holds its slot until its pods end, and the
    release waits for every pod, so a shard left queued behind the others stalls the wave until the gate's
    timeout (``gate_timeout_seconds``). ``slots`` None: not known, not checked."""
    if slots is None or len(parts) + ALONGSIDE_SHARDS <= slots:
        return
    per_tenant: dict[str, int] = {}
    for part in parts:
        per_tenant[part["namespace"]] = per_tenant.get(part["namespace"], 0) + len(part["items"])
    room = max(1, slots - ALONGSIDE_SHARDS)
    size = ctx.spec.submission.shard_size
    need = next((k for k in range(size, MAX_SHARD_SIZE + 1)
                 if sum(-(-n // k) for n in per_tenant.values()) <= room), MAX_SHARD_SIZE)
    raise ConfigError(ctx.plan_file, [
        f"test_classes.{ctx.test_class}.submission.shard_size: {size} makes {len(parts)} bulk shard tasks, which "
        f"must all run at once beside the observer and the release, and the orchestrator runs {slots} tasks at "
        f"once (Airflow [core] parallelism, max_active_tasks_per_dag); raise shard_size to {need} or more, or "
        f"let Airflow run {len(parts) + ALONGSIDE_SHARDS} tasks at once"])


def _bodies(ctx: RunContext, keys: list[str]) -> tuple[ShardPod, ...]:
    from gpupoc.plan import class_items
    from gpupoc.podspec.bodies import pod_bodies

    items = {i.name: i for i in class_items(ctx.plan, ctx.test_class)}
    wanted = [items[k] for k in keys]
    bodies = pod_bodies(ctx.plan, wanted, run_id=ctx.run_id, test_class=ctx.test_class)
    return tuple(ShardPod(i.name, b) for i, b in zip(wanted, bodies))


@dataclass
class ShardContext(RunContext):
    """The run's context for one shard: the platform's records and the observer's last states are read at most
    every ``RECORDS_SECONDS`` and shared by the shard's decisions (a shard decides many attempts at once; each
    read is every event, owner and audited delete of the namespace)."""

    RECORDS_SECONDS: ClassVar[float] = 2.0

    def __post_init__(self) -> None:
        self._lock, self._cache = threading.Lock(), {}

    def _cached(self, key, read):
        with self._lock:
            at, value = self._cache.get(key, (float("-inf"), None))
            if time.monotonic() - at > self.RECORDS_SECONDS:
                value = read()
                self._cache[key] = (time.monotonic(), value)
            return value

    def platform_records(self, namespaces=None, events=None):
        if events is not None:
            return super().platform_records(namespaces, events)
        return self._cached(("records", tuple(namespaces or ())), lambda: super(ShardContext, self).platform_records(
            namespaces))

    def observed_pods(self):
        return self._cached("observed", lambda: super(ShardContext, self).observed_pods())


def _hooks(ctx: RunContext, namespace: str, index: int, batches: SubmissionBatches) -> Hooks:
    def submitted(item: str, pod: str | None, try_number: int, refusal: Answer | None) -> None:
        now = datetime.now(timezone.utc)
        rejection = None if refusal is None else Rejection(refusal.status, refusal.message, now)
        batches.add(Submission(item, namespace, pod, now, try_number, rejection))
        if refusal is not None and refusal.status in (400, 403, 409, 422):
            record_refusal(ctx, item, namespace, try_number, rejection)

    def decided(item: str, ns: str, pod: str, try_number: int) -> NextAttempt | None:
        outcome, decision = decide(ctx, item, ns, pod, try_number)
        if decision is not None and decision.next is not NextAttempt.RESUBMIT:
            log.info("pod %s/%s %s; no further attempt by this shard (%s)", ns, pod, decision.evidence,
                     decision.next.value)
        return None if decision is None else decision.next

    def on_log(pod: str, lines: list[str]) -> None:
        for line in lines:
            log.info("[pod %s] %s", pod, line)

    def created(pods: dict[str, CreatedPod]) -> None:
        log.info("shard %d: every creation sent (%d pods created)", index, len(pods))
        batches.flush()
        ctx.writer.write_json(f"{CREATED_PREFIX}{index}", {"shard": index, "namespace": namespace,
                                                           "at": rfc3339(utcnow()),
                                                           "pods": {k: p.to_dict() for k, p in pods.items()}})

    return Hooks(submitted=submitted, decide=decided, released=lambda: any(ctx.files(m).is_file() for m in RELEASE_BEGUN),
                 on_log=on_log, created=created)


def submit_shard(ctx: RunContext, shard: dict, kube=None) -> dict:
    """Submit and follow one shard as its tenant until each item has its outcome; its pods' transitions and
    the shard's summary go into the run's files. ``kube`` replaces the tenant's async client (tests)."""
    began = time.monotonic()
    ctx = ShardContext(ctx.plan_file, ctx.dag_id, ctx.run_id, ctx.test_class, ctx.task, ctx._factory)
    spec = ctx.spec.submission
    pods = _bodies(ctx, list(shard["items"]))
    s = Shard(int(shard["shard"]), shard["namespace"], shard["cluster_context"], pods)
    log.info("shard %d: %d pods of %s built in %.2f s; creating them at %s/s after a burst of %d", s.index, len(pods),
             s.namespace, time.monotonic() - began, spec.qps, spec.burst)
    timeout = ctx.spec.gate_timeout_seconds + ctx.observe_timeout_s()
    policy = ctx.spec.resubmission

    batches = SubmissionBatches(ctx.writer, s.index)

    async def run():
        from gpupoc.pipeline.async_kube import AsyncKubeClient

        client = kube or await AsyncKubeClient.from_kubeconfig(
            str(ctx.plan.kubeconfig_path) if ctx.plan.kubeconfig_path else None, s.context,
            task_component(ctx.task or "bulk_shard"))
        try:
            runner = ShardRunner(client, s, TokenBucket(spec.qps, spec.burst),
                                 _hooks(ctx, s.namespace, s.index, batches), platform_wait_s=float(policy.wait_seconds))
            return await runner.run(timeout)
        finally:
            if kube is None:
                await client.close()

    try:
        result = asyncio.run(run())
    finally:
        batches.flush()
    ctx.writer.write_json(f"{TRANSITIONS_PREFIX}{s.index}", [t.to_dict() for t in result.transitions.values()])
    summary = {"shard": s.index, "namespace": s.namespace, **result.summary()}
    ctx.writer.write_json(f"{SHARD_PREFIX}{s.index}", summary)
    return summary
