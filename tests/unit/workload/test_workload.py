"""The workload program: options, model, artifact, telemetry, and each mode run as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpupoc.workload import modes
from gpupoc.workload.artifact import verify_artifact, write_artifact
from gpupoc.workload.model import Mlp, synthetic_data
from gpupoc.workload.settings import LONG_SECONDS, Mode, parse_settings
from gpupoc.workload.telemetry import Phase, TelemetryReporter
from tests.waiting import wait_for

pytestmark = pytest.mark.timeout(300)  # a hang guard for the workload processes


def run_workload(tmp_path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 30):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKLOAD_", "GPUPOC_"))}
    full_env.update({"GPUPOC_ARTIFACT_DIR": str(tmp_path / "art"), "GPUPOC_TELEMETRY_FILE": str(tmp_path / "t.json"),
                     "POD_NAME": "job-1", "POD_NAMESPACE": "team-nlp", "NVIDIA_VISIBLE_DEVICES": "GPU-a,GPU-b",
                     **(env or {})})
    return subprocess.run([sys.executable, "-m", "gpupoc.workload", *args], env=full_env, capture_output=True,
                          text=True, timeout=timeout)


# -- options -----------------------------------------------------------------------------------------
def test_settings_take_env_fallbacks_and_the_command_line_wins():
    env = {"WORKLOAD_MODE": "infer", "WORKLOAD_DURATION_SECONDS": "7", "WORKLOAD_GPU_UTIL": "40",
           "WORKLOAD_GPU_MEM_MIB": "1000", "WORKLOAD_EXIT_CODE": "5", "POD_NAME": "p", "POD_NAMESPACE": "ns"}
    s = parse_settings([], env)
    assert (s.mode, s.duration, s.gpu_util, s.gpu_mem_mib, s.exit_code) == (Mode.INFER, 7, 40, 1000, 5)
    assert (s.pod, s.namespace) == ("p", "ns")
    s = parse_settings(["--mode", "fail", "--duration", "2", "--exit-code", "9"], env)
    assert (s.mode, s.duration, s.exit_code) == (Mode.FAIL, 2, 9)


def test_settings_refuse_a_bad_env_value_naming_it():
    with pytest.raises(SystemExit, match=r"WORKLOAD_DURATION_SECONDS: expected a number, got 'ten'"):
        parse_settings([], {"WORKLOAD_DURATION_SECONDS": "ten"})


def test_settings_refuse_an_unknown_mode_listing_the_known_ones():
    with pytest.raises(SystemExit, match=r"WORKLOAD_MODE: expected one of train, infer, .*got 'sprint'"):
        parse_settings([], {"WORKLOAD_MODE": "sprint"})


def test_long_mode_runs_for_at_least_a_day():
    assert parse_settings(["--mode", "long", "--duration", "5"], {}).run_seconds == LONG_SECONDS


# -- model, artifact, telemetry --------------------------------------------------------------------
def test_training_learns_the_synthetic_task():
    x, y = synthetic_data(2048, 0)
    xv, yv = synthetic_data(512, 1)
    model = Mlp.init(0)
    _, before = model.evaluate(xv, yv)
    rng = __import__("numpy").random.default_rng(0)
    for _ in range(200):
        idx = rng.integers(0, len(x), 128)
        model.step(x[idx], y[idx], 0.2)
    loss, after = model.evaluate(xv, yv)
    assert after > 0.8 and after > before + 0.1, (before, after)


def test_artifact_manifest_records_sha256_and_producer(tmp_path):
    art = write_artifact(tmp_path, "pod-a", "team-x", Mlp.init(0).arrays(), {"mode": "train"})
    manifest = json.loads(art.manifest.read_text())
    assert manifest["sha256"] == art.sha256 and manifest["producer_pod"] == "pod-a"
    assert manifest["namespace"] == "team-x" and manifest["created"].endswith("Z")
    assert verify_artifact(art.manifest)
    art.path.write_bytes(b"tampered")
    assert not verify_artifact(art.manifest)


def test_telemetry_follows_the_phase(tmp_path):
    rep = TelemetryReporter(str(tmp_path / "t.json"), util=80, mem_mib=2000, seed=1)
    rep.set_phase(Phase.TRAIN)
    train = [rep.sample() for _ in range(50)]
    rep.set_phase(Phase.EVAL)
    ev = [rep.sample() for _ in range(50)]
    assert 70 < sum(u for u, _ in train) / 50 < 90 and all(1900 <= m <= 2000 for _, m in train)
    assert sum(u for u, _ in ev) / 50 < 50
    assert len({u for u, _ in train}) > 10, "utilization wobbles"
    rep.set_phase(Phase.IDLE)
    data = json.loads((tmp_path / "t.json").read_text())
    assert (data["util"], data["mem_mib"]) == (0.0, 0.0) and data["ts"] > 0


# -- modes as real processes -----------------------------------------------------------------------
def test_train_mode_logs_progress_writes_artifact_and_telemetry(tmp_path):
    r = run_workload(tmp_path, "--duration", "0.3", env={"WORKLOAD_GPU_UTIL": "70"})
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert "NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b" in out
    assert any(line.startswith("epoch=1 ") and "loss=" in line and "throughput=" in line for line in out)
    manifest = json.loads((tmp_path / "art" / "job-1" / "manifest.json").read_text())
    assert manifest["gpus"] == ["GPU-a", "GPU-b"] and manifest["namespace"] == "team-nlp"
    assert any(line.startswith("artifact: ") and manifest["sha256"] in line for line in out)
    final = json.loads((tmp_path / "t.json").read_text())
    assert final["util"] == 0.0, "the telemetry ends idle"


def test_fail_mode_exits_with_the_chosen_code_and_a_traceback(tmp_path):
    r = run_workload(tmp_path, "--mode", "fail", "--duration", "0.2", "--exit-code", "3")
    assert r.returncode == 3
    assert "Traceback (most recent call last)" in r.stderr and "TrainingDiverged" in r.stderr
    assert not (tmp_path / "art" / "job-1").exists(), "a failed run leaves no artifact"


def test_idle_mode_reports_zero_utilization(tmp_path):
    r = run_workload(tmp_path, "--mode", "idle", "--duration", "0.2")
    assert r.returncode == 0
    assert json.loads((tmp_path / "t.json").read_text())["util"] == 0.0


def test_infer_mode_serves_predictions(tmp_path):
    r = run_workload(tmp_path, "--mode", "infer", "--duration", "1.2")
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("served=") and "p99_latency_ms=" in line for line in r.stdout.splitlines())


def test_oom_mode_never_allocates_beyond_its_cap(tmp_path):
    r = run_workload(tmp_path, "--mode", "oom", "--duration", "0", env={"WORKLOAD_OOM_MIB": "128"})
    assert r.returncode == 1
    assert "allocated 128 MiB" in r.stdout and "allocated 192 MiB" not in r.stdout
    assert "MemoryError" in r.stderr


def test_hang_mode_hangs_until_sigterm_then_exits_143(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKLOAD_", "GPUPOC_"))}
    proc = subprocess.Popen([sys.executable, "-m", "gpupoc.workload", "--mode", "hang", "--duration", "0.2"],
                            env=env, stdout=subprocess.PIPE, text=True)
    try:
        wait_for("hang mode to reach its all-reduce", proc.stdout.readline, lambda line: "all-reduce" in line,
                 step_seconds=20, poll=0.01)
        time.sleep(0.3)  # then it must still run: a slower machine only makes this check stronger
        assert proc.poll() is None, "hang mode must not exit on its own"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 143
        assert "received SIGTERM: stopping" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_infer_mode_loads_the_producers_artifact_and_prints_its_sha256(tmp_path):
    train = run_workload(tmp_path, "--duration", "0.2")
    assert train.returncode == 0, train.stderr
    sha = json.loads((tmp_path / "art" / "job-1" / "manifest.json").read_text())["sha256"]
    r = run_workload(tmp_path, "--mode", "infer", "--duration", "0.2", "--artifact", "job-1",
                     env={"POD_NAME": "eval-1"})
    assert r.returncode == 0, r.stderr
    loaded = next(line for line in r.stdout.splitlines() if line.startswith("loaded model from "))
    assert f"sha256 {sha}, manifest match: yes" in loaded
    assert not any(line.startswith("artifact: ") for line in r.stdout.splitlines()), "a consumer writes no artifact"


def test_infer_mode_refuses_a_missing_or_tampered_artifact(tmp_path):
    r = run_workload(tmp_path, "--mode", "infer", "--duration", "0.2", "--artifact", "nobody")
    assert r.returncode == 1 and "artifact 'nobody' not found" in r.stderr
    run_workload(tmp_path, "--duration", "0.2")
    (tmp_path / "art" / "job-1" / "model.npz").write_bytes(
        (tmp_path / "art" / "job-1" / "model.npz").read_bytes() + b"x")
    r = run_workload(tmp_path, "--mode", "infer", "--duration", "0.2", "--artifact", "job-1")
    assert r.returncode == 1 and "differs from its manifest" in r.stderr
