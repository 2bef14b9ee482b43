"""Fair shares of a pool: what each competing tenant is owed (guarantees first, then weighted max-min).

Used by the plan's checks (a reclaim is owed only within the lender's fair share) and by the isolation
class's fair-share evidence (``gpupoc.classes.tenant_isolation.fair_share``). Pure functions on numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

EPS = 1e-9


@dataclass(frozen=True)
class Owed:
    """What one tenant is owed: its weight and guaranteed GPUs."""

    tenant: str
    weight: float = 1.0
    guaranteed_gpus: float = 0.0


def fair_allocation(capacity: float, demand: dict[str, float], owed: list[Owed]) -> dict[str, float]:
    """GPUs each tenant is owed of ``capacity`` given what it asks (guarantees first, then weighted max-min)."""
    alloc = {o.tenant: min(demand.get(o.tenant, 0.0), o.guaranteed_gpus) for o in owed}
    scale = capacity / sum(alloc.values()) if sum(alloc.values()) > capacity > 0 else 1.0
    alloc = {t: a * scale for t, a in alloc.items()}
    left = capacity - sum(alloc.values())
    weights = {o.tenant: o.weight for o in owed}
    active = {t for t in alloc if demand.get(t, 0.0) - alloc[t] > EPS}
    while left > EPS and active:
        total = sum(weights[t] for t in active)
        given = 0.0
        for t in sorted(active):
            add = min(left * weights[t] / total, demand.get(t, 0.0) - alloc[t])
            alloc[t] += add
            given += add
        left -= given
        active = {t for t in active if demand.get(t, 0.0) - alloc[t] > EPS}
        if given <= EPS:
            break
    return alloc
