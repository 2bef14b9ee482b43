"""What a client reads of Kueue's work: a Workload's conditions (status, reason, message shape), admission and
eviction records; its events and its pods' (core and ``events.k8s.io/v1``); a queued pod's gates, labels,
finalizers, conditions and what admission injected. Workload names (a hash of the pod's UID) read
``<workload>``."""

from __future__ import annotations

from collections.abc import Iterable

from gpupoc.fidelity.client import Kube
from gpupoc.fidelity.kueue_setup import FLAVOR_TOLERATION, POOL_LABEL, kshape
from gpupoc.fidelity.model import StepRecord
from gpupoc.fidelity.normalise import present

WORKLOAD_CONDITIONS = ("QuotaReserved", "Admitted", "Evicted", "Preempted", "Requeued", "PodsReady", "Finished")
POD_CONDITIONS = ("PodScheduled", "DisruptionTarget", "TerminationTarget")


def _st(obj: dict) -> dict:
    st = obj.get("status")
    return st if isinstance(st, dict) else {}


def _conditions(rec: StepRecord, prefix: str, obj: dict, types: Iterable[str], names: list[str],
                nodes: list[str]) -> None:
    conds = {c.get("type"): c for c in _st(obj).get("conditions") or []}
    for kind in types:
        cond = conds.get(kind)
        rec.see(f"{prefix}.condition.{kind}", f"{cond.get('status')} {cond.get('reason') or '-'}" if cond else None)
        if cond:
            rec.see(f"{prefix}.condition.{kind}.message", kshape(cond.get("message"), names, nodes))


def workload(rec: StepRecord, prefix: str, wl: dict, names: list[str], nodes: list[str]) -> None:
    """A Workload's conditions, its admission's fields and its eviction counts."""
    if not wl:
        rec.see(f"{prefix}.workload", None)
        return
    _conditions(rec, prefix, wl, WORKLOAD_CONDITIONS, names, nodes)
    admission = _st(wl).get("admission") or {}
    rec.see(f"{prefix}.admission", present(admission, ("clusterQueue", "podSetAssignments")) if admission else None)
    for i, ps in enumerate(admission.get("podSetAssignments") or []):
        rec.see(f"{prefix}.admission.podSet{i}", f"{ps.get('name')} count={ps.get('count')} "
                f"flavors={ps.get('flavors')} usage={ps.get('resourceUsage')}")
    evictions = (_st(wl).get("schedulingStats") or {}).get("evictions") or []
    rec.see(f"{prefix}.evictions", [f"{e.get('reason')}/{e.get('underlyingCause') or '-'}={e.get('count')}"
                                    for e in evictions])
    rec.see(f"{prefix}.requeueState", present(_st(wl).get("requeueState") or {}, ("count", "requeueAt"))
            if _st(wl).get("requeueState") else None)


def queued_pod(rec: StepRecord, prefix: str, pod: dict, names: list[str], nodes: list[str]) -> None:
    """A queued pod: phase, scheduling gates, Kueue's label and finalizer, conditions, and whether admission
    gave it the flavor's node labels and toleration."""
    if pod.get("kind") != "Pod":
        rec.see(f"{prefix}.pod", "gone")
        return
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    rec.see(f"{prefix}.phase", _st(pod).get("phase"))
    rec.see(f"{prefix}.gates", [g.get("name") for g in spec.get("schedulingGates") or []])
    rec.see(f"{prefix}.gates.order", "|".join(g.get("name", "") for g in spec.get("schedulingGates") or []))
    rec.see(f"{prefix}.label.managed", (meta.get("labels") or {}).get("kueue.x-k8s.io/managed"))
    rec.see(f"{prefix}.finalizers", [f for f in meta.get("finalizers") or [] if "kueue" in f])
    rec.see(f"{prefix}.flavor.nodeSelector", all((spec.get("nodeSelector") or {}).get(k) == v
                                                 for k, v in POOL_LABEL.items()))
    rec.see(f"{prefix}.flavor.toleration", any(t.get("key") == FLAVOR_TOLERATION["key"]
                                               for t in spec.get("tolerations") or []))
    _conditions(rec, prefix, pod, POD_CONDITIONS, names, nodes)


NODE_AGENTS = ("kubelet", "kwok_controller")


def _by(event: dict) -> str:
    return str(event.get("reportingController") or event.get("reportingComponent")
               or (event.get("deprecatedSource") or event.get("source") or {}).get("component") or "")


def events(rec: StepRecord, prefix: str, kube: Kube, namespace: str, name: str, names: list[str], nodes: list[str],
           reasons: Iterable[str] = ()) -> set[str]:
    """An object's events: the reasons each API lists (the node agent's apart); for each of ``reasons`` the
    ``events.k8s.io/v1`` event's type, note shape and reporting controller. Returns the reasons seen."""
    core = kube.get(f"/api/v1/namespaces/{namespace}/events",
                    fieldSelector=f"involvedObject.name={name}").body.get("items") or []
    new = kube.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
                   fieldSelector=f"regarding.name={name}").body.get("items") or []
    for api, items in (("core", core), ("v1", new)):
        rec.see(f"{prefix}.events.{api}", {e.get("reason") for e in items if _by(e) not in NODE_AGENTS})
    by_reason: dict[str, list[dict]] = {}
    for e in (e for e in new if _by(e) not in NODE_AGENTS):
        by_reason.setdefault(str(e.get("reason")), []).append(e)
    for reason in reasons:
        found = by_reason.get(reason) or []
        if not found:
            rec.see(f"{prefix}.event.{reason}", None)
            continue
        rec.see(f"{prefix}.event.{reason}", {str(e.get("type")) for e in found})
        rec.see(f"{prefix}.event.{reason}.note", {kshape(e.get("note"), names, nodes) for e in found})
        rec.see(f"{prefix}.event.{reason}.by", {_by(e) for e in found})
    return {e.get("reason") for e in core} | set(by_reason)
