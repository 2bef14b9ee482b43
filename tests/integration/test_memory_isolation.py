"""ISO-11 end to end: the tenant-isolation class's memory-isolation probe (``classes.tenant_isolation.memory_isolation``)
through the pipeline's own steps (``class_runner``) against the simulated cluster, one cluster at a time:

- HAMi (``--mode hami``, ``plans/hami.yaml``): the aggressor fails at its slice with HAMi-core's OOM line and
  the neighbour keeps its memory: ISO-11 passes;
- HAMi with ``gpumem-not-enforced``: the over-allocation succeeds and the neighbour's next allocation runs out:
  ISO-11 fails with the P1 finding;
- time-slicing (``clusters/time-slicing.yaml``, ``plans/default.yaml``): nothing limits a replica: ISO-11 fails;
- the default cluster (no shared GPUs): ISO-11 is not applicable (``na.no_shared_gpus``), and no probe pod runs.

Each run's wave is one short virtual inference pod; only the memory-isolation probe runs beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.config import CLUSTERS_DIR, shipped_config

from .class_runner import run_class
from .plans import plan_on_cluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900), pytest.mark.xdist_group("memory-isolation")]
I = "tenant_isolation"


def small_plan(tmp: Path, sim, plan_name: str) -> Path:
    """``plans/<plan_name>.yaml`` pointed at ``sim``, its isolation wave one 3-second virtual inference pod."""
    plan = plan_on_cluster(plan_name, tmp, sim.kubeconfig_http, sim.audit_log)
    for w in plan["workloads"]:
        if w["name"] == "v-infer-1g":
            w["duration_seconds"] = 3
    ti = plan["test_classes"][I]
    ti["wave"] = [{"workload": "v-infer-1g", "tenant": "team-serving", "count": 1}]
    ti["gate_timeout_seconds"] = 60
    path = tmp / f"plan-{plan_name}.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def run_on(tmp: Path, plan_name: str, config: Path, faults: str = ""):
    from .conftest import launch

    sim = launch(tmp / "sim", faults=faults, config=config)
    try:
        run = run_class(small_plan(tmp, sim, plan_name), I, f"memiso__{config.stem}_{faults or 'ok'}",
                        probes=("memory_isolation_probe",))
    finally:
        sim.stop()
    assert not run.errors, run.errors
    row = run.file("memory_isolation")
    assert row is not None, f"no probe row; steps: {run.steps}"
    return run, row


def test_hami_holds_the_aggressor_to_its_slice_and_iso11_passes(tmp_path):
    run, row = run_on(tmp_path, "hami", shipped_config(SchedulerMode("hami")))
    assert run.verdicts["ISO-11"] == "pass", row
    assert row["sharing"] == "hami" and row["same_card"] is True and row["gpu_uuid"].startswith("GPU-")
    assert row["aggressor_failed"] is True and "[HAMI-core ERROR" in row["oom_line"] and " OOM " in row["oom_line"]
    assert row["aggressor_peak_mib"] <= row["slice_mib"]
    assert row["neighbour_phase_after"] == "Running" and row["neighbour_mib_after"] == row["neighbour_mib_before"]
    assert row["late_phase"] == "Running" and row["late_oom"] is False and row["severity"] is None


def test_hami_without_the_limit_fails_iso11_with_the_p1_finding(tmp_path):
    run, row = run_on(tmp_path, "hami", shipped_config(SchedulerMode("hami")), faults="gpumem-not-enforced")
    assert run.verdicts["ISO-11"] == "fail", row
    assert row["aggressor_failed"] is False and row["aggressor_peak_mib"] > row["slice_mib"]
    assert row["late_oom"] is True and row["neighbour_unaffected"] is False and row["severity"] == "P1"
    assert row["finding"].startswith("P1: no GPU memory isolation between tenants")


def test_time_slicing_fails_iso11(tmp_path):
    run, row = run_on(tmp_path, "default", CLUSTERS_DIR / "time-slicing.yaml")
    assert run.verdicts["ISO-11"] == "fail", row
    assert row["sharing"] == "time-slicing" and row["same_card"] is True and row["aggressor_failed"] is False
    assert row["oom_line"] is None and row["late_oom"] is True


def test_the_default_cluster_has_no_shared_gpus_and_iso11_is_not_applicable(tmp_path):
    run, row = run_on(tmp_path, "default", shipped_config(SchedulerMode("kube")))
    assert run.verdicts["ISO-11"] == "not_applicable", row
    assert row["shared_gpu"] is False and row["sharing"] == "none" and row["neighbour_pod"] is None
