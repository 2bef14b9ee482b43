"""Plans for the integration tests that run the congestion class through a real Airflow."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from gpupoc.pipeline.common import repo_root


# Run time of each workload of the small wave; waits on a run budget a step from the longest.
SMALL_WAVE_DURATIONS = {"v-train-8g": 20, "v-train-4g": 15, "v-train-2g": 10, "v-infer-1g": 8}
LONGEST_POD_SECONDS = max(SMALL_WAVE_DURATIONS.values())


def plan_on_cluster(name: str, tmp: Path, kubeconfig: Path, audit_log: Path) -> dict:
    """``plans/<name>.yaml`` pointed at a test's cluster (kubeconfig, audit log), its evidence under ``tmp``."""
    plan = yaml.safe_load((repo_root() / "plans" / f"{name}.yaml").read_text())
    plan["platform"]["kubeconfig"] = str(kubeconfig)
    plan["evidence_root"] = str(tmp / "evidence")
    plan["evidence_sources"]["audit_log_path"] = str(audit_log)
    # a window starting tomorrow: unpausing the DAG creates no scheduled run beside the manual one
    tomorrow = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    plan["window"].update(start=tomorrow.isoformat(), end=(tomorrow + timedelta(days=7)).isoformat())
    return plan


def small_plan(tmp: Path, kubeconfig: Path, audit_log: Path) -> Path:
    """The default plan with a wave of 8 short pods: training asked 28 GPUs of 24, mixed priorities."""
    plan = plan_on_cluster("default", tmp, kubeconfig, audit_log)
    durations = SMALL_WAVE_DURATIONS
    for w in plan["workloads"]:
        if w["name"] in durations:
            w["duration_seconds"] = durations[w["name"]]
    qc = plan["test_classes"]["queue_congestion"]
    # priorities without preemption (gpupoc-normal and -low never preempt): every pod runs to its end
    qc["wave"] = [
        {"workload": "v-train-8g", "tenant": "team-vision", "count": 2, "priority_class": "gpupoc-normal"},
        {"workload": "v-train-4g", "tenant": "team-nlp", "count": 2, "priority_class": "gpupoc-normal"},
        {"workload": "v-train-2g", "tenant": "team-nlp", "count": 2, "priority_class": "gpupoc-low"},
        {"workload": "v-infer-1g", "tenant": "team-serving", "count": 2},
    ]
    qc["gate_timeout_seconds"] = 240
    qc["snapshot_interval_seconds"] = 2
    qc["thresholds"]["max_wait_seconds"] = 120
    qc["services"][0]["traffic_seconds"] = 30  # the online service beside the wave, as the default plan has it
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


DEMO_OVERRIDES = Path(__file__).parent / "data" / "demo_small.yaml"


def small_demo_plan(dest: Path) -> Path:
    """plans/default.yaml with the overrides of data/demo_small.yaml, written to ``dest``."""
    plan = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    over = yaml.safe_load(DEMO_OVERRIDES.read_text())
    for w in plan["workloads"]:
        w.update(over["workloads"].get(w["name"], {}))
    for name, fields in over["test_classes"].items():
        plan["test_classes"][name].update(fields)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # the reviewers scored the experience items in a scorecard file next to the plan
    (dest.parent / "scores.yaml").write_text(yaml.safe_dump({"reviewers": [
        {"name": "Li Lei", "role": "platform", "scores": {"ui_usability": 4, "documentation": 3, "training_cost": 4}}]}))
    plan["report"]["scorecard"] = "scores.yaml"
    dest.write_text(yaml.safe_dump(plan, sort_keys=False))
    return dest
