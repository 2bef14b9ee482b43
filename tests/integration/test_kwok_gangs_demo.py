"""Gangs through the Workload API end to end: `gpupoc demo --cluster kwok --platform kube-gangs` starts the real
control plane with GenericWorkload on; the pipeline makes each gang's Workload and PodGroup of
scheduling.k8s.io/v1beta1 before its pods, which name the PodGroup in ``spec.schedulingGroup``; kube-scheduler's
GangScheduling plugin places each gang all or nothing; the gang items (GNG-01..03) are judged on what it did,
and the report says the candidate was the real kube-scheduler with Workload-API gangs.

One class only (the machine is shared): the congestion wave holds the plan's gang.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from gpupoc.pipeline.common import repo_root
from tests.integration.kwok_demos import kwok_demo
from tests.integration.plans import small_demo_plan

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kwok-demo")]
CLASSES = ("poc_queue_congestion",)


@pytest.fixture(scope="module")
def demo():
    """The demo on the plan's kube-gangs platform with a gang in its wave, stopped at the end."""
    with kwok_demo("gpupoc-kwok-gangs-demo-", CLASSES, platform="kube-gangs", plan=gang_plan) as running:
        yield running


def gang_plan(dest: Path) -> Path:
    """The small demo plan with the compare plan's gang (two 8-GPU pods, all or nothing) in the congestion wave
    beside the 28 GPUs of jobs: the gang cannot start until two whole nodes are free."""
    plan = yaml.safe_load(small_demo_plan(dest).read_text())
    compare = yaml.safe_load((repo_root() / "plans" / "compare.yaml").read_text())
    gang = next(w for w in compare["workloads"] if w["name"] == "v-train-2x8g")
    plan["workloads"].append({**gang, "duration_seconds": 15})
    plan["test_classes"]["queue_congestion"]["wave"].append({"workload": gang["name"], "tenant": "team-vision",
                                                              "count": 1})
    dest.write_text(yaml.safe_dump(plan, sort_keys=False))
    return dest


def _run_dir(root: Path) -> Path:
    runs = sorted(p.parent.parent for p in root.glob("var/**/poc_queue_congestion/*/tables/platform_info.parquet"))
    assert len(runs) == 1, f"one congestion run under {root}/var: {runs}"
    return runs[0]


@pytest.mark.timeout(2400)
def test_the_gangs_pods_name_the_workload_apis_pod_group_and_the_run_records_it(demo):
    result, lines, root = demo
    assert result.runs == {dag: "success" for dag in CLASSES}, result.runs
    assert any("the Workload API's gangs" in line for line in lines), lines[:20]
    run = _run_dir(root)
    info = {r["key"]: r["value"] for r in pq.read_table(run / "tables" / "platform_info.parquet").to_pylist()}
    assert info["gangs"] == "workload-api" and info["adapter"] == "kube-scheduler", info
    pods = json.loads((run / "files" / "pods.json").read_text())
    grouped = [p for p in pods if (p["spec"].get("schedulingGroup") or {}).get("podGroupName")]
    assert grouped, "no wave pod named a Workload API PodGroup"
    assert all(p["spec"]["schedulingGroup"]["podGroupName"] == p["metadata"]["labels"]["gpupoc.io/gang"]
               for p in grouped)


def test_the_gang_items_are_judged_a_pass_and_the_report_names_the_real_scheduler_with_its_gangs(demo):
    result, _, _ = demo
    report = json.loads((result.outcome.report_dir / "report.json").read_text())
    checks = {c["check_id"]: c for i in report["items"] for c in i["checks"] if c.get("test_class") == "queue_congestion"}
    gangs = {k: c["verdict"] for k, c in checks.items() if k.startswith("GNG-")}
    assert gangs and set(gangs.values()) <= {"pass", "not_applicable"} and "pass" in gangs.values(), gangs
    unsettled = [f"{c['check_id']}: {c['verdict']}: {c['reason']}" for c in checks.values()
                 if c["tier"] in ("must", "key") and c["verdict"] not in ("pass", "not_applicable")]
    assert unsettled == [], unsettled
    assert "with Workload-API gangs" in report["subject"]["candidate"]["text"], report["subject"]["candidate"]
