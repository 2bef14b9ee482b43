"""GPU-memory isolation between tenants: two tenants' pods on one physical card, one allocating past its slice.

The probe (``gpupoc.classes.tenant_isolation.memory_isolation``) places the neighbour's pod on a shared card, then the
aggressor's (pinned to the same card: HAMi's ``nvidia.com/use-gpuuuid``, else the node), then a second pod of
the neighbour's tenant that allocates within its slice. All run the workload program's ``gpumem`` mode, whose
log says which card it sees (``device 0 <uuid>: ...``), what it holds (``holding <n> MiB``) and how an allocation
failed (HAMi-core's ``[HAMI-core ERROR (...)]: Device 0 OOM <used> / <limit>``, then PyTorch's "CUDA out of
memory"). The functions here are pure: the pods' manifests, what their logs say, and the verdict.

Isolated means: the aggressor failed, never holding more than its slice, and the neighbour's workload kept
running with its memory (and, where measured, its utilization) unchanged, and its later allocation succeeded.
Anything else is the P1 finding "no GPU memory isolation between tenants".
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from datetime import datetime

from gpupoc.evidence.sharing_tables import MemoryIsolationRow
from gpupoc.evidence.subject import sharing_of
from gpupoc.kube.hami import NODE_REGISTER, USE_GPUUUID
from gpupoc.kube.resources import GPU, GPUCORES, GPUMEM, GPUMEM_PERCENTAGE

P1 = "P1"
HOSTNAME = "kubernetes.io/hostname"
SHARING_STRATEGIES = ("hami", "time-slicing", "mps")  # where a card's UUID is the same in every pod on it
STEP_MIB = 256                              # the workload's allocation step (workload/gpumem.py)
HAMI_PARTS = 4                              # a HAMi slice: a quarter of the card
UTIL_TOLERANCE = 10.0                       # percentage points the neighbour's utilization may drop
FINDING = "no GPU memory isolation between tenants"

DEVICE_RE = re.compile(r"device 0 (?P<uuid>\S+): (?P<total>\d+) MiB total, (?P<free>\d+) MiB free")
HOLDING_RE = re.compile(r"holding (?P<mib>\d+) MiB")
HAMI_OOM_RE = re.compile(r"\[HAMI-core ERROR [^\]]*\]: Device \d+ OOM \d+ / \d+")
CUDA_OOM_RE = re.compile(r"CUDA out of memory\..*?This process has (?P<held>\d+) MiB memory in use")


@dataclass(frozen=True)
class Sizes:
    """What each probe pod asks, in MiB."""

    slice_mib: int
    neighbour_mib: int
    late_mib: int
    aggressor_mib: int


def _steps(mib: float) -> int:
    return max(STEP_MIB, int(mib) // STEP_MIB * STEP_MIB)


def sizes(card_mib: int, sharing: str, replicas: int = 0) -> Sizes:
    """A slice (HAMi: a quarter of the card; time-slicing and MPS: the card over its replicas); the neighbour
    holds half its slice, later a quarter more; the aggressor asks for all the rest of the card."""
    parts = HAMI_PARTS if sharing == "hami" else max(2, replicas)
    slice_mib = card_mib // parts
    neighbour = _steps(slice_mib / 2)
    return Sizes(slice_mib, neighbour, _steps(slice_mib / 4), card_mib - neighbour)


def card_memory_mib(node: dict) -> int | None:
    """A card's memory on ``node``: GPU feature discovery's ``nvidia.com/gpu.memory``, else HAMi's registration."""
    meta = node.get("metadata") or {}
    value = (meta.get("labels") or {}).get("nvidia.com/gpu.memory")
    if value and str(value).isdigit():
        return int(value)
    register = (meta.get("annotations") or {}).get(NODE_REGISTER) or ""
    found = re.search(r'"devmem"\s*:\s*(\d+)', register)
    return int(found.group(1)) if found else None


def shared_nodes(nodes: list[dict]) -> list[tuple[dict, str]]:
    """Nodes whose cards pods share, with how (``hami``, ``time-slicing``, ``mps``; ``mig`` last), Ready first."""
    out = [(n, sharing_of(n)) for n in nodes]
    shared = [(n, s) for n, s in out if s != "none"]
    return sorted(shared, key=lambda ns: (ns[1] not in SHARING_STRATEGIES, not _ready(ns[0])))


def allocatable_gpus(node: dict) -> int:
    """The node's allocatable ``nvidia.com/gpu`` (devices: replicas under time-slicing)."""
    value = ((node.get("status") or {}).get("allocatable") or {}).get(GPU, "0")
    return int(value) if str(value).isdigit() else 0


def gpus_asked(pod: dict) -> int:
    """The ``nvidia.com/gpu`` a pod's containers ask (limits, else requests)."""
    total = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        value = (res.get("limits") or {}).get(GPU) or (res.get("requests") or {}).get(GPU) or 0
        total += int(value) if str(value).isdigit() else 0
    return total


def _ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def cluster_sharing(nodes: list[dict]) -> str:
    """The strategies the nodes use (``hami``, ``none`` ...), comma-separated, for the row."""
    return ",".join(sorted({sharing_of(n) for n in nodes})) or "none"


def gpumem_pod(body: dict, *, mib: int, duration_s: float, slice_mib: int, sharing: str, node: str,
               uuid: str | None = None) -> dict:
    """``body`` (a plan workload's pod) running the workload's ``gpumem`` mode on one vGPU or replica of ``node``
    (of the card ``uuid`` under HAMi); a HAMi slice is ``slice_mib`` of card memory."""
    pod = copy.deepcopy(body)
    spec = pod.setdefault("spec", {})
    container = spec["containers"][0]
    container["args"] = ["--mode", "gpumem", "--gpu-mem-mib", str(int(mib)), "--duration", f"{duration_s:g}"]
    resources = container.setdefault("resources", {})
    for kind in ("requests", "limits"):
        resources.setdefault(kind, {})[GPU] = "1"
        for name in (GPUMEM, GPUMEM_PERCENTAGE, GPUCORES):  # the probe's own slice, not the plan workload's
            resources[kind].pop(name, None)
    if sharing == "hami":
        resources["limits"][GPUMEM] = str(int(slice_mib))
        if uuid:
            pod.setdefault("metadata", {}).setdefault("annotations", {})[USE_GPUUUID] = uuid
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), HOSTNAME: node}
    spec["restartPolicy"] = "Never"
    return pod


@dataclass(frozen=True)
class PodReport:
    """What one probe pod's log says of its card and its memory."""

    uuid: str | None = None
    total_mib: int | None = None
    holding_mib: int | None = None     # it got all it asked for and holds it
    in_use_at_oom_mib: int | None = None
    hami_oom: str | None = None        # HAMi-core's OOM line
    cuda_oom: bool = False

    @property
    def peak_mib(self) -> int | None:
        return self.holding_mib if self.holding_mib is not None else self.in_use_at_oom_mib

    @property
    def oom_line(self) -> str | None:
        return self.hami_oom or ("CUDA out of memory" if self.cuda_oom else None)


def read_report(log: str) -> PodReport:
    """The card, the memory held and any out-of-memory error in a ``gpumem`` pod's log."""
    device, holding = DEVICE_RE.search(log), HOLDING_RE.search(log)
    hami, cuda = HAMI_OOM_RE.search(log), CUDA_OOM_RE.search(log)
    return PodReport(uuid=device.group("uuid") if device else None,
                     total_mib=int(device.group("total")) if device else None,
                     holding_mib=int(holding.group("mib")) if holding else None,
                     in_use_at_oom_mib=int(cuda.group("held")) if cuda else None,
                     hami_oom=hami.group(0) if hami else None, cuda_oom=bool(cuda) or "CUDA out of memory" in log)


@dataclass(frozen=True)
class PodView:
    """One probe pod as the probe last saw it: tenant, name, phase, exit code, its log's report."""

    tenant: str
    name: str
    asked_mib: int
    phase: str | None = None
    exit_code: int | None = None
    report: PodReport = PodReport()

    @property
    def failed(self) -> bool:
        return self.phase == "Failed" or (self.exit_code is not None and self.exit_code != 0)

    @property
    def got_all(self) -> bool:
        return self.report.holding_mib is not None and self.report.holding_mib >= self.asked_mib and not self.failed


def pod_view(tenant: str, pod: dict | None, asked_mib: int, log: str) -> PodView:
    """A pod (None: gone) and its log as a ``PodView``."""
    status = (pod or {}).get("status") or {}
    code = None
    for cs in status.get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get("terminated")
        if term and term.get("exitCode") is not None:
            code = int(term["exitCode"])
    name = ((pod or {}).get("metadata") or {}).get("name", "")
    return PodView(tenant, name, asked_mib, status.get("phase"), code, read_report(log))


def not_shared_row(sharing: str, at: datetime | None = None) -> MemoryIsolationRow:
    """The cluster shares no card between pods: the case never arises."""
    return MemoryIsolationRow(sharing=sharing, shared_gpu=False, observed_at=at,
                              reason="no node shares its GPUs between pods (no HAMi, time-slicing, MPS or MIG)")


@dataclass(frozen=True)
class Observed:
    """Everything the probe saw: the card, the three pods, and the neighbour before and after."""

    sharing: str
    node: str
    card_mib: int | None
    sizes: Sizes
    neighbour_before: PodView
    neighbour_after: PodView
    aggressor: PodView
    late: PodView
    util_before: float | None = None
    util_after: float | None = None
    mem_before: float | None = None      # the neighbour's memory from metrics; else its own report
    mem_after: float | None = None
    memory_source: str = "pod logs (workload program)"
    utilization_source: str | None = None
    at: datetime | None = None


def _undecided(o: Observed) -> str | None:
    """Why the probe cannot tell, or None."""
    for role, view in (("neighbour", o.neighbour_before), ("aggressor", o.aggressor), ("late neighbour", o.late)):
        if view.report.uuid is None:
            return (f"the {role}'s pod {view.name or '(not created)'} never reported its card "
                    f"(phase {view.phase or 'unknown'}); see its events and log")
    if o.sharing == "mig":
        return "MIG instances have their own UUIDs: the pods' view cannot show which physical card they share"
    uuids = {o.neighbour_before.report.uuid, o.aggressor.report.uuid, o.late.report.uuid}
    if len(uuids) > 1:
        return f"the probe's pods were placed on different cards ({', '.join(sorted(uuids))}), not on one"
    if o.aggressor.failed and o.aggressor.report.peak_mib is None:
        return (f"the aggressor's pod {o.aggressor.name} failed (exit code {o.aggressor.exit_code}) without saying "
                "how much memory it held; see its log")
    return None


def _neighbour(o: Observed) -> tuple[float | None, float | None, list[str]]:
    """The neighbour's memory before and after, and what harmed it."""
    before = o.mem_before if o.mem_before is not None else o.neighbour_before.report.holding_mib
    after_view = o.neighbour_after
    own_after = after_view.report.holding_mib if not after_view.failed and after_view.phase == "Running" else None
    after = o.mem_after if o.mem_after is not None else own_after
    harm = []
    if after_view.phase != "Running" or after_view.failed:
        harm.append(f"the neighbour {after_view.name} is {after_view.phase or 'gone'}")
    if before is None or after is None or after < before:
        harm.append(f"the neighbour's memory went from {before} to {after} MiB")
    if not o.late.got_all:
        harm.append(f"the neighbour's allocation of {o.late.asked_mib} MiB within its slice was refused"
                    + (" (CUDA out of memory)" if o.late.report.cuda_oom else f" ({o.late.phase})"))
    if o.util_before is not None and o.util_after is not None and o.util_after < o.util_before - UTIL_TOLERANCE:
        harm.append(f"the neighbour's utilization fell from {o.util_before:g} to {o.util_after:g} %")
    return before, after, harm


def judge(o: Observed) -> MemoryIsolationRow:
    """The probe's row: isolated when the aggressor alone failed, at its slice, and the neighbour was unharmed."""
    a, late = o.aggressor, o.late
    row = MemoryIsolationRow(
        sharing=o.sharing, shared_gpu=True, node=o.node, gpu_uuid=o.neighbour_before.report.uuid,
        card_mib=o.card_mib, slice_mib=o.sizes.slice_mib, neighbour_tenant=o.neighbour_before.tenant,
        neighbour_pod=o.neighbour_before.name, neighbour_asked_mib=o.sizes.neighbour_mib,
        neighbour_phase_before=o.neighbour_before.phase, neighbour_phase_after=o.neighbour_after.phase,
        neighbour_util_before=o.util_before, neighbour_util_after=o.util_after, late_pod=late.name,
        late_asked_mib=late.asked_mib, late_phase=late.phase, late_mib=late.report.peak_mib,
        late_oom=late.report.cuda_oom or late.report.hami_oom is not None, aggressor_tenant=a.tenant,
        aggressor_pod=a.name, aggressor_asked_mib=a.asked_mib, aggressor_peak_mib=a.report.peak_mib,
        aggressor_phase=a.phase, aggressor_exit_code=a.exit_code, aggressor_failed=a.failed,
        oom_line=a.report.oom_line, memory_source=o.memory_source, utilization_source=o.utilization_source,
        observed_at=o.at)
    why = _undecided(o)
    if why:
        row.reason = why
        return row
    row.same_card = True
    peak = a.report.peak_mib
    row.aggressor_held_to_slice = None if peak is None else peak <= o.sizes.slice_mib
    row.neighbour_mib_before, row.neighbour_mib_after, harm = _neighbour(o)
    row.neighbour_unaffected = not harm
    problems = list(harm)
    if not a.failed:
        problems.insert(0, f"{a.tenant}'s pod {a.name} allocated {peak} MiB past its {o.sizes.slice_mib} MiB slice "
                           "and kept running")
    elif row.aggressor_held_to_slice is False:
        problems.insert(0, f"{a.tenant}'s pod {a.name} held {peak} MiB, past its {o.sizes.slice_mib} MiB slice")
    row.isolated = not problems and row.aggressor_held_to_slice is True
    if not row.isolated:
        row.severity = P1
        row.finding = f"{P1}: {FINDING} on {row.gpu_uuid} ({o.sharing}): " + "; ".join(
            problems or ["the aggressor's peak memory is unknown"])
    return row
