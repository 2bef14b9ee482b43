"""The fidelity suite: one scripted scenario (``gpupoc.fidelity``) run on the simulated cluster and on the real
control plane (Kubernetes v1.37.2, etcd v3.6.16, KWOK v0.8.0), what a client sees compared field by field.
Every difference is either fixed in the simulated cluster or a known limit in ``gpupoc/fidelity/accepted.yaml``
(listed in docs/simulated-cluster.md); a new one fails here. The table is written under the test's directory."""

from __future__ import annotations

import json

import pytest

from gpupoc.controlplane import BinariesMissing, control_plane_binaries, start_control_plane
from gpupoc.fidelity.compare import differences, load_accepted, markdown, stale, unaccepted
from gpupoc.fidelity.model import ScenarioResult
from gpupoc.fidelity.scenario import run_scenario

from .conftest import launch

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]


def _binaries_or_skip():
    try:
        return control_plane_binaries()
    except BinariesMissing as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[ScenarioResult, ScenarioResult]:
    """The scenario on an empty simulated cluster, then on a fresh real control plane (one at a time)."""
    _binaries_or_skip()
    root = tmp_path_factory.mktemp("fidelity")
    sim = launch(root / "sim", extra=("--empty",))
    try:
        simulated = run_scenario(sim.kubeconfig, "simulated", sim.audit_log, workdir=root / "sim-client")
    finally:
        sim.stop()
    cp = start_control_plane(root / "real")
    try:
        real = run_scenario(cp.kubeconfig, "real", cp.audit_log, workdir=root / "real-client")
    finally:
        cp.stop()
    for result in (simulated, real):
        (root / f"{result.side}.json").write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    return simulated, real


@pytest.fixture(scope="module")
def table(runs, tmp_path_factory) -> str:
    simulated, real = runs
    text = markdown(differences(simulated, real), load_accepted(), "simulated cluster", f"real ({real.version})")
    path = tmp_path_factory.mktemp("fidelity-table") / "fidelity.md"
    path.write_text(text, encoding="utf-8")
    print(f"\nfidelity table ({path}):\n{text}")
    return text


def test_the_real_control_plane_is_the_pinned_kubernetes(runs):
    _simulated, real = runs
    assert real.version == "v1.37.2", real.version


def test_every_difference_from_the_real_control_plane_is_fixed_or_a_known_limit(runs, table):
    simulated, real = runs
    new = unaccepted(differences(simulated, real), load_accepted())
    assert not new, ("differences neither fixed in the simulated cluster nor listed in "
                     "gpupoc/fidelity/accepted.yaml:\n" + "\n".join(f"{d.step} {d.field}: simulated {d.simulated!r}, "
                                                                     f"real {d.real!r}" for d in new))


def test_every_known_limit_is_still_seen(runs):
    """An accepted difference that no longer shows is removed from the list (and the docs), so both stay true."""
    simulated, real = runs
    diffs = differences(simulated, real)
    gone = stale(load_accepted(), diffs)
    assert not gone, f"accepted differences not seen any more (remove them): {gone}"


def test_the_steps_that_need_no_workload_ran_on_both_sides(runs):
    for result in runs:
        for step in ("forbidden", "access_reviews", "token_request", "quota", "unschedulable", "watch"):
            assert not result.steps[step].not_run, f"{result.side}: {step} did not run: {result.steps[step].not_run}"


def test_a_tenants_forbidden_read_is_the_same_status_on_both_sides(runs):
    simulated, real = runs
    for field in ("get_log.code", "get_log.reason", "get_log.message", "get_log.details"):
        assert simulated.steps["forbidden"].observations[field] == real.steps["forbidden"].observations[field], field
    assert real.steps["forbidden"].observations["audit.get_log.decision"] == "forbid"
