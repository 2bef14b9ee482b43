"""The wave's steps under the class's GPU lease: lift the gate of the whole wave at once, and observe it
from before the release until every item has an outcome."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from gpupoc.common.forked import start_in_child
from gpupoc.common.gc_pace import let_go_at_exit
from gpupoc.common.stopwatch import Stopwatch
from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.evidence.writer import temporary_path
from gpupoc.pipeline import waits
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.async_release import lift_gates
from gpupoc.pipeline.k8s import KubeCaller
from gpupoc.pipeline.observe import Observed, observe_wave, snapshot_rows
from gpupoc.pipeline.watch_cache import WatchingCaller, watching
from gpupoc.pipeline.watch_resume import (RESUME_FROM_PODS, SavedCollection, is_pod_list, pods_held,
                                          saved_collections, saved_records)
from gpupoc.pipeline.watch_record import WatchedPods
from gpupoc.pipeline.open_items import Policy, TaskState
from gpupoc.steps.observation_parts import ObservationParts
from gpupoc.steps.context import RunContext
from gpupoc.steps.attempt_decision import task_view
from gpupoc.steps.bulk import in_bulk, shards
from gpupoc.steps.markers import (CLUSTER_NAMES, OBSERVED_PODS, OBSERVER_API, OBSERVER_END, OBSERVER_LISTS,
                                  OBSERVER_STAGES, OBSERVING_FILE, RELEASE_FILE, RELEASING_FILE)
from gpupoc.steps.replay import is_replay, release_schedule
from gpupoc.steps.shard_files import OBSERVER_TRANSITIONS, created_pods, still_creating

SNAPSHOT_SOURCE = "kubernetes-api"
# How often the observer saves what it saw so far (a retried observer goes on from there): every save rewrites
# all observations, so at 1,000 pods a save every few seconds would cost more than the snapshots.
CHECKPOINT_SECONDS = 15.0  # a killed observer's retry loses up to this much (more at scale: below)
# ... and at 10,000 pods a save takes seconds itself: the next waits this many times the last save's duration,
# so saving takes at most a tenth of the observer's time and never delays its looks for long.
CHECKPOINT_COST_FACTOR = 10.0


@dataclass
class CheckpointPace:
    """When the observer saves next: ``CHECKPOINT_SECONDS`` after the last save ended, or ``CHECKPOINT_COST_FACTOR``
    times as long as that save took, whichever is later."""

    next_at: float = float("-inf")

    def due(self, now: float) -> bool:
        return now >= self.next_at

    def saved(self, began: float, ended: float) -> None:
        self.next_at = ended + max(CHECKPOINT_SECONDS, CHECKPOINT_COST_FACTOR * (ended - began))


def release_gate(ctx: RunContext, observer_wait_s: float = 60.0,
                 task_states: Callable[[], dict[str, TaskState] | None] | None = None) -> dict:
    """Wait until every pod of the wave exists and the observer has taken its first snapshot, then lift the
    pipeline's gate of all of them at once (without the observer after ``observer_wait_s``: recorded); a
    replayed wave is released on its schedule instead (``gpupoc.steps.replay``). No pod is waited for that
    nobody will create: an item whose creation was refused, or whose task ended (``task_states()``, where the
    orchestrator says)."""
    expected = [i["workload_key"] for i in ctx.items]
    admin = ctx.admin("release the wave")
    deadline = time.monotonic() + observer_wait_s
    waits.write_note(ctx.run_dir, "release_gate", "the observer's first snapshot", observer_wait_s)
    while not ctx.files(OBSERVING_FILE).is_file() and time.monotonic() < deadline:
        time.sleep(0.5)
    observer_ready = ctx.files(OBSERVING_FILE).is_file()
    if is_replay(ctx):  # the history's arrival times, not all at once
        return release_schedule(ctx, observer_ready)

    def refused() -> set[str]:
        states = (task_states() if task_states else None) or {}
        return ({s.item for s in ctx.submissions() if s.rejection is not None}
                | {item for item, state in states.items() if state is TaskState.ENDED})

    def waiting(missing: list[str], left_s: float) -> None:
        waits.write_note(ctx.run_dir, "release_gate", f"{len(missing)} of {len(expected)} wave pods to be created "
                         f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''})", left_s)

    def creating(left: int, left_s: float) -> None:
        waits.write_note(ctx.run_dir, "release_gate", f"{left} of {len(bulk)} bulk shards to send their "
                         f"creations", left_s)

    bulk = shards(ctx) if in_bulk(ctx) else []
    try:
        timeout_s = await_shards_created(ctx.writer.files_dir, len(bulk), ctx.spec.gate_timeout_seconds, creating)
        rel = W.release_wave(admin, ctx.namespaces, ctx.selector, expected, timeout_s=timeout_s,
                             refused=refused, on_waiting=waiting,
                             on_lifting=lambda: ctx.writer.write_json(RELEASING_FILE, {"at": rfc3339(utcnow())}),
                             lift_all=async_lifter(ctx, admin, len(bulk)) if bulk else None,
                             created=shards_created(ctx, len(bulk)))
    finally:
        waits.clear_note(ctx.run_dir, "release_gate")
    ctx.writer.write_json(RELEASE_FILE, {**rel.to_dict(), "observer_ready": observer_ready})
    return {"found": rel.found, "missing": rel.missing, "arrival_spread_seconds": rel.arrival_spread_seconds,
            "release_spread_seconds": rel.release_spread_seconds, "errors": rel.errors[:5],
            "observer_ready": observer_ready}


def shards_created(ctx: RunContext, count: int) -> dict[str, dict] | None:
    """The pods the ``count`` bulk shards created, as their markers list them, for a first release: a release
    that began before (a retry) lists the wave to learn which gates an earlier try lifted, and so does a release
    whose shards did not all say it in time (``shard_files.created_pods``)."""
    if not count or ctx.files(RELEASING_FILE).is_file():
        return None
    return created_pods(ctx.writer.files_dir, count)


def await_shards_created(files_dir: Path, count: int, timeout_s: float,
                         on_waiting: Callable[[int, float], None] = lambda left, seconds: None, step_s: float = 0.1,
                         sleep: Callable[[float], None] = time.sleep,
                         clock: Callable[[], float] = time.monotonic) -> float:
    """Wait, without asking the API server, until each of the ``count`` bulk shards has said it sent every
    creation (``shard_files.CREATED_PREFIX``), at most ``timeout_s``; the seconds left. Listing a wave of
    thousands of pods while they are being created would take the API server's time from the creations, and
    its answer would be stale by the time it came; ``on_waiting(shards left, seconds left)`` about once a second."""
    deadline = clock() + timeout_s
    told = float("-inf")
    while clock() < deadline:
        left = still_creating(files_dir, count)
        if not left:
            break
        if clock() - told >= 1.0:
            on_waiting(left, deadline - clock())
            told = clock()
        sleep(step_s)
    return max(0.0, deadline - clock())


def async_lifter(ctx: RunContext, admin, shard_count: int) -> W.LiftAll:
    """A bulk wave's gates lifted through the async client, many at once (``async_release``), at the plan's
    release rate (by default the ``shard_count`` shards' rates together); each PATCH goes into the task's
    ledger as the administrator's client records its own requests."""

    def record(path: str, answer, started) -> None:
        admin.record_answer("PATCH", path, answer.status, started)

    kubeconfig = str(ctx.plan.kubeconfig_path) if ctx.plan.kubeconfig_path else None
    qps, burst = ctx.spec.submission.release_rate(shard_count)
    return lambda pods, patch: lift_gates(kubeconfig, ctx.admin_context, pods, patch, qps, burst, record)


def observe(ctx: RunContext, task_states: Callable[[], dict[str, TaskState] | None] | None = None) -> dict:
    """Queue snapshots every few seconds from before the release until every wave item has an outcome;
    kept as files (observations, the last state of every pod seen, the new attempts it waited for) and
    ``queue_snapshots``. ``task_states()`` says where each item's wave task is (the orchestrator's view); an
    item whose task ended is never waited for."""
    interval = float(getattr(ctx.spec, "snapshot_interval_seconds", 3))
    policy = ctx.spec.resubmission
    parts = ObservationParts.resumed(ctx)
    acc = parts.kept
    seen_pods: dict[str, dict] = {_pod_key(p): p for p in ctx.read_file(OBSERVED_PODS, []) or []}
    pace = CheckpointPace()  # the first snapshot (the gated wave, before release) is kept at once

    def keep(snap, last: bool) -> None:
        acc.extend(snap.observations)
        seen_pods.update({_pod_key(p): p for p in snap.pods})
        if not ctx.files(OBSERVING_FILE).is_file():
            ctx.writer.write_json(OBSERVING_FILE, {"first_snapshot_at": rfc3339(utcnow())})
        if not last and pace.due(time.monotonic()):  # the last is saved whole right after
            began = time.monotonic()
            _save_observed(ctx, parts, seen_pods)
            ctx.writer.write_json(OBSERVER_TRANSITIONS.removesuffix(".json"), watched.to_dicts())
            pace.saved(began, time.monotonic())

    def waiting(open_items, left_s: float) -> None:
        names = ", ".join(o.item for o in open_items[:4]) + (" ..." if len(open_items) > 4 else "")
        waits.write_note(ctx.run_dir, "observe", f"{len(open_items)} wave item outcome(s) ({names})", left_s)

    watched = WatchedPods.from_dicts(ctx.read_file(OBSERVER_TRANSITIONS.removesuffix(".json"), []) or [])
    caller = watching(ctx.reader(), watched.handler)  # reads only: not ledgered; one list, then watches
    watching_pods = isinstance(caller, WatchingCaller)
    items = {i["workload_key"]: i["namespace"] for i in ctx.items}
    clock = Stopwatch("observe")
    try:
        with clock.stage("looks"):
            result = observe_wave(caller, ctx.namespaces, ctx.selector, items, interval_s=interval,
                                  timeout_s=ctx.observe_timeout_s(), plan=ctx.plan,
                                  policy=Policy(policy.limit, policy.platform_requeues, policy.wait_seconds),
                                  tasks=lambda: task_view(ctx, task_states() if task_states else None),
                                  records=lambda events: ctx.platform_records(events=events),
                                  on_snapshot=keep, on_waiting=waiting, seen_before=list(seen_pods.values()),
                                  all_ended_since=watched.all_ended_since if watching_pods else None)
    except BaseException:
        if watching_pods:  # what a retry goes on from
            caller.close()
            _save_watch_record(ctx, caller, watched)
            save_lists(ctx, caller, seen_pods)
        raise
    finally:
        waits.clear_note(ctx.run_dir, "observe")
    rows = _save_at_end(ctx, clock, caller, watched, seen_pods, parts, result)
    ctx.writer.write_json(OBSERVER_STAGES, clock.as_dict())
    let_go_at_exit(acc, seen_pods, watched, caller, result, parts, rows)
    return {"snapshots": len({o.taken_at for o in acc}), "rows": len(rows),
            "open_at_deadline": [o.item for o in result.open],
            "awaited_attempts": len(result.awaited),
            "awaited_in_vain": [a.item for a in result.awaited.values() if not a.came]}


def _save_at_end(ctx: RunContext, clock: Stopwatch, caller: KubeCaller, watched: WatchedPods,
                 seen_pods: dict[str, dict], parts: ObservationParts, result: Observed) -> list[dict]:
    """What the observer saw, saved once its looks ended: the lists handed to collection, the last state of every
    pod, the watch's record, the observations, and the ``queue_snapshots`` rows (returned). The largest (the pods
    and the lists' files) are written by a child process beside the rest."""
    lists, files = [], []  # the watched lists handed to collection (a watching reader's only), their files
    if isinstance(caller, WatchingCaller):
        caller.close()
        with clock.stage("lists for collection"):
            lists, files = planned_lists(caller, seen_pods)
    for pod in watched.last_objects():  # a pod that lived between two looks (lost at once): as its watch saw it
        seen_pods.setdefault(_pod_key(pod), pod)
    saved_aside = _save_aside(ctx, seen_pods, files)  # the largest saves, beside the rest
    if isinstance(caller, WatchingCaller):
        with clock.stage("transitions"):
            _save_watch_record(ctx, caller, watched)
    with clock.stage("observations"):
        parts.save()
    ctx.writer.write_json(CLUSTER_NAMES, result.names.to_dict())
    ctx.writer.write_json(OBSERVER_END, {"open_at_deadline": [o.item for o in result.open],
                                         "awaited": [a.to_dict() for a in result.awaited.values()],
                                         "missed_looks": result.missed_looks[:20]})
    tenants = {t.namespace: t.name for t in ctx.plan.tenants}
    with clock.stage("queue snapshots"):
        rows = snapshot_rows(parts.kept, tenants, SNAPSHOT_SOURCE, seen_pods.values(), result.names)
        ctx.writer.write("queue_snapshots", rows, source=SNAPSHOT_SOURCE)
    with clock.stage("observed pods and lists"):
        if not saved_aside():
            _save_pods(ctx, seen_pods)
            write_lists(ctx, files)
    if lists:  # named only once the pods they name are saved
        ctx.writer.write_json(OBSERVER_LISTS, lists)
    return rows


def save_lists(ctx: RunContext, caller: WatchingCaller, seen_pods: dict[str, dict]) -> list[dict]:
    """The wave's pods and its namespaces' events as the watches held them, for collection to resume: the
    entries of ``OBSERVER_LISTS`` (``planned_lists``), their files written."""
    entries, files = planned_lists(caller, seen_pods)
    write_lists(ctx, files)
    return entries


ListFiles = list[tuple[str, SavedCollection]]  # (file name, the list it holds)


def planned_lists(caller: WatchingCaller, seen_pods: dict[str, dict]) -> tuple[list[dict], ListFiles]:
    """The entries of ``OBSERVER_LISTS``, each list's request and resourceVersion, for a wave of
    ``RESUME_FROM_PODS`` pods or more (none below), and the files to write (name, list): the events a file per
    list. The pods are not saved twice: each pod list names its pods, whose held state goes into ``seen_pods``
    (saved as ``OBSERVED_PODS``)."""
    saved = list(saved_collections(caller, ("pods", "events")))
    if pods_held(saved) < RESUME_FROM_PODS:
        return [], []
    entries, files = [], []
    for i, collection in enumerate(saved):
        if is_pod_list(collection):
            seen_pods.update({_pod_key(p): p for p in collection.items})
            entries.append({**collection.header(), "pods": sorted(_pod_key(p) for p in collection.items)})
            continue
        entries.append({"file": f"{OBSERVER_LISTS}-{i}", **collection.header()})
        files.append((entries[-1]["file"], collection))
    return entries, files


def write_lists(ctx: RunContext, files: ListFiles) -> None:
    """Each planned list's file, read back one at a time by collection."""
    for name, collection in files:
        ctx.writer.write_json_items(name, saved_records([collection]))


def _save_watch_record(ctx: RunContext, caller: WatchingCaller, watched: WatchedPods) -> None:
    """The watch's record of each pod's transitions, and what the watches cost the API server."""
    ctx.writer.write_json(OBSERVER_TRANSITIONS.removesuffix(".json"), watched.to_dicts())
    ctx.writer.write_json(OBSERVER_API, caller.stats())


def _pod_key(p: dict) -> str:
    return f"{p['metadata']['namespace']}/{p['metadata']['name']}"


def _save_observed(ctx: RunContext, parts: ObservationParts, pods: dict[str, dict]) -> None:
    """The observations since the last save (``steps/observation_parts.py``) and the last state of every pod
    seen, each written item by item."""
    parts.save()
    _save_pods(ctx, pods)


def _save_pods(ctx: RunContext, pods: dict[str, dict]) -> None:
    ctx.writer.write_json_items(OBSERVED_PODS, (pods[k] for k in sorted(pods)))


# from this many pods the observer's last save of its pods and its lists is written by a child process, beside its
# other saves (10,000 pods: some 100 MB, a second)
PODS_SAVED_ASIDE_FROM = 1000
# how long the observer waits for that child before writing them itself
PODS_ASIDE_TIMEOUT_S = 300.0


def _save_aside(ctx: RunContext, pods: dict[str, dict], files: ListFiles) -> Callable[[], bool]:
    """Start the save of ``pods`` and the lists' ``files`` in a forked child, for a wave of
    ``PODS_SAVED_ASIDE_FROM`` pods or more; returns whether that child saved them (waiting for it). A child that
    failed or was too slow leaves no file half-written: the caller saves them itself."""
    if len(pods) < PODS_SAVED_ASIDE_FROM:
        return lambda: False
    child = start_in_child(lambda: (_save_pods(ctx, pods), write_lists(ctx, files)))

    def saved() -> bool:
        if child.join(PODS_ASIDE_TIMEOUT_S):
            return True
        for name in (OBSERVED_PODS, *(name for name, _ in files)):
            temporary_path(ctx.writer.document_path(name), child.pid).unlink(missing_ok=True)
        return False

    return saved
