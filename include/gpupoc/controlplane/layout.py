"""Where a control plane keeps its data, logs, keys and pid files under its root, and the ports it was given.

The ports are chosen free at the first start and recorded in ``ports.json``, so a second start on the same
data listens where the first did (etcd's member keeps its peer address; kubeconfigs stay valid)."""

from __future__ import annotations

import json
import socket
from dataclasses import asdict, dataclass
from pathlib import Path

from gpupoc.exceptions import GpupocError

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")


@dataclass(frozen=True)
class Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int
    controller_manager: int
    scheduler: int
    kwok: int


@dataclass(frozen=True)
class Layout:
    root: Path

    @property
    def etcd_data(self) -> Path:
        return self.root / "etcd"

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def config(self) -> Path:
        return self.root / "config"

    @property
    def pod_logs(self) -> Path:
        """CRI-format container logs that kwok serves as ``pods/log`` (``<namespace>/<pod>/<container>.log``)."""
        return self.root / "pod-logs"

    @property
    def audit_log(self) -> Path:
        return self.logs / "audit.log"

    @property
    def kubeconfig(self) -> Path:
        return self.root / "admin.kubeconfig"

    @property
    def ports_file(self) -> Path:
        return self.root / "ports.json"

    def pid_file(self, component: str) -> Path:
        return self.run / f"{component}.pid"

    def log_file(self, component: str) -> Path:
        return self.logs / f"{component}.log"

    def component_kubeconfig(self, component: str) -> Path:
        return self.config / f"{component}.kubeconfig"

    def make(self) -> None:
        for d in (self.root, self.etcd_data, self.pki, self.logs, self.run, self.config, self.pod_logs):
            d.mkdir(parents=True, exist_ok=True)
        self.etcd_data.chmod(0o700)


def free_port() -> int:
    """A port the OS says is free on loopback now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_free(port: int) -> bool:
    """Whether a listener could bind ``port`` now (as the components' Go listeners bind, with SO_REUSEADDR: a
    port left in TIME_WAIT by the last stop is free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def load_or_choose_ports(layout: Layout) -> Ports:
    """The recorded ports, else free ones (recorded now)."""
    if layout.ports_file.is_file():
        try:
            return Ports(**json.loads(layout.ports_file.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as exc:
            raise GpupocError(f"{layout.ports_file}: unreadable ({exc}); remove the control plane's directory "
                              f"{layout.root} to start afresh") from exc
    chosen: list[int] = []
    while len(chosen) < len(Ports.__dataclass_fields__):
        p = free_port()
        if p not in chosen:
            chosen.append(p)
    ports = Ports(*chosen)
    layout.ports_file.write_text(json.dumps(asdict(ports), indent=1) + "\n", encoding="utf-8")
    return ports
