"""The observer: snapshots of the wave from before its release until every wave item has an outcome.

Each snapshot records every wave pod with the platform's own reason, message, queue position and ETA (if
offered), and keeps the last state of every pod it saw, so a pod the platform deletes later (preemption,
eviction) still has its record. The observer ends as soon as no item lacks an outcome (``open_items``)
or at its deadline, and reports what it still waits for while it runs. It decides whether an ended attempt is
followed by another from the wave tasks (their states and recorded decisions) and, before a task said
anything, from the attempt's outcome on the same records the task decides with (``open_items``); every new
attempt it waited for is recorded with whether it came (``Observed.awaited``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterable

from gpupoc.common.api_retry import ApiGaveUp
from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.common.outcomes import WorkloadOutcome
from gpupoc.common.timefmt import parse_time, utcnow
from gpupoc.pipeline.attempts import Evidence, classify_attempt
from gpupoc.pipeline.cluster_names import contexts, gather_names
from gpupoc.pipeline.k8s import KubeCaller
from gpupoc.pipeline.open_items import Open, Policy, TaskView, open_items
from gpupoc.pipeline.readable import ClusterNames
from gpupoc.pipeline.scheduler_objects import explain, kueue_workloads, podgroup_statements
from gpupoc.pipeline.scheduler_objects import owned_pods as _owned_pods
from gpupoc.pipeline.timelines import Observation
from gpupoc.pipeline.wave import TERMINAL, adapter_name, item_key, list_pods
from gpupoc.pipeline.workload_outcome import OutcomeRecord, Statement

SCHEDULING_EVENT_REASONS = frozenset({"FailedScheduling", "Unschedulable", "PodGroupNotReady", "Pending"})
ETA_ANNOTATION = "gpupoc.io/platform-eta"


def _condition(pod: dict, type_: str) -> dict:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == type_), {})


def _gates(pod: dict) -> list[str]:
    return [g.get("name", "") for g in (pod.get("spec") or {}).get("schedulingGates") or []]


def _event_time(e: dict) -> str:
    return e.get("eventTime") or e.get("lastTimestamp") or e.get("firstTimestamp") or ""


def list_events(caller: KubeCaller, namespaces: Iterable[str]) -> list[dict]:
    """Every event of the namespaces (a namespace whose events cannot be read contributes none), each naming
    its namespace: an event the server answered without one is a copy that does; the others are the answer's
    own objects, not copied (50,000 events at every look of a 10,000-pod wave). Read, never changed."""
    out: list[dict] = []
    for ns in sorted(set(namespaces)):
        r = caller.call("GET", f"/api/v1/namespaces/{ns}/events")
        if r.ok and isinstance(r.body, dict):
            out += [e if (e.get("metadata") or {}).get("namespace") else _in_namespace(e, ns)
                    for e in r.body.get("items") or []]
    return out


def _in_namespace(event: dict, namespace: str) -> dict:
    return {**event, "metadata": {**(event.get("metadata") or {}), "namespace": namespace}}


def latest_events(events: list[dict], pod_names: set[str]) -> dict[tuple[str, str], dict]:
    """(namespace, pod) -> the newest event about it (a Warning if any, else the newest)."""
    out: dict[tuple[str, str], dict] = {}
    for e in sorted(events, key=_event_time):
        name = (e.get("involvedObject") or {}).get("name")
        if name not in pod_names:
            continue
        key = (e["metadata"]["namespace"], name)
        if e.get("type") == "Warning" or key not in out or out[key].get("type") != "Warning":
            out[key] = e
    return out


def scheduling_events(events: Iterable[dict]) -> tuple[dict, ...]:
    """The events (of ``list_events``) that say why a pod could not be scheduled."""
    return tuple(e for e in events if e.get("reason") in SCHEDULING_EVENT_REASONS)


def scheduling_event_observations(events: Iterable[dict], pod_names: set[str],
                                  groups: dict[str, set[str]] | None = None) -> list[Observation]:
    """Every moment the platform said why a wave pod could not be scheduled (first and last time of each
    aggregated event), as observations: what a user reads in ``kubectl describe`` after the fact. ``events``
    are the namespaces' events as ``list_events`` gives them (collection reads them once). Events on a pod's
    Kueue Workload count for the pod (``event_pods``; ``groups``: gang key -> its pods)."""
    out: list[Observation] = []
    for e in scheduling_events(events):
        moments = {parse_time(x) for x in (e.get("firstTimestamp"), e.get("lastTimestamp"), e.get("eventTime"))}
        for name in event_pods(e.get("involvedObject") or {}, pod_names, groups or {}):
            for at in sorted(m for m in moments if m is not None):
                out.append(Observation(taken_at=at, pod=name, namespace=e["metadata"]["namespace"],
                                       event_reason=e.get("reason"), event_message=e.get("message") or e.get("note")))
    return sorted(out, key=lambda o: (o.taken_at, o.namespace, o.pod))


def event_pods(involved: dict, pod_names: set[str], groups: dict[str, set[str]]) -> list[str]:
    """The wave pods an event is about: the pod itself, or the pods of the Kueue Workload or the PodGroup it
    names. Kueue names a pod's Workload ``pod-<pod name>-<5 hex>``; a gang's Workload or PodGroup is named after
    the gang, ``<gang key>-<5 hex>`` (the gang keys in ``groups``)."""
    name = str(involved.get("name") or "")
    if involved.get("kind") not in ("Workload", "PodGroup"):
        return [name] if name in pod_names else []
    stem, _, digest = name.rpartition("-")
    if len(digest) != 5:
        return []
    if stem in groups:
        return sorted(groups[stem] & pod_names)
    pod = stem[len("pod-"):] if stem.startswith("pod-") else ""
    return [pod] if pod in pod_names else []


# Conditions of an owning object that say why its pod ended (Kueue Workload; Volcano/KAI pod groups).
_OWNER_CONDITIONS = ("Evicted", "Preempted", "Requeued", "Unschedulable")


def owner_statements(caller: KubeCaller, plan, namespaces: Iterable[str]) -> tuple[
        dict[tuple[str, str], list[Statement]], dict[str, str]]:
    """(namespace, pod) -> what the objects owning the pod say (Kueue Workload conditions; Volcano and KAI
    PodGroup events that name the pod), and owner uid -> ``ns/pod`` so a preemptor named by its workload's
    uid can be resolved."""
    out: dict[tuple[str, str], list[Statement]] = {}
    uids: dict[str, str] = {}
    if plan is not None and adapter_name(plan) in ("volcano", "kai"):
        return podgroup_statements(list_events(caller, namespaces)), uids
    if plan is None or adapter_name(plan) != "kueue":
        return out, uids
    for wl in kueue_workloads(caller, namespaces):
        ns, pods = wl["metadata"]["namespace"], _owned_pods(wl)
        for name in pods:
            if wl["metadata"].get("uid"):
                uids[wl["metadata"]["uid"]] = f"{ns}/{name}"
            for c in (wl.get("status") or {}).get("conditions") or []:
                if c.get("type") in _OWNER_CONDITIONS and str(c.get("status")) == "True":
                    out.setdefault((ns, name), []).append(Statement(
                        c.get("reason"), c.get("message"), parse_time(c.get("lastTransitionTime")),
                        f"Workload condition {c.get('type')}", "kueue"))
    return out, uids


@dataclass
class Snapshot:
    """One look at the wave: observations, the pods themselves and the namespaces' events."""

    observations: list[Observation]
    pods: list[dict]
    events: list[dict]


def observe_once(caller: KubeCaller, namespaces: list[str], label_selector: str, plan=None,
                 clock: Callable[[], datetime] = utcnow) -> Snapshot:
    """Every wave pod with the platform's own reason, message, position and ETA (if any), and what its
    scheduler's own objects say, as they said it: nothing is judged here (``congestion.reconstruct`` judges)."""
    taken = clock()  # when the look began: a list of thousands of pods answers seconds later, and a pod seen
    # still gated must not be dated after its release (one moment for the whole look: it is one snapshot)
    pods = list_pods(caller, namespaces, label_selector)
    events = list_events(caller, namespaces)
    latest = latest_events(events, {p["metadata"]["name"] for p in pods})
    obs = []
    for p in pods:
        m, spec, st = p["metadata"], p.get("spec") or {}, p.get("status") or {}
        key = (m["namespace"], m["name"])
        cond = _condition(p, "PodScheduled")
        waiting = cond.get("status") != "True"
        ev = latest.get(key, {})
        obs.append(Observation(
            taken_at=taken, pod=m["name"], namespace=m["namespace"], phase=st.get("phase") or "Pending",
            node=spec.get("nodeName"), gates=tuple(_gates(p)),
            reason=cond.get("reason") if waiting else None, message=cond.get("message") if waiting else None,
            event_reason=ev.get("reason"), event_message=ev.get("message"),
            eta=parse_time((m.get("annotations") or {}).get(ETA_ANNOTATION)), item=item_key(p)))
    obs = explain(caller, plan, namespaces, pods, events, obs)  # the scheduler's own objects
    return Snapshot(obs, pods, events)


@dataclass
class Awaited:
    """A new attempt the observer waited for after ``after`` ended, and whether it came."""

    item: str
    after: str
    waiting_for: str
    came: bool = False

    def to_dict(self) -> dict:
        return {"item": self.item, "after": self.after, "waiting_for": self.waiting_for, "came": self.came}


@dataclass
class Observed:
    """What the observer saw: the last state of every pod, the attempts per item (each snapshot's observations
    go to ``on_snapshot``, which keeps what it needs)."""

    last_seen: dict[tuple[str, str], dict] = field(default_factory=dict)
    seen: dict[str, list[str]] = field(default_factory=dict)      # item -> pod names in order of appearance
    open: list[Open] = field(default_factory=list)                # items without an outcome at the end
    events: list[dict] = field(default_factory=list)              # the last snapshot's
    names: ClusterNames = field(default_factory=ClusterNames)     # the cluster's object names, read at the start
    awaited: dict[tuple[str, str], Awaited] = field(default_factory=dict)  # (item, ended pod) -> its successor
    ended_at: dict[tuple[str, str], float] = field(default_factory=dict)   # pod -> first seen ended or missing
    missed_looks: list[str] = field(default_factory=list)  # looks the API server refused too long (why each)
    _known: dict[tuple[str, str], OutcomeRecord] = field(default_factory=dict, repr=False)  # ended attempts

    def _track(self, snap: Snapshot, items: dict[str, str], now: float) -> dict:
        present = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in snap.pods}
        for key, p in sorted(present.items(), key=lambda kv: kv[1]["metadata"].get("creationTimestamp") or ""):
            self.last_seen[key] = p
            item = item_key(p)
            if item in items and key[1] not in self.seen.setdefault(item, []):
                self.seen[item].append(key[1])
            if (p.get("status") or {}).get("phase") in TERMINAL or p["metadata"].get("deletionTimestamp"):
                self.ended_at.setdefault(key, now)
        for key in self.last_seen:
            if key not in present:
                self.ended_at.setdefault(key, now)
        for (item, after), a in self.awaited.items():
            a.came = a.came or (self.seen.get(item) or [after])[-1] != after
        return present

    def outcomes(self, snap: Snapshot, present: dict, records: Callable[[list[dict]], Evidence]):
        """``key -> OutcomeRecord`` of an ended attempt: from the snapshot's events first, from every record
        (``records``: owners' conditions, the audit log) only when those leave it lost; kept once final. The
        snapshot's events are indexed once for all its attempts, not once per attempt."""
        full: list[Evidence] = []
        seen_now = Evidence(snap.events)

        def outcome_of(key: tuple[str, str]) -> OutcomeRecord:
            if key in self._known:
                return self._known[key]
            pod, here = present.get(key) or self.last_seen.get(key), key in present
            out = classify_attempt(key, pod, here, seen_now)
            if out.outcome is WorkloadOutcome.LOST:
                if not full:
                    full.append(records(snap.events))
                out = classify_attempt(key, pod, here, full[0])
            if out.outcome.final and out.outcome is not WorkloadOutcome.LOST:
                self._known[key] = out
            return out

        return outcome_of

    def _await(self, open_now: list[Open]) -> None:
        for o in open_now:
            if o.after is not None:
                self.awaited.setdefault((o.item, o.after), Awaited(o.item, o.after, o.waiting_for))


def observe_wave(caller: KubeCaller, namespaces: list[str], label_selector: str, items: dict[str, str], *,
                 interval_s: float, timeout_s: float, plan=None, policy: Policy = Policy(),
                 tasks: Callable[[], TaskView] = TaskView, records: Callable[[list[dict]], Evidence] = Evidence,
                 on_snapshot: Callable[[Snapshot, bool], None] | None = None,
                 on_waiting: Callable[[list[Open], float], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep, seen_before: Iterable[dict] = (),
                 clock: Callable[[], datetime] = utcnow,
                 monotonic: Callable[[], float] = time.monotonic,
                 all_ended_since: Callable[[Iterable[str], datetime], bool] | None = None) -> Observed:
    """A snapshot every ``interval_s`` (right after the last when a look takes longer) until every item
    (key -> namespace) has its outcome, or ``timeout_s``.

    ``tasks()`` says what the wave tasks decided and where they are; ``records(events)`` what the platform
    recorded beside the snapshot's events (owners' conditions, the audit log), read only when an ended
    attempt needs its outcome. ``on_waiting(open items, seconds left)`` is called after every snapshot that
    leaves items open; ``on_snapshot(snapshot, last)`` after every snapshot, ``last`` when it is the final
    one. ``seen_before`` are the pods an earlier try of the observer saw (their last state): a
    retried observer goes on from them, so an attempt that vanished meanwhile keeps its place. ``clock`` dates
    each snapshot; ``monotonic`` measures the looks and the deadline. ``all_ended_since(items, moment)`` (the
    watch's record) says whether a pod of each item ended after a moment: once every open item's has, the next
    look is taken at once instead of at its interval (the wave's last pods decide when the verdict comes)."""
    start = monotonic()
    deadline = start + timeout_s
    result = Observed(names=gather_names(caller, plan, namespaces))
    result._track(Snapshot([], list(seen_before), []), items, start)
    while True:
        looked, look_began = monotonic(), clock()
        try:
            snap = observe_once(caller, namespaces, label_selector, plan, clock)
        except ApiGaveUp as exc:  # refused for too long (throttled, unavailable): the next look goes on
            if monotonic() >= deadline:
                raise
            result.missed_looks.append(str(exc))
            sleep(interval_s)
            continue
        now = monotonic()
        present = result._track(snap, items, now)
        result.open = open_items(items, result.seen, present, result.ended_at, now, policy, tasks(),
                                 result.outcomes(snap, present, records))
        result._await(result.open)
        last = not result.open or now >= deadline
        if on_snapshot:
            on_snapshot(snap, last)
        if last:
            result.events = snap.events
            return result
        if on_waiting:
            on_waiting(result.open, deadline - now)
        snap = present = None  # the next snapshot is read without this one's lists (10,000 pods, their events)
        wait = max(0.0, interval_s - (monotonic() - looked))  # a look of 10,000 pods takes seconds itself
        still = [o.item for o in result.open]
        all_ended = (lambda: all_ended_since(still, look_began)) if all_ended_since and still else None
        rest(wait, all_ended, sleep, monotonic)


# how often a rest between two looks asks whether every open item's pod has ended (a lookup per open item, up to
# the first still running): the last look comes at most this long after the wave's last pod ended
WAKE_POLL_SECONDS = 0.1


def rest(seconds: float, all_ended: Callable[[], bool] | None,
         sleep: Callable[[float], None], monotonic: Callable[[], float]) -> None:
    """``seconds`` until the next look, or less once a pod of every open item ended (``all_ended()``; without
    it, the whole ``seconds``)."""
    if all_ended is None:
        sleep(seconds)
        return
    end = monotonic() + seconds
    while (left := end - monotonic()) > 0:
        if all_ended():
            return
        sleep(min(WAKE_POLL_SECONDS, left))


def snapshot_rows(obs: list[Observation], tenants_by_ns: dict[str, str], source: str, pods: Iterable[dict] = (),
                  names: ClusterNames = ClusterNames()) -> list[dict]:
    """``queue_snapshots`` rows (only pods not yet bound: the ones waiting), each with the platform's most
    telling text about the pod (``pods`` and ``names``: what a text may name)."""
    context = contexts(pods, names)
    told: dict[tuple, tuple[str | None, str | None]] = {}  # a pod says the same in snapshot after snapshot
    rows = []
    for o in obs:
        if o.node or o.phase in TERMINAL:
            continue
        said = (o.namespace, o.pod, o.reason, o.message, o.event_reason, o.event_message, o.scheduler_said)
        if said not in told:
            told[said] = o.explanation(context(o.namespace, o.pod))
        reason, message = told[said]
        rows.append({"ts": o.taken_at, "pod": o.pod, "namespace": o.namespace, "phase": o.phase,
                     "reason": reason, "message": message,
                     "position": o.position,
                     "eta_seconds": (o.eta - o.taken_at).total_seconds() if o.eta else None,
                     "source": source, "tenant": tenants_by_ns.get(o.namespace),
                     "queue": ",".join(g for g in o.gates if g != PIPELINE_GATE) or ",".join(o.gates) or None})
    return rows
