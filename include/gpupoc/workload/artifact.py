"""Write the trained model as an artifact: weights (.npz) plus a JSON manifest with its sha256."""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

MANIFEST = "manifest.json"
WEIGHTS = "model.npz"


@dataclass(frozen=True)
class Artifact:
    path: Path  # the weights file
    manifest: Path
    sha256: str
    size_bytes: int


def write_artifact(directory: str | Path, pod: str, namespace: str, arrays: dict[str, np.ndarray],
                   extra: dict) -> Artifact:
    """Write ``<directory>/<pod>/model.npz`` and ``manifest.json`` (same path on a rerun: overwritten)."""
    out = Path(directory) / pod
    out.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    data = buf.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    weights = out / WEIGHTS
    _write_bytes_atomic(weights, data)
    manifest = {
        "artifact": WEIGHTS,
        "sha256": digest,
        "size_bytes": len(data),
        "producer_pod": pod,
        "namespace": namespace,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        **extra,
    }
    manifest_path = out / MANIFEST
    _write_bytes_atomic(manifest_path, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    return Artifact(weights, manifest_path, digest, len(data))


def verify_artifact(manifest_path: str | Path) -> bool:
    """True when the weights next to the manifest still hash to the recorded sha256."""
    manifest_path = Path(manifest_path)
    manifest = json.loads(manifest_path.read_text())
    data = (manifest_path.parent / manifest["artifact"]).read_bytes()
    return hashlib.sha256(data).hexdigest() == manifest["sha256"]


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
