"""Where the real control plane's binaries are: the cache ``scripts/control-plane/build.sh`` builds them into
(keyed by its pins), or ``$GPUPOC_CONTROL_PLANE_BIN``. ``make control-plane`` builds them."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpupoc.exceptions import GpupocError

REPO = Path(__file__).resolve().parents[3]
BUILD_SCRIPT = REPO / "scripts" / "control-plane" / "build.sh"
PINS = REPO / "scripts" / "control-plane" / "pins.env"
BIN_ENV = "GPUPOC_CONTROL_PLANE_BIN"
NAMES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok")
FIX = "run `make control-plane` (scripts/control-plane/build.sh builds them from the Go module proxy)"


class BinariesMissing(GpupocError):
    """A real control plane's binary is not built."""


@dataclass(frozen=True)
class Binaries:
    """The built binaries' paths and the Kubernetes version they were pinned to."""

    directory: Path
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kubectl: Path
    kwok: Path
    kubernetes_version: str


def pinned_kubernetes_version(pins: Path = PINS) -> str:
    """``KUBERNETES_VERSION`` from the pins file ("v1.37.2")."""
    for line in pins.read_text(encoding="utf-8").splitlines():
        if line.startswith("KUBERNETES_VERSION="):
            return line.split("=", 1)[1].strip()
    raise GpupocError(f"{pins}: no KUBERNETES_VERSION= line; restore the pins file")


@lru_cache(maxsize=1)
def bin_dir() -> Path:
    """The binaries' directory, built or not: ``$GPUPOC_CONTROL_PLANE_BIN``, else build.sh's cache."""
    if os.environ.get(BIN_ENV):
        return Path(os.environ[BIN_ENV])
    if not BUILD_SCRIPT.is_file():
        raise BinariesMissing(f"{BUILD_SCRIPT} is absent; set {BIN_ENV} to a directory holding {', '.join(NAMES)}")
    out = subprocess.run(["bash", str(BUILD_SCRIPT), "--print-bin-dir"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def control_plane_binaries(directory: Path | None = None) -> Binaries:
    """Every binary's path; raises ``BinariesMissing`` naming the missing ones and ``make control-plane``."""
    d = directory or bin_dir()
    missing = [n for n in NAMES if not os.access(d / n, os.X_OK)]
    if missing:
        raise BinariesMissing(f"the real control plane's binaries {', '.join(missing)} are not built in {d}: {FIX}")
    return Binaries(d, d / "etcd", d / "kube-apiserver", d / "kube-controller-manager", d / "kube-scheduler",
                    d / "kubectl", d / "kwok", pinned_kubernetes_version())


def kubectl_path() -> Path:
    """The built kubectl (the same version as the real control plane); ``BinariesMissing`` when absent."""
    k = bin_dir() / "kubectl"
    if not os.access(k, os.X_OK):
        raise BinariesMissing(f"kubectl is not built in {k.parent}: {FIX}")
    return k


def kubectl_command() -> str:
    """The kubectl a command line should run: the built one when present, else the machine's ``kubectl``
    (a user's own cluster needs no build)."""
    try:
        return str(kubectl_path())
    except (BinariesMissing, OSError, subprocess.CalledProcessError):
        return shutil.which("kubectl") or "kubectl"
