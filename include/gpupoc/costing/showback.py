"""An ``Allocation`` summed by a dimension (team, task type, pool, hour), its top waste holders, and the
showback per team with OpenCost's allocation column names (``name``, ``gpuHours``, ``gpuCost``, ``sharedCost``,
``totalCost``, ``totalEfficiency``, ...), one CSV per team."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

from gpupoc.costing.allocation import IDLE, Allocation

DIMENSIONS = {"team": "team", "task_type": "task_type", "pool": "pool", "hour": "bucket"}
SHOWBACK_COLUMNS = ["name", "start", "end", "minutes", "gpuHours", "gpuCost", "gpuEfficiency", "sharedCost",
                    "totalCost", "totalEfficiency", "currency"]


def by(alloc: Allocation, dimension: str) -> list[dict]:
    """GPU-hours charged, their cost, and the waste, summed per value of ``dimension`` (``DIMENSIONS``)."""
    attr = DIMENSIONS[dimension]
    acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for p in alloc.pods:
        a = acc[str(getattr(p.row, attr) or "")]
        a[0] += p.gpu_hours
        a[1] += p.gpu_cost
        a[2] += p.waste_gpu_hours
        a[3] += p.waste_cost
    return [{dimension: k, "gpu_hours": round(v[0], 4), "cost": round(v[1], 2), "waste_gpu_hours": round(v[2], 4),
             "waste_cost": round(v[3], 2)} for k, v in sorted(acc.items())]


def top_waste(alloc: Allocation, n: int = 5) -> list[dict]:
    """The ``n`` pods whose requested-but-unused GPU-hours cost most, with the team that held them."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for p in alloc.pods:
        a = acc[(p.row.team, p.row.pod)]
        a[0] += p.waste_gpu_hours
        a[1] += p.waste_cost
    rows = [{"team": t, "pod": pod, "waste_gpu_hours": round(h, 4), "waste_cost": round(c, 2)}
            for (t, pod), (h, c) in acc.items() if c > 0]
    return sorted(rows, key=lambda r: (-r["waste_cost"], r["team"], r["pod"]))[:n]


def showback(alloc: Allocation, start: str, end: str, minutes: float) -> list[dict]:
    """One row per team (shared rows spread onto the others as ``sharedCost``) and one ``__idle__`` row."""
    own: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for p in alloc.pods:
        if not p.row.shared:
            a = own[p.row.team]
            a[0] += p.gpu_hours
            a[1] += p.gpu_cost
            a[2] += min(p.row.used_gpu_hours, p.gpu_hours)
    rows = []
    for team in sorted(set(own) | set(alloc.shared_by_team)):
        hours, cost, used = own.get(team, [0.0, 0.0, 0.0])
        shared = alloc.shared_by_team.get(team, 0.0)
        eff = round(used / hours, 4) if hours else None
        rows.append({"name": team, "start": start, "end": end, "minutes": round(minutes, 2),
                     "gpuHours": round(hours, 4), "gpuCost": round(cost, 4), "gpuEfficiency": eff,
                     "sharedCost": round(shared, 4), "totalCost": round(cost + shared, 4), "totalEfficiency": eff,
                     "currency": alloc.currency})
    idle_h, idle_c = sum(i.gpu_hours for i in alloc.idle), alloc.idle_cost
    rows.append({"name": IDLE, "start": start, "end": end, "minutes": round(minutes, 2), "gpuHours": round(idle_h, 4),
                 "gpuCost": round(idle_c, 4), "gpuEfficiency": 0.0, "sharedCost": 0.0,
                 "totalCost": round(idle_c, 4), "totalEfficiency": 0.0, "currency": alloc.currency})
    return rows


def to_csv(rows: list[dict]) -> str:
    """``rows`` as CSV text under ``SHOWBACK_COLUMNS``."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=SHOWBACK_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r[k]) for k in SHOWBACK_COLUMNS})
    return buf.getvalue()
