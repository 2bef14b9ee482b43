"""Start-up latency per phase, as clusterloader2's PodStartupLatency and kube-burner's podLatency measure it.

Each wave pod's moments come from what was watched (``PodTransitions``), the most precise first:

- **created**: the pod's release (a gated pod cannot be scheduled before it), else its ``creationTimestamp``;
- **scheduled**: the ``Scheduled`` event's ``eventTime`` (microseconds, kube-burner), else the watch's receipt
  of ``PodScheduled=True`` (clusterloader2), else that condition's transition (whole seconds);
- **started**: the receipt of the ``Running`` phase, else ``ContainersReady``'s transition;
- **ready**: the receipt of ``Ready=True``, else its transition.

Phases: scheduling (created → scheduled), starting (scheduled → started), readiness (started → ready), and
the two Kubernetes measures, ``startup`` (created → started: the pod start-up SLO, p99 at most 5 s) and
``created_to_ready``. Each row gives p50, p90, p99 and max (nearest rank) over the pods measured, the share of
the wave's pods they cover, and where the moments came from. As kube-burner does, figures are refused when
more than 10 % of the pods errored (ended Failed without becoming Ready).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from gpupoc.pipeline.pod_transitions import PodTransitions, nearest_rank

SLO_P99_MS = 5000          # Kubernetes' pod start-up SLO: creation to running, p99 at most 5 s
ERRORED_REFUSAL = 0.10     # kube-burner refuses the figures above this share of errored pods
COVERAGE_TARGET = 0.99
QUANTILES = (0.5, 0.9, 0.99)

Moment = Callable[[PodTransitions], tuple[datetime | None, str]]


def created(p: PodTransitions) -> tuple[datetime | None, str]:
    return (p.released_at, "release") if p.released_at else (p.created_at, "creationTimestamp")


def scheduled(p: PodTransitions) -> tuple[datetime | None, str]:
    if p.scheduled_event_at:
        return p.scheduled_event_at, "Scheduled event"
    if "PodScheduled" in p.received:
        return p.received["PodScheduled"], "watch receipt"
    return p.first_true.get("PodScheduled"), "condition"


def started(p: PodTransitions) -> tuple[datetime | None, str]:
    if "Running" in p.received:
        return p.received["Running"], "watch receipt"
    return p.first_true.get("ContainersReady"), "condition"


def ready(p: PodTransitions) -> tuple[datetime | None, str]:
    if "Ready" in p.received:
        return p.received["Ready"], "watch receipt"
    return p.first_true.get("Ready"), "condition"


PHASES: dict[str, tuple[Moment, Moment]] = {
    "scheduling": (created, scheduled), "starting": (scheduled, started), "readiness": (started, ready),
    "startup": (created, started), "created_to_ready": (created, ready)}


@dataclass(frozen=True)
class PhaseLatency:
    """One phase over the wave: quantiles (ms), pods measured, the share covered, the moments' sources."""

    phase: str
    pods: int
    pods_seen: int
    errored: int
    coverage: float | None
    p50_ms: int | None
    p90_ms: int | None
    p99_ms: int | None
    max_ms: int | None
    sources: str
    slo_p99_ms: int | None
    within_slo: bool | None
    refused: str | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def errored(p: PodTransitions) -> bool:
    return "Failed" in p.phases and "Ready" not in p.first_true and "Ready" not in p.received


def _span_ms(p: PodTransitions, start: Moment, end: Moment) -> tuple[int | None, str]:
    (a, sa), (b, sb) = start(p), end(p)
    if a is None or b is None:
        return None, ""
    return max(0, round((b - a).total_seconds() * 1000)), f"{sa} → {sb}"


def phase_row(phase: str, pods: list[PodTransitions]) -> PhaseLatency:
    """One phase's figures over ``pods`` (refused when too many errored)."""
    start, end = PHASES[phase]
    bad = sum(errored(p) for p in pods)
    spans = [_span_ms(p, start, end) for p in pods if not errored(p)]
    values = sorted(v for v, _ in spans if v is not None)
    sources = sorted({s for v, s in spans if v is not None})
    refused = None
    if pods and bad / len(pods) > ERRORED_REFUSAL:
        refused = f"{bad} of {len(pods)} pods errored (more than {ERRORED_REFUSAL:.0%})"
    q = {f"p{round(x * 100)}_ms": None if refused else nearest_rank(values, x) for x in QUANTILES}
    slo = SLO_P99_MS if phase == "startup" else None
    within = None if slo is None or q["p99_ms"] is None else q["p99_ms"] <= slo
    return PhaseLatency(phase, len(values), len(pods), bad, round(len(values) / len(pods), 4) if pods else None,
                        q["p50_ms"], q["p90_ms"], q["p99_ms"], None if refused or not values else values[-1],
                        "; ".join(sources), slo, within, refused)


def phase_rows(pods: list[PodTransitions]) -> list[PhaseLatency]:
    """Every phase's row."""
    return [phase_row(ph, pods) for ph in PHASES]
