"""The schedulers a cluster runs and their API objects: the simulated cluster's ``scheduler:`` (``gpupoc sim
serve --mode``), the manifests' queues and the preflight's comparison name them alike.

- ``kube``: kube-scheduler alone (pods bound one by one, no gangs); Kueue's CRDs are served too, as on a
  cluster where Kueue is installed next to it (pods labelled ``kueue.x-k8s.io/queue-name`` are queued).
- ``kueue``: the same, with Kueue's cohorts, borrowing, preemption policies and fair sharing configured
  (``kueue.x-k8s.io/v1beta1``).
- ``volcano``: Volcano's scheduler for pods naming ``schedulerName: volcano`` (queues, PodGroups, gangs,
  reclaim); kube-scheduler for the others. Serves ``scheduling.volcano.sh/v1beta1``.
- ``kai``: NVIDIA KAI Scheduler for pods naming ``schedulerName: kai-scheduler`` (queues with quota,
  over-quota weight and limit, PodGroups, gangs, reclaim); kube-scheduler for the others. Serves
  ``scheduling.run.ai/v2`` (Queue) and ``scheduling.run.ai/v2alpha2`` (PodGroup).
- ``hami``: HAMi's vGPU scheduler for pods naming ``schedulerName: hami-scheduler`` (its webhook hands every
  pod asking for ``nvidia.com/gpu`` to it): cards split into vGPUs with memory and core shares; kube-scheduler
  for the others.

``KINDS`` says what the store's ``queues`` and ``podgroups`` are in each mode (the two projects name their
resources alike; a cluster runs one of them).
"""

from __future__ import annotations

from enum import Enum

from gpupoc.exceptions import ConfigError


class SchedulerMode(str, Enum):
    KUBE = "kube"
    KUEUE = "kueue"
    VOLCANO = "volcano"
    KAI = "kai"
    HAMI = "hami"


VOLCANO_GROUP = "scheduling.volcano.sh"
KAI_GROUP = "scheduling.run.ai"
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSION = f"{KUEUE_GROUP}/v1beta1"  # ResourceFlavor, ClusterQueue, LocalQueue, Workload
VOLCANO_VERSION = f"{VOLCANO_GROUP}/v1beta1"  # Queue, PodGroup
KAI_QUEUE_VERSION = f"{KAI_GROUP}/v2"
KAI_PODGROUP_VERSION = f"{KAI_GROUP}/v2alpha2"

# store resource -> (apiVersion, kind, namespaced), per mode
KINDS: dict[SchedulerMode, dict[str, tuple[str, str, bool]]] = {
    SchedulerMode.VOLCANO: {"queues": (VOLCANO_VERSION, "Queue", False),
                            "podgroups": (VOLCANO_VERSION, "PodGroup", True)},
    SchedulerMode.KAI: {"queues": (KAI_QUEUE_VERSION, "Queue", False),
                        "podgroups": (KAI_PODGROUP_VERSION, "PodGroup", True)},
}


def parse_mode(value: str | None) -> SchedulerMode | None:
    """Parse ``--mode``; None when not given; an unknown name is refused with the known ones."""
    if not value:
        return None
    try:
        return SchedulerMode(value.strip())
    except ValueError:
        known = ", ".join(m.value for m in SchedulerMode)
        raise ConfigError("--mode", [f"mode: unknown scheduler mode {value!r}; known: {known}"]) from None
