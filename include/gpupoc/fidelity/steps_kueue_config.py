"""Kueue's steps that need a setting of its Configuration: fair sharing (``fairSharing``) and
``waitForPodsReady`` (a timeout; admission blocked until the admitted Workload's pods are ready)."""

from __future__ import annotations

from gpupoc.fidelity import kueue_observe as see
from gpupoc.fidelity.kueue_setup import (API, cluster_queue, create, delete_pods, is_true, local_queue, name_of,
                                         queued_pod, wait_workload, workload_of)
from gpupoc.fidelity.run import Run
from gpupoc.fidelity.setup import OTHER_NS, TENANT_NS, until
from gpupoc.fidelity.steps_kueue import evicted_version, record, running

PODS_READY_TIMEOUT = 15  # seconds: the scenario's waitForPodsReady timeout (both sides)


def _weighted_share(run: Run, cq: str) -> object:
    status = run.admin.get(f"{API}/clusterqueues/{cq}").body.get("status") or {}
    return (status.get("fairSharing") or {}).get("weightedShare")


def _first_evicted(run: Run, ns: str, since: str) -> dict:
    """The namespace's first Workload version with ``Evicted`` True after ``since`` (from a watch: the simulated
    mode deletes a preempted pod's Workload with its pod)."""
    seen = run.admin.watch(f"{API}/namespaces/{ns}/workloads", since, seconds=int(run.wait), limit=500,
                           stop=lambda e: is_true("Evicted")(e.get("object") or {}))
    return next((e.get("object") or {} for e in seen if is_true("Evicted")(e.get("object") or {})), {})


def fair_sharing(run: Run) -> None:
    """A cohort sharing a lend-only ClusterQueue's 8 GPUs between two of no quota of their own (weights 1:1):
    the first takes all 8 in two Workloads, the second asks 4, and fair sharing preempts one of the first's."""
    step, a = "kueue_fair_sharing", run.admin
    fair = {"reclaimWithinCohort": "Any"}
    cluster_queue(a, "fid-fair-pool", 8, cohort="fid-fair", lending_limit=8)
    cluster_queue(a, "fid-fair-a", 0, cohort="fid-fair", preemption=fair, weight=1)
    cluster_queue(a, "fid-fair-b", 0, cohort="fid-fair", preemption=fair, weight=1)
    local_queue(a, TENANT_NS, "fid-fair-a", "fid-fair-a")
    local_queue(a, OTHER_NS, "fid-fair-b", "fid-fair-b")
    rec = run.rec(step)
    create(a, TENANT_NS, queued_pod("fid-f-a1", "fid-fair-a", 4))
    first = wait_workload(a, TENANT_NS, "fid-f-a1", is_true("Admitted"), run.wait)
    create(a, TENANT_NS, queued_pod("fid-f-a2", "fid-fair-a", 4))
    second = wait_workload(a, TENANT_NS, "fid-f-a2", is_true("Admitted"), run.wait)
    rec.see("a.running_before", running(run, TENANT_NS, "fid-f-a1") and running(run, TENANT_NS, "fid-f-a2"))
    until(lambda: _weighted_share(run, "fid-fair-a"), lambda v: v not in (None, 0), 15.0)
    rec.see("a.weightedShare_before", _weighted_share(run, "fid-fair-a"))
    since = str((a.get(f"{API}/namespaces/{TENANT_NS}/workloads").body.get("metadata") or {}).get("resourceVersion"))
    create(a, OTHER_NS, queued_pod("fid-f-b1", "fid-fair-b", 4))
    victim = _first_evicted(run, TENANT_NS, since)
    b1 = wait_workload(a, OTHER_NS, "fid-f-b1", is_true("Admitted"), run.wait)
    names = [name_of(w) for w in (first, second, b1)]
    rec.see("a.preempted", name_of(victim) in names[:2])
    see.workload(rec, "victim", victim, names, run.nodes)
    if victim:
        until(lambda: see.events(rec, "victim", a, TENANT_NS, name_of(victim), names, run.nodes, ("Preempted",)),
              lambda ev: "Preempted" in ev, 15.0)
    rec.see("b.running", running(run, OTHER_NS, "fid-f-b1"))
    record(run, step, "b", OTHER_NS, "fid-f-b1", b1, names, ("Pending", "PreemptedWorkload", "Admitted"))
    # the ClusterQueues' status follows the admissions: read once b's share shows its 4 GPUs
    until(lambda: _weighted_share(run, "fid-fair-b"), lambda v: v not in (None, 0), 20.0)
    rec.see("a.weightedShare_after", _weighted_share(run, "fid-fair-a"))
    rec.see("b.weightedShare_after", _weighted_share(run, "fid-fair-b"))
    delete_pods(a, TENANT_NS, ["fid-f-a1", "fid-f-a2"])
    delete_pods(a, OTHER_NS, ["fid-f-b1"])


def pods_ready(run: Run) -> None:
    """``waitForPodsReady``: a 4-GPU Workload whose pod runs, then a 12-GPU one that quota admits and no node
    holds (8 GPUs a node), evicted when the timeout passes."""
    step, ns, a = "kueue_pods_ready", TENANT_NS, run.admin
    cluster_queue(a, "fid-ready", 16)
    local_queue(a, ns, "fid-ready", "fid-ready")
    create(a, ns, queued_pod("fid-w-fits", "fid-ready", 4))
    fits = wait_workload(a, ns, "fid-w-fits", is_true("PodsReady"), run.wait)
    create(a, ns, queued_pod("fid-w-stuck", "fid-ready", 12))
    stuck = wait_workload(a, ns, "fid-w-stuck", is_true("Admitted"), run.wait)
    names = [name_of(fits), name_of(stuck)]
    rec = run.rec(step)
    see.workload(rec, "stuck.admitted", stuck, names, run.nodes)
    evicted = evicted_version(run, ns, stuck) if stuck else {}
    rec.see("stuck.evicted", is_true("Evicted")(evicted))
    record(run, step, "fits", ns, "fid-w-fits", workload_of(a, ns, "fid-w-fits"), names, ("Admitted",))
    record(run, step, "stuck", ns, "fid-w-stuck", evicted, names, ("EvictedDueToPodsReadyTimeout",))
    delete_pods(a, ns, ["fid-w-fits", "fid-w-stuck"])
