"""``start_kueue``: real Kueue (built by ``build.sh --with-kueue`` from the pinned module) as a local process
beside a running control plane. Its CRDs, RBAC and webhook configurations are rendered from the same module
(``kueue_manifests``); it runs as its own ServiceAccount (a token the API server issues); its certificate
management writes the webhook's certificate into its Secret and the CA into the webhooks and CRDs, and the
start copies that Secret into the certificate directory, as a kubelet would project it. Ready once its
``/readyz`` answers, the API server reaches its webhooks (a server-side dry run of a ResourceFlavor) and
forwards its visibility API (``visibility.kueue.x-k8s.io``) to it.
``stop_kueue`` leaves no process; ``ControlPlane.stop`` stops it too."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from gpupoc.common.pki import write_private
from gpupoc.controlplane import processes
from gpupoc.controlplane.binaries import PINS, BinariesMissing
from gpupoc.controlplane.keys import kubeconfig_doc
from gpupoc.controlplane.kueue_manifests import (NAMESPACE, SERVICE_ACCOUNT, WEBHOOK_SECRET, KueuePorts, KueueSettings,
                                                 configuration, fit_for_local_process, kueue_argv, render)
from gpupoc.controlplane.layout import free_port
from gpupoc.controlplane.plane import ControlPlane
from gpupoc.controlplane.readiness import exactly_ok, wait_until
from gpupoc.exceptions import GpupocError

NAME = "kueue"  # its pid file run/kueue.pid and log logs/kueue.log, beside the other components'
BUILD_FIX = "run `bash scripts/control-plane/build.sh --with-kueue` (it builds Kueue from the Go module proxy)"
TOKEN_SECONDS = 365 * 24 * 3600
CERT_FILES = ("tls.crt", "tls.key", "ca.crt")
# a webhook the API server calls on every ResourceFlavor: its answer proves the path API server -> Kueue
PROBE_FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                "metadata": {"name": "gpupoc-webhook-probe"}}
# the visibility API's group, which the API server forwards to Kueue's visibility server once it answers
VISIBILITY_PROBE = "/apis/visibility.kueue.x-k8s.io/v1beta2"


@dataclass(frozen=True)
class RunningKueue:
    """A Kueue process beside a control plane."""

    version: str
    pid: int
    ports: KueuePorts
    directory: Path
    timings: dict[str, float]

    @property
    def cert_dir(self) -> Path:
        return self.directory / "certs"


def pinned_kueue_version(pins: Path = PINS) -> str:
    """``KUEUE_VERSION`` from the pins file ("v0.17.0")."""
    for line in pins.read_text(encoding="utf-8").splitlines():
        if line.startswith("KUEUE_VERSION="):
            return line.split("=", 1)[1].strip()
    raise GpupocError(f"{pins}: no KUEUE_VERSION= line; restore the pins file")


def kueue_binary(cp: ControlPlane) -> Path:
    return cp.binaries.directory / NAME


def module_dir(version: str) -> Path:
    """Where the Go module cache holds ``sigs.k8s.io/kueue@<version>`` (its ``config/`` renders the objects)."""
    cache = os.environ.get("GOMODCACHE")
    if not cache:
        try:
            cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True,
                                   timeout=30).stdout.strip()
        except OSError:
            cache = ""
    return Path(cache or Path.home() / "go" / "pkg" / "mod") / "sigs.k8s.io" / f"kueue@{version}"


def kueue_ports(directory: Path) -> KueuePorts:
    """The recorded ports (``<root>/kueue/ports.json``), else free ones, recorded now."""
    path = directory / "ports.json"
    if path.is_file():
        try:
            ports = KueuePorts(**json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as exc:
            raise GpupocError(f"{path}: unreadable ({exc}); remove it to choose new ports") from exc
        if ports.visibility:
            return ports
        taken = {ports.webhook, ports.health, ports.metrics}
        ports = KueuePorts(ports.webhook, ports.health, ports.metrics,
                           next(p for p in iter(free_port, None) if p not in taken))
        path.write_text(json.dumps(asdict(ports), indent=1) + "\n", encoding="utf-8")
        return ports
    chosen: list[int] = []
    while len(chosen) < 4:
        p = free_port()
        if p not in chosen:
            chosen.append(p)
    ports = KueuePorts(*chosen)
    path.write_text(json.dumps(asdict(ports), indent=1) + "\n", encoding="utf-8")
    return ports


def start_kueue(cp: ControlPlane, settings: KueueSettings = KueueSettings()) -> RunningKueue:
    """Start (or resume) Kueue beside ``cp`` (started by ``start_control_plane``) with ``settings`` (a running
    Kueue keeps its own: stop it first to change them); see the module."""
    binary = kueue_binary(cp)
    if not os.access(binary, os.X_OK):
        raise BinariesMissing(f"Kueue is not built in {binary.parent}: {BUILD_FIX}")
    version = pinned_kueue_version()
    directory = cp.root / NAME
    (directory / "certs").mkdir(parents=True, exist_ok=True)
    ports = kueue_ports(directory)
    timings: dict[str, float] = {}
    pid = processes.running_pid(cp.layout, NAME, binary)
    try:
        if pid is None:
            t0 = time.monotonic()
            _install(cp, directory, ports, version, settings)
            timings["kueue objects applied"] = time.monotonic() - t0
            pid = processes.start(cp.layout, NAME, kueue_argv(binary, directory / "kubeconfig",
                                                             directory / "config.yaml"))
        running = RunningKueue(version, pid, ports, directory, timings)
        timings["kueue"] = wait_until(cp.layout, NAME, pid, _ready(cp, running))
    except BaseException:
        processes.stop(cp.layout, NAME, binary)
        raise
    return running


def stop_kueue(cp: ControlPlane) -> bool:
    """Stop the Kueue process if it runs (its objects stay in the API); True when it was running."""
    return processes.stop(cp.layout, NAME, kueue_binary(cp))


def _install(cp: ControlPlane, directory: Path, ports: KueuePorts, version: str, settings: KueueSettings) -> None:
    """Kueue's objects applied, its configuration, its ServiceAccount's kubeconfig, any certificate kept."""
    docs = fit_for_local_process(render(cp.kubectl, module_dir(version)), ports.webhook, ports.visibility)
    manifests = directory / "manifests.yaml"
    manifests.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    # server-side: the CRDs are too large for the last-applied annotation of a client-side apply
    cp.run_kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=gpupoc", "-f", str(manifests),
                   timeout=180)
    crds = [f"crd/{d['metadata']['name']}" for d in docs if d["kind"] == "CustomResourceDefinition"]
    cp.run_kubectl("wait", "--for=condition=Established", "--timeout=120s", *crds, timeout=150)
    (directory / "config.yaml").write_text(
        yaml.safe_dump(configuration(ports, directory / "certs", settings), sort_keys=False), encoding="utf-8")
    token = cp.run_kubectl("create", "token", SERVICE_ACCOUNT, "-n", NAMESPACE,
                           f"--duration={TOKEN_SECONDS}s").stdout.strip()
    doc = kubeconfig_doc(cp.server, cp.ca_file.read_bytes(), f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}",
                         token, NAME)
    write_private(directory / "kubeconfig", yaml.safe_dump(doc, sort_keys=False).encode())
    copy_certificates(cp, directory / "certs")  # a restart on the same data: the Secret is filled already


def copy_certificates(cp: ControlPlane, cert_dir: Path) -> bool:
    """The webhook Secret's certificate and key written into ``cert_dir``; False while the Secret is empty."""
    res = cp.run_kubectl("get", "secret", WEBHOOK_SECRET, "-n", NAMESPACE, "-o", "json", check=False, timeout=20)
    if res.returncode != 0:
        return False
    data = json.loads(res.stdout).get("data") or {}
    if not all(data.get(f) for f in CERT_FILES):
        return False
    for f in CERT_FILES:
        content = base64.b64decode(data[f])
        path = cert_dir / f
        if not path.is_file() or path.read_bytes() != content:
            write_private(path, content, 0o600 if f.endswith(".key") else 0o644)
    return True


def _ready(cp: ControlPlane, kueue: RunningKueue):
    """Certificates in place, ``/readyz`` exactly ok, then the API server's call of a webhook answered."""
    readyz = exactly_ok(f"http://127.0.0.1:{kueue.ports.health}/readyz")

    def probe() -> tuple[bool, str]:
        if not copy_certificates(cp, kueue.cert_dir):
            return False, f"Secret {NAMESPACE}/{WEBHOOK_SECRET} holds no certificate yet"
        ok, seen = readyz()
        if not ok:
            return False, f"/readyz: {seen}"
        res = cp.run_kubectl("create", "--dry-run=server", "-o", "name", "-f", "-",
                             input=yaml.safe_dump(PROBE_FLAVOR), check=False, timeout=30)
        if res.returncode != 0:
            return False, f"webhook through the API server: {res.stderr.strip()[-200:]}"
        if not kueue.ports.visibility:
            return True, ""
        seen = cp.run_kubectl("get", "--raw", VISIBILITY_PROBE, check=False, timeout=30)
        return seen.returncode == 0, f"visibility API through the API server: {seen.stderr.strip()[-200:]}"
    return probe
