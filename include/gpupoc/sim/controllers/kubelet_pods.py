"""What the simulated kubelet remembers about each pod it runs, and how that becomes ``pod.status``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from gpupoc.sim.config import ImageEntry
from gpupoc.sim.controllers import kubelet_status as ks
from gpupoc.sim.controllers.kubelet_runtime import ProcessHandle

PodKey = tuple[str, str]


@dataclass
class ContainerRun:
    """One container of a pod: its current and last state as the kubelet reports them."""

    spec: dict
    entry: ImageEntry | None  # None: the image is not in the catalogue
    restart_count: int = 0
    state: dict = field(default_factory=lambda: ks.waiting("ContainerCreating"))
    last_state: dict = field(default_factory=dict)
    container_id: str | None = None
    image_id: str = ""
    ready: bool = False
    started: bool = False
    created: bool = False  # a container instance was created at least once
    done: bool = False  # terminated for good (no restart coming)
    final_exit: int | None = None

    @property
    def name(self) -> str:
        return self.spec.get("name", "")

    @property
    def image(self) -> str:
        return self.spec.get("image", "")

    @property
    def running(self) -> bool:
        return "running" in self.state

    def status(self) -> dict:
        """A containerStatuses item with every field the Kubernetes clients require."""
        out = {
            "name": self.name,
            "image": self.image,
            "imageID": self.image_id,
            "ready": self.ready,
            "restartCount": self.restart_count,
            "started": self.started,
            "state": self.state,
            "lastState": self.last_state,
        }
        if self.container_id:
            out["containerID"] = self.container_id
        return out


@dataclass
class PodRun:
    """A pod bound to a node of this cluster and managed by the kubelet until it ends or is deleted."""

    key: PodKey
    uid: str
    node: str
    restart_policy: str
    containers: list[ContainerRun]
    host_ip: str
    pod_ip: str
    start_time: str
    active_deadline: float | None = None  # spec.activeDeadlineSeconds
    task: asyncio.Task | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    handles: dict[str, ProcessHandle] = field(default_factory=dict)  # container name -> running process
    deleting: bool = False  # graceful deletion in progress (deletionTimestamp)
    abandoned: bool = False  # someone else ended the pod (node lost, object removed): no more writes
    final_phase: str | None = None
    reason: str | None = None
    message: str | None = None
    telemetry_mtime: float = 0.0

    @property
    def namespace(self) -> str:
        return self.key[0]

    @property
    def name(self) -> str:
        return self.key[1]

    def phase(self) -> str:
        """Pending until every container was created, Succeeded/Failed once all ended for good."""
        if self.final_phase:
            return self.final_phase
        if self.containers and all(c.done for c in self.containers):
            return "Succeeded" if all(c.final_exit == 0 for c in self.containers) else "Failed"
        if any(not c.created and not c.done for c in self.containers):
            return "Pending"
        return "Running"

    def apply(self, pod: dict) -> None:
        """Write this run's view into the stored pod's status."""
        status = pod.setdefault("status", {})
        phase = self.phase()
        status["phase"] = phase
        status["hostIP"] = self.host_ip
        status["hostIPs"] = [{"ip": self.host_ip}]
        if self.pod_ip:
            status["podIP"] = self.pod_ip
            status["podIPs"] = [{"ip": self.pod_ip}]
        status["startTime"] = self.start_time
        if not status.get("qosClass"):
            status["qosClass"] = ks.qos_class(pod)
        if self.reason:
            status["reason"] = self.reason
            status["message"] = self.message
        if self.reason != "UnexpectedAdmissionError":
            status["containerStatuses"] = [c.status() for c in self.containers]
        unready = [c.name for c in self.containers if not c.ready]
        ks.readiness_conditions(status, phase, unready, sandbox=phase not in ks.TERMINAL)
