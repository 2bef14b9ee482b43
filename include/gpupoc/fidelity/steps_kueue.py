"""Kueue's steps: a queue over its quota, a preemption inside a ClusterQueue, a reclaim across a cohort, fair
sharing, and ``waitForPodsReady`` with a workload that can run and one that cannot. Each step makes its own
queues (names apart), records what a client reads of the Workloads, their events and the pods
(``kueue_observe``), then deletes its pods."""

from __future__ import annotations

from gpupoc.fidelity import kueue_observe as see
from gpupoc.fidelity.kueue_setup import (API, cluster_queue, condition, create, delete_pods, get_pod, is_true,
                                         local_queue, name_of, queued_pod, reason_is, wait_workload, workload_of)
from gpupoc.fidelity.run import Run
from gpupoc.fidelity.setup import HIGH, LOW, OTHER_NS, TENANT_NS, until

EVICTED = frozenset({"EvictedDueToPreempted", "Preempted"})  # a preempted Workload's events

PENDING = reason_is("QuotaReserved", "Pending")


def running(run: Run, ns: str, name: str) -> bool:
    _, ok = until(lambda: (get_pod(run.admin, ns, name).get("status") or {}).get("phase"),
                  lambda ph: ph == "Running", run.wait)
    return ok


def evicted_version(run: Run, ns: str, wl: dict) -> dict:
    """The victim Workload's first version with ``Evicted`` True, read from a watch (it may be deleted soon
    after, with its pod)."""
    name = name_of(wl)
    version = str((wl.get("metadata") or {}).get("resourceVersion") or "")
    seen = run.admin.watch(f"{API}/namespaces/{ns}/workloads", version, seconds=int(run.wait),
                           field_selector=f"metadata.name={name}",
                           stop=lambda e: e.get("type") == "DELETED" or is_true("Evicted")(e.get("object") or {}))
    marked = [e.get("object") or {} for e in seen if is_true("Evicted")(e.get("object") or {})]
    return marked[0] if marked else (workload_of(run.admin, ns, _owner(wl)) or wl)


def _owner(wl: dict) -> str:
    return next((o.get("name", "") for o in (wl.get("metadata") or {}).get("ownerReferences") or []), "")


def _pod_versions(run: Run, ns: str, name: str, since: str) -> list[dict]:
    """The pod's versions from a watch since ``since`` up to its deletion (or its first disruption mark)."""
    def stop(e: dict) -> bool:
        obj = e.get("object") or {}
        return e.get("type") == "DELETED" or bool(condition(obj, "TerminationTarget") or
                                                  condition(obj, "DisruptionTarget"))
    seen = run.admin.watch(f"/api/v1/namespaces/{ns}/pods", since, seconds=int(run.wait),
                           field_selector=f"metadata.name={name}", stop=stop)
    return [e.get("object") or {} for e in seen if e.get("type") in ("ADDED", "MODIFIED", "DELETED")]


def record(run: Run, step: str, prefix: str, ns: str, pod: str, wl: dict, names: list[str],
            wl_events: tuple[str, ...] = (), pod_events: tuple[str, ...] = ()) -> None:
    rec = run.rec(step)
    see.workload(rec, prefix, wl, names, run.nodes)
    see.queued_pod(rec, f"{prefix}.pod", get_pod(run.admin, ns, pod), names, run.nodes)
    if wl:
        until(lambda: see.events(rec, prefix, run.admin, ns, name_of(wl), names, run.nodes, wl_events),
              lambda ev: set(wl_events) <= ev, run.wait)
    until(lambda: see.events(rec, f"{prefix}.pod", run.admin, ns, pod, names, run.nodes, pod_events),
          lambda ev: set(pod_events) <= ev, run.wait)


def over_quota(run: Run) -> None:
    """A ClusterQueue of 4 GPUs: 4 admitted, then 2 held for quota, 8 over its maximum, 1 for a LocalQueue
    that does not exist, and a pod asking CPU, which the ClusterQueue does not cover."""
    step, ns, a = "kueue_over_quota", TENANT_NS, run.admin
    cluster_queue(a, "fid-quota", 4)
    local_queue(a, ns, "fid-quota", "fid-quota")
    create(a, ns, queued_pod("fid-q-fits", "fid-quota", 4))
    fits = wait_workload(a, ns, "fid-q-fits", is_true("Admitted"), run.wait)
    run.rec(step).see("fits.running", running(run, ns, "fid-q-fits"))
    create(a, ns, queued_pod("fid-q-held", "fid-quota", 2))
    held = wait_workload(a, ns, "fid-q-held", PENDING, run.wait)
    create(a, ns, queued_pod("fid-q-too-big", "fid-quota", 8))
    big = wait_workload(a, ns, "fid-q-too-big", PENDING, run.wait)
    create(a, ns, queued_pod("fid-q-no-queue", "fid-missing", 1))
    orphan = wait_workload(a, ns, "fid-q-no-queue", lambda w: bool(condition(w, "QuotaReserved")), 20.0)
    create(a, ns, queued_pod("fid-q-cpu", "fid-quota", 0, cpu="100m"))
    cpu = wait_workload(a, ns, "fid-q-cpu", lambda w: bool(condition(w, "QuotaReserved")), 20.0)
    names = [name_of(w) for w in (fits, held, big, orphan, cpu)]
    fits = workload_of(a, ns, "fid-q-fits")
    record(run, step, "fits", ns, "fid-q-fits", fits, names, ("QuotaReserved", "Admitted"),
            ("CreatedWorkload", "Started"))
    record(run, step, "held", ns, "fid-q-held", held, names, ("Pending",), ("CreatedWorkload",))
    record(run, step, "too_big", ns, "fid-q-too-big", big, names, ("Pending",))
    record(run, step, "no_queue", ns, "fid-q-no-queue", orphan, names)
    record(run, step, "uncovered_cpu", ns, "fid-q-cpu", cpu, names)
    delete_pods(a, ns, ["fid-q-fits", "fid-q-held", "fid-q-too-big", "fid-q-no-queue", "fid-q-cpu"])


def _preempt(run: Run, step: str, victim: tuple[str, str], preemptor: tuple[str, str], gpus: int,
             queues: tuple[str, str], priorities: tuple[str | None, str | None] = (None, None)) -> None:
    """``victim`` (namespace, pod) admitted and running, then ``preemptor`` arriving: both Workloads, the
    victim pod's marks and every event recorded."""
    a = run.admin
    create(a, victim[0], queued_pod(victim[1], queues[0], gpus, priorities[0]))
    low = wait_workload(a, victim[0], victim[1], is_true("Admitted"), run.wait)
    run.rec(step).see("victim.running_before", running(run, *victim))
    pod_version = str((get_pod(a, *victim).get("metadata") or {}).get("resourceVersion") or "")
    create(a, preemptor[0], queued_pod(preemptor[1], queues[1], gpus, priorities[1]))
    evicted = evicted_version(run, victim[0], low)
    marked = next((v for v in _pod_versions(run, victim[0], victim[1], pod_version)
                   if condition(v, "TerminationTarget") or condition(v, "DisruptionTarget")), {})
    high = wait_workload(a, preemptor[0], preemptor[1], is_true("Admitted"), run.wait)
    names = [name_of(low), name_of(high)]
    rec = run.rec(step)
    see.workload(rec, "victim", evicted, names, run.nodes)
    see.queued_pod(rec, "victim.pod.marked", {**marked, "kind": "Pod"} if marked else {}, names, run.nodes)
    until(lambda: see.events(rec, "victim.pod", a, victim[0], victim[1], names, run.nodes, ("Stopped",)),
          lambda ev: "Stopped" in ev, run.wait)
    # the victim's Workload: evicted and preempted, then either requeued (Pending: real Kueue) or deleted with its
    # pod (the simulated mode); read until one of them, however long a loaded machine takes
    until(lambda: (see.events(rec, "victim", a, victim[0], name_of(low), names, run.nodes, EVICTED),
                   workload_of(a, victim[0], victim[1])),
          lambda seen: EVICTED <= seen[0] and ("Pending" in seen[0] or not seen[1]), run.wait)
    rec.see("preemptor.running", running(run, *preemptor))
    record(run, step, "preemptor", preemptor[0], preemptor[1], high, names,
            ("Pending", "PreemptedWorkload", "QuotaReserved", "Admitted"))
    delete_pods(a, victim[0], [victim[1]])
    delete_pods(a, preemptor[0], [preemptor[1]])


def preemption(run: Run) -> None:
    """A ClusterQueue of 4 GPUs preempting lower priorities: a low-priority 4-GPU pod runs, a high one comes."""
    cluster_queue(run.admin, "fid-preempt", 4, preemption={"withinClusterQueue": "LowerPriority"})
    local_queue(run.admin, TENANT_NS, "fid-preempt", "fid-preempt")
    _preempt(run, "kueue_preemption", (TENANT_NS, "fid-p-low"), (TENANT_NS, "fid-p-high"), 4,
             ("fid-preempt", "fid-preempt"), (LOW, HIGH))


def reclaim(run: Run) -> None:
    """A cohort: the borrower (no quota of its own) runs 4 GPUs of the lender's 4; the lender then asks them back."""
    a = run.admin
    cluster_queue(a, "fid-lender", 4, cohort="fid-cohort", preemption={"reclaimWithinCohort": "Any"})
    cluster_queue(a, "fid-borrower", 0, cohort="fid-cohort")
    local_queue(a, OTHER_NS, "fid-lender", "fid-lender")
    local_queue(a, TENANT_NS, "fid-borrower", "fid-borrower")
    _preempt(run, "kueue_reclaim", (TENANT_NS, "fid-r-borrow"), (OTHER_NS, "fid-r-reclaim"), 4,
             ("fid-borrower", "fid-lender"))
