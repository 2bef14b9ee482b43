"""ISO-12 and ISO-13 end to end: the tenant-isolation class's vGPU slices probe (``classes.tenant_isolation.vgpu_slices``)
through the pipeline's own steps (``class_runner``) against the simulated cluster, one cluster at a time:

- HAMi (``--mode hami``, ``plans/hami.yaml``): the second tenant's slice waits (``CardInsufficientMemory``) while
  the first's holds the card, and is placed once the first pod ended: both checks pass;
- HAMi with ``vgpu-overcommit``: the second slice is placed beside the first, the card is granted more memory than
  it has: ISO-12 fails;
- HAMi with ``slice-leak``: the first pod ended, its slice is still counted, the second keeps waiting: ISO-13
  fails while ISO-12 passes;
- the default cluster (no vGPU slices): both are not applicable (``na.no_vgpu_slices``), and no probe pod runs.

Each run's wave is one short virtual inference pod; only the vGPU slices probe runs beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.config import shipped_config

from .class_runner import run_class
from .test_memory_isolation import I, small_plan

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900), pytest.mark.xdist_group("vgpu-slices")]


def run_on(tmp: Path, plan_name: str, mode: str, faults: str = ""):
    from .conftest import launch

    sim = launch(tmp / "sim", faults=faults, config=shipped_config(SchedulerMode(mode)))
    try:
        run = run_class(small_plan(tmp, sim, plan_name), I, f"slices__{mode}_{faults or 'ok'}",
                        probes=("vgpu_slices_probe",))
    finally:
        sim.stop()
    assert not run.errors, run.errors
    row = run.file("vgpu_slices")
    assert row is not None, f"no probe row; steps: {run.steps}"
    return run, row


def test_hami_keeps_the_second_slice_waiting_until_the_first_ended_and_both_checks_pass(tmp_path):
    run, row = run_on(tmp_path, "hami", "hami")
    assert (run.verdicts["ISO-12"], run.verdicts["ISO-13"]) == ("pass", "pass"), row
    assert row["memory_slices"] is True and row["gpu_uuid"].startswith("GPU-") and row["cards_checked"] >= 2
    assert row["second_placed_at_once"] is False and "CardInsufficientMemory" in row["second_waiting_message"]
    assert row["card_allocated_mib"] == row["first_mib"] <= row["card_mib"] < row["first_mib"] + row["second_mib"]
    assert row["slice_released"] is True and row["slice_release_seconds"] <= row["max_slice_release_seconds"]


def test_vgpu_overcommit_grants_the_card_more_than_it_has_and_fails_iso12(tmp_path):
    run, row = run_on(tmp_path, "hami", "hami", faults="vgpu-overcommit")
    assert run.verdicts["ISO-12"] == "fail", row
    assert row["overcommitted"] is True and row["second_placed_at_once"] is True
    assert row["card_allocated_mib"] == row["first_mib"] + row["second_mib"] > row["card_mib"]
    assert row["gpu_uuid"] in row["cards_overcommitted"] and row["finding"].startswith("overcommit:")


def test_slice_leak_keeps_a_finished_pods_slice_and_fails_iso13(tmp_path):
    run, row = run_on(tmp_path, "hami", "hami", faults="slice-leak")
    assert (run.verdicts["ISO-12"], run.verdicts["ISO-13"]) == ("pass", "fail"), row
    assert row["first_finished_at"] is not None and row["slice_released"] is False
    assert row["second_placed_at"] is None and row["finding"].startswith("slice leak:")


def test_the_default_cluster_slices_no_gpu_memory_and_both_checks_are_not_applicable(tmp_path):
    run, row = run_on(tmp_path, "default", "kube")
    assert (run.verdicts["ISO-12"], run.verdicts["ISO-13"]) == ("not_applicable", "not_applicable"), row
    assert run.reasons["ISO-12"] == run.reasons["ISO-13"] == "na.no_vgpu_slices"
    assert row["memory_slices"] is False and row["sharing"] == "none" and row["first_pod"] is None
