"""Which containers on KWOK nodes run as processes, whose exit ends its pod, and the status written then."""

from __future__ import annotations

import datetime as dt
import sys

import pytest

from gpupoc.controlplane.runner_pods import (
    ContainerProcess, memory_limit_bytes, owns_end, process_argv, terminal_status,
)
from gpupoc.podspec import labels as L


def pod(restart: str = "Never", end: str | None = "exit", containers: int = 1, running_since: str | None = None):
    status = {"containerStatuses": [{"name": "base", "restartCount": 0,
                                     "state": {"running": {"startedAt": running_since}} if running_since else {}}]}
    return {"metadata": {"annotations": {L.VIRTUAL_END: end} if end else {}},
            "spec": {"restartPolicy": restart,
                     "containers": [{"name": "base" if i == 0 else f"c{i}", "image": "gpupoc/workload:1.0"}
                                    for i in range(containers)]},
            "status": status}


def test_the_workload_image_runs_its_entrypoint_with_the_pods_args():
    argv = process_argv({"image": "gpupoc/workload:1.0", "args": ["--mode", "train"]}, {})
    assert argv == [sys.executable, "-m", "gpupoc.workload", "--mode", "train"]


def test_a_virtual_replica_asked_to_serve_runs_the_workloads_serve_mode():
    argv = process_argv({"image": "gpupoc/virtual:1.0", "args": ["serve", "--port", "9000"]}, {})
    assert argv == [sys.executable, "-m", "gpupoc.workload", "serve", "--port", "9000"]


@pytest.mark.parametrize("container", [{"image": "gpupoc/virtual:1.0"}, {"image": "busybox:1.36", "command": ["sh"]},
                                       {"image": "registry.invalid/x:1"}])
def test_other_containers_run_no_process(container):
    assert process_argv(container, {}) is None


def test_a_pod_that_is_not_restarted_is_ended_by_its_process():
    assert owns_end(pod())
    assert owns_end(pod(end=None))  # the load pod: no run time of its own


@pytest.mark.parametrize("kw", [{"restart": "Always"}, {"end": "oom"}, {"end": "image-pull"}, {"containers": 2}])
def test_restarted_oom_image_pull_and_multi_container_pods_end_as_kwok_plays_them(kw):
    assert not owns_end(pod(**kw))


def test_the_end_keeps_the_start_and_names_the_exit():
    at = dt.datetime(2026, 12, 6, 5, 16, 40, tzinfo=dt.timezone.utc)
    out = terminal_status(pod(running_since="2026-12-06T05:16:35Z"), 5, at)["status"]
    term = out["containerStatuses"][0]["state"]["terminated"]
    assert out["phase"] == "Failed" and (term["exitCode"], term["reason"]) == (5, "Error")
    assert (term["startedAt"], term["finishedAt"]) == ("2026-12-06T05:16:35Z", "2026-12-06T05:16:40Z")
    assert {c["type"]: (c["status"], c["reason"]) for c in out["conditions"]} == {
        "Ready": ("False", "PodFailed"), "ContainersReady": ("False", "PodFailed")}


@pytest.mark.parametrize("code,phase,reason", [(0, "Succeeded", "Completed"), (137, "Failed", "OOMKilled")])
def test_the_exit_code_gives_the_phase_and_reason(code, phase, reason):
    out = terminal_status(pod(), code, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))["status"]
    assert (out["phase"], out["containerStatuses"][0]["state"]["terminated"]["reason"]) == (phase, reason)


def test_the_memory_limit_is_read_from_the_containers_limits():
    assert memory_limit_bytes({"resources": {"limits": {"memory": "1Gi"}}}) == 1 << 30
    assert memory_limit_bytes({"resources": {"requests": {"memory": "1Gi"}}}) is None
    assert memory_limit_bytes({"resources": {"limits": {"memory": "lots"}}}) is None


def test_a_process_above_its_memory_limit_is_killed_and_exits_137(tmp_path):
    proc = ContainerProcess.spawn("ns", "p", "uid", "base", [sys.executable, "-c", "import time; time.sleep(60)"],
                                  {}, tmp_path / "work", tmp_path / "base.log", owns=True)
    proc.limit_bytes = 1  # any process holds more
    assert proc.enforce_memory_limit() and proc.exit_code() == 137


def test_the_processs_lines_are_written_as_cri_log_lines(tmp_path):
    proc = ContainerProcess.spawn("ns", "p", "uid", "base", [sys.executable, "-c", "print('hello')"], {},
                                  tmp_path / "work", tmp_path / "base.log", owns=True)
    proc.proc.wait()
    proc.drain()
    text = (tmp_path / "base.log").read_text()
    assert text.endswith(" stdout F hello\n") and text.count("\n") == 1, text
