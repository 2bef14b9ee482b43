"""The Kueue scenario: its steps in three phases, each needing Kueue configured its own way (``PHASES``: the
classical one, fair sharing on, ``waitForPodsReady`` on). A phase runs through a kubeconfig as the
administrator; a step that fails to run is recorded ``not run: <why>``. The real side restarts Kueue with each
phase's settings; the simulated side starts the cluster each phase needs (``SIM_MODE``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from gpupoc.fidelity import steps_kueue, steps_kueue_config
from gpupoc.fidelity.client import from_kubeconfig
from gpupoc.fidelity.kueue_setup import flavor
from gpupoc.fidelity.model import ScenarioResult
from gpupoc.fidelity.run import Run
from gpupoc.fidelity.setup import choose_target, make_tenancy


@dataclass(frozen=True)
class Phase:
    """Steps that share one Kueue Configuration: fair sharing, and a ``waitForPodsReady`` timeout (0: off);
    ``sim_mode`` is the simulated cluster's scheduler mode that serves it (``gpupoc sim serve --mode``)."""

    name: str
    steps: tuple[tuple[str, Callable[[Run], None]], ...]
    fair_sharing: bool = False
    wait_for_pods_ready_seconds: int = 0
    sim_mode: str = "kube"


PHASES: tuple[Phase, ...] = (
    Phase("classical", (("kueue_over_quota", steps_kueue.over_quota), ("kueue_preemption", steps_kueue.preemption),
                        ("kueue_reclaim", steps_kueue.reclaim))),
    # the simulated cluster's kueue mode is the one with fair sharing on (clusters/kueue.yaml)
    Phase("fair", (("kueue_fair_sharing", steps_kueue_config.fair_sharing),), fair_sharing=True, sim_mode="kueue"),
    Phase("pods_ready", (("kueue_pods_ready", steps_kueue_config.pods_ready),),
          wait_for_pods_ready_seconds=steps_kueue_config.PODS_READY_TIMEOUT),
)
STEP_NAMES = tuple(name for phase in PHASES for name, _ in phase.steps)
ACCEPTED_KUEUE = Path(__file__).with_name("accepted_kueue.yaml")
# steps the simulated Kueue mode cannot run, and why (each is a listed difference, never equal)
SIM_NOT_RUN = {"kueue_pods_ready": "the simulated Kueue mode has no waitForPodsReady (no PodsReady condition, "
                                   "no eviction on its timeout)"}


def run_phase(kubeconfig: Path, phase: Phase, result: ScenarioResult, wait: float = 90.0,
              workdir: Path | None = None, skip: dict[str, str] | None = None) -> ScenarioResult:
    """The phase's steps through ``kubeconfig``'s current context (an administrator), into ``result``; ``skip``
    maps a step to why it cannot run on this side."""
    admin = from_kubeconfig(kubeconfig, workdir=workdir)
    if not result.version:
        result.version = str(admin.get("/version").body.get("gitVersion") or "")
    make_tenancy(admin)
    flavor(admin)
    run = Run(admin, admin, "", choose_target(admin), result, wait=wait)
    for name, step in phase.steps:
        if skip and name in skip:
            run.rec(name).not_run = skip[name]
            continue
        try:
            step(run)
        except Exception as exc:  # noqa: BLE001 - one step that cannot run must not lose the others' records
            run.rec(name).not_run = f"{type(exc).__name__}: {exc}"[:300]
    return result
