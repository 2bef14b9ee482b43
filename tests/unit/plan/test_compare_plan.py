"""plans/compare.yaml, the plan of `make compare`, is the default plan with one gang in the congestion wave and
the Kueue candidate's queues (for real Kueue, `make compare CLUSTER=kwok`), nothing else changed
(docs/comparison.md): an edit of default.yaml that compare.yaml lacks fails here."""

from __future__ import annotations

import copy

import pytest
import yaml

from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.platforms import comparable_hash
from gpupoc.sim.config import CLUSTERS_DIR

COMPARE_PLAN = DEFAULT_PLAN.parent / "compare.yaml"
GANG = "v-train-2x8g"


def raw(path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_the_compare_plan_is_the_default_plan_with_one_gang_in_the_congestion_wave_and_kueues_queues():
    default, compare = raw(DEFAULT_PLAN), raw(COMPARE_PLAN)
    gang = next(w for w in compare["workloads"] if w["name"] == GANG)
    assert gang["replicas"] == 2 and gang["priority_class"] == "gpupoc-high" and gang["pool"] == "training"
    assert "cluster" not in default, "default.yaml declares a cluster block: compare.yaml must hold it too"
    expected = copy.deepcopy(default)
    expected.update(name=compare["name"], description=compare["description"])
    expected["cluster"] = {"runner_service_account": "gpupoc-runner",
                           "queues": {"kueue": raw(CLUSTERS_DIR / "kueue.yaml")["kueue"]}}
    at = next(i for i, w in enumerate(default["workloads"]) if w["name"] == "v-infer-2g") + 1
    expected["workloads"].insert(at, gang)
    wave = expected["test_classes"]["queue_congestion"]["wave"]
    eight = wave.index({"workload": "v-train-8g", "tenant": "team-vision", "count": 2})
    wave[eight] = {"workload": GANG, "tenant": "team-vision", "count": 1}
    assert compare == expected, "plans/compare.yaml differs from default.yaml in more than the gang and Kueue's queues"


def test_real_kueue_gets_the_queues_the_simulated_kueue_mode_is_judged_with():
    """On the real control plane the compare plan's manifests make Kueue's queues; on the simulated cluster its
    Kueue mode ships them: the two must be one setup, or the Kueue column compares two different queue setups."""
    declared = raw(COMPARE_PLAN)["cluster"]["queues"]["kueue"]
    assert declared == raw(CLUSTERS_DIR / "kueue.yaml")["kueue"]
    assert declared == raw(DEFAULT_PLAN.parent / "kueue.yaml")["cluster"]["queues"]["kueue"]
    plan = load_plan(f"{COMPARE_PLAN}#kueue")
    assert {cq.name for cq in plan.cluster.queues.kueue.cluster_queues} >= {"team-vision-training", "team-nlp-training"}


def test_the_gang_asks_what_the_two_jobs_it_replaces_asked():
    default, compare = raw(DEFAULT_PLAN), raw(COMPARE_PLAN)
    eight = next(w for w in default["workloads"] if w["name"] == "v-train-8g")
    gang = next(w for w in compare["workloads"] if w["name"] == GANG)
    assert gang["gpus"] * gang["replicas"] == eight["gpus"] * 2
    assert (gang["priority_class"], gang["duration_seconds"]) == (eight["priority_class"], eight["duration_seconds"])


@pytest.mark.parametrize("name", ["kube", "kueue", "volcano", "kai"])
def test_each_candidate_runs_the_same_compare_plan(name):
    assert comparable_hash(load_plan(f"{COMPARE_PLAN}#{name}")) == comparable_hash(load_plan(COMPARE_PLAN))
    assert load_plan(f"{COMPARE_PLAN}#{name}").platform_choice == name
