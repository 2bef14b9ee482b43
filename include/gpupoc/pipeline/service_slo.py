"""A service's traffic judged against its SLO: the load pod's per-second rows (``gpupoc/workload`` ``load``
mode) as ``service_probes`` rows, and whether the SLO held (docs/services.md).

The SLO holds when the availability over the whole window (answered 2xx / sent) reaches
``slo.availability_pct`` and no second's p95 or p99 latency is above ``slo.p95_ms`` / ``slo.p99_ms``. A second
that misses either is a breach second; ``breach_seconds`` counts them so that a check can bound the breach
around a failure. No rows at all is not a pass: ``held`` is False with the reason.

The latencies judged are the load generator's ``judged_p95_ms``/``judged_p99_ms`` (``workload/lag.py``): the
client's reading of a request the generator sent and read on time, the replica's own time of one it sent or
read late (its own lag, not the platform's). Availability counts every request sent: lag never excuses an
error. When more than ``slo.max_harness_lag_pct`` of the window's requests were distorted and nothing missed
the SLO, ``held`` is None and ``harness_lag`` True: not verified, naming the harness's lag."""

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
    late_sent: int = 0      # sent more than lag_bound_ms after their slot: the generator's lag
    late_read: int = 0      # read more than lag_bound_ms after the replica's own time: the generator's lag
    distorted: int = 0      # either: latency judged on the replica's own time
    max_send_lag_ms: float | None = None
    server_p50_ms: float | None = None   # the replica's own time to answer (X-Gpupoc-Serve-Ms)
    server_p95_ms: float | None = None
    server_p99_ms: float | None = None
    judged_p95_ms: float | None = None   # what the SLO judges (the client's p95 from an older generator)
    judged_p99_ms: float | None = None


@dataclass(frozen=True)
class SloResult:
    service: str
    availability_pct: float | None
    worst_p95_ms: float | None
    worst_p99_ms: float | None
    breach_seconds: int
    seconds: int
    held: bool | None
    reason: str
    unready_answers: int = 0
    sent: int = 0
    late_sent: int = 0
    late_read: int = 0
    harness_lag_pct: float | None = None  # % of the requests sent or read late (distorted)
    harness_lag: bool = False             # too distorted to judge: not verified, never a pass


def _number(raw: dict, key: str, fallback: float | None = None) -> float | None:
    """``raw[key]`` (None stays None), ``fallback`` when the row has no such field (an older generator)."""
    if key not in raw:
        return fallback
    return None if raw[key] is None else float(raw[key])


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
        j95, j99 = _number(raw, "judged_p95_ms", p95), _number(raw, "judged_p99_ms", p99)
        breach = (raw["availability_pct"] < slo.availability_pct or (j95 is not None and j95 > slo.p95_ms)
                  or (j99 is not None and j99 > slo.p99_ms))
        rows.append(ProbeRow(
            service, tenant, int(raw["second"]), str(raw.get("ts", "")), int(raw["sent"]), int(raw["ok"]),
            float(raw["availability_pct"]), p95, p99, breach, int(raw.get("unready") or 0),
            int(raw.get("unanswered") or 0), raw.get("p50_ms"), late_sent=int(raw.get("late_sent") or 0),
            late_read=int(raw.get("late_read") or 0), distorted=int(raw.get("distorted") or 0),
            max_send_lag_ms=_number(raw, "max_send_lag_ms"), server_p50_ms=_number(raw, "server_p50_ms"),
            server_p95_ms=_number(raw, "server_p95_ms"), server_p99_ms=_number(raw, "server_p99_ms"),
            judged_p95_ms=j95, judged_p99_ms=j99))
    return rows


def _pct(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def lag_note(late_sent: int, late_read: int, sent: int) -> str:
    """What the generator's lag took out of the client's reading (empty when nothing)."""
    if not (late_sent or late_read):
        return ""
    return (f"harness lag: {late_sent} of {sent} requests sent late, {late_read} answers read late, judged on the "
            "replica's own time")


def lag_verdict(late_sent: int, late_read: int, sent: int, distorted_pct: float, bound_pct: float) -> str:
    """Why the SLO is not verified: the generator's own lag distorted more of the window than the plan allows."""
    return (f"not verified: the load generator sent {_pct(late_sent, sent):g}% of requests late and read "
            f"{_pct(late_read, sent):g}% of answers late ({distorted_pct:g}% of the window, more than "
            f"{bound_pct:g}%): harness lag, not the platform")


def judge(rows: list[ProbeRow], slo: Slo, service: str) -> SloResult:
    """Whether the SLO held over ``rows``: a miss on the judged latencies or on availability fails it; else too
    much of the window distorted by the harness leaves it not verified (``held`` None)."""
    if not rows:
        return SloResult(service, None, None, None, 0, 0, False, "no traffic rows: the load pod wrote none")
    sent = sum(r.sent for r in rows)
    availability = round(100.0 * sum(r.ok for r in rows) / sent, 2) if sent else 0.0
    p95s = [r.judged_p95_ms for r in rows if r.judged_p95_ms is not None]
    p99s = [r.judged_p99_ms for r in rows if r.judged_p99_ms is not None]
    worst95, worst99 = (max(p95s) if p95s else None), (max(p99s) if p99s else None)
    misses = []
    if availability < slo.availability_pct:
        misses.append(f"availability {availability:g}% < {slo.availability_pct:g}%")
    if worst95 is not None and worst95 > slo.p95_ms:
        misses.append(f"p95 {worst95:g} ms > {slo.p95_ms:g} ms")
    if worst99 is not None and worst99 > slo.p99_ms:
        misses.append(f"p99 {worst99:g} ms > {slo.p99_ms:g} ms")
    late_sent, late_read = sum(r.late_sent for r in rows), sum(r.late_read for r in rows)
    distorted = _pct(sum(r.distorted for r in rows), sent)
    unjudged = not misses and distorted > slo.max_harness_lag_pct
    if unjudged:
        reason = lag_verdict(late_sent, late_read, sent, distorted, slo.max_harness_lag_pct)
    else:
        met = f"availability {availability:g}%, worst p95 {worst95} ms, worst p99 {worst99} ms"
        reason = "; ".join([*(misses or [met]), *filter(None, [lag_note(late_sent, late_read, sent)])])
    return SloResult(service, availability, worst95, worst99, sum(r.breach for r in rows), len(rows),
                     None if unjudged else not misses, reason, sum(r.unready for r in rows), sent,
                     late_sent=late_sent, late_read=late_read, harness_lag_pct=distorted, harness_lag=unjudged)
