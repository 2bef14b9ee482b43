"""Report the simulated GPU utilization and memory this workload claims, once a second, to a file.

The kubelet of the simulated cluster reads ``$GPUPOC_TELEMETRY_FILE`` and the metrics endpoint serves the
values as dcgm-exporter gauges. The file is rewritten atomically (write a temporary file, then rename).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from enum import Enum
from pathlib import Path


class Phase(str, Enum):
    IDLE = "idle"  # util 0, no memory
    LOADING = "loading"  # memory filling up, little compute
    TRAIN = "train"  # full utilization with wobble
    EVAL = "eval"  # lower utilization
    SERVE = "serve"  # inference: moderate utilization
    STALLED = "stalled"  # hung: memory held, util 0


def write_atomic(path: Path, payload: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(payload))
    os.replace(tmp, path)


class TelemetryReporter:
    """A daemon thread that writes ``{"util", "mem_mib", "ts", "phase"}`` every ``interval`` seconds."""

    def __init__(self, path: str | None, util: float, mem_mib: float, interval: float = 1.0, seed: int = 0):
        self.path = Path(path) if path else None
        self.util = util
        self.mem_mib = mem_mib
        self.interval = interval
        self.phase = Phase.IDLE
        self._rng = random.Random(seed)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> tuple[float, float]:
        """(util %, memory MiB) for the current phase, with a realistic wobble."""
        r = self._rng
        if self.phase is Phase.IDLE:
            return 0.0, 0.0
        if self.phase is Phase.STALLED:
            return 0.0, self.mem_mib
        if self.phase is Phase.LOADING:
            return min(100.0, r.uniform(0, 5)), self.mem_mib * r.uniform(0.3, 0.6)
        base = {Phase.TRAIN: 1.0, Phase.EVAL: 0.45, Phase.SERVE: 0.6}[self.phase]
        util = self.util * base + r.gauss(0, 3.0)
        mem = self.mem_mib * (1.0 if self.phase is not Phase.SERVE else 0.7) * r.uniform(0.97, 1.0)
        return max(0.0, min(100.0, util)), max(0.0, mem)

    def set_phase(self, phase: Phase) -> None:
        self.phase = phase
        self.write()

    def write(self) -> None:
        if self.path is None:
            return
        util, mem = self.sample()
        try:
            write_atomic(self.path, {"util": round(util, 1), "mem_mib": round(mem, 1), "ts": time.time(),
                                     "phase": self.phase.value})
        except OSError:
            pass  # telemetry is best effort: a full disk must not kill the training

    def start(self) -> "TelemetryReporter":
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.write()
            self._thread = threading.Thread(target=self._loop, name="telemetry", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.write()

    def stop(self) -> None:
        """Stop reporting and leave a final idle sample (the GPU is released)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self.phase = Phase.IDLE
        self.write()
