"""What each mode does. Every loop sleeps between steps: many pods share two CPU cores."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from gpupoc.workload.artifact import load_artifact, resolve_artifact, write_artifact
from gpupoc.workload.gpumem import run_gpumem
from gpupoc.workload.model import Mlp, synthetic_data
from gpupoc.workload.settings import Settings
from gpupoc.workload.telemetry import Phase, TelemetryReporter

TRAIN_SAMPLES = 2048
VAL_SAMPLES = 512
BATCH = 128
LR = 0.2
OOM_STEP_MIB = 64
OOM_STEP_SECONDS = 0.25


class TrainingDiverged(RuntimeError):
    """The planted failure of ``--mode fail``."""


@dataclass
class TrainResult:
    model: Mlp
    epochs: int
    steps: int
    loss: float
    accuracy: float


def log(line: str) -> None:
    print(line, flush=True)


def _sleep_until(deadline: float, tick: float = 1.0) -> None:
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(tick, left))


def train(s: Settings, rep: TelemetryReporter, seconds: float,
          on_epoch: Callable[[int, int], None] | None = None) -> TrainResult:
    """Minibatch SGD until ``seconds`` have passed (at least one epoch); one log line per epoch."""
    x, y = synthetic_data(TRAIN_SAMPLES, s.seed)
    xv, yv = synthetic_data(VAL_SAMPLES, s.seed + 1)
    model = Mlp.init(s.seed)
    rng = np.random.default_rng(s.seed)
    rep.set_phase(Phase.LOADING)
    log(f"loaded {TRAIN_SAMPLES} training and {VAL_SAMPLES} validation samples; model 16-32-2 MLP")
    deadline = time.monotonic() + seconds
    epoch = steps = 0
    val_loss, acc = model.evaluate(xv, yv)
    while True:
        epoch += 1
        rep.set_phase(Phase.TRAIN)
        t0 = time.monotonic()
        losses = []
        seen = 0
        for _ in range(TRAIN_SAMPLES // BATCH):
            idx = rng.integers(0, TRAIN_SAMPLES, BATCH)
            losses.append(model.step(x[idx], y[idx], LR))
            steps += 1
            seen += len(idx)
            time.sleep(s.step_sleep)
            if time.monotonic() >= deadline and epoch > 1:
                break
        rep.phase = Phase.EVAL
        val_loss, acc = model.evaluate(xv, yv)
        elapsed = max(time.monotonic() - t0, 1e-6)
        log(f"epoch={epoch} step={steps} loss={float(np.mean(losses)):.4f} val_loss={val_loss:.4f} "
            f"accuracy={acc:.4f} throughput={seen / elapsed:.1f} samples/s")
        if on_epoch is not None:
            on_epoch(epoch, steps)
        if time.monotonic() >= deadline:
            break
    return TrainResult(model, epoch, steps, val_loss, acc)


def run_train(s: Settings, rep: TelemetryReporter) -> int:
    result = train(s, rep, s.run_seconds)
    rep.set_phase(Phase.IDLE)
    log(f"training finished: epochs={result.epochs} steps={result.steps} val_loss={result.loss:.4f} "
        f"accuracy={result.accuracy:.4f}")
    if s.artifact_dir:
        art = write_artifact(s.artifact_dir, s.pod, s.namespace, result.model.arrays(), {
            "mode": s.mode.value, "node": s.node, "gpus": [g for g in s.visible_devices.split(",") if g],
            "epochs": result.epochs, "steps": result.steps,
            "val_loss": round(result.loss, 6), "accuracy": round(result.accuracy, 6),
        })
        log(f"artifact: {art.path} sha256={art.sha256} size={art.size_bytes} manifest={art.manifest}")
    else:
        log("artifact: not written (GPUPOC_ARTIFACT_DIR is not set)")
    return 0


def run_fail(s: Settings, rep: TelemetryReporter) -> int:
    state = {"epoch": 0, "step": 0}

    def remember(epoch: int, step: int) -> None:
        state.update(epoch=epoch, step=step)

    train(s, rep, min(s.duration, 1.5), on_epoch=remember)
    raise TrainingDiverged(
        f"loss became NaN at epoch {state['epoch'] + 1} step {state['step'] + 1} "
        f"(planted failure: --mode fail, exit code {s.exit_code})"
    )


def run_infer(s: Settings, rep: TelemetryReporter) -> int:
    model = Mlp.init(s.seed)
    if s.artifact:
        path = resolve_artifact(s.artifact, s.artifact_dir)
        arrays, digest, matches = load_artifact(path)
        model = Mlp(**{k: arrays[k] for k in ("w1", "b1", "w2", "b2")})
        verdict = {True: "yes", False: "NO", None: "no manifest"}[matches]
        log(f"loaded model from {path} (sha256 {digest}, manifest match: {verdict})")
        if matches is False:
            raise ValueError(f"artifact {path}: sha256 {digest} differs from its manifest; refusing to serve it")
    rng = np.random.default_rng(s.seed)
    rep.set_phase(Phase.SERVE)
    log("model ready; serving predictions")
    deadline = time.monotonic() + s.run_seconds
    served = 0
    latencies: list[float] = []
    next_report = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        batch = rng.normal(size=(32, 16)).astype(np.float32)
        t0 = time.perf_counter()
        model.predict(batch)
        latencies.append((time.perf_counter() - t0) * 1000)
        served += len(batch)
        time.sleep(max(s.step_sleep, 0.02))
        if time.monotonic() >= next_report:
            p50, p99 = np.percentile(latencies, [50, 99])
            log(f"served={served} requests p50_latency_ms={p50:.3f} p99_latency_ms={p99:.3f}")
            latencies.clear()
            next_report += 1.0
    rep.set_phase(Phase.IDLE)
    log(f"inference finished: served={served} requests")
    return 0


def run_idle(s: Settings, rep: TelemetryReporter) -> int:
    rep.set_phase(Phase.IDLE)
    log(f"holding the GPU(s) idle for {s.run_seconds:g} s")
    _sleep_until(time.monotonic() + s.run_seconds)
    log("idle period over")
    return 0


def run_hang(s: Settings, rep: TelemetryReporter) -> int:
    train(s, rep, min(s.duration, 1.0))
    rep.set_phase(Phase.STALLED)
    log("waiting for the all-reduce from rank 1 (no timeout set)")
    while True:
        time.sleep(3600)


def run_oom(s: Settings, rep: TelemetryReporter) -> int:
    rep.set_phase(Phase.LOADING)
    blocks: list[np.ndarray] = []
    total = 0
    log(f"allocating host memory in {OOM_STEP_MIB} MiB steps (cap {s.oom_mib} MiB)")
    while total + OOM_STEP_MIB <= s.oom_mib:
        blocks.append(np.ones(OOM_STEP_MIB * 2**20 // 8))  # ones: the pages are really touched
        total += OOM_STEP_MIB
        log(f"allocated {total} MiB")
        time.sleep(OOM_STEP_SECONDS)
    rep.set_phase(Phase.STALLED)
    log(f"reached the cap of {s.oom_mib} MiB without being killed: is limits.memory set?")
    _sleep_until(time.monotonic() + s.duration)
    raise MemoryError(f"oom mode: held {total} MiB for {s.duration:g} s without being OOM-killed")


RUNNERS: dict[str, Callable[[Settings, TelemetryReporter], int]] = {
    "train": run_train,
    "long": run_train,
    "infer": run_infer,
    "idle": run_idle,
    "fail": run_fail,
    "hang": run_hang,
    "oom": run_oom,
    "gpumem": run_gpumem,
}


def eprint(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
