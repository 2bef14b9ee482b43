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


def resolve_artifact(ref: str, artifact_dir: str | None) -> Path:
    """The weights file ``ref`` names: a file, a manifest, a producer's directory, or a producer pod name
    under ``artifact_dir``. Raises FileNotFoundError naming what was tried."""
    candidates = [Path(ref)]
    if artifact_dir and not Path(ref).is_absolute():
        candidates.append(Path(artifact_dir) / ref)
    for c in candidates:
        if c.is_dir():
            c = c / WEIGHTS
        elif c.name == MANIFEST:
            c = c.parent / json.loads(c.read_text())["artifact"]
        if c.is_file():
            return c
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"artifact {ref!r} not found (tried {tried}); the producer writes "
                            f"$GPUPOC_ARTIFACT_DIR/<producer pod>/{WEIGHTS}")


def load_artifact(path: Path) -> tuple[dict[str, np.ndarray], str, bool | None]:
    """(arrays, sha256 of the file, whether it matches the manifest next to it; None without one)."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    manifest = path.parent / MANIFEST
    matches = json.loads(manifest.read_text()).get("sha256") == digest if manifest.is_file() else None
    with np.load(io.BytesIO(data)) as npz:
        arrays = {k: npz[k] for k in npz.files}
    return arrays, digest, matches


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
