"""``--mode gpumem``: allocate ``--gpu-mem-mib`` of device memory on the first visible card in steps
(``--step-sleep`` apart), hold it for ``--duration`` seconds, free it. An allocation the card or HAMi-core refuses
ends the program as PyTorch's caching allocator does: ``torch.OutOfMemoryError: CUDA out of memory.`` and exit
code 1."""

from __future__ import annotations

import os
import time

from gpupoc.workload.cuda import Context, CudaError
from gpupoc.workload.settings import Settings
from gpupoc.workload.telemetry import Phase, TelemetryReporter

STEP_MIB = 256


class CudaOutOfMemory(RuntimeError):
    """What the workload raises on CUDA_ERROR_OUT_OF_MEMORY (``torch.OutOfMemoryError``'s wording)."""


def run_gpumem(s: Settings, rep: TelemetryReporter) -> int:
    ctx = Context(os.environ, f"{s.namespace}/{s.pod}")
    if not ctx.devices:
        raise CudaOutOfMemory("no CUDA device visible: NVIDIA_VISIBLE_DEVICES names no GPU")
    dev = ctx.devices[0]
    target = int(s.gpu_mem_mib)
    free, total = ctx.mem_get_info(dev)
    print(f"device 0 {dev.uuid}: {total} MiB total, {free} MiB free; allocating {target} MiB in {STEP_MIB} MiB "
          "steps", flush=True)
    rep.util, rep.mem_mib = s.gpu_util, 0.0
    rep.set_phase(Phase.STALLED)
    held = 0
    try:
        while held < target:
            step = min(STEP_MIB, target - held)
            try:
                ctx.mem_alloc(dev, step)
            except CudaError as exc:
                free, total = ctx.mem_get_info(dev)
                raise CudaOutOfMemory(
                    f"CUDA out of memory. Tried to allocate {step}.00 MiB. GPU 0 has a total capacity of "
                    f"{total} MiB of which {free} MiB is free. This process has {held} MiB memory in use. "
                    f"({exc.code})") from None
            held += step
            rep.mem_mib = float(held)
            rep.write()
            time.sleep(s.step_sleep)
        print(f"holding {held} MiB for {s.duration:g} s", flush=True)
        deadline = time.monotonic() + s.duration
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        return 0
    finally:
        ctx.release()
