"""Pure scheduling helpers shared by the scheduler: requests, filters, queue order, messages, victims.

Nothing here touches the store or asyncio, so each rule is unit-tested on plain dicts. The texts are
kube-scheduler's own (framework ``FitError``, the TaintToleration, NodeAffinity, NodeUnschedulable and
NodeResourcesFit filter plugins, and the DefaultPreemption post-filter).
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from gpupoc.kube.resources import GPU
from gpupoc.sim import clock

DEFAULT_SCHEDULER = "default-scheduler"

# Filter reasons, as the plugins word them.
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_INSUFFICIENT_GPU = f"Insufficient {GPU}"
REASON_TOO_MANY_PODS = "Too many pods"
# Post-filter (preemption) reasons.
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
DISRUPTION_MESSAGE = "{scheduler}: preempting to accommodate a higher priority pod"

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
HOSTNAME_LABEL = "kubernetes.io/hostname"


def taint_reason(taint: dict) -> str:
    return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"


# -- pod requests -------------------------------------------------------------------------------
def _quantity(value: object) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def container_gpus(pod: dict) -> list[tuple[str, int]]:
    """(container name, GPUs) for each container asking for GPUs (requests, else limits)."""
    out = []
    for c in pod.get("spec", {}).get("containers") or []:
        res = c.get("resources") or {}
        n = _quantity((res.get("requests") or {}).get(GPU, (res.get("limits") or {}).get(GPU, 0)))
        if n > 0:
            out.append((c.get("name", ""), n))
    return out


def gpu_request(pod: dict) -> int:
    """Total GPUs the pod's containers request."""
    return sum(n for _, n in container_gpus(pod))


def priority_of(pod: dict) -> int:
    return int(pod.get("spec", {}).get("priority") or 0)


def preempts(pod: dict) -> bool:
    """True unless the pod's preemptionPolicy is Never (Kubernetes defaults to PreemptLowerPriority)."""
    return pod.get("spec", {}).get("preemptionPolicy", "PreemptLowerPriority") != "Never"


def queue_key(pod: dict, seq: int, fifo: bool) -> tuple:
    """kube-scheduler's active-queue order: priority desc, then creation; plain FIFO when ``fifo``."""
    created = pod["metadata"].get("creationTimestamp") or ""
    if fifo:
        return (created, seq, pod["metadata"]["name"])
    return (-priority_of(pod), created, seq, pod["metadata"]["name"])


# -- node filters -------------------------------------------------------------------------------
def tolerates(toleration: dict, taint: dict) -> bool:
    """Whether one toleration tolerates one taint (operators Equal/Exists; empty key + Exists tolerates all)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    op = toleration.get("operator") or "Equal"
    if not key:
        return op == "Exists"
    if key != taint.get("key"):
        return False
    if op == "Exists":
        return True
    return (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(taints: Iterable[dict], tolerations: list[dict]) -> dict | None:
    """The first NoSchedule/NoExecute taint no toleration covers (what TaintToleration reports)."""
    for taint in taints:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def effective_taints(node: dict) -> list[dict]:
    """The node's taints, plus the NoSchedule taint the node lifecycle controller puts on a node that
    is not Ready (not-ready when False, unreachable when Unknown) if it is not there yet."""
    taints = list(node.get("spec", {}).get("taints") or [])
    ready = "True"
    for c in node.get("status", {}).get("conditions") or []:
        if c.get("type") == "Ready":
            ready = c.get("status", "Unknown")
    if ready != "True":
        key = NOT_READY_TAINT if ready == "False" else UNREACHABLE_TAINT
        if not any(t.get("key") == key and t.get("effect") == "NoSchedule" for t in taints):
            taints.append({"key": key, "effect": "NoSchedule"})
    return taints


def _expression_matches(labels: dict, expr: dict) -> bool:
    key, op = expr.get("key", ""), expr.get("operator", "In")
    values = expr.get("values") or []
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and values:
        try:
            left, right = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return left > right if op == "Gt" else left < right
    return False


def _field_matches(node_name: str, expr: dict) -> bool:
    if expr.get("key") != "metadata.name":
        return False
    return _expression_matches({"metadata.name": node_name}, expr)


def matches_node_selector(labels: dict, node_name: str, spec: dict) -> bool:
    """nodeSelector (all pairs) and required nodeAffinity (terms ORed, expressions ANDed)."""
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms")
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchExpressions") or []
        fields = term.get("matchFields") or []
        if not exprs and not fields:
            continue  # an empty term matches nothing
        if all(_expression_matches(labels, e) for e in exprs) and all(_field_matches(node_name, f) for f in fields):
            return True
    return False


def is_node_specific(spec: dict) -> bool:
    """Whether the pod's placement rules name single nodes (hostname label or metadata.name field)."""
    if HOSTNAME_LABEL in (spec.get("nodeSelector") or {}):
        return True
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        if term.get("matchFields"):
            return True
        if any(e.get("key") == HOSTNAME_LABEL for e in term.get("matchExpressions") or []):
            return True
    return False


def static_filter(node: dict, pod_spec: dict) -> str | None:
    """The first failing node-level filter in kube-scheduler's plugin order, or None when all pass:
    NodeUnschedulable, TaintToleration, NodeAffinity (resources are checked separately)."""
    tolerations = pod_spec.get("tolerations") or []
    if node.get("spec", {}).get("unschedulable"):
        marker = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
        if not any(tolerates(t, marker) for t in tolerations):
            return REASON_UNSCHEDULABLE
    taint = untolerated_taint(effective_taints(node), tolerations)
    if taint is not None:
        return taint_reason(taint)
    meta = node.get("metadata", {})
    if not matches_node_selector(meta.get("labels") or {}, meta.get("name", ""), pod_spec):
        return REASON_AFFINITY
    return None


# -- messages -----------------------------------------------------------------------------------
def fit_error(num_nodes: int, reasons: Counter, post_filter: str | None = None) -> str:
    """kube-scheduler's FitError text: ``0/N nodes are available: <"count reason" sorted>.`` then
    `` preemption: ...`` as DefaultPreemption wrote it (v1.37's ``FitError.Error``: one period, no ``..``)."""
    histogram = sorted(f"{count} {reason}" for reason, count in reasons.items() if count)
    msg = f"0/{num_nodes} nodes are available:"
    if histogram:
        msg += f" {', '.join(histogram)}."
    if post_filter:
        msg += f" {post_filter}"
    return msg


def preemption_message(num_nodes: int, reasons: Counter) -> str:
    """The DefaultPreemption post-filter message when no node can be freed up."""
    return "preemption: " + fit_error(num_nodes, reasons)


def placement_message(node: str, victims: int) -> str:
    """The post-filter message when victims were chosen (``preemption.go``'s success status)."""
    return f"preemption: found a potential placement for pod on node {node}, preempting {victims} victims"


# -- preemption ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Victim:
    """A running pod that could be preempted: its key, priority, GPUs and start order."""

    key: tuple[str, str]
    priority: int
    gpus: int
    started: str = ""


@dataclass
class NodeChoice:
    """A node where preempting ``victims`` makes room for the preemptor."""

    node: str
    victims: list[Victim] = field(default_factory=list)

    @property
    def rank(self) -> tuple:
        highest = max((v.priority for v in self.victims), default=-(2**31))
        return (highest, len(self.victims), sum(v.priority for v in self.victims), self.node)


def select_victims(need: int, free: int, pod_room: int, candidates: list[Victim]) -> list[Victim] | str:
    """Victims on one node for a preemptor needing ``need`` GPUs (``candidates`` are the node's
    lower-priority pods, ``pod_room`` the pod slots left). Like SelectVictimsOnNode: remove all
    candidates, check the fit, then reprieve as many as possible, most important first. Returns the
    victims or the reason the node cannot be freed."""
    if not candidates:
        return NO_VICTIMS
    free_all = free + sum(v.gpus for v in candidates)
    room_all = pod_room + len(candidates)
    if free_all < need or room_all < 1:
        return REASON_INSUFFICIENT_GPU if free_all < need else REASON_TOO_MANY_PODS
    victims: list[Victim] = []
    spare_gpus, spare_room = free_all - need, room_all - 1
    for v in sorted(candidates, key=lambda v: (-v.priority, v.started, v.key)):
        if v.gpus <= spare_gpus and spare_room >= 1:
            spare_gpus -= v.gpus  # reprieved: it keeps running
            spare_room -= 1
        else:
            victims.append(v)
    return victims


def best_choice(choices: list[NodeChoice]) -> NodeChoice | None:
    """The node whose victims matter least: lowest highest-victim priority, fewest victims, then name."""
    return min(choices, key=lambda c: c.rank) if choices else None


# -- small structures ---------------------------------------------------------------------------
def set_condition(pod: dict, type_: str, status: str, reason: str | None = None,
                  message: str | None = None) -> bool:
    """Set a pod condition the way the API does (lastTransitionTime kept while the status is unchanged);
    returns whether anything changed."""
    conds = pod.setdefault("status", {}).setdefault("conditions", [])
    current = next((c for c in conds if c.get("type") == type_), None)
    new = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": clock.rfc3339()}
    if reason:
        new["reason"] = reason
    if message:
        new["message"] = message
    if current is not None:
        if (current.get("status"), current.get("reason"), current.get("message")) == (status, reason, message):
            return False
        if current.get("status") == status:
            new["lastTransitionTime"] = current.get("lastTransitionTime", new["lastTransitionTime"])
        conds[conds.index(current)] = new
    else:
        conds.append(new)
    return True


class NameBucket:
    """A set of node names with a cheap smallest-name lookup (heap with lazy deletion)."""

    __slots__ = ("names", "_heap")

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._heap: list[str] = []

    def add(self, name: str) -> None:
        if name not in self.names:
            self.names.add(name)
            heapq.heappush(self._heap, name)

    def discard(self, name: str) -> None:
        self.names.discard(name)
        if len(self._heap) > 2 * len(self.names) + 32:
            self._heap = sorted(self.names)

    def smallest(self) -> str | None:
        heap = self._heap
        while heap and heap[0] not in self.names:
            heapq.heappop(heap)
        return heap[0] if heap else None


@dataclass
class Failure:
    """Why a pod fits nowhere: unresolvable reasons counted, resolvable ones with their nodes, and the
    preemption message once computed (valid for the rest of the pass)."""

    unresolvable: Counter = field(default_factory=Counter)
    resolvable: dict[str, list[str]] = field(default_factory=dict)
    post: str | None = None
    messages: dict[tuple, str] = field(default_factory=dict)  # (post-filter message, dialect) -> full message

    def counts(self) -> Counter:
        """Nodes per reason, unresolvable and resolvable alike (the FitError histogram)."""
        out: Counter = Counter(self.unresolvable)
        for r, names in self.resolvable.items():
            out[r] += len(names)
        return out


class NodeClass:
    """Nodes that every filter except resources treats alike; ``rep`` is one of them, ``buckets[n]`` the
    nodes with ``n`` free GPUs."""

    def __init__(self, rep: dict, size: int):
        self.rep = rep
        self.nodes: list[str] = []
        self.buckets = [NameBucket() for _ in range(size + 1)]
