"""Steps on pods: unschedulable, a priority preemption, a missing image, an OOM kill, a NoExecute taint."""

from __future__ import annotations

from gpupoc.fidelity import observe
from gpupoc.fidelity.normalise import shape
from gpupoc.fidelity.run import Run
from gpupoc.fidelity.setup import HIGH, LOW, MISSING_IMAGE, TENANT_NS, pod, until

PODS = f"/api/v1/namespaces/{TENANT_NS}/pods"


def _get(run: Run, name: str) -> dict:
    return run.admin.get(f"{PODS}/{name}").body


def _status(p: dict) -> dict:
    """A pod's status (an empty one when the answer was a ``Status``: the pod is gone)."""
    st = p.get("status") if p.get("kind") == "Pod" else None
    return st if isinstance(st, dict) else {}


def _cond(p: dict, kind: str) -> dict:
    return next((c for c in _status(p).get("conditions") or [] if c.get("type") == kind), {})


def _phase(p: dict) -> str:
    return str(_status(p).get("phase") or "")


def _delete(run: Run, name: str) -> None:
    run.admin.call("DELETE", f"{PODS}/{name}", {"gracePeriodSeconds": 0})


def _create(run: Run, body: dict) -> None:
    answer = run.admin.post(PODS, body)
    if not answer.ok:
        raise RuntimeError(f"the pod {body['metadata']['name']} was refused: {answer.code} {answer.body}")


def _version(run: Run, name: str) -> str:
    return str((_get(run, name).get("metadata") or {}).get("resourceVersion") or "")


def _versions(run: Run, name: str, since: str, enough=None) -> list[dict]:
    """The pod's versions from a watch since ``since``, up to its deletion (or the first ``enough`` holds of);
    the deleted one is marked ``deleted``. A short grace period loses none of them, as polling would."""
    def stop(event: dict) -> bool:
        return event.get("type") in ("DELETED", "ERROR") or bool(enough and enough(event.get("object") or {}))

    seen = run.admin.watch(PODS, since, seconds=int(run.wait), field_selector=f"metadata.name={name}", stop=stop)
    out = [{**(e.get("object") or {}), **({"deleted": True} if e.get("type") == "DELETED" else {})}
           for e in seen if e.get("type") in ("ADDED", "MODIFIED", "DELETED")]
    last = _get(run, name)  # what the pod is now, if it still is
    return out + ([last] if last.get("kind") == "Pod" else [])


def unschedulable(run: Run) -> None:
    """A pod asking one GPU more than the target node has."""
    rec, name = run.rec("unschedulable"), "fid-unschedulable"
    _create(run, pod(name, run.target, gpus=run.target.gpus + 1))
    p, _ = until(lambda: _get(run, name), lambda p: _cond(p, "PodScheduled").get("status") == "False", run.wait)
    observe.conditions(rec, "pod", p, ["PodScheduled"], run.nodes)
    until(lambda: observe.events(rec, "pod", run.admin, TENANT_NS, name, ["FailedScheduling"], run.nodes),
          lambda ev: "FailedScheduling" in ev, run.wait)
    run.mark("unschedulable", "create", "create", "pods", TENANT_NS, name)
    _delete(run, name)


def preemption(run: Run) -> None:
    """A low-priority pod holding the node's GPUs is preempted by a high-priority one."""
    rec, gpus = run.rec("preemption"), run.target.gpus
    _create(run, pod("fid-victim", run.target, gpus=gpus, priority=LOW))
    _, running = until(lambda: _phase(_get(run, "fid-victim")), lambda ph: ph == "Running", run.wait)
    rec.see("victim.running_before", running)
    version = _version(run, "fid-victim")
    _create(run, pod("fid-preemptor", run.target, gpus=gpus, priority=HIGH))
    versions = _versions(run, "fid-victim", version, lambda v: bool(_cond(v, "DisruptionTarget")))
    marked = next((v for v in versions if _cond(v, "DisruptionTarget")), {})
    observe.conditions(rec, "victim", marked, ["DisruptionTarget"], run.nodes)
    until(lambda: observe.events(rec, "victim", run.admin, TENANT_NS, "fid-victim", ["Preempted"], run.nodes),
          lambda ev: "Preempted" in ev, run.wait)
    rec.see("preemptor.nominatedNodeName", shape(_nominated(run, "fid-preemptor", version), run.nodes))
    after, _ = until(lambda: _phase(_get(run, "fid-preemptor")), lambda ph: ph == "Running", run.wait)
    rec.see("preemptor.phase", after)
    until(lambda: observe.events(rec, "preemptor", run.admin, TENANT_NS, "fid-preemptor", ["FailedScheduling"],
                                 run.nodes), lambda ev: {"FailedScheduling", "Scheduled"} <= ev, run.wait)
    run.mark("preemption", "victim_status", "patch", "pods", TENANT_NS, "fid-victim", "status")
    for name in ("fid-preemptor", "fid-victim"):
        _delete(run, name)


def _nominated(run: Run, name: str, since: str) -> str | None:
    """The node the pod was nominated to before it was bound, from every version a watch since ``since`` saw
    (one read would race the binding: kube-scheduler clears the nomination once the pod is bound)."""
    versions = _versions(run, name, since, lambda v: bool((v.get("spec") or {}).get("nodeName")))
    return next((v["status"]["nominatedNodeName"] for v in versions
                 if (v.get("status") or {}).get("nominatedNodeName")), None)


def missing_image(run: Run) -> None:
    """A pod whose image no registry has."""
    rec, name = run.rec("missing_image"), "fid-missing-image"
    _create(run, pod(name, run.target, image=MISSING_IMAGE, mode="image-pull"))
    p, _ = until(lambda: _get(run, name), lambda p: _waiting(p) in ("ErrImagePull", "ImagePullBackOff"), run.wait)
    observe.container(rec, "pod", p)
    rec.see("pod.container.waiting_reason_seen", _waiting(p))
    until(lambda: observe.events(rec, "pod", run.admin, TENANT_NS, name, ["Failed"], run.nodes),
          lambda ev: "Failed" in ev, run.wait)
    _delete(run, name)


def _waiting(p: dict) -> str:
    statuses = _status(p).get("containerStatuses") or []
    return str(((statuses[0].get("state") or {}).get("waiting") or {}).get("reason") or "") if statuses else ""


def oom(run: Run) -> None:
    """A container killed for its memory (the virtual workload's ``oom`` mode)."""
    rec, name = run.rec("oom"), "fid-oom"
    _create(run, pod(name, run.target, mode="oom", seconds=2))
    p, _ = until(lambda: _get(run, name), lambda p: _phase(p) in ("Failed", "Succeeded"), run.wait)
    observe.container(rec, "pod", p)
    observe.events(rec, "pod", run.admin, TENANT_NS, name, (), run.nodes)
    _delete(run, name)


def taint_eviction(run: Run) -> None:
    """A pod on a node given a NoExecute taint it does not tolerate is evicted; the taint is then removed.
    The pod's versions are read from a watch."""
    rec, name, node = run.rec("taint_eviction"), "fid-evictee", run.target.node
    _create(run, pod(name, run.target, grace=5))
    until(lambda: _phase(_get(run, name)), lambda ph: ph == "Running", run.wait)
    version = _version(run, name)
    taint = {"key": "gpupoc.io/fidelity", "value": "evict", "effect": "NoExecute"}
    patch = run.admin.call("PATCH", f"/api/v1/nodes/{node}", {"spec": {"taints": [*run.target.taints, taint]}},
                           content_type="application/merge-patch+json")
    rec.see("taint.code", patch.code)
    try:
        versions = _versions(run, name, version)
        marked = next((v for v in versions if _cond(v, "DisruptionTarget")), {})
        observe.conditions(rec, "pod", marked, ["DisruptionTarget"], run.nodes)
        rec.see("pod.deletionTimestamp", "present" if any((v.get("metadata") or {}).get("deletionTimestamp")
                                                          for v in versions) else None)
        rec.see("pod.deleted", any(v.get("deleted") is True for v in versions))
        until(lambda: observe.events(rec, "pod", run.admin, TENANT_NS, name, ["TaintManagerEviction"], run.nodes),
              lambda ev: "TaintManagerEviction" in ev, run.wait)
    finally:
        run.admin.call("PATCH", f"/api/v1/nodes/{node}", {"spec": {"taints": run.target.taints or None}},
                       content_type="application/merge-patch+json")
    _delete(run, name)
