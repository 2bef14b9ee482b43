"""The kubelet's readiness and liveness probes (``httpGet``, ``tcpSocket``, ``exec``) against a running
process container.

As the kubelet's prober (kubernetes ``pkg/kubelet/prober/worker.go``, ``prober.go``,
``pkg/probe/http/http.go``): after ``initialDelaySeconds`` a probe runs every ``periodSeconds`` with
``timeoutSeconds``; ``failureThreshold`` failures in a row (default 3) flip the result to failure and
``successThreshold`` successes (default 1) back. A container with a readiness probe is not ready until its
probe succeeds; its failure is a Warning ``Unhealthy`` "Readiness probe failed: <output>". A liveness failure
is ``Unhealthy`` "Liveness probe failed: <output>" and ``Killing`` "Container <c> failed liveness probe,
will be restarted"; the container is stopped and restarted as its pod's ``restartPolicy`` says. An HTTP
status from 200 to 399 is a success ("HTTP probe failed with statuscode: 503" otherwise); ``exec`` succeeds
on exit code 0. Probes reach the pod's address on this host (``sim/pod_network.py``).
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass
from typing import Protocol

import aiohttp

from gpupoc.sim.config import Timing
from gpupoc.sim.controllers.kubelet_pods import ContainerRun, PodRun
from gpupoc.sim.events import WARNING
from gpupoc.sim.pod_network import host_address


class ProbeHost(Protocol):
    """What the prober needs of the kubelet (``controllers.kubelet.Kubelet``)."""

    timing: Timing

    def write(self, pr: PodRun) -> bool: ...

    def event(self, pr: PodRun, reason: str, message: str, type_: str = ..., container: ContainerRun | None = ...
              ) -> None: ...


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    output: str = ""


def _port(container: dict, value: object) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    for cp in container.get("ports") or []:
        if cp.get("name") == value:
            return int(cp["containerPort"])
    raise ValueError(f"port {value!r} not found in the container's ports")


async def run_probe(probe: dict, container: dict, pod_ip: str) -> ProbeResult:
    """One probe; never raises."""
    timeout = float(probe.get("timeoutSeconds", 1))
    address = host_address(pod_ip)
    try:
        if "httpGet" in probe:
            get = probe["httpGet"]
            host = get.get("host") or address
            url = f"{get.get('scheme', 'HTTP').lower()}://{host}:{_port(container, get.get('port'))}" \
                  f"{get.get('path', '/')}"
            headers = {h["name"]: h["value"] for h in get.get("httpHeaders") or []}
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
                async with session.get(url, headers=headers, allow_redirects=False) as resp:
                    if 200 <= resp.status < 400:
                        return ProbeResult(True)
                    return ProbeResult(False, f"HTTP probe failed with statuscode: {resp.status}")
        if "tcpSocket" in probe:
            port = _port(container, probe["tcpSocket"].get("port"))
            _, writer = await asyncio.wait_for(asyncio.open_connection(address, port), timeout)
            writer.close()
            return ProbeResult(True)
        if "exec" in probe:
            command = [str(a) for a in probe["exec"].get("command") or []]
            proc = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
            return ProbeResult(proc.returncode == 0, out.decode(errors="replace").strip())
    except asyncio.TimeoutError:
        return ProbeResult(False, f"timeout: failed to connect service {address!r} within {timeout:g}s")
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        return ProbeResult(False, f"dial tcp {pod_ip}: {exc}")
    except Exception as exc:  # noqa: BLE001 - the prober counts an errored probe as a failure, never stops
        return ProbeResult(False, f"probe errored: {type(exc).__name__}: {exc}")
    return ProbeResult(False, "probe has no handler (httpGet, tcpSocket or exec)")


async def _probe_loop(kl: ProbeHost, pr: PodRun, c: ContainerRun, kind: str) -> None:
    probe = c.spec[f"{kind}Probe"]
    period = float(probe.get("periodSeconds", 10))
    failures_needed = int(probe.get("failureThreshold", 3))
    successes_needed = int(probe.get("successThreshold", 1))
    await asyncio.sleep(float(probe.get("initialDelaySeconds", 0)))
    ok_run = fail_run = 0
    while c.running and not pr.stop.is_set():
        result = await run_probe(probe, c.spec, pr.pod_ip)
        ok_run, fail_run = (ok_run + 1, 0) if result.ok else (0, fail_run + 1)
        if not result.ok:
            label = "Readiness" if kind == "readiness" else "Liveness"
            kl.event(pr, "Unhealthy", f"{label} probe failed: {result.output}", WARNING, container=c)
        if kind == "readiness":
            if ok_run >= successes_needed and not c.ready and c.running:
                c.ready = True
                kl.write(pr)
            elif fail_run >= failures_needed and c.ready:
                c.ready = False
                kl.write(pr)
        elif fail_run >= failures_needed:
            kl.event(pr, "Killing", f"Container {c.name} failed liveness probe, will be restarted",
                     container=c)
            await kill_container(kl, pr, c)
            return
        await asyncio.sleep(period)


async def kill_container(kl: ProbeHost, pr: PodRun, c: ContainerRun) -> None:
    """SIGTERM, then SIGKILL once the grace period has passed with the process still there (the kubelet's
    ``killContainer``; the grace is ``timing.termination_grace_seconds``, as every grace of this cluster): a
    process that ignores or outlasts SIGTERM is still restarted."""
    handle = pr.handles.get(c.name)
    if handle is None:
        return
    handle.signal(signal.SIGTERM)
    await asyncio.sleep(kl.timing.termination_grace_seconds)
    if pr.handles.get(c.name) is handle:
        handle.signal(signal.SIGKILL)


def has_readiness_probe(c: ContainerRun) -> bool:
    return bool(c.spec.get("readinessProbe"))


def start_probes(kl: ProbeHost, pr: PodRun, c: ContainerRun) -> list[asyncio.Task]:
    """The probe workers of a container that just started (cancel them when it exits)."""
    return [asyncio.get_running_loop().create_task(_probe_loop(kl, pr, c, kind))
            for kind in ("readiness", "liveness") if c.spec.get(f"{kind}Probe")]
