"""Whether a platform's text explains a wait: it must name a cause the user could act on or wait for.

A message explains a wait when it refers to one of these, in any language (``Cause``):
- a resource the pod asks for (``nvidia.com/gpu``, GPU memory, CPU, pods per node), by any of its names;
- a queue or quota that holds it, by the object's name (ClusterQueue, LocalQueue, Volcano or KAI queue,
  ResourceQuota, flavor, cohort); a quota also by its kind ("quota": a namespace answers to its own);
- its place in the queue or the workloads ahead (a position, other workloads by name);
- its gang or pod group (by name, or by the gang's size: "4 minAvailable", "waiting for 4 pods"; a pod's own
  group of one only by its stated size, "1 minAvailable");
- a placement constraint it fails (selector, affinity, taint, toleration, a selector key, a node's taint key);
- the priority or preemption involved (a priority class by name, priority or preemption itself).

What a message refers to is decided from the pod's own requests and placement, the names of the cluster's
objects and numbers (``ExplainContext``), not from a list of phrases: a text naming none of these is a
placeholder whatever its wording, "Pod is pending.", "0/3 nodes are available.", 「调度中」 alike. The pod naming
itself (its name, namespace, uid, its own Workload), a node named alone (where, not why) and a count of nodes
say nothing. A scheduling gate alone never explains a wait. The names a cause is recognised by are in
``cause_terms``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Mapping

from gpupoc.pipeline import cause_terms as T
from gpupoc.podspec import labels as L
from gpupoc.podspec.gangs import KAI_GROUP, VOLCANO_GROUP

# The annotations that put a pod into a scheduler's pod group (Volcano's, KAI's), its own one when alone.
POD_GROUP_KEYS = (VOLCANO_GROUP, "scheduling.volcano.sh/group-name", KAI_GROUP)


class Cause(str, Enum):
    """What a platform message can blame a wait on."""

    RESOURCE = "resource"
    QUOTA = "quota"
    POSITION = "position"
    GANG = "gang"
    PLACEMENT = "placement"
    PRIORITY = "priority"


def _names(values: Iterable[str | None]) -> frozenset[str]:
    return frozenset(v.lower() for v in values if v)


@dataclass(frozen=True)
class ClusterNames:
    """The names of the cluster's objects a message may refer to."""

    queues: frozenset[str] = frozenset()            # queues, quotas, flavors, cohorts
    priority_classes: frozenset[str] = frozenset()
    pod_groups: frozenset[str] = frozenset()
    workloads: frozenset[str] = frozenset()         # pods and Workloads by name and uid: the workloads ahead
    nodes: frozenset[str] = frozenset()
    taints: frozenset[str] = frozenset()            # the nodes' taint keys
    gang_sizes: Mapping[str, frozenset[int]] = field(default_factory=dict)  # gang -> its member counts

    def merged(self, other: "ClusterNames") -> "ClusterNames":
        sizes = {g: self.gang_sizes.get(g, frozenset()) | other.gang_sizes.get(g, frozenset())
                 for g in {*self.gang_sizes, *other.gang_sizes}}
        return ClusterNames(self.queues | other.queues, self.priority_classes | other.priority_classes,
                            self.pod_groups | other.pod_groups, self.workloads | other.workloads,
                            self.nodes | other.nodes, self.taints | other.taints, sizes)

    def to_dict(self) -> dict:
        return {"queues": sorted(self.queues), "priority_classes": sorted(self.priority_classes),
                "pod_groups": sorted(self.pod_groups), "workloads": sorted(self.workloads),
                "nodes": sorted(self.nodes), "taints": sorted(self.taints),
                "gang_sizes": {g: sorted(s) for g, s in sorted(self.gang_sizes.items())}}

    @classmethod
    def from_dict(cls, d: dict | None) -> "ClusterNames":
        d = d or {}
        return cls(*(_names(d.get(k) or ()) for k in ("queues", "priority_classes", "pod_groups", "workloads",
                                                      "nodes", "taints")),
                   {g: frozenset(int(n) for n in s) for g, s in (d.get("gang_sizes") or {}).items()})


@dataclass(frozen=True)
class PodRefs:
    """What the pod itself asks for and is: its requests, its placement, its gang, its own names."""

    namespace: str
    name: str
    resources: frozenset[str] = frozenset({"nvidia.com/gpu", "pods"})
    placement: frozenset[str] = frozenset()   # nodeSelector and affinity keys (and key=value), toleration keys
    gang: str | None = None                   # its gang, or the pod group a gang scheduler keeps for it alone
    own: frozenset[str] = frozenset()         # its uid and the objects that are the pod itself (its Workload)

    @classmethod
    def of_pod(cls, pod: dict, own: Iterable[str] = ()) -> "PodRefs":
        m, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        resources = {"pods"}
        for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            res = c.get("resources") or {}
            resources |= set(res.get("requests") or {}) | set(res.get("limits") or {})
        group = (m.get("labels") or {}).get(L.GANG) or next(
            (v for k, v in (m.get("annotations") or {}).items() if k in POD_GROUP_KEYS and v), None)
        return cls(m.get("namespace") or "", m.get("name") or "", frozenset(resources), _placement(spec), group,
                   _names([m.get("uid"), *own]))


def _placement(spec: dict) -> frozenset[str]:
    keys = set()
    for k, v in (spec.get("nodeSelector") or {}).items():
        keys |= {k, f"{k}={v}"}
    node = ((spec.get("affinity") or {}).get("nodeAffinity") or {})
    for term in ((node.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []):
        keys |= {e.get("key") for e in term.get("matchExpressions") or [] if e.get("key")}
    keys |= {t.get("key") for t in spec.get("tolerations") or [] if t.get("key")}
    return _names(keys)


@dataclass(frozen=True)
class ExplainContext:
    """One pod and its cluster: what a message about the pod could refer to."""

    pod: PodRefs
    cluster: ClusterNames = ClusterNames()


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _name_rx(name: str) -> re.Pattern:
    """``name`` as a whole object name: not inside a longer name, nor the namespace of ``ns/name``."""
    return re.compile(rf"(?<![a-z0-9_/.-]){re.escape(name)}(?![a-z0-9_/-]|\.[a-z0-9])")


def _word_rx(word: str) -> re.Pattern:
    w = re.escape(word.lower()).replace(r"\ ", r"\s*")
    return re.compile(rf"(?<![a-z0-9]){w}(?![a-z0-9])" if word.isascii() else w)


# A run of the characters a whole name cannot be preceded by (``_name_rx``): a name made of them that starts with a
# letter or digit (every Kubernetes object name, uid and ``ns/name``) can only match at the start of such a run.
_RUN = re.compile(r"[a-z0-9_/.-]+")
_PLAIN = re.compile(r"[a-z0-9][a-z0-9_/.-]*")


def _heads(text: str) -> set[str]:
    """Every substring of ``text`` a plain name can match as a whole name: each run of name characters, and
    each head of a run that ends before a '.' not followed by a letter or digit ("node-1." ends a sentence)."""
    out = set()
    for run in _RUN.findall(text):
        out.add(run)
        i = run.find(".")
        while i >= 0:
            if i + 1 == len(run) or run[i + 1] in "_/.-":
                out.add(run[:i])
            i = run.find(".", i + 1)
    return out


@functools.lru_cache(maxsize=64)
def _odd_of(names: frozenset[str]) -> tuple[str, ...]:
    return tuple(n for n in names if not _PLAIN.fullmatch(n))


def _odd(names: Iterable[str]) -> Iterable[str]:
    """The names that are not plain (see ``_RUN``): each is looked for in the text as it stands."""
    if isinstance(names, frozenset) and len(names) > 64:  # a cluster's nodes or workloads: sorted out once
        return _odd_of(names)
    return [n for n in names if not _PLAIN.fullmatch(n)]


def _strip(text: str, *groups: Iterable[str], exclude: Iterable[str] = ()) -> tuple[str, bool]:
    """``text`` without the names of ``groups`` but ``exclude`` (longest first), and whether any was there.

    A plain name gets a pattern only when it is one of the text's ``_heads``, found by a set lookup: a cluster's
    1,000 nodes and 10,000 pods would otherwise cost a pattern, or a scan, per name and message. A name is
    stripped by a space, which never makes a plain name a head; other names are tried when they are in the
    text, or hold a space."""
    heads = _heads(text)
    tried: set[str] = set()
    for names in groups:
        tried |= heads & names if isinstance(names, (set, frozenset)) else {n for n in names if n in heads}
        tried |= {n for n in _odd(names) if n in text or " " in n}
    hit = False
    for n in sorted(tried.difference(exclude), key=lambda n: (-len(n), n)):
        text, k = _name_rx(n).subn(" ", text)
        hit = hit or k > 0
    return text, hit


def resource_words(resource: str) -> tuple[str, ...]:
    """The names a resource goes by: its API name, its last segment, and the nouns of its kind."""
    segment = resource.lower().rsplit("/", 1)[-1]
    kind = next((k for k in T.RESOURCE_KEYWORDS if k in segment), None)
    if kind == "pods":  # "pods" alone is any pod ("Pods are pending"): only the node's pod capacity counts
        return T.RESOURCE_NOUNS["pods"]
    return (resource.lower(), segment, segment + "s", *T.RESOURCE_NOUNS.get(kind or "", ()))


def causes_named(message: str | None, ctx: ExplainContext) -> set[Cause]:
    """The causes ``message`` names about the pod of ``ctx``."""
    text = _CAMEL.sub(" ", (message or "").strip()).lower()
    if not text:
        return set()
    pod, cl = ctx.pod, ctx.cluster
    own = {f"{pod.namespace}/{pod.name}".lower(), pod.name.lower(), pod.namespace.lower(), *pod.own}
    text, _ = _strip(text, own)
    found: set[Cause] = set()
    gang = (pod.gang or "").lower()
    named = ((Cause.GANG, ({gang} - {""},), ()), (Cause.QUOTA, (cl.queues,), own),
             (Cause.PRIORITY, (cl.priority_classes,), ()), (Cause.POSITION, (cl.workloads, cl.pod_groups), own | {gang}))
    for cause, groups, exclude in named:
        text, hit = _strip(text, *groups, exclude=exclude)
        found |= {cause} if hit else set()
    text = _UID.sub(" ", _strip(text, cl.nodes)[0])  # a node or uid alone says where or who, not why
    if any(_word_rx(w).search(text) for r in pod.resources for w in resource_words(r)):
        found.add(Cause.RESOURCE)
    text, hit = _strip(text, (pod.placement | cl.taints) - _names(pod.resources))  # a GPU taint is not a GPU
    found |= {Cause.PLACEMENT} if hit else set()
    words = ((Cause.PLACEMENT, T.PLACEMENT_WORDS), (Cause.PRIORITY, T.PRIORITY_WORDS), (Cause.QUOTA, T.QUOTA_WORDS))
    found |= {cause for cause, ws in words if any(_word_rx(w).search(text) for w in ws)}
    if T.POSITION.search(text):
        found.add(Cause.POSITION)
    sizes = cl.gang_sizes.get(gang, frozenset()) if gang else frozenset()
    counts = {int(n) for n in T.NUMBER.findall(T.NODE_COUNT.sub(" ", text))}
    labelled = {int(a or b) for a, b in T.GROUP_SIZE.findall(text)}
    if counts & {n for n in sizes if n > 1} or labelled & sizes:  # a gang of one only by its stated size
        found.add(Cause.GANG)
    return found


def explains(reason: str | None, message: str | None, ctx: ExplainContext) -> bool:
    """Whether ``message`` (with its ``reason``) tells the user of ``ctx``'s pod why it waits."""
    return reason != "SchedulingGated" and bool(causes_named(message, ctx))


# What the platform's text says, by pattern (kube-scheduler, Kueue, Volcano, KAI, HAMi wording): which of the
# reconstructed bottlenecks it names (``bottleneck.NAMED_BY``), once it explains the wait at all.
_MESSAGE_CLASSES: list[tuple[str, re.Pattern]] = [
    ("gated", re.compile(r"scheduling ?gate", re.I)),
    ("quota", re.compile(r"exceeded quota|quota (resource )?insufficient|OverQuota|OverLimit|over quota|overused|"
                         r"insufficient (unused )?quota|couldn't assign flavors|exceeds? .*quota|quota has reached|"
                         r"配额", re.I)),
    ("insufficient_gpus", re.compile(r"Insufficient nvidia\.com/gpu|NotEnoughResources|not enough (gpu|resources)|"
                                     r"enough resources were found|nvidia\.com/gpu\s*不足|GPU\s*不足|"
                                     # HAMi's reason words (pkg/device/common/common.go)
                                     r"CardInsufficient(Memory|Core)|CardTimeSlicingExhausted|NodeInsufficientDevice|"
                                     r"CardComputeUnitsExhausted|AllocatedCardsInsufficientRequest", re.I)),
    ("gang", re.compile(r"gang|minAvailable|minMember|pod group is not ready|group has fewer|成组|任务组", re.I)),
    ("queue", re.compile(r"position|pending in (the )?queue|waiting for (its turn|admission)|higher priority|"
                         r"Priority|Inqueue|优先级|排队第", re.I)),
    ("placement", re.compile(r"didn't match|untolerated taint|node affinity|unschedulable|污点|亲和性", re.I)),
]


def classify_message(text: str | None) -> set[str]:
    """The bottleneck classes a platform message names (``{"insufficient_gpus"}`` for kube-scheduler's
    FailedScheduling)."""
    return set(_classes(text)) if text else set()


@functools.lru_cache(maxsize=4096)
def _classes(text: str) -> frozenset[str]:
    """``classify_message`` once per text: a wave's waits repeat a few texts tens of thousands of times."""
    return frozenset(name for name, rx in _MESSAGE_CLASSES if rx.search(text))
