"""The pod builder tells a node without containers (KWOK's Stages) how each catalogue workload ends."""

from __future__ import annotations

import pytest

from gpupoc.podspec import build_pod
from gpupoc.podspec import labels as L
from gpupoc.podspec.lifecycle import go_duration, lifecycle_annotations


def annotations(plan, workload: str, tenant: str = "team-vision") -> dict:
    pod = build_pod(plan.workload(workload), plan.tenant(tenant), plan, run_id="r1", test_class="fault_recovery",
                    wave_gate=False)
    return pod.metadata.annotations


@pytest.mark.parametrize("workload, end, run, code", [
    ("v-train-1g", "exit", "15s", "0"),
    ("fail-exit", "exit", "5s", "3"),
    ("oom-kill", "oom", "10s", "137"),
])
def test_a_workload_that_ends_by_itself_carries_its_run_time_and_exit_code(plan, workload, end, run, code):
    a = annotations(plan, workload)
    assert (a[L.VIRTUAL_END], a[L.VIRTUAL_RUN], a[L.VIRTUAL_EXIT]) == (end, run, code)


@pytest.mark.parametrize("workload, end", [("hang", "hang"), ("missing-image", "image-pull")])
def test_a_workload_that_never_ends_by_itself_has_no_exit_code(plan, workload, end):
    a = annotations(plan, workload, "team-nlp")
    assert a[L.VIRTUAL_END] == end and L.VIRTUAL_EXIT not in a


def test_a_service_replica_runs_until_deleted(plan):
    assert lifecycle_annotations(plan.workload("svc-infer")) == {}


@pytest.mark.parametrize("seconds, text", [(15, "15s"), (15.0, "15s"), (0.5, "500ms"), (2.25, "2250ms")])
def test_run_times_are_go_durations(seconds, text):
    assert go_duration(seconds) == text
