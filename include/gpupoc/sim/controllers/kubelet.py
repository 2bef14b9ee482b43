"""The simulated kubelet: runs the containers of bound pods and reports their status, logs and telemetry.

``Kubelet(state).reconcile()`` is called by the controller loop on every pass. A store listener marks
the pods that changed, so a pass with nothing new costs a set check. Each adopted pod gets an asyncio
task (``kubelet_lifecycle``) that pulls, starts, watches and restarts its containers; deletion, the loss
of the object and the node controller's eviction stop that task.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import time
from fnmatch import fnmatchcase
from pathlib import Path

from gpupoc.sim import clock
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import ImageEntry
from gpupoc.sim.controllers import kubelet_status as ks
from gpupoc.sim.controllers.kubelet_lifecycle import run_pod
from gpupoc.sim.controllers.kubelet_pods import ContainerRun, PodKey, PodRun
from gpupoc.sim.events import NORMAL
from gpupoc.sim.inventory import Telemetry
from gpupoc.sim.store import Change

log = logging.getLogger(__name__)

TELEMETRY_SECONDS = 1.0
STOP_WAIT_AFTER_KILL = 2.0


def kubelet_for(state: ClusterState) -> "Kubelet":
    """The state's kubelet, created (and subscribed to the store) on first use."""
    return state.kubelet if state.kubelet is not None else Kubelet(state)


class Kubelet:
    """The kubelets of every simulated node, as one controller. One per cluster state: constructing it
    again for the same state returns the existing one (two would run every pod twice)."""

    def __new__(cls, state: ClusterState):
        existing = state.kubelet
        return existing if isinstance(existing, cls) else super().__new__(cls)

    def __init__(self, state: ClusterState):
        if state.kubelet is self:
            return
        self.state = state
        self.store = state.store
        self.timing = state.config.timing
        self.pods: dict[PodKey, PodRun] = {}
        self._dirty: set[PodKey] = set()
        self._deleted_phase: dict[PodKey, str | None] = {}
        self._parked: dict[str, set[PodKey]] = {}  # node not ready -> pods waiting to start there
        self._down: set[str] = set()  # nodes not Ready: their kubelet posts nothing
        self._held: dict[str, dict[PodKey, PodRun]] = {}  # down node -> pods whose status changed meanwhile
        self._recovered: set[str] = set()
        self._process_pods: set[PodKey] = set()
        self.images: dict[str, set[str]] = {}  # node -> images already pulled
        self._node_index: dict[str, int] = {}
        self._ip_seq: dict[str, int] = {}
        self._tasks: set[asyncio.Task] = set()
        self._writing = False
        self._primed = False
        self._telemetry_due = 0.0
        state.store.add_listener(self._on_change)
        state.kubelet = self

    # -- change tracking ---------------------------------------------------------------------------
    def _on_change(self, change: Change) -> None:
        if self._writing:
            return
        if change.resource == "nodes":
            self._node_changed(change.obj)
            return
        if change.resource != "pods":
            return
        meta = change.obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if change.type == "DELETED":
            self._deleted_phase[key] = (change.obj.get("status") or {}).get("phase")
        self._dirty.add(key)

    def _node_changed(self, node: dict) -> None:
        name = node["metadata"]["name"]
        if not _node_ready(node):
            self._down.add(name)
            return
        if name in self._down:
            self._down.discard(name)
            self._recovered.add(name)
        parked = self._parked.pop(name, None)
        if parked:
            self._dirty |= parked

    def _update(self, resource: str, obj: dict) -> None:
        """Commit our own change without marking the pod dirty again."""
        self._writing = True
        try:
            self.store.update(resource, obj)
        finally:
            self._writing = False

    def _delete_object(self, key: PodKey) -> None:
        self._writing = True
        try:
            self.store.delete("pods", key[0], key[1])
        finally:
            self._writing = False

    # -- the pass ----------------------------------------------------------------------------------
    async def reconcile(self) -> None:
        """Adopt newly bound pods, start deletions and evictions, copy telemetry. Cheap when idle."""
        if not self._primed:
            self._primed = True
            self._dirty.update((p["metadata"].get("namespace", ""), p["metadata"]["name"])
                               for p in self.store.list("pods"))
            self._down.update(n["metadata"]["name"] for n in self.store.list("nodes") if not _node_ready(n))
        if self._recovered:
            self._republish()
        if self._dirty:
            dirty, self._dirty = self._dirty, set()
            for key in dirty:
                try:
                    self._sync(key)
                except Exception:  # one bad pod must not stop the others
                    log.exception("kubelet: syncing pod %s/%s failed", *key)
        now = time.monotonic()
        if self._process_pods and now >= self._telemetry_due:
            self._telemetry_due = now + TELEMETRY_SECONDS
            self._read_telemetry()

    def _sync(self, key: PodKey) -> None:
        pod = self.store.get("pods", key[0], key[1])
        pr = self.pods.get(key)
        if pod is None:
            phase = self._deleted_phase.pop(key, None)
            if pr is not None:
                self._teardown(pr, release=not self._keeps_gpus(pr.final_phase or phase, pr.deleting))
            else:
                self._forget(key, phase)
            return
        self._deleted_phase.pop(key, None)
        meta, spec = pod["metadata"], pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        if pr is not None and pr.uid != meta.get("uid"):
            self._teardown(pr, release=True)  # deleted and created again under the same name
            pr = None
        if meta.get("deletionTimestamp"):
            if pr is None:
                self._delete_now(key, phase)
            elif not pr.deleting:
                self._spawn(self._delete(pr, pod))
            return
        if pr is not None:
            if phase in ks.TERMINAL and pr.final_phase is None and not pr.abandoned:
                self._abandon(pr)  # ended by someone else: the node controller's eviction
            return
        node_name = spec.get("nodeName")
        if not node_name or phase in ks.TERMINAL:
            return
        node = self.store.get("nodes", None, node_name)
        if node is None:
            return  # no kubelet serves that node: the pod stays Pending, as in Kubernetes
        if not _node_ready(node):
            self._parked.setdefault(node_name, set()).add(key)
            return
        self._adopt(key, pod, node)

    # -- adoption ----------------------------------------------------------------------------------
    def _adopt(self, key: PodKey, pod: dict, node: dict) -> None:
        spec = pod["spec"]
        node_name = node["metadata"]["name"]
        containers = [ContainerRun(c, self.image_entry(c.get("image", ""))) for c in spec.get("containers") or []]
        pr = PodRun(
            key=key, uid=pod["metadata"].get("uid", ""), node=node_name,
            restart_policy=spec.get("restartPolicy") or "Always", containers=containers,
            host_ip=_host_ip(node), pod_ip=self._next_pod_ip(node_name), start_time=clock.rfc3339(),
            active_deadline=_seconds(spec.get("activeDeadlineSeconds")),
        )
        self.pods[key] = pr
        pr.task = self._spawn(run_pod(self, pr))

    def image_entry(self, image: str) -> ImageEntry | None:
        """The catalogue entry matching ``image`` (first match wins), None when it is unknown."""
        for entry in self.state.config.images:
            if fnmatchcase(image, entry.pattern):
                return entry
        return None

    def _next_pod_ip(self, node: str) -> str:
        idx = self._node_index.setdefault(node, len(self._node_index) + 1)
        seq = self._ip_seq[node] = self._ip_seq.get(node, 0) + 1
        return self.state.network.pod_ip(idx, seq)

    # -- status ------------------------------------------------------------------------------------
    def write(self, pr: PodRun) -> bool:
        """Publish the run's status into the stored pod; False when the pod is no longer ours or its node
        is down (then it is published when the node is back)."""
        if pr.abandoned:
            return False
        if pr.node in self._down:
            self._held.setdefault(pr.node, {})[pr.key] = pr
            return False
        pod = self.store.get("pods", pr.key[0], pr.key[1])
        if pod is None or pod["metadata"].get("uid") != pr.uid:
            return False
        if pod.get("status", {}).get("phase") in ks.TERMINAL and pr.final_phase is None:
            return False  # ended by the node controller meanwhile
        pr.apply(pod)
        self._update("pods", pod)
        return True

    def _republish(self) -> None:
        """Nodes are back: publish what their pods did while the nodes were unreachable."""
        nodes, self._recovered = self._recovered, set()
        runs: dict[PodKey, PodRun] = {}
        for node in nodes:
            runs.update(self._held.pop(node, {}))
        runs.update({k: pr for k, pr in self.pods.items() if pr.node in nodes})
        for pr in runs.values():
            pod = self.store.get("pods", pr.key[0], pr.key[1])
            if pod is not None and pod["metadata"].get("uid") == pr.uid and not pr.abandoned:
                if pod.get("status", {}).get("phase") not in ks.TERMINAL:
                    pr.apply(pod)
                    self._update("pods", pod)

    def event(self, pr: PodRun, reason: str, message: str, type_: str = NORMAL,
              container: ContainerRun | None = None) -> None:
        if pr.abandoned or pr.node in self._down:
            return
        pod = self.store.get("pods", pr.key[0], pr.key[1])
        if pod is None:
            return
        field_path = f"spec.containers{{{container.name}}}" if container is not None else None
        self.state.events.record(pod, reason, message, type_, component="kubelet", host=pr.node,
                                 field_path=field_path)

    # -- GPUs, telemetry, files --------------------------------------------------------------------
    def _keeps_gpus(self, phase: str | None, deleting: bool = False) -> bool:
        """Whether an ended pod's GPUs stay held (``reactors.keeps_gpus``: never, unless a fault says so)."""
        return self.state.reactors.keeps_gpus(phase, deleting)

    def release(self, key: PodKey, phase: str | None, deleting: bool = False) -> None:
        inv = self.state.inventory
        if self._keeps_gpus(phase, deleting):
            inv.telemetry.pop(key, None)  # held but idle: what a leak looks like on the dashboards
        else:
            inv.release(key)
        self._process_pods.discard(key)
        self.telemetry_path(key).unlink(missing_ok=True)

    def telemetry_path(self, key: PodKey) -> Path:
        return self.state.data_dir / "telemetry" / key[0] / f"{key[1]}.json"

    def workdir(self, key: PodKey, container: str) -> Path:
        return self.state.data_dir / "pods" / key[0] / key[1] / container

    def track_process(self, key: PodKey) -> None:
        self._process_pods.add(key)

    def _read_telemetry(self) -> None:
        """Copy each process pod's telemetry file into the inventory (unchanged files are skipped)."""
        inv = self.state.inventory
        for key in list(self._process_pods):
            pr = self.pods.get(key)
            path = self.telemetry_path(key)
            try:
                mtime = path.stat().st_mtime
                if pr is not None and mtime == pr.telemetry_mtime:
                    continue
                data = json.loads(path.read_text())
                inv.telemetry[key] = Telemetry(util=float(data["util"]), mem_mib=float(data["mem_mib"]))
                if pr is not None:
                    pr.telemetry_mtime = mtime
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not written yet, or caught mid-write by a non-atomic writer

    # -- deletion and loss -------------------------------------------------------------------------
    async def _delete(self, pr: PodRun, pod: dict) -> None:
        """Graceful deletion: Killing events, SIGTERM, SIGKILL after the grace, then remove the object."""
        pr.deleting = True
        meta = pod["metadata"]
        grace = meta.get("deletionGracePeriodSeconds")
        if grace is None:
            grace = pod.get("spec", {}).get("terminationGracePeriodSeconds", 30)
        grace = min(float(grace), self.timing.termination_grace_seconds)
        for c in pr.containers:
            if c.running:
                self.event(pr, "Killing", f"Stopping container {c.name}", container=c)
        pr.stop.set()
        for h in list(pr.handles.values()):
            h.signal(signal.SIGTERM)
        if pr.task is not None and not pr.task.done():
            await asyncio.wait({pr.task}, timeout=grace)
            if not pr.task.done():
                for h in list(pr.handles.values()):
                    h.signal(signal.SIGKILL)
                await asyncio.wait({pr.task}, timeout=STOP_WAIT_AFTER_KILL)
                if not pr.task.done():
                    pr.task.cancel()
        if self.pods.get(pr.key) is pr:
            del self.pods[pr.key]
        current = self.store.get("pods", pr.key[0], pr.key[1])
        if current is not None and current["metadata"].get("uid") == pr.uid:
            self._delete_object(pr.key)
        self.release(pr.key, pr.final_phase, deleting=True)
        self.state.logs.drop_pod(*pr.key)
        self.state.kick()

    def _delete_now(self, key: PodKey, phase: str | None) -> None:
        """A terminating pod with no running containers (ended, or never started) goes at once."""
        self._delete_object(key)
        self._forget(key, phase)
        self.state.kick()

    def _forget(self, key: PodKey, phase: str | None) -> None:
        """The object is gone: drop its logs and GPUs (unless they leak)."""
        self.release(key, phase)
        self.state.logs.drop_pod(*key)

    def _stop_now(self, pr: PodRun) -> None:
        pr.abandoned = True
        pr.stop.set()
        for h in list(pr.handles.values()):
            h.signal(signal.SIGKILL)
        if self.pods.get(pr.key) is pr:
            del self.pods[pr.key]

    def _teardown(self, pr: PodRun, release: bool) -> None:
        """The object vanished while its containers ran: kill them, free what it held (unless it leaks)."""
        self._stop_now(pr)
        self.release(pr.key, None if release else "Failed")
        self.state.logs.drop_pod(*pr.key)

    def _abandon(self, pr: PodRun) -> None:
        """Another controller ended the pod (node lost): kill its containers, keep logs readable, and
        leave status and GPUs to that controller."""
        self._stop_now(pr)
        self._process_pods.discard(pr.key)
        for c in pr.containers:
            lg = self.state.logs.get(pr.key[0], pr.key[1], c.name)
            if lg is not None:
                lg.close()

    def evict(self, key: PodKey) -> None:
        """Called by the node controller when it fails a pod: stop the containers at once."""
        pr = self.pods.get(key)
        if pr is not None and not pr.abandoned:
            self._abandon(pr)

    # -- tasks -------------------------------------------------------------------------------------
    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("kubelet task failed", exc_info=task.exception())

    async def shutdown(self) -> None:
        """Kill every container process and stop every pod task."""
        for pr in list(self.pods.values()):
            self._stop_now(pr)
        tasks = list(self._tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=5)
            for t in pending:
                t.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1)


def _node_ready(node: dict) -> bool:
    for c in node.get("status", {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _seconds(value) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _host_ip(node: dict) -> str:
    for a in node.get("status", {}).get("addresses") or []:
        if a.get("type") == "InternalIP":
            return a.get("address", "")
    return ""
