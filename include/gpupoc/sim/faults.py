"""Planted defects (fault profiles) so a POC can prove it catches a bad platform.

Each profile is one module of ``fault_profiles/`` (``fault_profiles/<name>.py``, listed in its ``PROFILES``):
``bootstrap`` installs the planted ones on the reactors they change (``reactors.Reactors``, the correct
platform's decisions the controllers ask) or on a port (``state.hooks``), so no controller reads this enum.
What each one does:

The queueing faults act in every scheduler mode (``modes``) where the behaviour exists:
- ``gang-partial``: Volcano and KAI bind the pods of a PodGroup that fit even when fewer than ``minMember`` do;
  Kueue composes no pod groups (each pod of a group gets its own Workload and is admitted alone).
- ``borrow-not-reclaimed``: Kueue never preempts across ClusterQueues (reclaimWithinCohort, fair sharing),
  Volcano never runs reclaim, KAI never reclaims; preemption inside a queue is unchanged.
- ``fairshare-ignored``: the queue order ignores shares and weights (first come, first served by creation
  time): Kueue's fair-sharing order and preemption, Volcano's weight-derived deserved share (only
  guarantees stay), KAI's over-quota division and fair-share reclaim; quota/guarantee reclaim stays.
- ``reasons-opaque``: every scheduler keeps only generic texts: pods "0/N nodes are available." (kube-scheduler,
  Volcano and KAI alike), Kueue's gate, empty messages in Workload, PodGroup and queue conditions, no
  PodGroup/Workload reason events, and no Kueue visibility API (no queue positions).
- ``vague-reasons``: the same, except that every unschedulable pod is answered with one text that names nothing:
  "Pod is pending." (「Pod 正在等待调度。」 under the ``zh-wording`` behaviour) in its PodScheduled condition and
  its FailedScheduling events.

The sharing faults act in the ``hami`` mode (``controllers/hami.py``): ``gpumem-not-enforced`` (the device plugin
injects no memory limit, so an over-allocation succeeds and the card's neighbour runs out), ``vgpu-overcommit``
(the scheduler skips the card-memory check) and ``slice-leak`` (a finished pod's slice is still counted).

The serving faults act on the EndpointSlice controller (``controllers/endpointslices.py``), so the API
server's service proxy and kube-proxy send traffic where the slices say: ``endpoints-stale`` keeps a pod that
ended, was deleted or went not ready (a lost node's) in its slices as it last was, still ready; ``readiness-ignored`` marks every running pod ready.
``serving-preempted`` acts on kube-scheduler's preemption (``controllers/preemption.py``): a pod a ReplicaSet
controls is a victim of any preemptor, whatever its priority.

Two faults end one workload without its task's doing, so the POC proves it judges an item nobody will finish:
``pod-lost`` (``fault_profiles/pod_lost.py``) takes the first bare GPU pod that has run a second out of the store,
with no delete request, audit record or event; ``admission-refused`` (``admission_webhook.py``, a validating
admission plug-in) answers the first gated, bare, 1-GPU pod's creation with a webhook's 403 and its message.
"""

from __future__ import annotations

from enum import Enum

from gpupoc.sim.profiles import parse_profiles


class Fault(str, Enum):
    CROSS_TENANT_LOGS = "cross-tenant-logs"  # tenant tokens may read other namespaces' pod logs
    QUOTA_NOT_ENFORCED = "quota-not-enforced"  # ResourceQuota admission lets every pod through
    EVENTS_DROPPED = "events-dropped"  # no Warning events are recorded for failures
    LOGS_LOST_ON_FAILURE = "logs-lost-on-failure"  # a failed container's log is gone
    PRIORITY_IGNORED = "priority-ignored"  # plain FIFO by creation time, no preemption
    GPUS_LEAK = "gpus-leak"  # GPUs of failed pods are never released
    AUDIT_GAPS = "audit-gaps"  # quota changes leave no audit record
    GANG_PARTIAL = "gang-partial"  # gangs bound partly: some pods run (holding GPUs) while the others wait
    BORROW_NOT_RECLAIMED = "borrow-not-reclaimed"  # no eviction across queues: a lender never gets lent GPUs back
    FAIRSHARE_IGNORED = "fairshare-ignored"  # GPUs beyond a queue's quota go first-come-first-served
    REASONS_OPAQUE = "reasons-opaque"  # only generic messages: gates, empty, "0/N nodes are available."
    VAGUE_REASONS = "vague-reasons"  # every unschedulable pod: "Pod is pending.", nothing else
    GPUMEM_NOT_ENFORCED = "gpumem-not-enforced"  # HAMi: no CUDA_DEVICE_MEMORY_LIMIT: a vGPU may take the card
    VGPU_OVERCOMMIT = "vgpu-overcommit"  # HAMi: more gpumem placed on a card than it has
    SLICE_LEAK = "slice-leak"  # HAMi: a finished pod's vGPU slice stays allocated
    ENDPOINTS_STALE = "endpoints-stale"  # an ended, deleted or lost pod stays a ready endpoint of its Services
    READINESS_IGNORED = "readiness-ignored"  # a running pod is a ready endpoint whatever its readiness probe says
    SERVING_PREEMPTED = "serving-preempted"  # kube-scheduler preempts serving replicas whatever their priority
    POD_LOST = "pod-lost"  # one running pod vanishes: no delete request, no audit record, no event
    ADMISSION_REFUSED = "admission-refused"  # a webhook refuses one gated 1-GPU pod's creation (403, its message)


def parse_faults(value: str | None) -> frozenset[Fault]:
    """Parse ``--faults a,b``; an unknown name is refused with the list of known ones."""
    return parse_profiles(value, Fault, "--faults", "faults", "fault profile")
