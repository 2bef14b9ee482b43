"""One pod's life on the simulated kubelet: GPU admission, image pulls, container runs and restarts.

Event reasons and messages are those of the real kubelet (Pulling, Pulled, Created, Started, Failed,
BackOff, Killing); back-offs are shortened (image pulls: ``timing.image_backoff_seconds`` doubling;
crash loops: 1 s doubling up to 10 s).
"""

from __future__ import annotations

import asyncio
import hashlib
import signal
import time
from pathlib import Path
from typing import Protocol

from gpupoc.sim import clock
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import Timing
from gpupoc.sim.controllers import kubelet_probes, virtual_serving
from gpupoc.sim.controllers import kubelet_status as ks
from gpupoc.sim.controllers.gpu_driver import driver_env
from gpupoc.sim.controllers.kubelet_pods import ContainerRun, PodKey, PodRun
from gpupoc.sim.controllers.kubelet_runtime import (
    ConfigMissing, ProcessHandle, StartFailed, VirtualSpec, build_argv, container_env, process_env, run_virtual,
)
from gpupoc.sim.events import NORMAL, WARNING
from gpupoc.sim.inventory import Telemetry
from gpupoc.sim.pod_network import BIND_ENV, host_address, service_env
from gpupoc.sim.store import Store

CRASH_BACKOFF_START = 1.0
CRASH_BACKOFF_MAX = 10.0
IMAGE_BACKOFF_MAX = 60.0
CONFIG_RETRY_SECONDS = 2.0
DEADLINE_EXCEEDED = "DeadlineExceeded"


class PodRuntime(Protocol):
    """What a pod's life sees of its kubelet (``kubelet.Kubelet``): the cluster, the runs, and how the kubelet
    publishes a run's status and events and frees what a run held."""

    state: ClusterState
    store: Store
    timing: Timing
    pods: dict[PodKey, PodRun]
    images: dict[str, set[str]]  # node -> images already pulled

    def write(self, pr: PodRun) -> bool:
        """Publish the run's status into the stored pod; False when the pod is no longer ours."""

    def event(self, pr: PodRun, reason: str, message: str, type_: str = NORMAL,
              container: ContainerRun | None = None) -> None:
        """A kubelet event on the pod (about one of its containers)."""

    def release(self, key: PodKey, phase: str | None, deleting: bool = False) -> None:
        """Free the run's GPUs and telemetry."""

    def telemetry_path(self, key: PodKey) -> Path:
        """Where the pod's GPU telemetry is written."""

    def workdir(self, key: PodKey, container: str) -> Path:
        """A container's working directory."""

    def track_process(self, key: PodKey) -> None:
        """Count the pod among those whose processes the kubelet samples."""


async def sleep_or_stop(pr: PodRun, seconds: float) -> bool:
    """Sleep ``seconds``; True (early) when the pod is being stopped."""
    if pr.stop.is_set():
        return True
    try:
        async with asyncio.timeout(seconds):
            await pr.stop.wait()
        return True
    except TimeoutError:
        return False


async def run_pod(kl: PodRuntime, pr: PodRun) -> None:
    """Admit, run every container to its end, publish the final phase, free the GPUs."""
    if not _admit_gpus(kl, pr):
        return
    if any(_needs_pull(kl, pr, c) or c.entry is None for c in pr.containers):
        kl.write(pr)  # Pending, ContainerCreating: visible while images are pulled
    deadline = None
    if pr.active_deadline is not None:
        deadline = asyncio.get_running_loop().create_task(_enforce_deadline(kl, pr, pr.active_deadline))
    try:
        await asyncio.gather(*(run_container(kl, pr, c) for c in pr.containers))
    finally:
        if deadline is not None:
            deadline.cancel()
    if pr.abandoned:
        return
    pr.final_phase = "Failed" if pr.reason == DEADLINE_EXCEEDED else pr.phase()
    kl.write(pr)
    kl.release(pr.key, pr.final_phase, deleting=pr.deleting)
    if not pr.deleting and kl.pods.get(pr.key) is pr:
        del kl.pods[pr.key]
    kl.state.kick()


async def _enforce_deadline(kl: PodRuntime, pr: PodRun, seconds: float) -> None:
    """spec.activeDeadlineSeconds: past it, the pod fails (DeadlineExceeded) and its containers are stopped."""
    if await sleep_or_stop(pr, seconds):
        return
    pr.reason = DEADLINE_EXCEEDED
    pr.message = "Pod was active on the node longer than the specified deadline"
    kl.event(pr, DEADLINE_EXCEEDED, pr.message, WARNING)
    for c in pr.containers:
        if c.running:
            kl.event(pr, "Killing", f"Stopping container {c.name}", container=c)
    pr.stop.set()
    for h in list(pr.handles.values()):
        h.signal(signal.SIGTERM)
    await asyncio.sleep(kl.timing.termination_grace_seconds)
    for h in list(pr.handles.values()):
        h.signal(signal.SIGKILL)


def _plugin_pod(kl: PodRuntime, pr: PodRun) -> dict | None:
    """The pod when a registered device plugin (HAMi's vGPUs) owns its devices, else None."""
    plugin, pod = kl.state.device_plugin, kl.store.get("pods", *pr.key)
    return pod if plugin is not None and pod is not None and plugin.claims(pod) else None


def _admit_gpus(kl: PodRuntime, pr: PodRun) -> bool:
    """Device-plugin admission: a pod bound without allocated GPUs gets them here, or fails."""
    if _plugin_pod(kl, pr) is not None:
        return True
    inv = kl.state.inventory
    held = inv.held_by(pr.key)
    for c in pr.containers:
        need = ks.container_gpu_count(c.spec)
        have = sum(1 for g in held if g.container == c.name)
        if need <= have or (len(pr.containers) == 1 and need <= len(held)):
            continue
        missing = need - have
        if inv.free_count(pr.node) < missing:
            pr.final_phase = "Failed"
            pr.reason = "UnexpectedAdmissionError"
            pr.message = (f"Allocate failed due to requested number of devices unavailable for {ks.GPU}. "
                          f"Requested: {missing}, Available: {inv.free_count(pr.node)}, which is unexpected")
            kl.event(pr, "UnexpectedAdmissionError", pr.message, WARNING)
            kl.write(pr)
            kl.release(pr.key, None)
            del kl.pods[pr.key]
            return False
        inv.allocate(pr.node, pr.key, c.name, missing)
    return True


def _pull_policy(c: ContainerRun) -> str:
    policy = c.spec.get("imagePullPolicy")
    if policy:
        return policy
    tail = c.image.split("@", 1)[0].rsplit("/", 1)[-1]
    return "Always" if ":" not in tail or tail.endswith(":latest") else "IfNotPresent"


def _needs_pull(kl: PodRuntime, pr: PodRun, c: ContainerRun) -> bool:
    if c.entry is None:
        return True
    policy = _pull_policy(c)
    return policy == "Always" or (policy == "IfNotPresent" and c.image not in kl.images.get(pr.node, ()))


async def _pull(kl: PodRuntime, pr: PodRun, c: ContainerRun) -> bool:
    """Pull a catalogue image (or find it present); True when the pod was stopped meanwhile."""
    if not _needs_pull(kl, pr, c):
        kl.event(pr, "Pulled", f'Container image "{c.image}" already present on machine', container=c)
        c.image_id = ks.image_id(c.image)
        return False
    kl.event(pr, "Pulling", f'Pulling image "{c.image}"', container=c)
    t0 = time.monotonic()
    if await sleep_or_stop(pr, c.entry.pull_seconds):
        return True
    ms = int((time.monotonic() - t0) * 1000)
    size = 50_000_000 + int(hashlib.sha256(c.image.encode()).hexdigest()[:8], 16) % 900_000_000
    kl.event(pr, "Pulled", f'Successfully pulled image "{c.image}" in {ms}ms ({ms}ms including waiting). '
                           f"Image size: {size} bytes.", container=c)
    kl.images.setdefault(pr.node, set()).add(c.image)
    c.image_id = ks.image_id(c.image)
    return False


async def _image_pull_backoff(kl: PodRuntime, pr: PodRun, c: ContainerRun) -> None:
    """An image not in the catalogue: ErrImagePull, then ImagePullBackOff, retried until stopped."""
    x = c.image
    err = (f'rpc error: code = NotFound desc = failed to pull and unpack image "{x}": '
           f'failed to resolve reference "{x}": {x}: not found')
    delay = kl.timing.image_backoff_seconds
    while True:
        kl.event(pr, "Pulling", f'Pulling image "{x}"', container=c)
        kl.event(pr, "Failed", f'Failed to pull image "{x}": {err}', WARNING, container=c)
        kl.event(pr, "Failed", "Error: ErrImagePull", WARNING, container=c)
        c.state = ks.waiting("ErrImagePull", err)
        kl.write(pr)
        if await sleep_or_stop(pr, kl.timing.image_backoff_seconds):
            return
        kl.event(pr, "BackOff", f'Back-off pulling image "{x}"', NORMAL, container=c)
        kl.event(pr, "Failed", "Error: ImagePullBackOff", WARNING, container=c)
        c.state = ks.waiting("ImagePullBackOff", f'Back-off pulling image "{x}"')
        kl.write(pr)
        if await sleep_or_stop(pr, delay):
            return
        delay = min(delay * 2, IMAGE_BACKOFF_MAX)


def _devices(kl: PodRuntime, pr: PodRun, c: ContainerRun, env: dict[str, str] | None = None) -> str:
    """The container's ``NVIDIA_VISIBLE_DEVICES``; a device plugin's env goes into ``env``."""
    pod = _plugin_pod(kl, pr)
    if pod is not None:
        visible, plugin_env = kl.state.device_plugin.allocate(pod, c.name)
        (env if env is not None else {}).update(plugin_env)
        return visible
    held = kl.state.inventory.held_by(pr.key)
    mine = [g for g in held if g.container == c.name]
    if not mine and len(pr.containers) == 1:
        mine = held
    return ",".join(dict.fromkeys(g.uuid for g in sorted(mine, key=lambda g: g.index)))  # replicas: one card


def _should_restart(pr: PodRun, exit_code: int) -> bool:
    if pr.deleting or pr.abandoned or pr.stop.is_set():
        return False
    return pr.restart_policy == "Always" or (pr.restart_policy == "OnFailure" and exit_code != 0)


async def run_container(kl: PodRuntime, pr: PodRun, c: ContainerRun) -> None:
    """Pull, then create/start/wait the container, restarting it as its pod's restartPolicy says."""
    ns, name = pr.key
    try:
        if c.entry is None:
            await _image_pull_backoff(kl, pr, c)
            return
        if await _pull(kl, pr, c):
            return
        backoff = CRASH_BACKOFF_START
        while True:
            result = await _run_once(kl, pr, c)
            if result is None:
                return  # stopped before the container was created
            exit_code, ran_for = result
            if not _should_restart(pr, exit_code):
                c.final_exit = exit_code
                c.done = True
                if not all(x.done for x in pr.containers):
                    kl.write(pr)  # the pod's final write covers the last container
                return
            if ran_for > 2 * CRASH_BACKOFF_MAX:
                backoff = CRASH_BACKOFF_START
            c.last_state = c.state
            c.state = ks.waiting("CrashLoopBackOff", f"back-off {backoff:g}s restarting failed container={c.name} "
                                                     f"pod={name}_{ns}({pr.uid})")
            kl.event(pr, "BackOff", f"Back-off restarting failed container {c.name} in pod {name}_{ns}({pr.uid})",
                     WARNING, container=c)
            kl.write(pr)
            if await sleep_or_stop(pr, backoff):
                c.state, c.final_exit, c.done = c.last_state, exit_code, True
                return
            backoff = min(backoff * 2, CRASH_BACKOFF_MAX)
            c.restart_count += 1
            kl.state.logs.rotate(ns, name, c.name)
    finally:
        if not c.done and (pr.stop.is_set() or pr.abandoned):
            c.done = True
        lg = kl.state.logs.get(ns, name, c.name)
        if lg is not None and c.done:
            lg.close()


async def _run_once(kl: PodRuntime, pr: PodRun, c: ContainerRun) -> tuple[int, float] | None:
    """Create, start and wait one container instance; (exit code, seconds it ran), None if stopped."""
    ns, name = pr.key
    lg = kl.state.logs.get(ns, name, c.name, create=True)
    pod = kl.store.get("pods", ns, name)
    if pod is None or pr.stop.is_set():
        return None
    while True:
        try:
            user_env = container_env(kl.store, pod, c.spec)
            break
        except ConfigMissing as exc:
            c.state = ks.waiting("CreateContainerConfigError", str(exc))
            kl.event(pr, "Failed", f"Error: {exc}", WARNING, container=c)
            kl.write(pr)
            if await sleep_or_stop(pr, CONFIG_RETRY_SECONDS):
                return None
            pod = kl.store.get("pods", ns, name) or pod
    device_env: dict[str, str] = {}
    devices = _devices(kl, pr, c, device_env)
    device_env.update(driver_env(kl.state, devices))
    c.container_id = ks.new_container_id()
    c.created = True
    kl.event(pr, "Created", f"Created container {c.name}", container=c)
    started_at = clock.rfc3339()
    t0 = time.monotonic()
    handle = None
    if c.entry.kind == "process":
        platform = {**service_env(kl.store, ns), "HOSTNAME": name, "NODE_NAME": pr.node, "POD_NAME": name,
                    "POD_NAMESPACE": ns, BIND_ENV: host_address(pr.pod_ip)}
        platform = {**platform, **user_env, **device_env}
        if devices:
            platform["NVIDIA_VISIBLE_DEVICES"] = devices
        artifacts = kl.state.artifact_dir(ns)
        artifacts.mkdir(parents=True, exist_ok=True)
        telemetry = kl.telemetry_path(pr.key)
        telemetry.parent.mkdir(parents=True, exist_ok=True)
        telemetry.unlink(missing_ok=True)
        platform.update({"GPUPOC_ARTIFACT_DIR": str(artifacts), "GPUPOC_TELEMETRY_FILE": str(telemetry)})
        try:
            argv = build_argv(c.spec, c.entry.entrypoint)
            handle = await ProcessHandle.spawn(argv, process_env({}, platform), kl.workdir(pr.key, c.name), lg,
                                               ks.memory_limit_bytes(c.spec))
        except StartFailed as exc:
            kl.event(pr, "Failed", f"Error: {exc}", WARNING, container=c)
            c.state = ks.terminated(128, "StartError", "1970-01-01T00:00:00Z", c.container_id, str(exc))
            c.ready = c.started = False
            _after_exit(kl, pr, c, lg, 128)
            return 128, 0.0
    kl.event(pr, "Started", f"Started container {c.name}", container=c)
    c.state = ks.running(started_at)
    c.ready = c.started = True
    inv = kl.state.inventory
    if handle is not None:
        pr.handles[c.name] = handle
        c.ready = not kubelet_probes.has_readiness_probe(c)
        probes = kubelet_probes.start_probes(kl, pr, c)
        inv.telemetry.setdefault(pr.key, Telemetry())
        kl.track_process(pr.key)
        kl.write(pr)
        try:
            exit_code = await handle.wait()
        finally:
            pr.handles.pop(c.name, None)
            for task in probes:
                task.cancel()
        oom, tail = handle.oom, list(handle.tail)
    else:
        exit_code, oom = await _play_virtual(kl, pr, c, user_env, lg, devices)
        tail = [text for _, text in lg.lines[-80:]]
    message = None
    if exit_code != 0 and c.spec.get("terminationMessagePolicy") == "FallbackToLogsOnError":
        message = ks.fallback_message(tail)
    c.state = ks.terminated(exit_code, ks.exit_reason(exit_code, oom), started_at, c.container_id, message)
    c.ready = c.started = False
    _after_exit(kl, pr, c, lg, exit_code)
    return exit_code, time.monotonic() - t0


async def _play_virtual(kl: PodRuntime, pr: PodRun, c: ContainerRun, user_env: dict[str, str], lg,
                        devices: str) -> tuple[int, bool]:
    """A virtual container's run: its synthetic lifecycle, serving HTTP (with its probes) when asked to."""
    spec = VirtualSpec.from_env(user_env)
    kl.state.inventory.telemetry[pr.key] = Telemetry(spec.gpu_util, spec.gpu_mem_mib)
    server = await _virtual_server(pr, c, user_env, lg)
    probes = kubelet_probes.start_probes(kl, pr, c) if server is not None else []
    kl.write(pr)
    try:
        return await run_virtual(spec, c.image, lg, devices, lambda s: sleep_or_stop(pr, s),
                                 forever=server is not None)
    finally:
        for task in probes:
            task.cancel()
        if server is not None:
            await server.cleanup()


async def _virtual_server(pr: PodRun, c: ContainerRun, env: dict[str, str], lg):
    """The virtual image's HTTP server when the container serves (``virtual_serving.py``), else None."""
    port = virtual_serving.serving_port(c.spec, env)
    if port is None:
        return None
    c.ready = not kubelet_probes.has_readiness_probe(c)
    try:
        server = await virtual_serving.start(pr.pod_ip, port, env)
    except OSError as exc:
        lg.append(f"virtual workload: cannot listen on port {port}: {exc}")
        return None
    lg.append(f"virtual workload: serving on port {port}")
    return server


def _after_exit(kl: PodRuntime, pr: PodRun, c: ContainerRun, lg, exit_code: int) -> None:
    """The container ended: its reactor hears of it (``reactors.container_exited``); followers are released."""
    if not pr.abandoned:
        kl.state.reactors.container_exited(exit_code, lg)
    lg.close()
