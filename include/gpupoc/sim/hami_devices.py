"""HAMi's vGPU accounting, as pure functions over plain dicts: what a container asks for, how a card fits it,
the annotations HAMi writes and reads, and how nodes and cards are scored (binpack / spread).

Names and formats from Project-HAMi/HAMi (read at v2.x):
- resources and node defaults: chart ``values.yaml`` (``nvidia.com/gpu``, ``nvidia.com/gpumem`` in MiB,
  ``nvidia.com/gpumem-percentage``, ``nvidia.com/gpucores`` in percent; ``deviceSplitCount: 10``);
- reason words: ``pkg/device/common/common.go`` (``CardInsufficientMemory`` ...), and ``GenReason``'s
  ``"%d/%d %s"`` per card count;
- the card fit (type, UUID, health, split count, memory, cores, exclusive use): ``pkg/device/nvidia/device.go``
  ``Fit``; the memory asked when neither gpumem nor a percentage is given is the whole card
  (``memReq = dev.Totalmem``);
- device lists: ``pkg/device/devices.go`` ``EncodeContainerDevices`` (``UUID,Type,Usedmem,Usedcores:`` per
  device) and ``EncodePodSingleDevice`` (each container's list ended by ``;``);
- annotations: ``pkg/util/types.go`` and ``pkg/device/nvidia/device.go`` (``hami.io/vgpu-node``,
  ``hami.io/vgpu-devices-to-allocate``, ``hami.io/vgpu-devices-allocated``, ``hami.io/bind-phase``,
  ``nvidia.com/use-gputype``, ``nvidia.com/use-gpuuuid``, ``hami.io/gpu-scheduler-policy``,
  ``hami.io/node-scheduler-policy``, ``hami.io/node-nvidia-register``, ``hami.io/node-handshake``);
- events: ``pkg/scheduler/event.go`` (reasons), ``score.go`` ``recordFilteringFailures`` (``"%d nodes %s(%s)"``),
  ``scheduler.go`` ``genSuccessMsg`` (``"find fit node(%s), %d nodes not fit, %d nodes fit(%s)"``) and
  ``recordScheduleBindingResultEvent`` (``"Successfully binding node %v to %v/%v"``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum

from gpupoc.kube.hami import (
    ALLOCATED_CARDS_INSUFFICIENT, CARD_COMPUTE_UNITS_EXHAUSTED, CARD_INSUFFICIENT_CORE, CARD_INSUFFICIENT_MEMORY,
    CARD_NOT_HEALTH, CARD_TIME_SLICING_EXHAUSTED, CARD_TYPE_MISMATCH, CARD_UUID_MISMATCH, DEVICE_TYPE,
    EXCLUSIVE_CONFLICT, NODE_INSUFFICIENT_DEVICE, NOUSE_GPUTYPE, NOUSE_GPUUUID, USE_GPUTYPE, USE_GPUUUID)
from gpupoc.kube.resources import GPU, GPUCORES, GPUMEM, GPUMEM_PERCENTAGE


class Policy(str, Enum):
    BINPACK = "binpack"
    SPREAD = "spread"


@dataclass(frozen=True)
class Request:
    """One container's vGPU request (HAMi's ``ContainerDeviceRequest``): ``mem_mib`` 0 with ``mem_percent``
    None means the whole card."""

    container: str
    nums: int
    mem_mib: int = 0
    mem_percent: int | None = None
    cores: int = 0

    def memory_on(self, total_mib: int) -> int:
        if self.mem_mib > 0:
            return self.mem_mib
        if self.mem_percent is not None:
            return total_mib * self.mem_percent // 100
        return total_mib


@dataclass
class Card:
    """One physical card as HAMi accounts it (``DeviceUsage``)."""

    uuid: str
    index: int
    node: str
    type: str  # e.g. "NVIDIA-NVIDIA L40S", as the device plugin registers it
    count: int  # vGPUs the card may be split into (deviceSplitCount)
    total_mem: int  # MiB, after deviceMemoryScaling
    total_core: int = 100
    healthy: bool = True
    used: int = 0
    used_mem: int = 0
    used_cores: int = 0

    def take(self, mem: int, cores: int) -> None:
        self.used += 1
        self.used_mem += mem
        self.used_cores += cores


@dataclass(frozen=True)
class Grant:
    """What one container got on one card: ``UUID,Type,Usedmem,Usedcores``."""

    uuid: str
    type: str
    mem_mib: int
    cores: int


PodDevices = list[list[Grant]]  # one list per container that asked for vGPUs, in container order


def _int(value: object) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def requests_of(pod: dict) -> list[Request]:
    """Each container's vGPU request (limits, else requests, as HAMi reads ``Resources.Limits`` first)."""
    out = []
    for c in pod.get("spec", {}).get("containers") or []:
        res = c.get("resources") or {}
        merged = {**(res.get("requests") or {}), **(res.get("limits") or {})}
        nums = _int(merged.get(GPU, 0))
        if nums <= 0:
            continue
        percent = merged.get(GPUMEM_PERCENTAGE)
        out.append(Request(c.get("name", ""), nums, _int(merged.get(GPUMEM, 0)),
                           _int(percent) if percent is not None else None, _int(merged.get(GPUCORES, 0))))
    return out


def asks_for_vgpu(pod: dict) -> bool:
    """Whether any container names a HAMi resource (the webhook then hands the pod to hami-scheduler)."""
    for c in pod.get("spec", {}).get("containers") or []:
        res = c.get("resources") or {}
        names = set(res.get("requests") or {}) | set(res.get("limits") or {})
        if names & {GPU, GPUMEM, GPUMEM_PERCENTAGE, GPUCORES}:
            return True
    return False


def _listed(annotations: dict, key: str) -> list[str]:
    raw = annotations.get(key) or ""
    return [v.strip() for v in raw.split(",") if v.strip()]


def card_reason(card: Card, req: Request, annotations: dict) -> str | None:
    """Why ``card`` cannot take one vGPU of ``req``, in HAMi's words, or None when it can (``Fit``'s order)."""
    wanted_types = _listed(annotations, USE_GPUTYPE)
    if wanted_types and not any(t.upper() in card.type.upper() for t in wanted_types):
        return CARD_TYPE_MISMATCH
    if any(t.upper() in card.type.upper() for t in _listed(annotations, NOUSE_GPUTYPE)):
        return CARD_TYPE_MISMATCH
    wanted_uuids = _listed(annotations, USE_GPUUUID)
    if (wanted_uuids and card.uuid not in wanted_uuids) or card.uuid in _listed(annotations, NOUSE_GPUUUID):
        return CARD_UUID_MISMATCH
    if not card.healthy:
        return CARD_NOT_HEALTH
    if card.count <= card.used:
        return CARD_TIME_SLICING_EXHAUSTED
    if card.total_mem - card.used_mem < req.memory_on(card.total_mem):
        return CARD_INSUFFICIENT_MEMORY
    if card.total_core - card.used_cores < req.cores:
        return CARD_INSUFFICIENT_CORE
    if req.cores == card.total_core and card.used > 0:
        return EXCLUSIVE_CONFLICT
    if card.used_cores == card.total_core:
        return CARD_COMPUTE_UNITS_EXHAUSTED
    return None


def gen_reason(reasons: dict[str, int], cards: int) -> str:
    """``GenReason``: ``"1/4 CardInsufficientMemory, 3/4 CardTypeMismatch"``."""
    return ", ".join(f"{n}/{cards} {r}" for r, n in sorted(reasons.items()))


def card_score(card: Card, policy: Policy) -> float:
    """Higher is chosen first: binpack prefers the fullest card, spread the emptiest."""
    fill = card.used / max(card.count, 1) + card.used_mem / max(card.total_mem, 1)
    return fill if policy == Policy.BINPACK else -fill


@dataclass
class NodeFit:
    """A node's outcome for one pod: the grants per container when it fits, else the reason words."""

    node: str
    devices: PodDevices = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)
    reason: str = ""
    score: float = 0.0

    @property
    def fits(self) -> bool:
        return not self.reason


def fit_node(node: str, cards: list[Card], reqs: list[Request], annotations: dict, gpu_policy: Policy,
             node_policy: Policy, overcommit: bool = False) -> NodeFit:
    """Place every container's vGPUs on ``cards`` (a copy is consumed) or say why the node does not fit.
    ``overcommit`` (fault ``vgpu-overcommit``) skips the memory check."""
    pool = [Card(**vars(c)) for c in cards]
    before = sum(c.used_mem for c in pool) / max(sum(c.total_mem for c in pool), 1)
    fit = NodeFit(node)
    for req in reqs:
        if req.nums > len(pool):
            fit.reason = NODE_INSUFFICIENT_DEVICE
            return fit
        ok: list[Card] = []
        reasons: dict[str, int] = {}
        for card in sorted(pool, key=lambda c: (-card_score(c, gpu_policy), c.index)):
            why = card_reason(card, req, annotations)
            if why == CARD_INSUFFICIENT_MEMORY and overcommit:
                why = None
            if why is None:
                ok.append(card)
            else:
                reasons[why] = reasons.get(why, 0) + 1
        if len(ok) < req.nums:
            fit.reasons = reasons
            fit.reason = gen_reason(reasons, len(pool)) or ALLOCATED_CARDS_INSUFFICIENT
            return fit
        grants = []
        for card in ok[:req.nums]:
            mem = req.memory_on(card.total_mem)
            card.take(mem, req.cores)
            grants.append(Grant(card.uuid, DEVICE_TYPE, mem, req.cores))
        fit.devices.append(grants)
    fill = before * 10
    fit.score = fill if node_policy == Policy.BINPACK else 10 - fill
    return fit


def reason_words(fit: NodeFit) -> list[str]:
    """The reason types of a failed node (``common.ParseReason``), one per word."""
    return sorted(fit.reasons) if fit.reasons else [fit.reason]


# -- annotation formats ---------------------------------------------------------------------------------
def encode_pod_devices(devices: PodDevices) -> str:
    """``GPU-…,NVIDIA,3000,0:;`` (each device ended by ``:``, each container by ``;``)."""
    return "".join("".join(f"{g.uuid},{g.type},{g.mem_mib},{g.cores}:" for g in grants) + ";"
                   for grants in devices)


def decode_pod_devices(value: str | None) -> PodDevices:
    """The inverse of ``encode_pod_devices``; malformed entries are skipped (HAMi logs and drops them)."""
    out: PodDevices = []
    for container in (value or "").split(";")[:-1] if value else []:
        grants = []
        for item in container.split(":"):
            parts = item.split(",")
            if len(parts) >= 4:
                grants.append(Grant(parts[0], parts[1], _int(parts[2]), _int(parts[3])))
        out.append(grants)
    return out


def register_annotation(cards: list[Card]) -> str:
    """``hami.io/node-nvidia-register``: the JSON device list the NVIDIA device plugin writes."""
    return json.dumps([{"id": c.uuid, "index": c.index, "count": c.count, "devmem": c.total_mem,
                        "devcore": c.total_core, "type": c.type, "numa": 0, "mode": "hami-core",
                        "health": c.healthy} for c in cards], separators=(",", ":"))


def policy_of(annotations: dict, key: str, default: Policy) -> Policy:
    """The pod's policy annotation, else the scheduler's default (an unknown value is ignored, as HAMi does)."""
    try:
        return Policy((annotations.get(key) or "").strip())
    except ValueError:
        return default


def failure_events(failed: list[NodeFit]) -> list[str]:
    """``recordFilteringFailures``: one ``"%d nodes %s(%s)"`` per reason type, nodes sorted."""
    by_reason: dict[str, list[str]] = {}
    for fit in failed:
        for word in reason_words(fit):
            by_reason.setdefault(word, []).append(fit.node)
    return [f"{len(nodes)} nodes {word}({','.join(sorted(nodes))})" for word, nodes in sorted(by_reason.items())]


def success_message(total_nodes: int, target: str, fits: list[NodeFit]) -> str:
    """``genSuccessMsg``."""
    scores = ",".join(f"{f.node}:{f.score:.2f}" for f in fits)
    return f"find fit node({target}), {total_nodes - len(fits)} nodes not fit, {len(fits)} nodes fit({scores})"


def binding_message(node: str, namespace: str, name: str) -> str:
    return f"Successfully binding node [{node}] to {namespace}/{name}"


def no_node_message(total_nodes: int) -> str:
    return f"no available node, {total_nodes} nodes do not meet"
