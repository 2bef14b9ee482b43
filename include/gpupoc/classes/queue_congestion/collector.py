"""Queue congestion: reconstruct each wait's bottleneck, score the platform's explanation of it, and set the
wait a user could have expected beside the actual one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import replace
from datetime import datetime

from gpupoc.classes.definition import CollectedSoFar
from gpupoc.classes.queue_congestion.gangs import gang_rows
from gpupoc.classes.queue_congestion.reconstruct import CongestionRow, reconstruct, summarize
from gpupoc.classes.queue_congestion.table import ExplanationRow
from gpupoc.common.priority import gangs_placed_whole
from gpupoc.common.stopwatch import Stopwatch
from gpupoc.common.timefmt import utcnow
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.cluster_names import contexts, gather_names
from gpupoc.pipeline.observe import scheduling_event_observations
from gpupoc.pipeline.pod_transitions import PodTransitions, watch_looks
from gpupoc.pipeline.queue_model import expected_waits
from gpupoc.pipeline.readable import ClusterNames
from gpupoc.pipeline.timelines import Observation
from gpupoc.plan import class_items
from gpupoc.plan.overrides import planned_seconds
from gpupoc.steps.observation_parts import read_observations
from gpupoc.steps.shard_files import transitions
from gpupoc.steps.markers import CLUSTER_NAMES

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

# A wait shorter than this needs no explanation (a scheduler pass or two).
EXPLAIN_AFTER_SECONDS = 5.0


def collect_congestion(ctx: RunContext, timelines, runs, so_far: CollectedSoFar) -> dict:
    """Reconstruct each wait's bottleneck and score the platform's explanation of it (the platform's
    scheduling events as collection read them: ``so_far``)."""
    th = ctx.spec.thresholds
    watch = Stopwatch("queue congestion collector")
    with watch.stage("capacity"):
        nodes = ctx.read_file("nodes", []) or []
        cap = W.capacity(ctx.plan, [{"metadata": {"name": n["name"], "labels": n.get("labels") or {}},
                                     "status": {"allocatable": n.get("allocatable") or {}}} for n in nodes],
                         held=serving_gpus(ctx))
    with watch.stage("observations"):
        obs = read_observations(ctx)
    groups: dict[str, set[str]] = {}
    for t in timelines:
        if t.gang:
            groups.setdefault(t.gang, set()).add(t.pod)
    with watch.stage("scheduling events"):
        events = scheduling_event_observations(so_far.scheduling_events, {t.pod for t in timelines}, groups)
        ctx.writer.write_json("scheduling_events", [e.to_dict() for e in events])
    with watch.stage("watch looks"):
        looks = watched_looks(ctx)
        if looks:
            ctx.writer.write_json("watch_looks", [o.to_dict() for o in looks])
    events += looks
    with watch.stage("explain contexts"):
        context = explain_contexts(ctx)
    with watch.stage("reconstruct"):
        rows = reconstruct(timelines, obs, cap, explain_after_seconds=EXPLAIN_AFTER_SECONDS,
                           eta_tolerance_seconds=th.eta_tolerance_seconds, events=events,
                           gangs_whole=gangs_placed_whole(W.adapter_name(ctx.plan), ctx.plan.platform.options.gangs),
                           context=context)
    with watch.stage("expected waits"):
        durations = {i.name: planned_seconds(ctx.plan, i) for i in class_items(ctx.plan, ctx.test_class)}
        expected = expected_waits(timelines, durations, cap.pool_gpus)
    with watch.stage("write tables"):
        ctx.writer.write("explanations", [explanation_row(r, expected.get((r.namespace, r.pod))) for r in rows],
                         source="pipeline reconstruction")
        summary = summarize(rows, th.max_wait_seconds)
        gangs = write_gang_placements(ctx, timelines, obs)
        ctx.writer.write_json("congestion_rows", [r.to_dict() for r in rows])
        ctx.writer.write_json("congestion_summary", summary.to_dict())
    ctx.writer.write_json("collector_stages-queue_congestion", watch.as_dict())
    return {k: v for k, v in summary.to_dict().items() if k != "bottlenecks"} | {
        "bottlenecks": summary.bottlenecks, "gangs": gangs}


def explanation_row(r: CongestionRow, expected_wait_seconds: float | None) -> ExplanationRow:
    """The ``explanations`` row of one reconstructed workload: its judgement ``explained`` as it is."""
    return ExplanationRow(
        pod=r.pod, namespace=r.namespace, tenant=r.tenant, wait_seconds=r.wait_seconds,
        needs_explanation=r.needs_explanation, platform_reason=r.platform_reason, platform_message=r.platform_message,
        reconstructed_bottleneck=r.bottleneck, ahead_count=r.ahead_at_release, explained=r.explained,
        explained_from=r.explained_from, observed=r.observed if r.needs_explanation else None,
        eta_offered=r.eta_offered, eta_error_seconds=r.eta_error_seconds,
        expected_wait_seconds=expected_wait_seconds, priority_class=r.priority_class, gpus=r.gpus)


def watched_looks(ctx: RunContext) -> list[Observation]:
    """What the bulk shards' watches saw of each wait (``pod_transitions.watch_looks``; none for a wave the
    operator submitted). Under Kueue a wait is explained by its Workload, which the watch does not see, so there a
    watch's silence observes nothing."""
    pods = [PodTransitions.from_dict(d) for d in transitions(ctx.writer.files_dir)]
    return watch_looks(pods, EXPLAIN_AFTER_SECONDS, silence_counts=W.adapter_name(ctx.plan) != "kueue")


def serving_gpus(ctx: RunContext) -> dict[str, int]:
    """GPUs per node the class's serving replicas held (the most at once while observed): the wave never had
    them, so the reconstruction leaves them out of the pool (``steps.service_observer``)."""
    from gpupoc.pipeline.service_history import Replica, held_gpus
    from gpupoc.steps.service_observer import REPLICAS_FILE

    return held_gpus([Replica.from_dict(r) for r in ctx.read_file(REPLICAS_FILE, []) or []])


def explain_contexts(ctx: RunContext):
    """What a platform's text about each wave pod may name: the pod's own requests (the observer's last look at
    it) and the cluster's object names the observer read, with the objects there are now."""
    names = ClusterNames.from_dict(ctx.read_file(CLUSTER_NAMES))
    names = names.merged(gather_names(ctx.reader(), ctx.plan, ctx.namespaces))
    return contexts(ctx.observed_pods().values(), names)


def observation_end(timelines, observations) -> datetime:
    """When the wave stopped being watched: the last snapshot, else the last moment of any attempt, else now."""
    moments = [o.taken_at for o in observations] + [m for t in timelines for m in (t.scheduled_at, t.finished_at)
                                                    if m is not None]
    return max(moments) if moments else utcnow()


def write_gang_placements(ctx: RunContext, timelines, observations) -> dict:
    """``gang_placements``: one row per gang of the wave (none when the wave has no multi-pod workload)."""
    adapter = W.adapter_name(ctx.plan)
    rows = gang_rows(timelines, observation_end(timelines, observations))
    ctx.writer.write("gang_placements", [replace(r, adapter=adapter) for r in rows],
                     source="pipeline reconstruction (workload_runs timelines)")
    return {"gangs": len(rows), "partly_placed": sum(1 for r in rows if r.partial_seconds > 0),
            "longest_stall_seconds": max((r.longest_stall_seconds for r in rows), default=None)}
