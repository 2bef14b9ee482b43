"""Container runtimes of the simulated kubelet: local processes (process images) and virtual lifecycles.

A process container is an asyncio subprocess in its own session (so the whole tree can be signalled),
its stdout and stderr lines go to the container log, and a watcher kills it when the resident memory of
its process tree exceeds ``limits.memory`` (OOMKilled, exit 137).
"""

from __future__ import annotations

import asyncio
import base64
import ctypes
import ctypes.util
import os
import signal
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

import psutil

import gpupoc
from gpupoc.kube.dcgm import virtual_telemetry
from gpupoc.sim.logs import ContainerLog

MEMORY_POLL_SECONDS = 0.5
LINE_LIMIT = 1 << 20
PUMP_DRAIN_SECONDS = 2.0
EXIT_POLL_SECONDS = 0.2
PACKAGE_ROOT = str(Path(gpupoc.__file__).resolve().parents[1])
BASE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "VIRTUAL_ENV")


def _load_prctl():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the forked child: get SIGKILL when the simulator dies, so no container outlives it."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class StartFailed(Exception):
    """The container process could not be started (exit 128, reason StartError)."""


class ConfigMissing(Exception):
    """An env source (secret, configmap) is missing: waiting reason CreateContainerConfigError."""


def build_argv(container: dict, entrypoint: list[str]) -> list[str]:
    """Docker semantics: ``command`` replaces the image ENTRYPOINT, ``args`` follow it."""
    command = container.get("command") or []
    args = container.get("args") or []
    argv = [str(a) for a in (list(command) if command else list(entrypoint)) + list(args)]
    argv = [sys.executable if a == "{python}" else a for a in argv]
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable  # the image's interpreter is this one
    if not argv:
        raise StartFailed("failed to generate container spec: no command specified")
    return argv


def _lookup(store, resource: str, namespace: str, name: str, key: str | None, kind: str) -> dict | str:
    obj = store.get(resource, namespace, name)
    if obj is None:
        raise ConfigMissing(f'{kind} "{name}" not found')
    if key is None:
        return obj
    if resource == "secrets":
        raw = (obj.get("data") or {}).get(key)
        if raw is None:
            raise ConfigMissing(f"couldn't find key {key} in Secret {namespace}/{name}")
        return base64.b64decode(raw).decode(errors="replace")
    value = (obj.get("data") or {}).get(key)
    if value is None:
        raise ConfigMissing(f"couldn't find key {key} in ConfigMap {namespace}/{name}")
    return value


def _field_ref(pod: dict, path: str) -> str:
    meta, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
    simple = {
        "metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
        "status.podIP": status.get("podIP"), "status.hostIP": status.get("hostIP"),
    }
    if path in simple:
        return simple[path] or ""
    for prefix, src in (("metadata.labels['", meta.get("labels") or {}),
                        ("metadata.annotations['", meta.get("annotations") or {})):
        if path.startswith(prefix) and path.endswith("']"):
            return src.get(path[len(prefix):-2], "")
    return ""


def container_env(store, pod: dict, container: dict) -> dict[str, str]:
    """The container's own env (``envFrom`` then ``env``), resolving downward-API and secret/configmap refs."""
    ns = pod["metadata"]["namespace"]
    out: dict[str, str] = {}
    for src in container.get("envFrom") or []:
        prefix = src.get("prefix", "")
        for ref, resource, kind in ((src.get("configMapRef"), "configmaps", "configmap"),
                                    (src.get("secretRef"), "secrets", "secret")):
            if not ref:
                continue
            try:
                obj = _lookup(store, resource, ns, ref["name"], None, kind)
            except ConfigMissing:
                if ref.get("optional"):
                    continue
                raise
            for k, v in (obj.get("data") or {}).items():
                out[prefix + k] = base64.b64decode(v).decode(errors="replace") if resource == "secrets" else v
    for item in container.get("env") or []:
        name = item["name"]
        if "valueFrom" not in item:
            out[name] = str(item.get("value", ""))
            continue
        vf = item["valueFrom"]
        try:
            if "fieldRef" in vf:
                out[name] = _field_ref(pod, vf["fieldRef"].get("fieldPath", ""))
            elif "secretKeyRef" in vf:
                ref = vf["secretKeyRef"]
                out[name] = _lookup(store, "secrets", ns, ref["name"], ref["key"], "secret")
            elif "configMapKeyRef" in vf:
                ref = vf["configMapKeyRef"]
                out[name] = _lookup(store, "configmaps", ns, ref["name"], ref["key"], "configmap")
            elif "resourceFieldRef" in vf:
                res = vf["resourceFieldRef"].get("resource", "")
                kind, _, rname = res.partition(".")
                out[name] = str(((container.get("resources") or {}).get(kind) or {}).get(rname, "0"))
        except ConfigMissing:
            ref = vf.get("secretKeyRef") or vf.get("configMapKeyRef") or {}
            if not ref.get("optional"):
                raise
    return out


def process_env(user_env: dict[str, str], platform: dict[str, str]) -> dict[str, str]:
    """A clean environment: a few host basics, the pod's env, then what the platform injects."""
    env = {k: os.environ[k] for k in BASE_ENV_KEYS if k in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env["PYTHONUNBUFFERED"] = "1"
    paths = [PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(user_env)
    env.update(platform)
    return env


def exit_code_of(returncode: int) -> int:
    """A container exit code: signals become 128 + signal number, as container runtimes report."""
    return 128 - returncode if returncode < 0 else returncode


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
                start_new_session=True, limit=LINE_LIMIT, preexec_fn=_die_with_parent,
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
        try:
            root = psutil.Process(self.proc.pid)
            procs = [root] + root.children(recursive=True)
        except psutil.Error:
            return 0
        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

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
