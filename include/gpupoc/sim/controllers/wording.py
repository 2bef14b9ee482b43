"""How the scheduler speaks: kube-scheduler's words by default, Volcano's or KAI's under their behaviour profiles.

The scheduling itself is the same; only the texts a user reads differ. Sources of the texts:
- kube-scheduler: ``scheduling.fit_error`` (framework FitError, DefaultPreemption).
- Volcano (volcano-sh/volcano, ``pkg/scheduler/api/unschedule_info.go`` ``FitErrors.Error``,
  ``pkg/scheduler/cache`` ``taskUnschedulable`` and ``defaultEvictor.Evict``): FailedScheduling events and
  PodScheduled=False/Unschedulable with "0/N nodes are unavailable: <histogram>."; a preempted pod gets the
  Warning event ``Evict`` "Pod is evicted, because of preempt" and condition Ready=False reason ``Evict``.
- KAI (NVIDIA/KAI-Scheduler, ``pkg/scheduler/cache/status_updater`` ``markTaskUnschedulable`` and ``Bound``,
  ``pkg/scheduler/api/common_info`` fit errors, ``GetPreemptMessage``): Warning events ``Unschedulable`` with
  "no nodes with enough resources were found: <histogram>.", "Successfully assigned pod ns/name to node X at
  node-pool default", and ``Evict`` "Pod ns/name was preempted by higher priority workload ns/group".
- ``zh-wording``: kube-scheduler's texts in Chinese (``zh_wording``), a localized platform's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.controllers import scheduling as S
from gpupoc.sim.controllers import zh_wording

KUBE, VOLCANO, KAI, ZH = "kube-scheduler", "volcano", "kai", "zh"
VAGUE = "Pod is pending."  # what the scheduler says of every unschedulable pod under ``vague-reasons``
KAI_POOL = "default"  # KAI's node-pool name when nodes carry no node-pool label
KAI_REASONS = {S.REASON_INSUFFICIENT_GPU: "node(s) didn't have enough resources: GPUs"}


@dataclass(frozen=True)
class Wording:
    """One scheduler's vocabulary: the pod scheduler names it serves, its event component and its texts."""

    dialect: str
    scheduler_names: frozenset[str]
    component: str
    failed_reason: str  # the Warning event of an unschedulable pod

    def unschedulable(self, num_nodes: int, reasons: Counter, post_filter: str | None) -> str:
        """The PodScheduled=False message (and the failed event's) for a pod that fits nowhere."""
        if self.dialect == VOLCANO:
            histogram = sorted(f"{count} {reason}" for reason, count in reasons.items() if count)
            return f"0/{num_nodes} nodes are unavailable: {', '.join(histogram)}."
        if self.dialect == KAI:
            counts: Counter = Counter()
            for reason, count in reasons.items():
                counts[KAI_REASONS.get(reason, reason)] += count
            histogram = sorted(f"{count} {reason}" for reason, count in counts.items() if count)
            return "no nodes with enough resources were found: " + ". \n".join(histogram) + "."
        if self.dialect == ZH:
            return zh_wording.fit_error(S.fit_error(num_nodes, reasons, post_filter))
        return S.fit_error(num_nodes, reasons, post_filter)

    def scheduled(self, namespace: str, name: str, node: str) -> str:
        if self.dialect == KAI:
            return f"Successfully assigned pod {namespace}/{name} to node {node} at node-pool {KAI_POOL}"
        if self.dialect == ZH:
            return zh_wording.scheduled(namespace, name, node)
        return f"Successfully assigned {namespace}/{name} to {node}"


KUBE_WORDING = Wording(KUBE, frozenset({S.DEFAULT_SCHEDULER}), S.DEFAULT_SCHEDULER, "FailedScheduling")
VOLCANO_WORDING = Wording(VOLCANO, frozenset({S.DEFAULT_SCHEDULER, "volcano"}), "volcano", "FailedScheduling")
KAI_WORDING = Wording(KAI, frozenset({S.DEFAULT_SCHEDULER, "kai-scheduler"}), "kai-scheduler", "Unschedulable")
ZH_WORDING = Wording(ZH, frozenset({S.DEFAULT_SCHEDULER}), S.DEFAULT_SCHEDULER, "FailedScheduling")


def wording_for(behaviours: frozenset[Behaviour]) -> Wording:
    """The scheduler's wording under ``behaviours``. Under a Volcano or KAI profile that scheduler is the
    cluster's only one: it also takes pods that name ``default-scheduler``."""
    if Behaviour.VOLCANO_WORDING in behaviours:
        return VOLCANO_WORDING
    if Behaviour.KAI_WORDING in behaviours:
        return KAI_WORDING
    if Behaviour.ZH_WORDING in behaviours:
        return ZH_WORDING
    return KUBE_WORDING


def wordings_for(mode: SchedulerMode, behaviours: frozenset[Behaviour]) -> dict[str, Wording]:
    """The per-pod scheduler's vocabulary by the scheduler name a pod asks for. In the kube and kueue modes
    one scheduler takes every name its wording serves (``wording_for``); in the volcano and kai modes
    kube-scheduler takes ``default-scheduler`` pods and the gang scheduler the others (``volcano``, ``kai``)."""
    if mode in (SchedulerMode.VOLCANO, SchedulerMode.KAI):
        return {S.DEFAULT_SCHEDULER: KUBE_WORDING}
    wording = wording_for(behaviours)
    return {name: wording for name in wording.scheduler_names}


def volcano_evict_message(action: str = "preempt") -> str:
    return f"Pod is evicted, because of {action}"


def kai_preempt_message(victim: dict, preemptor: dict) -> str:
    v, p = victim["metadata"], preemptor["metadata"]
    return (f"Pod {v.get('namespace', '')}/{v['name']} was preempted by higher priority workload "
            f"{p.get('namespace', '')}/{kai_pod_group(preemptor)}")


def kai_pod_group(pod: dict) -> str:
    """The PodGroup KAI's pod-grouper makes for a bare pod: ``pg-<pod name>-<pod uid>``."""
    meta = pod["metadata"]
    return f"pg-{meta['name']}-{meta.get('uid', '')}"
