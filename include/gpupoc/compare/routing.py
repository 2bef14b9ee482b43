"""Where each candidate of ``make compare`` runs, and the label its column will bear.

``CLUSTER=sim`` (the default): every platform of the plan on the simulated cluster, in its scheduler mode: each
column a *simulated mode*. ``CLUSTER=kwok``: the platforms whose scheduler is built here for real
(kube-scheduler and Kueue, ``Catalogue.real_here``) on the real control plane with KWOK nodes
(``gpupoc demo --cluster kwok``), the others (Volcano, KAI, HAMi) on the simulated cluster, as its modes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpupoc.exceptions import ComparisonRefused
from gpupoc.kube.candidates import CandidateLabel, Catalogue, label_for, load_catalogue, pinned

CLUSTERS = ("sim", "kwok")


@dataclass(frozen=True)
class Route:
    """One platform of the plan: its adapter, the cluster it runs on and the label its column will bear."""

    name: str
    adapter: str
    cluster: str  # sim | kwok
    label: CandidateLabel

    @property
    def real(self) -> bool:
        return self.cluster == "kwok"


def route(platforms: list[tuple[str, str]], cluster: str = "sim", catalogue: Catalogue | None = None,
          kubernetes_version: str | None = None) -> list[Route]:
    """``(name, adapter)`` pairs in order -> their routes. ``kubernetes_version``: the real control plane's
    (default: its pin); the simulated cluster's runs record their own."""
    if cluster not in CLUSTERS:
        raise ComparisonRefused(f"--cluster {cluster!r}: expected one of {', '.join(CLUSTERS)} (CLUSTER=kwok runs "
                                "kube-scheduler and Kueue for real, the other candidates as simulated modes)")
    cat = catalogue or load_catalogue()
    kube = kubernetes_version or pinned("KUBERNETES_VERSION")
    out = []
    for name, adapter in platforms:
        real = cluster == "kwok" and adapter in cat.real_here
        label = label_for(adapter, not real, 1 if real else 0, kube if real else None, catalogue=cat)
        out.append(Route(name, adapter, "kwok" if real else "sim", label))
    return out


def check_planted(routes: list[Route], planted: dict[str, str]) -> None:
    """A fault profile is the simulated cluster's own: refused for a candidate on the real control plane."""
    real = [r.name for r in routes if r.real and planted.get(r.name)]
    if real:
        raise ComparisonRefused(f"--faults {', '.join(f'{n}:{planted[n]}' for n in real)}: {', '.join(real)} runs on "
                                "the real control plane (CLUSTER=kwok), where fault profiles do not exist; plant it "
                                "in a simulated candidate (volcano, kai) or drop CLUSTER=kwok")


def plan_platforms(plan: Path, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """The adapter of each named platform of the plan (a ConfigError naming the known ones for an unknown name)."""
    from gpupoc.plan import load_plan

    return [(n, load_plan(f"{plan}#{n}", kubeconfig_later=True).platform.adapter.value) for n in names]


def describe(routes: list[Route]) -> list[str]:
    """One console line per candidate: where it runs and what its column will say."""
    where = {"kwok": "the real control plane (KWOK nodes)", "sim": "the simulated cluster"}
    return [f"{r.name}: {r.adapter} on {where[r.cluster]}: {r.label.headline}" for r in routes]
