"""What runs under a control plane's directory: each component's process and the API server's ``/readyz``."""

from __future__ import annotations

from pathlib import Path

from gpupoc.controlplane import processes
from gpupoc.controlplane.binaries import control_plane_binaries
from gpupoc.controlplane.keys import ADMIN, read_tokens
from gpupoc.controlplane.layout import Layout, load_or_choose_ports
from gpupoc.controlplane.plane import ControlPlane
from gpupoc.controlplane.readiness import http_get
from gpupoc.controlplane.runner import MARK as RUNNER_MARK
from gpupoc.controlplane.runner import NAME as RUNNER


def status_lines(root: Path) -> tuple[list[str], bool]:
    """Lines to print, and whether every component runs."""
    layout = Layout(Path(root).resolve())
    if not layout.ports_file.is_file():
        return [f"no control plane under {root} (start one: gpupoc controlplane up --dir {root})"], False
    cp = ControlPlane(layout, load_or_choose_ports(layout), control_plane_binaries())
    pids = cp.pids()
    lines = [f"{name:<24} {'pid ' + str(pid) if pid else 'not running'}" for name, pid in pids.items()]
    runner = processes.running_pid(layout, RUNNER, Path(RUNNER_MARK))
    lines.append(f"{RUNNER:<24} {'pid ' + str(runner) if runner else 'not running'} (workload pods' processes)")
    kueue = processes.running_pid(layout, "kueue", cp.binaries.directory / "kueue")
    if kueue or layout.pid_file("kueue").is_file():  # shown once started with --kueue
        lines.append(f"{'kueue':<24} {'pid ' + str(kueue) if kueue else 'not running'}")
    if pids["kube-apiserver"]:
        token = read_tokens(layout.pki / "tokens.csv")[ADMIN]
        code, body = http_get(f"{cp.server}/readyz", ca_file=cp.ca_file, token=token)
        lines.append(f"{cp.server}/readyz: {code} {body.strip()[:60]}")
    lines.append(f"kubeconfig: {cp.kubeconfig}")
    return lines, all(pids.values())
