"""How one attempt of a wave item ended, from what the platform itself recorded.

Pure functions. The inputs are the platform's own records, whatever its wording: the pod (its phase, its
``DisruptionTarget`` condition, ``status.reason``), the events about it, the conditions of the objects that
own it (a Kueue Workload, a Volcano or KAI pod group), the audit log's delete requests, and the admission
answer to its creation. The vocabulary is ``WorkloadOutcome``; an attempt that vanished with none of these
saying why is LOST, and only that fails "no task lost".

Words are matched loosely on purpose (``preempt``, ``evict``, ``taint``...): kube-scheduler, Kueue, Volcano
and KAI word the same behaviour differently, and a verdict must not depend on the wording the pipeline knows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpupoc.common.outcomes import WorkloadOutcome
from gpupoc.common.timefmt import parse_time

# DisruptionTarget reasons (Kubernetes >= 1.26) and what they mean.
_DISRUPTION = {
    "PreemptionByScheduler": WorkloadOutcome.PREEMPTED,
    "PreemptionByKubeScheduler": WorkloadOutcome.PREEMPTED,
    "DeletionByTaintManager": WorkloadOutcome.EVICTED,
    "EvictionByEvictionAPI": WorkloadOutcome.EVICTED,
    "TerminationByKubelet": WorkloadOutcome.EVICTED,
    "DeletionByPodGC": WorkloadOutcome.EVICTED,
}
# "preempted", "preempting", "because of preempt" - not kube-scheduler's "preemption: ..." post-filter note
# inside a FailedScheduling message, which says the pod itself could NOT preempt.
_PREEMPTION_WORDS = re.compile(r"preempted|preempting|\bpreempt\b|PreemptionBy", re.I)
# Statements about a pod waiting to be scheduled never say how a running pod ended.
_SCHEDULING_REASONS = {"FailedScheduling", "Unschedulable", "SchedulingGated", "PodGroupNotReady", "NotEnoughResources",
                       "Scheduled", "Pending", "WaitingForQuota", "QuotaReserved"}
_EVICTION_WORDS = re.compile(r"evict|taint|node ?lost|node(\s+\S+)?\s+is\s+not\s+ready|NodeNotReady|"
                             r"marking for deletion|node failure|drain|NodeShutdown|low on resource", re.I)
# Status reasons of a pod the kubelet or node lifecycle ended (phase Failed, no container exit to blame).
_EVICTED_STATUS = {"Evicted", "NodeLost", "NodeShutdown", "Terminated", "UnexpectedAdmissionError", "Shutdown"}
# Identities whose delete of a pod is the scheduler's decision (preemption) or the node lifecycle's (eviction).
_SCHEDULER_IDENTITY = re.compile(r"^system:kube-scheduler$|kueue|volcano|kai-scheduler|scheduler", re.I)
_EVICTION_IDENTITY = re.compile(r"node-controller|^system:node:|pod-garbage-collector|taint|eviction|"
                                r"node-lifecycle", re.I)
_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_BY_POD = re.compile(r"by (?:pod |a pod |(?:higher priority )?workload )?(?P<ns>[a-z0-9-]+)/(?P<name>[a-z0-9.-]+)",
                     re.I)


@dataclass(frozen=True)
class Statement:
    """Something the platform said about a pod: an event, or a condition of the pod or of its owner."""

    reason: str | None
    message: str | None
    at: datetime | None = None
    source: str = "event"
    component: str | None = None

    @property
    def text(self) -> str:
        return f"{self.reason or ''} {self.message or ''}"


@dataclass(frozen=True)
class Deletion:
    """A delete request on the pod, as the audit log recorded it."""

    username: str
    at: datetime | None = None
    code: int | None = None


@dataclass(frozen=True)
class Rejection:
    """The admission answer that refused the pod's creation."""

    status: int
    message: str
    at: datetime | None = None


@dataclass(frozen=True)
class OutcomeRecord:
    """One attempt's outcome and the platform's record that says so."""

    outcome: WorkloadOutcome
    at: datetime | None = None
    by: str | None = None        # the preemptor (pod or uid), the deleting identity, the evicting component
    reason: str | None = None    # the platform's reason word
    message: str | None = None   # the platform's message
    source: str | None = None    # where it was read: pod status, condition, event, audit log, admission

    @property
    def explained(self) -> bool:
        """The platform itself said why (a reason or message from its own records)."""
        return bool((self.reason or self.message) and self.source and self.source != "none")

    def evidence(self) -> str:
        """``preempted by pod team-a/x at 2026-...: event Preempted: Preempted by pod ... on node n``."""
        head = self.outcome.value + (f" by {self.by}" if self.by else "")
        head += f" at {self.at.isoformat()}" if self.at else ""
        said = ": ".join(p for p in (self.reason, self.message) if p)
        return f"{head} ({self.source}: {said})" if said else f"{head} ({self.source or 'no record'})"


def pod_statements(pod: dict) -> list[Statement]:
    """The pod's own disruption records: ``DisruptionTarget`` condition, ``status.reason``/``message``."""
    st = pod.get("status") or {}
    out = []
    for c in st.get("conditions") or []:
        if c.get("type") == "DisruptionTarget" and str(c.get("status")) == "True":
            out.append(Statement(c.get("reason"), c.get("message"), parse_time(c.get("lastTransitionTime")),
                                 "condition DisruptionTarget"))
    if st.get("reason") and st.get("reason") in _EVICTED_STATUS | {"Preempting", "Preempted"}:
        out.append(Statement(st.get("reason"), st.get("message"), None, "pod status"))
    return out


def event_statements(events: list[dict], namespace: str, pod: str) -> list[Statement]:
    """Events about ``namespace/pod`` (core/v1 or events.k8s.io shape), oldest first."""
    out = []
    for e in events:
        inv = e.get("involvedObject") or e.get("regarding") or {}
        ns = inv.get("namespace") or (e.get("metadata") or {}).get("namespace")
        if inv.get("name") != pod or ns != namespace:
            continue
        at = parse_time(e.get("eventTime") or e.get("lastTimestamp") or e.get("firstTimestamp"))
        component = (e.get("source") or {}).get("component") or e.get("reportingComponent") or \
            e.get("reportingController")
        out.append(Statement(e.get("reason"), e.get("message") or e.get("note"), at, "event", component))
    return sorted(out, key=lambda s: (s.at is None, s.at or datetime.min))


_POD_NAMED = re.compile(r"^Pod (?P<ns>[a-z0-9][a-z0-9-]*)/(?P<name>[a-z0-9][a-z0-9.-]*?)\.? ", re.I)


def named_pod(event: dict) -> tuple[str, str] | None:
    """(namespace, pod) a pod group's event begins by naming ("Pod ns/p was preempted by ..."), else None."""
    inv = event.get("involvedObject") or event.get("regarding") or {}
    m = _POD_NAMED.match(event.get("message") or event.get("note") or "") if inv.get("kind") == "PodGroup" else None
    return (m.group("ns"), m.group("name")) if m else None


def group_event_statements(events: list[dict], namespace: str, pod: str) -> list[Statement]:
    """Events on a pod group that begin by naming the pod: KAI writes "Pod ns/p was preempted by workload
    ns/pg." on the victim's PodGroup, not on the pod."""
    out = []
    for e in events:
        if named_pod(e) == (namespace, pod):
            at = parse_time(e.get("eventTime") or e.get("lastTimestamp") or e.get("firstTimestamp"))
            component = (e.get("source") or {}).get("component") or e.get("reportingComponent")
            out.append(Statement(e.get("reason"), e.get("message") or e.get("note"), at, "PodGroup event", component))
    return sorted(out, key=lambda s: (s.at is None, s.at or datetime.min))


def _disruption(statements: list[Statement]) -> tuple[WorkloadOutcome, Statement] | None:
    """The first statement that says the pod was preempted, else the first that says it was evicted."""
    statements = [s for s in statements if s.reason not in _SCHEDULING_REASONS]
    for s in statements:
        if s.reason in _DISRUPTION and _DISRUPTION[s.reason] is WorkloadOutcome.PREEMPTED:
            return WorkloadOutcome.PREEMPTED, s
    for s in statements:
        if _PREEMPTION_WORDS.search(s.text):
            return WorkloadOutcome.PREEMPTED, s
    for s in statements:
        if s.reason in _DISRUPTION or s.reason in _EVICTED_STATUS or _EVICTION_WORDS.search(s.text):
            return WorkloadOutcome.EVICTED, s
    return None


def preemptor(message: str | None, uids: dict[str, str] | None = None) -> str | None:
    """Who preempted, from the platform's message: ``ns/name`` when it names a pod or a known uid."""
    if not message:
        return None
    found = _UID.findall(message)
    for uid in found:  # a known uid first: KAI names the preemptor's pod group, pg-<pod>-<pod uid>
        if uids and uid in uids:
            return uids[uid]
    m = _BY_POD.search(message)
    if m and "/" in m.group(0):
        return f"{m.group('ns')}/{m.group('name').rstrip('.')}"
    return f"uid {found[0]}" if found else None


def _from_statement(outcome: WorkloadOutcome, s: Statement, uids: dict[str, str] | None) -> OutcomeRecord:
    by = preemptor(s.message, uids) if outcome is WorkloadOutcome.PREEMPTED else s.component
    return OutcomeRecord(outcome, s.at, by, s.reason, s.message, s.source)


def _from_deletion(d: Deletion) -> OutcomeRecord:
    if _SCHEDULER_IDENTITY.search(d.username):
        kind = WorkloadOutcome.PREEMPTED
    elif _EVICTION_IDENTITY.search(d.username):
        kind = WorkloadOutcome.EVICTED
    else:
        kind = WorkloadOutcome.DELETED
    return OutcomeRecord(kind, d.at, d.username, "delete", f"deleted by {d.username}", "audit log")


def _container(pod: dict) -> dict:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return next((c for c in statuses if c.get("name") == "base"), statuses[0] if statuses else {})


def _failed(pod: dict) -> OutcomeRecord:
    c = _container(pod)
    term = (c.get("state") or {}).get("terminated") or (c.get("lastState") or {}).get("terminated") or {}
    st = pod.get("status") or {}
    code = term.get("exitCode")
    reason = term.get("reason") or st.get("reason") or "Failed"
    message = term.get("message") or st.get("message") or (f"exit code {code}" if code is not None else None)
    return OutcomeRecord(WorkloadOutcome.FAILED, parse_time(term.get("finishedAt")), None, reason, message,
                         "pod status")


def _deletion_before_end(pod: dict, deletions: list[Deletion]) -> Deletion | None:
    """The first delete request made before the pod's container ended: the kubelet stopped it for that delete
    (SIGTERM, exit code 143, the pod Failed), so it did not fail on its own. ``finishedAt`` has whole seconds,
    so a delete within the second after it counts."""
    term = (_container(pod).get("state") or {}).get("terminated") or {}
    ended = parse_time(term.get("finishedAt"))
    if ended is None:
        return None
    return _first(d for d in deletions if d.at is not None and d.at < ended + timedelta(seconds=1))


def _first(deletions: Iterable[Deletion]) -> Deletion | None:
    """The oldest delete request (one without a time last)."""
    return min(deletions, key=lambda d: (d.at is None, d.at or datetime.min), default=None)


def classify(pod: dict | None, *, present: bool, events: list[Statement] = (), owner: list[Statement] = (),
             deletions: list[Deletion] = (), rejection: Rejection | None = None,
             uids: dict[str, str] | None = None) -> OutcomeRecord:
    """The outcome of one attempt.

    ``pod`` is the pod as last seen (None if it was never seen), ``present`` whether it still exists.
    ``events`` are the platform's events about it, ``owner`` the conditions of the objects that own it,
    ``deletions`` the audit log's delete requests on it, ``rejection`` the admission answer if its creation
    was refused, ``uids`` maps pod uids to ``ns/name`` to name a preemptor. Events count only for a pod that
    vanished or is terminating: a pod that failed on its own is not blamed on a node event.
    """
    if rejection is not None and pod is None:
        return OutcomeRecord(WorkloadOutcome.REJECTED, rejection.at, None, f"HTTP {rejection.status}",
                             rejection.message, "admission")
    status = (pod or {}).get("status") or {}
    phase = status.get("phase")
    terminating = bool(((pod or {}).get("metadata") or {}).get("deletionTimestamp"))
    if phase == "Succeeded":
        term = (_container(pod).get("state") or {}).get("terminated") or {}
        return OutcomeRecord(WorkloadOutcome.SUCCEEDED, parse_time(term.get("finishedAt")), None,
                             term.get("reason") or "Completed", None if present else "removed after it succeeded",
                             "pod status")
    if present and not terminating and phase != "Failed":
        return OutcomeRecord(WorkloadOutcome.PENDING, None, None, phase or "Pending",
                             "not finished at its deadline", "pod status")
    said = (pod_statements(pod) if pod else []) + list(owner)
    if not present or terminating:
        said += list(events)
    found = _disruption(said)
    if found is not None:
        return _from_statement(found[0], found[1], uids)
    if phase == "Failed":
        ended_it = _deletion_before_end(pod, deletions)
        return _from_deletion(ended_it) if ended_it is not None else _failed(pod)
    if deletions:
        return _from_deletion(_first(deletions))
    if present:
        return OutcomeRecord(WorkloadOutcome.PENDING, None, None, phase or "Pending",
                             "terminating; nothing says why yet", "pod status")
    return OutcomeRecord(WorkloadOutcome.LOST, None, None, None,
                         "vanished; no event, condition or audit record says why", "none")
