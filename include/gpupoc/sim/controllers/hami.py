"""HAMi in the simulated cluster (scheduler mode ``hami``): its mutating webhook, its scheduler extender and its
NVIDIA device plugin, after Project-HAMi/HAMi v2.x (the wording and formats are in ``sim.hami_devices``).

- ``HamiWebhook`` (``pkg/scheduler/webhook.go``): a pod whose containers name ``nvidia.com/gpu``,
  ``nvidia.com/gpumem``, ``-percentage`` or ``nvidia.com/gpucores`` is handed to ``hami-scheduler`` (a
  container naming only memory or cores gets ``nvidia.com/gpu: 1``, as the NVIDIA device's ``MutateAdmission``).
- ``HamiScheduler`` (a ``Reconciler``): registers each node's cards (``hami.io/node-nvidia-register``,
  ``hami.io/node-handshake``, ``nvidia.com/gpu`` capacity = cards x ``deviceSplitCount``); each pass places
  pending ``hami-scheduler`` pods on cards by memory, cores and vGPU count (binpack / spread), writes the
  device annotations and ``hami.io/bind-phase: allocating``, records ``FilteringSucceed``, ``Scheduled`` and
  ``BindingSucceed``; a pod that fits nowhere gets one ``FilteringFailed`` per reason type, the ``no available
  node`` one, and kube-scheduler's ``FailedScheduling`` (the extender's per-node reasons in its FitError).
- ``HamiDevicePlugin`` (a ``DevicePlugin``; ``pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go``
  ``Allocate``): the kubelet's container gets ``NVIDIA_VISIBLE_DEVICES``, ``CUDA_DEVICE_MEMORY_LIMIT_<i>``
  (``"<MiB>m"``), ``CUDA_DEVICE_SM_LIMIT`` and ``CUDA_DEVICE_MEMORY_SHARED_CACHE``; the pod's bind phase
  becomes ``success``. HAMi-core's enforcement of the limit is the workload's (``workload.cuda``).

Faults: ``gpumem-not-enforced`` (no memory limit injected), ``vgpu-overcommit`` (no card-memory check),
``slice-leak`` (a finished pod's slice stays counted).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from dataclasses import dataclass

from gpupoc.kube import hami as HAMI
from gpupoc.kube.resources import GPU, GPUCORES, GPUMEM, GPUMEM_PERCENTAGE
from gpupoc.sim import clock
from gpupoc.sim import hami_devices as H
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import scheduling as S
from gpupoc.sim.events import NORMAL, WARNING

Key = tuple[str, str]
TERMINAL = ("Succeeded", "Failed")
SHARED_CACHE_DIR = "/usr/local/vgpu"  # the device plugin's hostHookPath + /vgpu


def hami_for(state: ClusterState) -> "HamiScheduler":
    """The state's HAMi scheduler, created on first use with its webhook and device plugin registered."""
    if state.hami is None:
        state.hami = HamiScheduler(state)
        state.hooks.admission.append(HamiWebhook(state))
        state.device_plugin = HamiDevicePlugin(state)
    return state.hami  # type: ignore[return-value]


@dataclass
class HamiWebhook:
    """HAMi's mutating webhook as an admission plug-in (see the module docstring)."""

    state: ClusterState

    def mutate(self, pod: dict) -> None:
        if not H.asks_for_vgpu(pod):
            return
        spec = pod.setdefault("spec", {})
        if spec.get("schedulerName") not in (None, "", S.DEFAULT_SCHEDULER, HAMI.SCHEDULER_NAME):
            return  # a pod naming another scheduler keeps it
        for c in spec.get("containers") or []:
            res = c.setdefault("resources", {})
            named = set(res.get("requests") or {}) | set(res.get("limits") or {})
            if named & {GPUMEM, GPUMEM_PERCENTAGE, GPUCORES} and GPU not in named:
                res.setdefault("limits", {})[GPU] = "1"
        spec["schedulerName"] = HAMI.SCHEDULER_NAME

    def created(self, pod: dict) -> None:
        return None


class HamiScheduler:
    """HAMi's scheduler extender for one simulated cluster (see the module docstring)."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.store = state.store
        cfg = state.config.hami
        self.split = cfg.device_split_count
        self.scaling = cfg.device_memory_scaling
        self.gpu_policy = H.Policy(cfg.gpu_scheduler_policy)
        self.node_policy = H.Policy(cfg.node_scheduler_policy)
        self.retry_seconds = state.config.timing.scheduler_retry_seconds
        self._reported: dict[Key, tuple[float, str]] = {}
        self.register_nodes()

    # -- node registration -----------------------------------------------------------------------
    def base_cards(self, node: str) -> list[H.Card]:
        """The node's cards as its device plugin registers them (no usage)."""
        return [H.Card(uuid=g.uuid, index=g.index, node=node, type=f"NVIDIA-{g.model_name}", count=self.split,
                       total_mem=int(g.memory_mib * self.scaling)) for g in self.state.inventory.gpus.get(node, [])]

    def register_nodes(self) -> int:
        """Write the registration annotations and vGPU capacity on nodes that lack them; returns how many."""
        done = 0
        for node in self.store.list("nodes"):
            name = node["metadata"]["name"]
            cards = self.base_cards(name)
            annotations = node["metadata"].setdefault("annotations", {})
            if not cards or HAMI.NODE_REGISTER in annotations:
                continue
            annotations[HAMI.NODE_REGISTER] = H.register_annotation(cards)
            annotations[HAMI.NODE_HANDSHAKE] = f"Reported {clock.rfc3339()}"
            status = node.setdefault("status", {})
            for field in ("capacity", "allocatable"):
                status.setdefault(field, {})[GPU] = str(len(cards) * self.split)
            self.store.update("nodes", node)
            done += 1
        return done

    # -- accounting ------------------------------------------------------------------------------
    def usage(self) -> dict[str, list[H.Card]]:
        """Every node's cards with what bound pods hold on them (whole cards held outside HAMi count as full)."""
        cards = {n["metadata"]["name"]: self.base_cards(n["metadata"]["name"]) for n in self.store.list("nodes")}
        by_uuid = {c.uuid: c for cs in cards.values() for c in cs}
        for gpus in self.state.inventory.gpus.values():
            for g in gpus:
                if g.holder is not None and g.uuid in by_uuid:
                    card = by_uuid[g.uuid]
                    card.used, card.used_mem, card.used_cores = card.count, card.total_mem, card.total_core
        for pod in self.store.list("pods"):
            if not self.holds_slice(pod):
                continue
            for grants in H.decode_pod_devices(pod["metadata"].get("annotations", {}).get(HAMI.ALLOCATED)):
                for g in grants:
                    if g.uuid in by_uuid:
                        by_uuid[g.uuid].take(g.mem_mib, g.cores)
        return cards

    def holds_slice(self, pod: dict) -> bool:
        """The scheduler counts the pod's grants: bound, allocated and held (``reactors.holds_slice``: not ended)."""
        if not pod.get("spec", {}).get("nodeName") or HAMI.ALLOCATED not in pod["metadata"].get("annotations", {}):
            return False
        return self.state.reactors.holds_slice(pod)

    # -- the pass --------------------------------------------------------------------------------
    def pending(self) -> list[dict]:
        out = []
        for pod in self.store.list("pods"):
            meta, spec = pod["metadata"], pod.get("spec", {})
            if (spec.get("schedulerName") == HAMI.SCHEDULER_NAME and not spec.get("nodeName")
                    and pod.get("status", {}).get("phase", "Pending") == "Pending"
                    and not spec.get("schedulingGates") and not meta.get("deletionTimestamp")):
                out.append(pod)
        out.sort(key=lambda p: (-S.priority_of(p), p["metadata"].get("creationTimestamp") or "",
                                p["metadata"]["name"]))
        return out

    def run_pass(self) -> int:
        self.register_nodes()
        pending = self.pending()
        if not pending:
            return 0
        cards = self.usage()
        nodes = self.store.list("nodes")
        bound = 0
        for pod in pending:
            fit = self._place(pod, nodes, cards)
            if fit is not None:
                for grants in fit.devices:
                    for g in grants:
                        card = next(c for c in cards[fit.node] if c.uuid == g.uuid)
                        card.take(g.mem_mib, g.cores)
                bound += 1
        return bound

    def _place(self, pod: dict, nodes: list[dict], cards: dict[str, list[H.Card]]) -> H.NodeFit | None:
        """Filter, score and bind one pod; None (with its failure reported) when no node fits."""
        annotations = pod["metadata"].get("annotations") or {}
        reqs = H.requests_of(pod)
        gpu_policy = H.policy_of(annotations, HAMI.GPU_POLICY, self.gpu_policy)
        node_policy = H.policy_of(annotations, HAMI.NODE_POLICY, self.node_policy)
        counts: Counter = Counter()
        fits, failed = [], []
        for node in nodes:
            name = node["metadata"]["name"]
            static = S.static_filter(node, pod.get("spec", {}))
            if static is not None:
                counts[static] += 1
                continue
            fit = H.fit_node(name, cards.get(name, []), reqs, annotations, gpu_policy, node_policy,
                             overcommit=not self.state.reactors.card_memory_checked)
            (fits if fit.fits else failed).append(fit)
            if not fit.fits:
                counts[fit.reason] += 1
        if not fits:
            self._fail(pod, failed, len(nodes), counts)
            return None
        best = min(fits, key=lambda f: (-f.score, f.node))
        self._bind(pod, best, H.success_message(len(fits) + len(failed), best.node, fits))
        return best

    def _bind(self, pod: dict, fit: H.NodeFit, filtered: str) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        encoded = H.encode_pod_devices(fit.devices)
        now = str(int(time.time()))
        meta.setdefault("annotations", {}).update({
            HAMI.ASSIGNED_NODE: fit.node, HAMI.ASSIGNED_TIME: now, HAMI.TO_ALLOCATE: encoded, HAMI.ALLOCATED: encoded,
            HAMI.BIND_TIME: now, HAMI.BIND_PHASE: "allocating"})
        pod["spec"]["nodeName"] = fit.node
        S.set_condition(pod, "PodScheduled", "True")
        self.store.update("pods", pod)
        self._reported.pop(key, None)
        events = self.state.events
        events.record(pod, HAMI.FILTERING_SUCCEED, filtered, NORMAL, component=HAMI.SCHEDULER_NAME)
        events.record(pod, "Scheduled", f"Successfully assigned {key[0]}/{key[1]} to {fit.node}", NORMAL,
                      component=HAMI.SCHEDULER_NAME)
        events.record(pod, HAMI.BINDING_SUCCEED, H.binding_message(fit.node, key[0], key[1]), NORMAL,
                      component=HAMI.SCHEDULER_NAME)

    def _fail(self, pod: dict, failed: list[H.NodeFit], total: int, counts: Counter) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        message = S.fit_error(total, counts)
        last = self._reported.get(key)
        now = time.monotonic()
        if last is not None and last[1] == message and now - last[0] < self.retry_seconds:
            return
        self._reported[key] = (now, message)
        if S.set_condition(pod, "PodScheduled", "False", "Unschedulable", message):
            self.store.update("pods", pod)
        events = self.state.events
        if failed:
            for text in H.failure_events(failed):
                events.record(pod, HAMI.FILTERING_FAILED, text, WARNING, component=HAMI.SCHEDULER_NAME)
            events.record(pod, HAMI.FILTERING_FAILED, H.no_node_message(len(failed)), WARNING, component=HAMI.SCHEDULER_NAME)
        events.record(pod, "FailedScheduling", message, WARNING, component=HAMI.SCHEDULER_NAME)


@dataclass
class HamiDevicePlugin:
    """HAMi's NVIDIA device plugin as the kubelet's ``DevicePlugin`` (see the module docstring)."""

    state: ClusterState

    def claims(self, pod: dict) -> bool:
        return (pod.get("spec", {}).get("schedulerName") == HAMI.SCHEDULER_NAME
                and HAMI.ALLOCATED in (pod["metadata"].get("annotations") or {}))

    def grants_of(self, pod: dict, container: str) -> list[H.Grant]:
        """The container's grants: the allocated lists follow the vGPU-asking containers in order."""
        devices = H.decode_pod_devices(pod["metadata"]["annotations"].get(HAMI.ALLOCATED))
        asking = [r.container for r in H.requests_of(pod)]
        return devices[asking.index(container)] if container in asking and asking.index(container) < len(
            devices) else []

    def allocate(self, pod: dict, container: str) -> tuple[str, dict[str, str]]:
        grants = self.grants_of(pod, container)
        if not grants:
            return "", {}
        env = {"CUDA_DEVICE_SM_LIMIT": str(grants[0].cores),
               "CUDA_DEVICE_MEMORY_SHARED_CACHE": f"{SHARED_CACHE_DIR}/{uuid.uuid4()}.cache"}
        for i, g in enumerate(grants):
            env[f"CUDA_DEVICE_MEMORY_LIMIT_{i}"] = f"{g.mem_mib}m"
        env = self.state.reactors.device_env(env)
        annotations = pod["metadata"]["annotations"]
        if annotations.get(HAMI.BIND_PHASE) != "success":
            annotations[HAMI.BIND_PHASE] = "success"
            self.state.store.update("pods", pod)
        return ",".join(g.uuid for g in grants), env
