"""Kueue's pod groups: pods labelled ``kueue.x-k8s.io/pod-group-name`` with the annotation
``kueue.x-k8s.io/pod-group-total-count`` form one Workload, admitted (all its pods ungated) at once.

As Kueue's pod integration (docs "Troubleshooting Pods"): the Workload is created once all the group's pods
exist and is named after the group; until then each pod gets a Warning ``ErrWorkloadCompose`` "'<group>'
group has fewer runnable pods than expected" from ``pod-kueue-controller``, then a Normal
``CreatedWorkload`` "Created Workload: <namespace>/<group>". Pods of the same shape form one pod set named
by their ``kueue.x-k8s.io/role-hash`` annotation (else a hash of the shape). A pod joining a group whose
Workload exists (a replacement) is added to it, ungated at once when the Workload is admitted. Under the
``gang-partial`` fault the group label is ignored: each pod gets its own Workload.
"""

from __future__ import annotations

import hashlib
import json
from typing import Protocol

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers.kueue_types import KUEUE_GATES, Entry, Key
from gpupoc.sim.events import NORMAL, WARNING

GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
TOTAL_COUNT = "kueue.x-k8s.io/pod-group-total-count"
ROLE_HASH = "kueue.x-k8s.io/role-hash"
POD_CONTROLLER = "pod-kueue-controller"


def role_hash(pod: dict) -> str:
    """The pod set a pod belongs to: its role-hash annotation, else 8 hex of a hash of its shape."""
    given = (pod["metadata"].get("annotations") or {}).get(ROLE_HASH)
    if given:
        return given
    spec = pod.get("spec", {})
    shape = {k: spec.get(k) for k in ("nodeSelector", "tolerations", "affinity", "priorityClassName")}
    shape["containers"] = [{k: v for k, v in c.items() if k != "env"} for c in spec.get("containers") or []]
    return hashlib.sha256(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:8]


def total_count(pod: dict) -> int:
    try:
        return max(1, int((pod["metadata"].get("annotations") or {}).get(TOTAL_COUNT, "1")))
    except ValueError:
        return 1


class WorkloadMaker(Protocol):
    """What the group composer sees of the queue manager (``kueue.Kueue``): its Workloads, and how it makes one."""

    entries: dict[Key, Entry]
    by_pod: dict[Key, Key]

    def workload_body(self, name: str, owners: list[dict], job_uid: set[str],
                      podsets: list[tuple[str, list[dict]]]) -> dict:
        """A Workload owned by ``owners`` with those pod sets (not stored)."""

    def store_workload(self, wl: dict) -> dict | None:
        """Store and index ``wl``; None when it exists already."""


class GroupComposer:
    """Pods waiting for their group to be complete, and the Workloads made of complete groups."""

    def __init__(self, state: ClusterState, kq: WorkloadMaker):
        self.state = state
        self.kq = kq
        self.waiting: dict[Key, list[Key]] = {}  # (namespace, group) -> pods, in arrival order
        self._warned: set[Key] = set()

    def claims(self, pod: dict) -> bool:
        return bool((pod["metadata"].get("labels") or {}).get(GROUP_LABEL)) and \
            self.state.reactors.whole_gangs

    def add(self, pod: dict) -> dict | None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        gkey = (key[0], meta["labels"][GROUP_LABEL])
        existing = self.kq.entries.get(gkey)
        if existing is not None and not existing.finished:
            self._join(existing, pod, key)
            return None
        members = self.waiting.setdefault(gkey, [])
        if key not in members:
            members.append(key)
        wl = self._compose(gkey)
        if wl is None and key not in self._warned:
            self._warned.add(key)
            self.state.events.record(pod, "ErrWorkloadCompose",
                                        f"'{gkey[1]}' group has fewer runnable pods than expected", WARNING,
                                        component=POD_CONTROLLER)
        return wl

    def compose(self) -> None:
        for gkey in list(self.waiting):
            self._compose(gkey)

    def _compose(self, gkey: Key) -> dict | None:
        store = self.state.store
        pods = [p for p in (store.get("pods", *k) for k in self.waiting.get(gkey, []))
                if p is not None and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
        self.waiting[gkey] = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
        if not pods or len(pods) < total_count(pods[0]):
            if not pods:
                del self.waiting[gkey]
            return None
        sets: dict[str, list[dict]] = {}
        for p in pods:
            sets.setdefault(role_hash(p), []).append(p)
        wl = self.kq.workload_body(gkey[1], pods, set(), list(sets.items()))
        stored = self.kq.store_workload(wl)
        del self.waiting[gkey]
        if stored is not None:
            for p in pods:
                self.state.events.record(p, "CreatedWorkload", f"Created Workload: {gkey[0]}/{gkey[1]}", NORMAL,
                                            component=POD_CONTROLLER)
        return stored

    def _join(self, entry, pod: dict, key: Key) -> None:
        """A pod arriving for a group whose Workload exists (a replacement) joins it."""
        store = self.state.store
        entry.pods = [k for k in entry.pods if store.get("pods", *k) is not None and k != key] + [key]
        self.kq.by_pod[key] = entry.key
        wl = store.get("workloads", *entry.key)
        if wl is not None:
            wl["metadata"]["ownerReferences"] = [
                {"apiVersion": "v1", "kind": "Pod", "name": k[1], "uid": (store.get("pods", *k) or {})
                 .get("metadata", {}).get("uid", ""), "controller": False, "blockOwnerDeletion": True}
                for k in entry.pods]
            store.update("workloads", wl)
        if entry.admitted:
            gates = [g for g in pod["spec"].get("schedulingGates") or [] if g.get("name") not in KUEUE_GATES]
            if gates:
                pod["spec"]["schedulingGates"] = gates
            else:
                pod["spec"].pop("schedulingGates", None)
            store.update("pods", pod)
