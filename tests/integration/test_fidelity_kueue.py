"""The fidelity suite's Kueue scenario (``gpupoc.fidelity.kueue_scenario``): a queue over its quota, a preemption
inside a ClusterQueue, a reclaim across a cohort, fair sharing and ``waitForPodsReady``, run on the simulated
Kueue mode and on real Kueue v0.17.0 beside the real control plane (restarted with each phase's Configuration),
what a client reads of the Workloads, their events and the pods compared field by field. Every difference is
fixed in the simulated mode or listed in ``gpupoc/fidelity/accepted_kueue.yaml`` (docs/fidelity.md); a new one
fails here. The table is written under the test's directory and printed."""

from __future__ import annotations

import json

import pytest

from gpupoc.controlplane import BinariesMissing, control_plane_binaries, start_control_plane
from gpupoc.controlplane.kueue import start_kueue, stop_kueue
from gpupoc.controlplane.kueue_manifests import KueueSettings
from gpupoc.fidelity.compare import differences, load_accepted, markdown, stale, unaccepted
from gpupoc.fidelity.kueue_scenario import ACCEPTED_KUEUE, PHASES, SIM_NOT_RUN, run_phase
from gpupoc.fidelity.model import ScenarioResult

from .conftest import launch

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(2400)]


def _kueue_or_skip():
    try:
        binaries = control_plane_binaries()
    except BinariesMissing as exc:
        pytest.skip(str(exc))
    if not (binaries.directory / "kueue").is_file():
        pytest.skip(f"Kueue is not built in {binaries.directory}: build it with `bash scripts/control-plane/"
                    "build.sh --with-kueue` (`make control-plane` runs it)")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[ScenarioResult, ScenarioResult]:
    """Each phase on a fresh empty simulated cluster of its mode, then all on one real control plane whose Kueue
    is restarted with each phase's settings (one side at a time)."""
    _kueue_or_skip()
    root = tmp_path_factory.mktemp("fidelity-kueue")
    simulated = ScenarioResult("simulated")
    for phase in PHASES:
        sim = launch(root / f"sim-{phase.name}", extra=("--empty", "--mode", phase.sim_mode))
        try:
            run_phase(sim.kubeconfig, phase, simulated, workdir=root / "sim-client", skip=SIM_NOT_RUN)
        finally:
            sim.stop()
    cp = start_control_plane(root / "real")
    real = ScenarioResult("real")
    try:
        for phase in PHASES:
            stop_kueue(cp)
            start_kueue(cp, KueueSettings(fair_sharing=phase.fair_sharing,
                                          wait_for_pods_ready_seconds=phase.wait_for_pods_ready_seconds))
            run_phase(cp.kubeconfig, phase, real, workdir=root / "real-client")
    finally:
        cp.stop()
    for result in (simulated, real):
        (root / f"{result.side}.json").write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    return simulated, real


@pytest.fixture(scope="module")
def table(runs, tmp_path_factory) -> str:
    simulated, real = runs
    text = markdown(differences(simulated, real), load_accepted(ACCEPTED_KUEUE), "simulated Kueue mode",
                    "real Kueue v0.17.0")
    path = tmp_path_factory.mktemp("fidelity-kueue-table") / "fidelity-kueue.md"
    path.write_text(text, encoding="utf-8")
    print(f"\nKueue fidelity table ({path}):\n{text}")
    return text


def test_every_kueue_difference_is_fixed_or_a_known_limit(runs, table):
    simulated, real = runs
    new = unaccepted(differences(simulated, real), load_accepted(ACCEPTED_KUEUE))
    assert not new, ("differences neither fixed in the simulated Kueue mode nor listed in "
                     "gpupoc/fidelity/accepted_kueue.yaml:\n" + "\n".join(
                         f"{d.step} {d.field}: simulated {d.simulated!r}, real {d.real!r}" for d in new))


def test_every_known_kueue_limit_is_still_seen(runs):
    simulated, real = runs
    diffs = differences(simulated, real)
    gone = stale(load_accepted(ACCEPTED_KUEUE), diffs)
    assert not gone, f"accepted differences not seen any more (remove them): {gone}"


def test_every_kueue_step_ran_on_the_real_side(runs):
    _simulated, real = runs
    for step, rec in real.steps.items():
        assert not rec.not_run, f"real: {step} did not run: {rec.not_run}"


def test_real_kueue_preempts_inside_the_queue_and_reclaims_across_the_cohort(runs):
    _simulated, real = runs
    assert real.steps["kueue_preemption"].observations["victim.condition.Preempted"] == "True InClusterQueue"
    assert real.steps["kueue_reclaim"].observations["victim.condition.Preempted"] == "True InCohortReclamation"
    assert real.steps["kueue_fair_sharing"].observations["victim.condition.Preempted"] == "True InCohortFairSharing"
