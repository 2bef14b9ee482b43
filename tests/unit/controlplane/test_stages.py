"""kwok's config: the Stages read the annotations the pod builder writes, and never lose their selectors."""

from __future__ import annotations

from pathlib import Path

from gpupoc.controlplane.stages import kwok_config, stage_documents, write_kwok_config
from gpupoc.podspec import labels as L


def stage(name: str) -> dict:
    return next(s for s in stage_documents() if s["metadata"]["name"] == name)


def keys(s: dict) -> dict[str, dict]:
    return {e["key"]: e for e in s["spec"]["selector"]["matchExpressions"]}


def annotation_key(name: str) -> str:
    return f'.metadata.annotations["{name}"]'


def test_every_pod_stage_has_a_selector():
    pods = [s for s in stage_documents() if s["spec"]["resourceRef"]["kind"] == "Pod"]
    assert pods and all(s["spec"]["selector"]["matchExpressions"] for s in pods)


def test_only_pods_that_say_how_they_end_ever_end():
    end = keys(stage("gpupoc-pod-end"))[annotation_key(L.VIRTUAL_END)]
    assert end["operator"] == "In" and sorted(end["values"]) == ["exit", "oom"]


def test_the_run_time_comes_from_the_pods_annotation_without_jitter():
    delay = stage("gpupoc-pod-end")["spec"]["delay"]
    assert delay["durationFrom"]["expressionFrom"] == annotation_key(L.VIRTUAL_RUN)
    assert "jitterDurationMilliseconds" not in delay and "jitterDurationFrom" not in delay


def test_the_end_keeps_the_running_states_start_and_reads_the_exit_code():
    template = stage("gpupoc-pod-end")["spec"]["next"]["statusTemplate"]
    assert "startedAt: {{ or $origin.state.running.startedAt $now | Quote }}" in template
    assert f'"{L.VIRTUAL_EXIT}"' in template and "OOMKilled" in template and "phase: Failed" in template


def test_a_missing_image_never_starts_and_backs_off():
    ready = keys(stage("gpupoc-pod-ready"))[annotation_key(L.VIRTUAL_END)]
    assert ready == {"key": annotation_key(L.VIRTUAL_END), "operator": "NotIn", "values": ["image-pull"]}
    assert "ErrImagePull" in stage("gpupoc-pod-image-pull-failed")["spec"]["next"]["statusTemplate"]
    assert "ImagePullBackOff" in stage("gpupoc-pod-image-pull-backoff")["spec"]["next"]["statusTemplate"]


def test_a_running_pod_deleted_waits_for_its_grace_period_unless_its_program_stops_on_sigterm():
    delay = stage("gpupoc-pod-delete-running")["spec"]["delay"]
    assert delay["durationFrom"]["expressionFrom"] == ".metadata.deletionTimestamp"
    for name in ("gpupoc-pod-delete-sigterm", "gpupoc-pod-delete-process"):
        assert "durationFrom" not in stage(name)["spec"]["delay"] and stage(name)["spec"]["next"] == {"delete": True}


def test_exactly_one_deletion_stage_matches_each_running_pod():
    """kwok picks among matching stages by weight: the three must never match the same pod."""
    def operators(name):
        k = keys(stage(name))
        return (k[annotation_key(L.VIRTUAL_END)]["operator"],
                k.get(annotation_key(L.PROCESS_RUNNER), {}).get("operator", "any"))

    cases = {"gpupoc-pod-delete-sigterm": ("Exists", "any"), "gpupoc-pod-delete-process": ("DoesNotExist", "Exists"),
             "gpupoc-pod-delete-running": ("DoesNotExist", "DoesNotExist")}
    assert {name: operators(name) for name in cases} == cases


def test_the_config_ends_with_a_default_empty_log(tmp_path):
    path = write_kwok_config(tmp_path / "kwok.yaml", tmp_path / "logs")
    docs = kwok_config(tmp_path / "logs")
    assert docs[-1]["kind"] == "ClusterLogs" and "selector" not in docs[-1]["spec"]
    assert Path(docs[-1]["spec"]["logs"][0]["logsFile"]).read_text() == ""
    assert path.read_text().count("kind: Stage") == len(stage_documents())


def test_a_pod_the_process_runner_runs_is_ended_by_its_process_not_its_run_time():
    end = keys(stage("gpupoc-pod-end"))[annotation_key(L.PROCESS_RUNNER)]
    assert end["operator"] == "DoesNotExist"
    process = stage("gpupoc-pod-process")
    assert keys(process)[annotation_key(L.PROCESS_RUNNER)]["operator"] == "Exists"
    assert "statusTemplate" not in process["spec"]["next"]  # it replaces the queued end and changes nothing


def test_a_container_with_a_readiness_probe_starts_unready():
    template = stage("gpupoc-pod-ready")["spec"]["next"]["statusTemplate"]
    assert "{{ if $probed }}" in template and "ready: {{ if .readinessProbe }}false{{ else }}true{{ end }}" in template
