"""A service's traffic judged against its SLO: the load pod's per-second rows (``gpupoc/workload`` ``load``
mode) as ``service_probes`` rows, and whether the SLO held (docs/services.md).

The SLO holds when the availability over the whole window (answered 2xx / sent) reaches
``slo.availability_pct`` and no second's p95 or p99 latency is above ``slo.p95_ms`` / ``slo.p99_ms``. A second
that misses either is a breach second; ``breach_seconds`` counts them so that a check can bound the breach
around a failure. No rows at all is not a pass: ``held`` is False with the reason."""

from __future__ import annotations

import json
from dataclasses import dataclass

from gpupoc.plan.service_spec import Slo


@dataclass(frozen=True)
class ProbeRow:
    """One second of one service's traffic (a row of ``service_probes``)."""

    service: str
    tenant: str
    second: int
    ts: str
    sent: int
    ok: int
    availability_pct: float
    p95_ms: float | None
    p99_ms: float | None
    breach: bool
    unready: int = 0        # answered 503 by a replica still loading: traffic reached a replica not ready
    unanswered: int = 0     # no answer at all (refused, timed out)
    p50_ms: float | None = None


@dataclass(frozen=True)
class SloResult:
    service: str
    availability_pct: float | None
    worst_p95_ms: float | None
    worst_p99_ms: float | None
    breach_seconds: int
    seconds: int
    held: bool
    reason: str
    unready_answers: int = 0
    sent: int = 0


def parse_rows(text: str, service: str, tenant: str, slo: Slo) -> list[ProbeRow]:
    """The load pod's output (its log) as rows; lines that are not its JSON rows are skipped."""
    rows = []
    for line in text.splitlines():
        try:
            raw = json.loads(line)
        except ValueError:
            continue
        if not isinstance(raw, dict) or "availability_pct" not in raw:
            continue
        p95, p99 = raw.get("p95_ms"), raw.get("p99_ms")
        breach = (raw["availability_pct"] < slo.availability_pct or (p95 is not None and p95 > slo.p95_ms)
                  or (p99 is not None and p99 > slo.p99_ms))
        rows.append(ProbeRow(service, tenant, int(raw["second"]), str(raw.get("ts", "")), int(raw["sent"]),
                             int(raw["ok"]), float(raw["availability_pct"]), p95, p99, breach,
                             int(raw.get("unready") or 0), int(raw.get("unanswered") or 0), raw.get("p50_ms")))
    return rows


def judge(rows: list[ProbeRow], slo: Slo, service: str) -> SloResult:
    """Whether the SLO held over ``rows``."""
    if not rows:
        return SloResult(service, None, None, None, 0, 0, False, "no traffic rows: the load pod wrote none")
    sent = sum(r.sent for r in rows)
    availability = round(100.0 * sum(r.ok for r in rows) / sent, 2) if sent else 0.0
    p95s = [r.p95_ms for r in rows if r.p95_ms is not None]
    p99s = [r.p99_ms for r in rows if r.p99_ms is not None]
    worst95, worst99 = (max(p95s) if p95s else None), (max(p99s) if p99s else None)
    misses = []
    if availability < slo.availability_pct:
        misses.append(f"availability {availability:g}% < {slo.availability_pct:g}%")
    if worst95 is not None and worst95 > slo.p95_ms:
        misses.append(f"p95 {worst95:g} ms > {slo.p95_ms:g} ms")
    if worst99 is not None and worst99 > slo.p99_ms:
        misses.append(f"p99 {worst99:g} ms > {slo.p99_ms:g} ms")
    reason = "; ".join(misses) or f"availability {availability:g}%, worst p95 {worst95} ms, worst p99 {worst99} ms"
    return SloResult(service, availability, worst95, worst99, sum(r.breach for r in rows), len(rows), not misses,
                     reason, sum(r.unready for r in rows), sent)
