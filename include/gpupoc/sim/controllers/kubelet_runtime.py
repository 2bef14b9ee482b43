"""Container runtimes of the simulated kubelet: local processes (process images) and virtual lifecycles.

A process container is an asyncio subprocess in its own session (so the whole tree can be signalled),
its stdout and stderr lines go to the container log, and a watcher kills it when the resident memory of
its process tree exceeds ``limits.memory`` (OOMKilled, exit 137).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable


from gpupoc.kube.dcgm import virtual_telemetry
from gpupoc.kube.containers import (  # noqa: F401 - the simulated kubelet's names for the shared rules
    BASE_ENV_KEYS, PACKAGE_ROOT, ConfigMissing, StartFailed, build_argv, container_env, exit_code_of, process_env,
)
from gpupoc.sim.logs import ContainerLog
from gpupoc.common.processes import die_with_parent, tree_rss_bytes

MEMORY_POLL_SECONDS = 0.5
LINE_LIMIT = 1 << 20
PUMP_DRAIN_SECONDS = 2.0
EXIT_POLL_SECONDS = 0.2


@dataclass
class ProcessHandle:
    """A running container process and its log pumps."""

    proc: asyncio.subprocess.Process
    log: ContainerLog
    limit_bytes: int | None
    tail: deque = field(default_factory=lambda: deque(maxlen=80))
    oom: bool = False
    peak_rss: int = 0

    @classmethod
    async def spawn(cls, argv: list[str], env: dict[str, str], cwd: Path, log: ContainerLog,
                    limit_bytes: int | None) -> "ProcessHandle":
        cwd.mkdir(parents=True, exist_ok=True)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, env=env, cwd=str(cwd), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True, limit=LINE_LIMIT, preexec_fn=die_with_parent,
            )
        except FileNotFoundError:
            raise StartFailed(_oci_error(f'exec: "{argv[0]}": executable file not found in $PATH')) from None
        except PermissionError:
            raise StartFailed(_oci_error(f'exec: "{argv[0]}": permission denied')) from None
        except OSError as exc:
            raise StartFailed(_oci_error(f'exec: "{argv[0]}": {exc.strerror or exc}')) from None
        return cls(proc, log, limit_bytes)

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def wait(self) -> int:
        """Pump the output until the process ends; returns the container exit code.

        The container ends with its main process: anything it started that still holds the output is
        killed with it (asyncio's ``Process.wait`` alone would wait for the pipes to close)."""
        watcher = asyncio.create_task(self._watch_memory()) if self.limit_bytes else None
        pumps = asyncio.ensure_future(asyncio.gather(self._pump(self.proc.stdout), self._pump(self.proc.stderr)))
        pumps.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            while not pumps.done() and self.proc.returncode is None:
                await asyncio.wait({pumps}, timeout=EXIT_POLL_SECONDS)
            if not pumps.done():
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                await asyncio.wait({pumps}, timeout=PUMP_DRAIN_SECONDS)
            if not pumps.done():  # a process escaped the group and keeps the pipes: stop reading them
                transport = getattr(self.proc, "_transport", None)
                if transport is not None:
                    transport.close()
            rc = self.proc.returncode
            if rc is None:
                rc = await self.proc.wait()
        finally:
            pumps.cancel()
            if watcher is not None:
                watcher.cancel()
        return 137 if self.oom else exit_code_of(rc)

    async def _pump(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while True:
            try:
                line = await stream.readline()
            except (ValueError, asyncio.LimitOverrunError):
                line = await stream.read(LINE_LIMIT)
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\n")
            self.tail.append(text)
            self.log.append(text)

    def rss_bytes(self) -> int:
        """Resident memory of the whole process tree."""
        return tree_rss_bytes(self.proc.pid)

    async def _watch_memory(self) -> None:
        while self.proc.returncode is None:
            rss = self.rss_bytes()
            self.peak_rss = max(self.peak_rss, rss)
            if self.limit_bytes is not None and rss > self.limit_bytes:
                self.oom = True
                self.signal(signal.SIGKILL)
                return
            await asyncio.sleep(MEMORY_POLL_SECONDS)

    def signal(self, sig: int) -> None:
        """Signal the process group (the container's whole tree)."""
        if self.proc.returncode is not None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _oci_error(detail: str) -> str:
    return ("failed to create containerd task: failed to create shim task: OCI runtime create failed: "
            f"runc create failed: unable to start container process: {detail}: unknown")


@dataclass(frozen=True)
class VirtualSpec:
    """The lifecycle of a virtual container, from its env (WORKLOAD_*)."""

    duration: float = 10.0
    exit_code: int = 0
    mode: str = "train"
    gpu_util: float = 0.0
    gpu_mem_mib: float = 0.0

    @classmethod
    def from_env(cls, env: dict[str, str]) -> "VirtualSpec":
        def num(name: str, default: float) -> float:
            try:
                return float(env.get(name, default))
            except ValueError:
                return default

        mode = env.get("WORKLOAD_MODE", "train") or "train"
        default_exit = 1 if mode == "fail" else 0
        gpu = virtual_telemetry(env)  # as the real-cluster exporter reads a pod's (gpupoc.kube.dcgm)
        return cls(duration=max(0.0, num("WORKLOAD_DURATION_SECONDS", 10.0)),
                   exit_code=int(num("WORKLOAD_EXIT_CODE", default_exit)), mode=mode,
                   gpu_util=gpu.util, gpu_mem_mib=gpu.mem_mib)


PROGRESS_SECONDS = 5.0


async def run_virtual(spec: VirtualSpec, image: str, log: ContainerLog, devices: str,
                      sleep: Callable[[float], Awaitable[bool]], forever: bool = False) -> tuple[int, bool]:
    """Play a virtual container: synthetic log lines over ``duration`` (until stopped when ``forever``: a
    serving container). ``sleep`` returns True when the container is being stopped. Returns (exit code, oom)."""
    log.append(f"virtual workload {image}: mode={spec.mode} duration={spec.duration:g}s "
               f"NVIDIA_VISIBLE_DEVICES={devices}")
    forever = forever or spec.mode in ("hang", "long")
    elapsed = 0.0
    step = 0
    while forever or elapsed < spec.duration:
        chunk = PROGRESS_SECONDS if forever else min(PROGRESS_SECONDS, spec.duration - elapsed)
        if await sleep(chunk):
            log.append("received SIGTERM: stopping")
            return 143, False
        elapsed += chunk
        step += 1
        if forever or elapsed < spec.duration:
            pct = "" if forever else f" progress={100 * elapsed / spec.duration:.0f}%"
            log.append(f"step={step * 100}{pct} loss={1.0 / (1 + 0.2 * step):.4f}")
    if spec.mode == "oom":
        return 137, True
    if spec.exit_code != 0:
        log.append(f"error: workload failed with exit code {spec.exit_code} (WORKLOAD_EXIT_CODE)")
    else:
        log.append("workload finished")
    return spec.exit_code, False
