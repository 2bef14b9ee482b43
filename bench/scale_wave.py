"""A synthetic congestion wave of N pods in bulk shards, and a stand-in for the API server that serves it as the
simulated cluster does (pods, events, nodes, priority classes) at a virtual time: the helper of
``bench/scale_bounds.py``, not a benchmark itself.

The wave: each pod created at ``create_rate`` pods/s (one shard of 500 of one tenant after another), the gate of
all of them lifted once they all exist, then placed at most ``place_rate`` pods/s in kube-scheduler's order
(priority, then creation) on the first node that fits, started 1 s after its binding, ended after its workload's
duration. A pod that waits gets the scheduler's ``FailedScheduling`` event (aggregated, as the simulated cluster
records it), a placed one ``Scheduled``, ``Pulled``, ``Created`` and ``Started``. Every answer is JSON text parsed
again, as a client receives it.
"""

from __future__ import annotations

import heapq
import json
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from gpupoc.common.constants import PIPELINE_GATE, RELEASED_AT
from gpupoc.common.timefmt import rfc3339
from gpupoc.pipeline.k8s import Response
from gpupoc.podspec import labels as L

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
SHARD_LABEL = "gpupoc.io/bulk-shard"
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")  # the API's whole seconds


@dataclass(eq=False)
class PodLife:
    """One pod of the wave and the moments of its life."""

    item: str
    namespace: str
    name: str
    shard: int
    template: str  # key of its pod body (the same for every pod of one workload, tenant and priority)
    gpus: int
    priority: int
    duration: float
    created: datetime
    released: datetime | None = None
    scheduled: datetime | None = None
    node: str | None = None

    @property
    def started(self) -> datetime | None:
        return self.scheduled + timedelta(seconds=1) if self.scheduled else None

    @property
    def finished(self) -> datetime | None:
        return self.started + timedelta(seconds=self.duration) if self.started else None


def templates_and_pods(plan, run_id: str, test_class: str, shard_size: int, create_rate: float,
                       start: datetime = T0) -> tuple[dict[str, dict], list[PodLife]]:
    """Each distinct pod body (``podspec.build_pod``, as a bulk shard builds it) and the wave's pods in shard
    order, with their creation times."""
    from kubernetes.client import ApiClient

    from gpupoc.plan import class_items
    from gpupoc.plan.overrides import item_workload, planned_seconds
    from gpupoc.podspec.build import build_pod

    api, bodies, pods = ApiClient(), {}, []
    prios = {p.name: p.value for p in plan.priority_classes}
    by_ns: dict[str, list] = {}
    for item in class_items(plan, test_class):
        by_ns.setdefault(plan.tenant(item.tenant).namespace, []).append(item)
    shard = 0
    for ns, items in by_ns.items():
        for first in range(0, len(items), shard_size):
            for item in items[first:first + shard_size]:
                wl = item_workload(plan, item)
                pc = item.priority_class or wl.priority_class
                key = f"{wl.name}|{item.tenant}|{pc}|{item.role}"
                if key not in bodies:
                    pod = build_pod(wl, plan.tenant(item.tenant), plan, run_id=run_id, test_class=test_class,
                                    wave_gate=True, name=item.name, priority_class=pc, role=item.role)
                    bodies[key] = api.sanitize_for_serialization(pod)
                created = start + timedelta(seconds=2 + len(pods) / create_rate)
                pods.append(PodLife(item.name, ns, f"{item.name}-{uuid.uuid5(uuid.NAMESPACE_DNS, item.name).hex[:8]}",
                                    shard, key, wl.gpus, prios.get(pc, 0), planned_seconds(plan, item), created))
            shard += 1
    return bodies, pods


def place(pods: list[PodLife], nodes: dict[str, int], place_rate: float, release_after: float = 3.0) -> datetime:
    """Release the wave once every pod exists and place it (see the module docstring); returns the release."""
    release = max(p.created for p in pods) + timedelta(seconds=release_after)
    for p in pods:
        p.released = release
    free = dict(nodes)
    by_free: dict[int, set[str]] = {}
    for n, g in free.items():
        by_free.setdefault(g, set()).add(n)
    pending = sorted(pods, key=lambda p: (-p.priority, p.created))
    running: list[tuple[datetime, int, PodLife]] = []
    second = 0
    while pending:
        now = release + timedelta(seconds=second)
        while running and running[0][0] <= now:
            p = heapq.heappop(running)[2]
            _move(by_free, free, p.node, p.gpus)
        budget, left = int(place_rate), []
        for p in pending:
            node = _fit(by_free, p.gpus) if budget else None
            if node is None:
                left.append(p)
                continue
            p.node, p.scheduled = node, now + timedelta(seconds=(place_rate - budget) / place_rate)
            _move(by_free, free, node, -p.gpus)
            heapq.heappush(running, (p.finished, id(p), p))
            budget -= 1
        pending = left
        second += 1
    return release


def _fit(by_free: dict[int, set[str]], gpus: int) -> str | None:
    """The fullest node with room for ``gpus`` (the same one on every run)."""
    fits = [k for k, ns in by_free.items() if ns and k >= gpus]
    return min(by_free[min(fits)]) if fits else None


def _move(by_free: dict[int, set[str]], free: dict[str, int], node: str, delta: int) -> None:
    by_free[free[node]].discard(node)
    free[node] += delta
    by_free.setdefault(free[node], set()).add(node)


class WaveApi:
    """A ``KubeCaller`` answering from the synthetic wave at ``now`` (moved by ``advance``)."""

    context = "admin"

    def __init__(self, bodies: dict[str, dict], pods: list[PodLife], nodes: dict[str, int], pool_labels: dict,
                 priority_classes: dict[str, int], now: datetime = T0):
        self.bodies, self.pods, self.nodes, self.now = bodies, pods, nodes, now
        self.pool_labels, self.priority_classes = pool_labels, priority_classes
        self.by_ns: dict[str, list[PodLife]] = {}
        for p in pods:
            self.by_ns.setdefault(p.namespace, []).append(p)
        self.by_name = {(p.namespace, p.name): p for p in pods}
        self.fit_message = _fit_message(len(nodes))
        self.calls = Counter()

    def clock(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def call(self, method, path, *, query=None, body=None, content_type=None, timeout=None) -> Response:
        parts = path.strip("/").split("/")
        self.calls[(method, parts[-1])] += 1
        if method != "GET":
            return Response(404, {"kind": "Status", "message": "not served by the synthetic wave"})
        if path == "/api/v1/nodes":
            answer = {"kind": "NodeList", "items": [self.node(n, g) for n, g in sorted(self.nodes.items())]}
        elif path == "/apis/scheduling.k8s.io/v1/priorityclasses":
            answer = {"kind": "PriorityClassList", "items": [{"metadata": {"name": n}, "value": v}
                                                            for n, v in self.priority_classes.items()]}
        elif len(parts) == 5 and parts[4] == "pods":
            answer = {"kind": "PodList", "items": [self.pod(p) for p in self.by_ns.get(parts[3], [])
                                                   if p.created <= self.now]}
        elif len(parts) == 6 and parts[4] == "pods" and (parts[3], parts[5]) in self.by_name:
            answer = self.pod(self.by_name[(parts[3], parts[5])])
        elif len(parts) == 5 and parts[4] == "events":
            answer = {"kind": "EventList", "items": [e for p in self.by_ns.get(parts[3], []) for e in self.events(p)]}
        else:
            return Response(404, {"kind": "Status", "message": f"{path} not found"})
        text = json.dumps(answer)
        return Response(200, json.loads(text), text)

    def node(self, name: str, gpus: int) -> dict:
        alloc = {"cpu": "192", "memory": "2Ti", "nvidia.com/gpu": str(gpus), "pods": "110"}
        return {"metadata": {"name": name, "labels": {**self.pool_labels, "kubernetes.io/hostname": name}},
                "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
                "status": {"allocatable": alloc, "capacity": alloc,
                           "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}

    def pod(self, p: PodLife) -> dict:
        """The pod as the API server returns it at ``now``."""
        body = self.bodies[p.template]
        now, meta, spec = self.now, body["metadata"], dict(body["spec"])
        released = p.released is not None and p.released <= now
        annotations = {**meta.get("annotations", {}), L.ITEM: p.item,
                       **({RELEASED_AT: rfc3339(p.released)} if released else {})}
        labels = {**meta.get("labels", {}), SHARD_LABEL: str(p.shard)}
        spec.update(priority=p.priority, schedulerName="default-scheduler", serviceAccountName="default",
                    dnsPolicy="ClusterFirst", enableServiceLinks=True, terminationGracePeriodSeconds=30,
                    preemptionPolicy="Never")
        if not released:
            spec["schedulingGates"] = [{"name": PIPELINE_GATE}]
        else:
            spec.pop("schedulingGates", None)
        if p.scheduled and p.scheduled <= now:
            spec["nodeName"] = p.node
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": p.name, "namespace": p.namespace, "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, p.name)),
                             "resourceVersion": str(int((now - T0).total_seconds() * 10)),
                             "creationTimestamp": _ts(p.created), "labels": labels, "annotations": annotations},
                "spec": spec, "status": self.status(p, released)}

    def status(self, p: PodLife, released: bool) -> dict:
        now = self.now
        if not released or not p.scheduled or p.scheduled > now:
            reason, message = ("Unschedulable", self.fit_message) if released else ("SchedulingGated", GATED_MESSAGE)
            at = p.released if released else p.created
            return {"phase": "Pending", "qosClass": "Burstable", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": reason, "message": message,
                 "lastProbeTime": None, "lastTransitionTime": _ts(at)}]}
        done = p.finished <= now
        running = p.started <= now and not done
        ready = "True" if running else "False"
        cond = [("PodReadyToStartContainers", "True" if p.started <= now else "False", p.started),
                ("Initialized", "True", p.scheduled), ("Ready", ready, p.finished if done else p.started),
                ("ContainersReady", ready, p.finished if done else p.started), ("PodScheduled", "True", p.scheduled)]
        state = ({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": _ts(p.started),
                                 "finishedAt": _ts(p.finished), "containerID": f"containerd://{p.name}"}} if done
                 else {"running": {"startedAt": _ts(p.started)}} if running
                 else {"waiting": {"reason": "ContainerCreating"}})
        return {"phase": "Succeeded" if done else "Running" if running else "Pending", "qosClass": "Burstable",
                "hostIP": "192.0.2.10", "podIP": "10.244.1.3", "startTime": _ts(p.scheduled),
                "conditions": [{"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": _ts(at),
                                **({"reason": "PodCompleted"} if done and s == "False" else {})} for t, s, at in cond],
                "containerStatuses": [{"name": "base", "image": "gpupoc/virtual:1.0", "ready": running,
                                       "restartCount": 0, "started": running, "state": state, "lastState": {},
                                       "imageID": "docker.io/gpupoc/virtual@sha256:9dbd",
                                       "containerID": f"containerd://{p.name}"}]}

    def events(self, p: PodLife) -> list[dict]:
        """The pod's events at ``now``, as the simulated cluster records them (aggregated repeats)."""
        now, out = self.now, []
        waited = p.released and p.released <= now and (p.scheduled is None or p.scheduled - p.released > timedelta(
            seconds=1))
        if waited:
            last = min(now, p.scheduled) if p.scheduled else now
            count = 1 + int((last - p.released).total_seconds() // 5)
            out.append(_event(p, "FailedScheduling", self.fit_message, "Warning", "default-scheduler", p.released,
                              last, count))
        if p.scheduled and p.scheduled <= now:
            out.append(_event(p, "Scheduled", f"Successfully assigned {p.namespace}/{p.name} to {p.node}", "Normal",
                              "default-scheduler", p.scheduled))
        if p.started and p.started <= now:
            for reason, text in (("Pulled", 'Container image "gpupoc/virtual:1.0" already present on machine'),
                                 ("Created", "Created container base"), ("Started", "Started container base")):
                out.append(_event(p, reason, text, "Normal", "kubelet", p.started))
        return out


def _event(p: PodLife, reason: str, message: str, type_: str, component: str, first: datetime,
           last: datetime | None = None, count: int = 1) -> dict:
    return {"metadata": {"name": f"{p.name}.{reason.lower()}", "namespace": p.namespace},
            "involvedObject": {"kind": "Pod", "namespace": p.namespace, "name": p.name, "apiVersion": "v1",
                               "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, p.name))},
            "reason": reason, "message": message, "type": type_, "source": {"component": component},
            "firstTimestamp": _ts(first), "lastTimestamp": _ts(last or first), "count": count, "eventTime": None,
            "reportingComponent": component, "reportingInstance": ""}


def _fit_message(nodes: int) -> str:
    from gpupoc.sim.controllers.scheduling import fit_error, preemption_message

    reasons = Counter({"Insufficient nvidia.com/gpu": nodes, "node(s) didn't match Pod's node affinity/selector": 2})
    return (fit_error(nodes + 2, reasons) + " " +
            preemption_message(nodes + 2, Counter({"Preemption is not helpful for scheduling": nodes + 2})) + ".")
