"""The texts Volcano and KAI write on PodGroups, queues and pods about gangs, as pure functions.

Sources (Apache-2.0):
- Volcano (volcano-sh/volcano): ``plugins/gang`` ``OnSessionClose`` ("%v/%v tasks in gang unschedulable: %v",
  reason ``NotEnoughResources``; ``Scheduled`` reason "tasks in gang are ready to be scheduled") and
  ``validJobFn`` (``NotEnoughTasks`` "Not enough valid tasks for gang-scheduling, valid: %d, min: %d");
  ``api/job_info.go`` ``FitError`` ("pod group is not ready, <status histogram>; Pending: <reasons>") and
  ``TaskSchedulingReason`` (``Schedulable`` "Pod %s/%s can possibly be assigned to %s", ``Unschedulable``,
  ``Undetermined``); ``cache.RecordJobStatusEvent`` (Warning ``Unschedulable``, Normal ``Scheduled``
  "pod group is ready"); ``plugins/capacity`` and ``proportion`` enqueue ("queue resource quota
  insufficient: insufficient <resource>"), ``plugins/overcommit`` ("resource in cluster is overused:
  overused <resource>"), ``util.FormatResourceNames``.
- KAI (NVIDIA/KAI-Scheduler): ``common_info`` job fit errors (``PodSchedulingErrors``,
  ``JobFitErrorsToMessage``, "Unable to schedule podgroup"), ``allocate`` ``handleFailedTaskAllocation``
  ("Resources were found for %d pods while %d are required for gang scheduling. Additional pods cannot be
  scheduled due to: %s", "Resources were not found for pod %s/%s due to: %s"), ``api/messages``
  (``OverLimit``, ``NonPreemptibleOverQuota``, reclaim "Pod %s/%s was preempted by workload %s/%s."),
  ``status_updater`` (``UnschedulableOnNodePool`` scheduling condition, ``NotReady`` event).
"""

from __future__ import annotations

from collections import Counter

from gpupoc.kube.resources import GPU


# -- Volcano -----------------------------------------------------------------------------------------
NOT_ENOUGH_RESOURCES = "NotEnoughResources"
NOT_ENOUGH_TASKS = "NotEnoughTasks"
POD_GROUP_READY = "pod group is ready"
POD_GROUP_NOT_READY = "pod group is not ready"
SCHEDULED_REASON = "tasks in gang are ready to be scheduled"
REASON_SCHEDULABLE, REASON_UNSCHEDULABLE, REASON_UNDETERMINED = "Schedulable", "Unschedulable", "Undetermined"


def _histogram(counts: Counter) -> str:
    return ", ".join(sorted(f"{n} {what}" for what, n in counts.items() if n))


def volcano_fit_error(task_states: Counter, min_available: int, pending_reasons: Counter) -> str:
    """``JobInfo.FitError``: the job's tasks by status, then its pending tasks by scheduling reason."""
    msg = f"{POD_GROUP_NOT_READY}, {_histogram(Counter({**task_states, 'minAvailable': min_available}))}"
    if sum(pending_reasons.values()):
        msg += f"; Pending: {_histogram(pending_reasons)}"
    return msg


def volcano_gang_unschedulable(unready: int, tasks: int, fit_error: str) -> str:
    return f"{unready}/{tasks} tasks in gang unschedulable: {fit_error}"


def volcano_not_enough_tasks(valid: int, minimum: int) -> str:
    return f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {minimum}"


def volcano_schedulable(namespace: str, name: str, node: str) -> str:
    return f"Pod {namespace}/{name} can possibly be assigned to {node}"


def format_resource_names(prefix: str, verb: str, names: list[str]) -> str:
    """``util.FormatResourceNames``."""
    if not names:
        return prefix
    return f"{prefix}: " + ", ".join(f"{verb} {n}" for n in names)


def volcano_queue_insufficient() -> str:
    return format_resource_names("queue resource quota insufficient", "insufficient", [GPU])


def volcano_cluster_overused() -> str:
    return format_resource_names("resource in cluster is overused", "overused", [GPU])


# -- KAI -----------------------------------------------------------------------------------------------
POD_SCHEDULING_ERRORS = "PodSchedulingErrors"
OVER_LIMIT = "OverLimit"
NON_PREEMPTIBLE_OVER_QUOTA = "NonPreemptibleOverQuota"
DEFAULT_PODGROUP_ERROR = "Unable to schedule podgroup"
UNSCHEDULABLE_ON_NODE_POOL = "UnschedulableOnNodePool"


def humanize(value: float) -> str:
    """KAI's ``HumanizeResource(value, 1)``: up to three decimals, no trailing zeros."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def kai_gang_error(found: int, required: int, cause: str) -> str:
    return (f"Resources were found for {found} pods while {required} are required for gang scheduling. "
            f"Additional pods cannot be scheduled due to: {cause}")


def kai_pod_error(namespace: str, name: str, cause: str) -> str:
    return f"Resources were not found for pod {namespace}/{name} due to: {cause}"


def kai_over_limit(queue: str, limit: float, allocated: float, requested: float) -> str:
    return (f"{queue} quota has reached the allowable limit of GPUs. Limit is {humanize(limit)} GPUs, currently "
            f"{humanize(allocated)} GPUs allocated and workload requested {humanize(requested)} GPUs")


def kai_non_preemptible_over_quota(queue: str, requested: float, quota: float, used: float) -> str:
    return (f"Non-preemptible workload is over quota. Workload requested {humanize(requested)} GPUs, but {queue} "
            f"quota is {humanize(quota)} GPUs, while {humanize(used)} GPUs are already allocated for "
            "non-preemptible pods. Use a preemptible workload to go over quota.")


def kai_job_message(errors: list[tuple[str, str]]) -> str:
    """``JobFitErrorsToMessage`` of (reason, message) fit errors."""
    reason = errors[0][0] if len(errors) == 1 else DEFAULT_PODGROUP_ERROR
    counts = Counter(m for _, m in errors)
    parts = sorted(f"{n} {m}" if n > 1 else m for m, n in counts.items())
    return f"{reason}: " + ". \n".join(parts) + "." if parts else reason


def kai_reclaim(victim_ns: str, victim: str, job_ns: str, job: str) -> str:
    return f"Pod {victim_ns}/{victim} was preempted by workload {job_ns}/{job}."


def kai_not_ready(minimum: int, alive: int, gated: int) -> str:
    return (f"Job is not ready for scheduling. Waiting for {minimum} pods, currently {alive} exist, "
            f"{gated} are gated")
