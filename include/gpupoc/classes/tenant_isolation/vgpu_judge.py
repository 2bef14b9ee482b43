"""vGPU slices between two tenants on one card: the scheduler never grants a card more memory than it has
(ISO-12), and gives a finished pod's slice back (ISO-13).

The probe (``gpupoc.classes.tenant_isolation.vgpu_slices``) puts a pod of the first tenant on a card, asking ``SHARE`` of its
memory, then a pod of the second tenant pinned to the same card (HAMi's ``nvidia.com/use-gpuuuid``) asking as
much again: together more than the card has. A correct scheduler keeps the second pod waiting
(``CardInsufficientMemory``) until the first has finished, then places it. Two defects show:

- overcommit: the second pod is placed while the first still holds its slice; what the pods' grants
  (``hami.io/vgpu-devices-allocated``) add up to on the card is more than the card's memory as its device
  plugin registered it (``hami.io/node-nvidia-register``, ``devmem``);
- a leaked slice: the first pod finished, and the second still waits past ``max_slice_release_seconds``.

The functions here are pure: the formats HAMi writes (Project-HAMi/HAMi ``docs/develop/protocol.md``;
``pkg/device/devices.go`` ``EncodeContainerDevices`` and ``DecodeNodeDevices``), each card's allocation, the
probe pods' views and the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpupoc.common.timefmt import parse_time
from gpupoc.evidence.sharing_tables import VgpuSliceRow
from gpupoc.evidence.subject import sharing_of
from gpupoc.kube.hami import ALLOCATED, registered_cards  # a bound pod's grants; a node's registered cards

SHARE = 0.6          # each probe pod asks this share of the card's memory: two of them do not fit
TERMINAL = ("Succeeded", "Failed")
NOT_SLICED = "no node gives pods slices of a GPU's memory (no HAMi registration on any node)"


@dataclass(frozen=True)
class Grant:
    """One device of a container's list: ``UUID,Type,Usedmem,Usedcores``."""

    uuid: str
    mib: int
    cores: int


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


def decode_grants(value: str | None) -> list[Grant]:
    """Every device of a pod's device list (``GPU-…,NVIDIA,3000,0:;``; containers ended by ``;``)."""
    out = []
    for container in (value or "").split(";"):
        for item in container.split(":"):
            parts = item.split(",")
            if len(parts) >= 4 and parts[0]:
                out.append(Grant(parts[0], _int(parts[2]), _int(parts[3])))
    return out


def sliced_nodes(nodes: list[dict]) -> list[dict]:
    """Nodes whose cards HAMi splits into slices of memory (its registration annotation), Ready ones first."""
    ready = [n for n in nodes if sharing_of(n) == "hami"]
    return sorted(ready, key=lambda n: not any(c.get("type") == "Ready" and c.get("status") == "True"
                                               for c in (n.get("status") or {}).get("conditions") or []))


def holds_slice(pod: dict) -> bool:
    """A pod bound to a node and not ended holds what it was granted."""
    return bool((pod.get("spec") or {}).get("nodeName")) and (pod.get("status") or {}).get("phase") not in TERMINAL


@dataclass(frozen=True)
class CardAllocation:
    """One card: its memory, and what the pods holding a slice of it were granted."""

    uuid: str
    node: str
    card_mib: int
    allocated_mib: int
    pods: tuple[str, ...]

    @property
    def over(self) -> bool:
        return self.allocated_mib > self.card_mib


def card_allocations(pods: list[dict], nodes: list[dict]) -> list[CardAllocation]:
    """Every registered card with the memory granted on it to pods that hold their slices."""
    cards = {uuid: (n["metadata"]["name"], mib) for n in nodes for uuid, mib in registered_cards(n).items()}
    granted: dict[str, list[tuple[str, int]]] = {}
    for pod in pods:
        if not holds_slice(pod):
            continue
        meta = pod.get("metadata") or {}
        for g in decode_grants((meta.get("annotations") or {}).get(ALLOCATED)):
            granted.setdefault(g.uuid, []).append((f"{meta.get('namespace', '')}/{meta.get('name', '')}", g.mib))
    return [CardAllocation(uuid, node, mib, sum(m for _, m in granted.get(uuid, [])),
                           tuple(p for p, _ in granted.get(uuid, []))) for uuid, (node, mib) in sorted(cards.items())]


@dataclass(frozen=True)
class SlicePod:
    """One probe pod as last read: where it was placed (and when), why it waits, when it ended."""

    tenant: str
    name: str
    asked_mib: int
    phase: str | None = None
    uuid: str | None = None
    placed_at: datetime | None = None
    finished_at: datetime | None = None
    waiting: str | None = None

    @property
    def placed(self) -> bool:
        return self.uuid is not None

    @property
    def ended(self) -> bool:
        return self.phase in TERMINAL


def slice_pod(tenant: str, pod: dict | None, asked_mib: int) -> SlicePod:
    """A pod (None: gone) as a ``SlicePod``: its card from its grants, its placement from PodScheduled."""
    meta, status = (pod or {}).get("metadata") or {}, (pod or {}).get("status") or {}
    grants = decode_grants((meta.get("annotations") or {}).get(ALLOCATED)) if (pod or {}).get("spec", {}).get(
        "nodeName") else []
    cond = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
    finished = None
    for cs in status.get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated")
        if term and term.get("finishedAt"):
            finished = parse_time(term["finishedAt"])
    placed = cond.get("status") == "True"
    return SlicePod(tenant, meta.get("name", ""), asked_mib, status.get("phase"), grants[0].uuid if grants else None,
                    parse_time(cond.get("lastTransitionTime")) if placed else None, finished,
                    None if placed else cond.get("message"))


def not_sliced_row(sharing: str, at: datetime | None = None) -> VgpuSliceRow:
    """No node slices its cards' memory: no slice can be overcommitted or kept."""
    return VgpuSliceRow(sharing=sharing, memory_slices=False, observed_at=at, reason=NOT_SLICED)


@dataclass(frozen=True)
class Observed:
    """What the probe saw: the card, the first pod when the scheduler answered the second, the allocations then,
    and both pods at the end."""

    node: str
    card_mib: int | None
    first: SlicePod                     # when the scheduler answered the second pod
    second: SlicePod                    # its answer: placed, or waiting with the scheduler's message
    allocations: list[CardAllocation]   # every card's grants at that answer
    first_end: SlicePod                 # once it ended (or the probe gave up)
    second_end: SlicePod                # once placed after the first ended (or the probe gave up)
    max_release_seconds: float
    at: datetime | None = None


def _undecided(o: Observed) -> str | None:
    if not o.first.placed:
        return (f"the first pod {o.first.name or '(not created)'} was never placed on a card (phase "
                f"{o.first.phase or 'unknown'}); see its events")
    if o.second.name == "" or (not o.second.placed and not o.second.waiting):
        return f"the scheduler never answered the second pod {o.second.name or '(not created)'}"
    if o.first.ended:
        return (f"the first pod {o.first.name} ended before the scheduler answered the second: the two slices were "
                "never asked for at once")
    if o.second.placed and o.second.uuid != o.first.uuid:
        return f"the second pod was placed on {o.second.uuid}, not on the first pod's card {o.first.uuid}"
    return None


def _release(o: Observed, row: VgpuSliceRow) -> None:
    """The first pod's slice given back: the second placed on the card within the bound of the first's end."""
    first, second = o.first_end, o.second_end
    if row.overcommitted is not False:
        return
    if not first.ended or first.finished_at is None:
        row.reason = f"the first pod {first.name} never ended ({first.phase or 'gone'}): its slice could not be freed"
        return
    row.first_finished_at = first.finished_at
    if second.placed and second.placed_at is not None:
        row.second_placed_at = second.placed_at
        row.slice_release_seconds = max(0.0, (second.placed_at - first.finished_at).total_seconds())
        row.slice_released = row.slice_release_seconds <= o.max_release_seconds
    else:
        row.slice_released = False
    if not row.slice_released:
        waited = (f"still waiting: {second.waiting}" if not second.placed and second.waiting
                  else f"placed after {row.slice_release_seconds} s")
        row.finding = (f"slice leak: {first.tenant}'s pod {first.name} finished at {first.finished_at:%H:%M:%S} and "
                       f"its {first.asked_mib} MiB slice of {row.gpu_uuid} was not given back within "
                       f"{o.max_release_seconds:g} s; {second.tenant}'s pod {second.name} {waited}")


def judge(o: Observed) -> VgpuSliceRow:
    """The probe's row: overcommitted when the card's grants exceed its memory; released when the second pod got
    the card within ``max_release_seconds`` of the first pod's end."""
    card = next((a for a in o.allocations if a.uuid == o.first.uuid), None)
    over = [a for a in o.allocations if a.over]
    row = VgpuSliceRow(
        sharing="hami", memory_slices=True, node=o.node, gpu_uuid=o.first.uuid, card_mib=o.card_mib,
        first_tenant=o.first.tenant, first_pod=o.first.name, first_mib=o.first.asked_mib, first_phase=o.first.phase,
        second_tenant=o.second.tenant, second_pod=o.second.name, second_mib=o.second.asked_mib,
        second_placed_at_once=o.second.placed if o.second.name else None, second_waiting_message=o.second.waiting,
        card_allocated_mib=card.allocated_mib if card else None, cards_checked=len(o.allocations),
        cards_overcommitted="; ".join(f"{a.uuid} on {a.node}: {a.allocated_mib} of {a.card_mib} MiB "
                                      f"({', '.join(a.pods)})" for a in over) or None,
        max_slice_release_seconds=o.max_release_seconds, observed_at=o.at)
    why = _undecided(o)
    if why:
        row.reason = why
        return row
    row.overcommitted = bool(over) or o.second.placed
    if row.overcommitted:
        row.finding = (f"overcommit: {o.second.tenant}'s pod {o.second.name} was given {o.second.asked_mib} MiB of "
                       f"{row.gpu_uuid} while {o.first.tenant}'s pod {o.first.name} held {o.first.asked_mib} MiB of "
                       f"its {o.card_mib} MiB" + (f"; over: {row.cards_overcommitted}" if over else ""))
        return row
    _release(o, row)
    return row
