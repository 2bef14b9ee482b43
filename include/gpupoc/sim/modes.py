"""The scheduler a simulated cluster runs (``scheduler:`` in the cluster config, ``gpupoc sim serve --mode``).

- ``kube``: kube-scheduler alone (pods bound one by one, no gangs); Kueue's CRDs are served too, as on a
  cluster where Kueue is installed next to it (pods labelled ``kueue.x-k8s.io/queue-name`` are queued).
- ``kueue``: the same, with Kueue's cohorts, borrowing, preemption policies and fair sharing configured.
- ``volcano``: Volcano's scheduler for pods naming ``schedulerName: volcano`` (queues, PodGroups, gangs,
  reclaim); kube-scheduler for the others. Serves ``scheduling.volcano.sh/v1beta1``.
- ``kai``: NVIDIA KAI Scheduler for pods naming ``schedulerName: kai-scheduler`` (queues with quota,
  over-quota weight and limit, PodGroups, gangs, reclaim); kube-scheduler for the others. Serves
  ``scheduling.run.ai/v2`` (Queue) and ``scheduling.run.ai/v2alpha2`` (PodGroup).
- ``hami``: HAMi's vGPU scheduler for pods naming ``schedulerName: hami-scheduler`` (its webhook hands every
  pod asking for ``nvidia.com/gpu`` to it): cards split into vGPUs with memory and core shares
  (``controllers.hami``); kube-scheduler for the others.

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

# store resource -> (apiVersion, kind, namespaced), per mode
KINDS: dict[SchedulerMode, dict[str, tuple[str, str, bool]]] = {
    SchedulerMode.VOLCANO: {"queues": (f"{VOLCANO_GROUP}/v1beta1", "Queue", False),
                            "podgroups": (f"{VOLCANO_GROUP}/v1beta1", "PodGroup", True)},
    SchedulerMode.KAI: {"queues": (f"{KAI_GROUP}/v2", "Queue", False),
                        "podgroups": (f"{KAI_GROUP}/v2alpha2", "PodGroup", True)},
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
