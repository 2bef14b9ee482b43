"""What the report judged, from the runs' own records first and the report's plan second.

The platform's name, the plan's name and the window's zone are what the runs recorded in ``platform_info``
(``gpupoc.evidence.subject``); the report's plan fills what older runs did not record. Whether the cluster was
the simulated one comes from the cluster's nodes, never from the plan. A report built with a plan whose hash
is not the evidence's, or from runs of different plans, says so as a finding; so does a cluster whose nodes share
cards without memory isolation (``sharing_findings``), and so does a memory-isolation probe whose aggressor
was not held to its slice (``memory_isolation_findings``: the P1 finding "no GPU memory isolation between
tenants").
"""

from __future__ import annotations

from typing import Callable

from gpupoc.evidence import subject as keys
from gpupoc.evidence.reader import RunEvidence
from gpupoc.kube.candidates import label_for
from gpupoc.report.inputs import PlanSettings
from gpupoc.report.models import Finding, FindingTarget, Subject
from gpupoc.validation.models import FailureClass

PLAN_ITEM = "plan"  # the item a finding about the plan itself names
SHARING_ITEM = "shared_gpus"  # the item a finding about how the cluster shares its GPUs names
NO_MEMORY_ISOLATION = ("time-slicing", "mps")  # strategies that share a card's memory with no limit


def _first(runs: list[RunEvidence], key: str) -> str | None:
    for ev in runs:
        value = (ev.manifest.get("platform") or {}).get(key)
        if value not in (None, ""):
            return str(value)
    return None


def _simulated(runs: list[RunEvidence]) -> int | None:
    """The most simulated nodes any run counted; None when no run recorded its nodes."""
    counts = [(ev.manifest.get("platform") or {}).get(keys.SIMULATED_NODES) for ev in runs]
    known = [int(c) for c in counts if str(c).isdigit()]
    return max(known) if known else None


def _kwok(runs: list[RunEvidence]) -> int | None:
    """The most KWOK nodes any run counted; None when no run recorded them."""
    counts = [(ev.manifest.get("platform") or {}).get(keys.KWOK_NODES) for ev in runs]
    known = [int(c) for c in counts if str(c).isdigit()]
    return max(known) if known else None


def _window(runs: list[RunEvidence]) -> tuple[str | None, str | None]:
    starts = [str(ev.window.get("start")) for ev in runs if ev.window.get("start")]
    ends = [str(ev.window.get("end")) for ev in runs if ev.window.get("end")]
    return (min(starts) if starts else None), (max(ends) if ends else None)


def judged(runs: list[RunEvidence], settings: PlanSettings, stored_plan: dict[str, str] | None = None) -> Subject:
    """The report's subject from ``runs`` (in the report's class order) and the plan it was built with."""
    named = settings.named
    hashes = list(dict.fromkeys(ev.plan_hash for ev in runs if ev.plan_hash))
    nodes = _simulated(runs)
    start, end = _window(runs)
    report_hash = (settings.plan or stored_plan or {}).get("plan_hash") or None
    adapter, kube, kwok = (_first(runs, keys.ADAPTER) or named.get("adapter"), _first(runs, keys.KUBERNETES_VERSION),
                           _kwok(runs))
    simulated = None if nodes is None else nodes > 0
    return Subject(
        platform=_first(runs, keys.PLATFORM_NAME) or named.get("platform"),
        adapter=adapter, kubernetes_version=kube,
        plan_name=_first(runs, keys.PLAN_NAME) or named.get("plan"),
        plan_hash=hashes[0] if len(hashes) == 1 else None, evidence_plan_hashes=hashes,
        report_plan_hash=report_hash, window_start=start, window_end=end,
        timezone=named.get("timezone") or _first(runs, keys.TIMEZONE) or "UTC",
        simulated=simulated, simulated_nodes=nodes, kwok_nodes=kwok,
        candidate=label_for(adapter, simulated, kwok, kube, extras=_extras(runs)))


def _extras(runs: list[RunEvidence]) -> tuple[str, ...]:
    """What the runs recorded switching on beyond the scheduler's defaults: DRA GPUs, Workload-API gangs."""
    out = []
    if _first(runs, keys.GPU_ALLOCATION) == "dra":
        out.append("DRA GPUs")
    if _first(runs, keys.GANGS) == "workload-api":
        out.append("Workload-API gangs")
    return tuple(out)


def plan_findings(subject: Subject, say: Callable[..., str]) -> list[Finding]:
    """A finding when the report's plan is not the evidence's, and when the runs come from several plans.

    ``say(key, **values)`` words them (``finding.plan_mismatch``, ``finding.plans_differ``)."""
    out = []
    short = [h[:12] for h in subject.evidence_plan_hashes]
    if subject.plan_mismatch:
        out.append(Finding(item=PLAN_ITEM, target=FindingTarget.SECOND_VERIFICATION,
                           text=say("finding.plan_mismatch", report=(subject.report_plan_hash or "")[:12],
                                    evidence=", ".join(short))))
    if len(short) > 1:
        out.append(Finding(item=PLAN_ITEM, target=FindingTarget.SECOND_VERIFICATION,
                           text=say("finding.plans_differ", hashes=", ".join(short))))
    return out


def sharing_findings(runs: list[RunEvidence], say: Callable[..., str]) -> list[Finding]:
    """A finding when the runs' cluster shares cards with no memory isolation (time-slicing, MPS, as its nodes'
    device-plugin labels say): one tenant's allocation can take another's memory, whatever the checks found.

    ``say(key, **values)`` words it (``finding.no_memory_isolation``)."""
    worst: dict[str, int] = {}
    for ev in runs:
        for part in str((ev.manifest.get("platform") or {}).get(keys.GPU_SHARING) or "").split(","):
            name, _, count = part.partition("=")
            if name in NO_MEMORY_ISOLATION and count.isdigit():
                worst[name] = max(worst.get(name, 0), int(count))
    return [Finding(item=SHARING_ITEM, target=FindingTarget.SECOND_VERIFICATION,
                    text=say("finding.no_memory_isolation", strategy=name, nodes=count))
            for name, count in sorted(worst.items()) if count]


MEMORY_TABLE = "memory_isolation"


def _unisolated(ev: RunEvidence) -> list[dict]:
    """The rows of a run's memory-isolation probe that found no isolation (none when not collected)."""
    try:
        if MEMORY_TABLE not in ev.table_names() or not ev.status(MEMORY_TABLE).verified:
            return []
        frame = ev.load(MEMORY_TABLE)
    except (OSError, ValueError, KeyError):
        return []
    return [r for r in frame.to_dict("records") if _is(r.get("shared_gpu"), True) and _is(r.get("isolated"), False)]


def _is(value: object, want: bool) -> bool:
    """A stored flag is ``want`` (an empty one, None or NaN, is neither)."""
    return value is not None and value == value and bool(value) is want


def memory_isolation_findings(runs: list[RunEvidence], say: Callable[..., str]) -> list[Finding]:
    """The P1 finding "no GPU memory isolation between tenants" for each probe that found none (ISO-11 fails on
    the same row): which card, the aggressor's outcome, the neighbour's. ``say(key, **values)`` words it."""
    out = []
    for ev in runs:
        for r in _unisolated(ev):
            peak = r.get("aggressor_peak_mib")
            peak = "?" if peak is None or peak != peak else f"{peak:g}"
            ran = "aggressor_failed" if _is(r.get("aggressor_failed"), True) else "aggressor_ran"
            harmed = "neighbour_ok" if _is(r.get("neighbour_unaffected"), True) else "neighbour_harmed"
            out.append(Finding(item=SHARING_ITEM, target=FindingTarget.CONTRACT, failure_class=FailureClass.PRODUCT_GAP,
                               text=say("finding.no_gpu_memory_isolation", card=r.get("gpu_uuid"),
                                        sharing=r.get("sharing"), node=r.get("node"),
                                        aggressor=r.get("aggressor_tenant"), slice=r.get("slice_mib"),
                                        aggressor_outcome=say(f"phrase.memiso.{ran}", peak=peak),
                                        neighbour=r.get("neighbour_tenant"),
                                        neighbour_outcome=say(f"phrase.memiso.{harmed}"))))
    return out
