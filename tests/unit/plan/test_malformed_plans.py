"""A corpus of malformed plans: ``load_plan`` refuses each one, names the right path, and says each problem once.

Every case starts from ``plans/default.yaml`` written to ``<tmp>/plans/plan.yaml`` (so relative paths resolve
inside the test's directory), breaks one thing, and names the path the error must carry.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.plan import load_plan

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _steps(path: str) -> list[str | int]:
    return [name if name else int(index) for name, index in _STEP.findall(path)]


def set_at(data: dict, path: str, value: Any) -> None:
    """Set ``a.b[2].c`` in plain data (the last step may be a new key)."""
    *parents, last = _steps(path)
    node: Any = data
    for step in parents:
        node = node[step]
    node[last] = value


def delete_at(data: dict, path: str) -> None:
    *parents, last = _steps(path)
    node: Any = data
    for step in parents:
        node = node[step]
    del node[last]


def workload_index(data: dict, name: str) -> int:
    return next(i for i, w in enumerate(data["workloads"]) if w["name"] == name)


@dataclass(frozen=True)
class Case:
    """A plan broken one way: ``value`` set at ``at`` (default ``path``) unless ``edit`` or ``text`` says otherwise;
    ``path`` is where the error must point."""

    id: str
    path: str
    value: Any = None
    at: str | None = None
    edit: Callable[[dict, Path], None] | None = None
    text: str | None = None  # the whole file, for unreadable YAML and wrong top-level types


def _dup_tenant(d: dict, _: Path) -> None:
    d["tenants"].append(copy.deepcopy(d["tenants"][0]))  # tenants[3]: same name and namespace as tenants[0]


def _dup_workload(d: dict, _: Path) -> None:
    d["workloads"][1]["name"] = d["workloads"][0]["name"]


def _dup_pool(d: dict, _: Path) -> None:
    d["pools"][1]["name"] = d["pools"][0]["name"]


def _dup_priority(d: dict, _: Path) -> None:
    d["priority_classes"].append({"name": "gpupoc-low", "value": 1})


def _dup_injection(d: dict, _: Path) -> None:
    inj = d["test_classes"]["fault_recovery"]["injections"]
    inj.append(dict(inj[0]))


def _memory_below_request(d: dict, _: Path) -> None:
    d["workloads"][0].update(memory_request="2Gi", memory_limit="512Mi")


def _both_access(d: dict, _: Path) -> None:
    d["platform"]["in_cluster"] = True


def _kueue_without_queue(d: dict, _: Path) -> None:
    d["platform"]["adapter"] = "kueue"
    del d["tenants"][1]["queues"]["kueue"]


def _gpus_beyond_node(d: dict, _: Path) -> None:
    d["workloads"][workload_index(d, "v-infer-4g")]["gpus"] = 8


def _wave_beyond_quota(d: dict, _: Path) -> None:
    d["test_classes"]["queue_congestion"]["wave"].append({"workload": "v-train-8g", "tenant": "team-vision"})


def _window_backwards(d: dict, _: Path) -> None:
    d["window"]["end"] = "2026-11-01T00:00:00+00:00"


def _one_user_two_reviewers(d: dict, _: Path) -> None:
    d["report"]["reviewers"][2]["airflow_user"] = d["report"]["reviewers"][0]["airflow_user"]


def _kubeconfig_is_a_directory(d: dict, base: Path) -> None:
    (base / "clusters").mkdir()
    d["platform"]["kubeconfig"] = "clusters"


CASES = [
    # ---- types ----
    Case("quota-gpus-text", "tenants[1].quota.gpus", "four"),
    Case("gpus-per-node-fraction", "pools[0].gpus_per_node", 8.5),
    Case("workload-gpus-bool", "workloads[0].gpus", True),
    Case("access-review-text", "test_classes.tenant_isolation.probes.access_review", "maybe"),
    Case("command-not-a-list", "workloads[0].command", "python train.py"),
    Case("unknown-adapter", "platform.adapter", "slurm"),
    Case("unknown-gpu-source", "platform.options.gpus", "mig"),
    Case("unknown-workload-kind", "workloads[0].kind", "batch"),
    Case("tenants-not-a-list", "tenants", {"name": "team-vision"}),
    # ---- ranges ----
    Case("negative-quota", "tenants[0].quota.gpus", -4),
    Case("coverage-above-one", "test_classes.queue_congestion.thresholds.explanation_coverage", 1.5),
    Case("gpu-util-above-100", "workloads[0].gpu_util", 140),
    Case("version-2", "version", 2),
    Case("pass-score-7", "report.decision_rules.pass_score", 7),
    Case("memory-limit-below-request", "workloads[0]", edit=_memory_below_request),
    Case("cpu-not-a-quantity", "workloads[0].cpu", "lots"),
    Case("tenant-name-not-dns", "tenants[0].name", "Team_Vision"),
    Case("gpus-beyond-a-node", "workloads[6].gpus", edit=_gpus_beyond_node),
    Case("wave-beyond-quota", "test_classes.queue_congestion.wave", edit=_wave_beyond_quota),
    # ---- references between sections ----
    Case("wave-unknown-workload", "test_classes.queue_congestion.wave[0].workload", "v-train-16g"),
    Case("wave-unknown-tenant", "test_classes.utilization.wave[0].tenant", "team-robotics"),
    Case("wave-unknown-priority-class", "test_classes.queue_congestion.wave[0].priority_class", "gpupoc-urgent"),
    Case("workload-unknown-pool", "workloads[0].pool", "nowhere"),
    Case("workload-unknown-priority-class", "workloads[0].priority_class", "gpupoc-urgent"),
    Case("tenant-unknown-priority-class", "tenants[0].priority_classes[0]", "gpupoc-urgent"),
    Case("injection-unknown-node", "test_classes.fault_recovery.injections[4].node", "training-node-9"),
    Case("injection-unknown-pool", "test_classes.fault_recovery.injections[4].pool", "gpu"),
    Case("quota-change-unknown-tenant", "test_classes.audit_trail.quota_change.tenant", "nobody"),
    Case("probe-unknown-actor", "test_classes.tenant_isolation.probes.pairs[0].actor",
         [{"actor": "nobody", "target": "team-nlp"}], at="test_classes.tenant_isolation.probes.pairs"),
    Case("over-quota-unknown-workload", "test_classes.tenant_isolation.over_quota[0].workload", "nothing"),
    Case("artifact-unknown-tenant", "test_classes.audit_trail.artifact.consumer.tenant", "nobody"),
    Case("kueue-without-queue", "tenants[1].queues.kueue", edit=_kueue_without_queue),
    Case("two-ways-in", "platform", edit=_both_access),
    # ---- duplicate names ----
    Case("duplicate-tenant", "tenants[3].name", edit=_dup_tenant),
    Case("duplicate-workload", "workloads[1].name", edit=_dup_workload),
    Case("duplicate-pool", "pools[1].name", edit=_dup_pool),
    Case("duplicate-priority-class", "priority_classes[4].name", edit=_dup_priority),
    Case("duplicate-injection", "test_classes.fault_recovery.injections[5].name", edit=_dup_injection),
    # ---- durations ----
    Case("zero-duration", "workloads[0].duration_seconds", 0),
    Case("hang-timeout-with-unit", "test_classes.fault_recovery.injections[3].hang.timeout_seconds", "30s",
         at="test_classes.fault_recovery.injections[3].timeout_seconds"),
    Case("negative-gate-timeout", "test_classes.queue_congestion.gate_timeout_seconds", -1),
    Case("zero-observe-seconds", "test_classes.fault_recovery.injections[1].missing_image.observe_seconds", 0,
         at="test_classes.fault_recovery.injections[1].observe_seconds"),
    # ---- windows ----
    Case("window-backwards", "window", edit=_window_backwards),
    Case("window-unknown-zone", "window.timezone", "Mars/Olympus"),
    Case("window-schedule-word", "window.schedule", "daily"),
    Case("window-start-not-a-time", "window.start", "next monday"),
    Case("window-missing", "window", edit=lambda d, _: delete_at(d, "window")),
    # ---- unknown keys ----
    Case("unknown-platform-key", "platform.schedular", "kueue"),
    Case("unknown-tenant-key", "tenants[0].quotas", {"gpus": 1}),
    Case("unknown-top-level-key", "reports", {}),
    # ---- URLs ----
    Case("prometheus-url-without-scheme", "evidence_sources.prometheus_url", "prom:9090"),
    Case("alertmanager-url-without-scheme", "evidence_sources.alertmanager_url", "alertmanager:9093"),
    Case("prometheus-url-ftp", "evidence_sources.prometheus_url", "ftp://prom:9090"),
    Case("alertmanager-url-without-host", "evidence_sources.alertmanager_url", "http://"),
    # ---- files ----
    Case("kubeconfig-missing", "platform.kubeconfig", "clusters/prod.kubeconfig"),
    Case("kubeconfig-is-a-directory", "platform.kubeconfig", edit=_kubeconfig_is_a_directory),
    Case("scorecard-missing", "report.scorecard", "reviews/scores.yaml"),
    # ---- sign-off ----
    Case("reviewer-airflow-user-with-a-space", "report.reviewers[0].airflow_user", "security reviewer"),
    Case("reviewer-airflow-user-empty", "report.reviewers[1].airflow_user", ""),
    Case("reviewer-airflow-user-with-a-colon", "report.reviewers[1].airflow_user", "platform:admin"),
    Case("one-airflow-user-for-two-reviewers", "report.reviewers[2].airflow_user", edit=_one_user_two_reviewers),
    # ---- unreadable YAML and wrong top-level types ----
    Case("yaml-unclosed-list", "(yaml)", text="tenants: [\n"),
    Case("yaml-bad-indentation", "(yaml)", text="name: x\n platform:\n  name: y\n bad\n"),
    Case("top-level-list", "(root)", text="- name: x\n- name: y\n"),
    Case("top-level-string", "(root)", text="just a sentence\n"),
    Case("empty-file", "(root)", text=""),
]


def write_case(case: Case, default_data: dict, tmp_path: Path) -> Path:
    plans = tmp_path / "plans"
    plans.mkdir(exist_ok=True)
    f = plans / "plan.yaml"
    if case.text is not None:
        f.write_text(case.text)
        return f
    data = copy.deepcopy(default_data)
    if case.edit is not None:
        case.edit(data, plans)
    else:
        set_at(data, case.at or case.path, case.value)
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    return f


def error_paths(lines: list[str]) -> list[str]:
    return [line.split(": ", 1)[0] for line in lines]


def test_the_corpus_covers_every_field_family_with_at_least_35_plans():
    assert len(CASES) >= 35 and len({c.id for c in CASES}) == len(CASES)


def test_the_unbroken_plan_of_the_corpus_loads(default_data, tmp_path):
    f = tmp_path / "plans" / "plan.yaml"
    f.parent.mkdir()
    f.write_text(yaml.safe_dump(default_data, sort_keys=False))
    assert load_plan(f).name == default_data["name"]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_plan_is_refused_naming_its_path_once(case, default_data, tmp_path):
    f = write_case(case, default_data, tmp_path)
    with pytest.raises(ConfigError) as info:
        load_plan(f)
    lines = info.value.errors
    assert case.path in error_paths(lines), f"expected an error at {case.path!r}, got {lines}"
    assert len(lines) == len(set(lines)), f"a problem reported more than once: {lines}"
