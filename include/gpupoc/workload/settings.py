"""Command-line options of the workload program, each with an environment-variable fallback."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Sequence


class Mode(str, Enum):
    TRAIN = "train"  # train for --duration seconds, write the artifact, exit 0
    INFER = "infer"  # serve a loop of predictions for --duration seconds, exit 0
    IDLE = "idle"  # hold the GPU doing nothing (util 0) for --duration seconds, exit 0
    FAIL = "fail"  # train a little, then raise an error and exit --exit-code
    HANG = "hang"  # log, then sleep forever
    OOM = "oom"  # allocate real memory in steps until killed (capped at --oom-mib)
    LONG = "long"  # train for a long time (at least LONG_SECONDS)
    GPUMEM = "gpumem"  # allocate --gpu-mem-mib of device memory, hold it --duration seconds (gpumem.py)


LONG_SECONDS = 24 * 3600.0


@dataclass(frozen=True)
class Settings:
    """Resolved options: command line first, then WORKLOAD_* environment variables, then defaults."""

    mode: Mode = Mode.TRAIN
    duration: float = 10.0
    exit_code: int = 1
    gpu_util: float = 85.0
    gpu_mem_mib: float = 30000.0
    oom_mib: int = 2048
    step_sleep: float = 0.05
    seed: int = 0
    artifact: str | None = None  # infer: the model to load (file, producer directory, or producer pod name)
    artifact_dir: str | None = None
    telemetry_file: str | None = None
    pod: str = "local"
    namespace: str = "default"
    node: str = ""
    visible_devices: str = ""

    @property
    def run_seconds(self) -> float:
        """How long the mode runs: ``long`` runs for at least a day."""
        return max(self.duration, LONG_SECONDS) if self.mode is Mode.LONG else self.duration


def _env_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"gpupoc-workload: {name}: expected a number, got {raw!r}; set it like {name}=30") from None


def build_parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gpupoc-workload",
        description="Train or serve a small numpy model and report simulated GPU telemetry.",
    )
    modes = [m.value for m in Mode]
    env_mode = env.get("WORKLOAD_MODE") or "train"
    if env_mode not in modes:
        raise SystemExit(f"gpupoc-workload: WORKLOAD_MODE: expected one of {', '.join(modes)}, got {env_mode!r}")
    p.add_argument("--mode", choices=modes, default=env_mode, help="what to do (env WORKLOAD_MODE; default train)")
    p.add_argument("--duration", type=float, default=_env_float(env, "WORKLOAD_DURATION_SECONDS", 10.0),
                   help="seconds to run (env WORKLOAD_DURATION_SECONDS; default 10)")
    p.add_argument("--exit-code", type=int, default=int(_env_float(env, "WORKLOAD_EXIT_CODE", 1)),
                   help="exit code of the fail mode (env WORKLOAD_EXIT_CODE; default 1)")
    p.add_argument("--gpu-util", type=float, default=_env_float(env, "WORKLOAD_GPU_UTIL", 85.0),
                   help="GPU utilization %% claimed while training (env WORKLOAD_GPU_UTIL; default 85)")
    p.add_argument("--gpu-mem-mib", type=float, default=_env_float(env, "WORKLOAD_GPU_MEM_MIB", 30000.0),
                   help="GPU memory MiB claimed while training (env WORKLOAD_GPU_MEM_MIB; default 30000)")
    p.add_argument("--oom-mib", type=int, default=int(_env_float(env, "WORKLOAD_OOM_MIB", 2048)),
                   help="oom mode: never allocate more host memory than this (env WORKLOAD_OOM_MIB; default 2048)")
    p.add_argument("--step-sleep", type=float, default=_env_float(env, "WORKLOAD_STEP_SLEEP", 0.05),
                   help="pause between training steps and gpumem's allocation steps, keeps the CPU cost low "
                        "(env WORKLOAD_STEP_SLEEP; default 0.05 s)")
    p.add_argument("--seed", type=int, default=int(_env_float(env, "WORKLOAD_SEED", 0)))
    p.add_argument("--artifact", default=env.get("WORKLOAD_ARTIFACT") or None,
                   help="infer mode: load this model (a model.npz, a manifest.json, a producer's directory, or a "
                        "producer pod name under $GPUPOC_ARTIFACT_DIR) and print its sha256 (env WORKLOAD_ARTIFACT)")
    return p


def parse_settings(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Parse ``argv`` with fallbacks from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env
    args = build_parser(env).parse_args(argv)
    if args.duration < 0:
        raise SystemExit(f"gpupoc-workload: --duration: expected seconds >= 0, got {args.duration}")
    if not 0 <= args.gpu_util <= 100:
        raise SystemExit(f"gpupoc-workload: --gpu-util: expected a percentage 0..100, got {args.gpu_util}")
    return Settings(
        mode=Mode(args.mode),
        duration=args.duration,
        exit_code=args.exit_code,
        gpu_util=args.gpu_util,
        gpu_mem_mib=max(0.0, args.gpu_mem_mib),
        oom_mib=max(1, args.oom_mib),
        step_sleep=max(0.0, args.step_sleep),
        seed=args.seed,
        artifact=args.artifact,
        artifact_dir=env.get("GPUPOC_ARTIFACT_DIR") or None,
        telemetry_file=env.get("GPUPOC_TELEMETRY_FILE") or None,
        pod=env.get("POD_NAME") or env.get("HOSTNAME") or "local",
        namespace=env.get("POD_NAMESPACE") or "default",
        node=env.get("NODE_NAME", ""),
        visible_devices=env.get("NVIDIA_VISIBLE_DEVICES", ""),
    )
