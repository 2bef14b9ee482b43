"""Artifact hand-over: what a workload wrote (path, sha256), who produced it, who consumed it, and the index.

The workload prints ``artifact: <path> sha256=<hex> size=<n> manifest=<path>``. The pipeline reads that line
from the producer's log with the tenant's own token, checks the hash as the consumer (a consumer pod's log
line, or the pipeline reading the file where the volume is mounted), and writes an entry into the tenant's
``artifact-index`` config map. Every request goes through the caller, so a ``LedgerCaller`` records it.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpupoc.classes.audit_trail.table import ArtifactRecord
from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.pipeline.audit import ARTIFACT_INDEX, ARTIFACT_LINE
from gpupoc.pipeline.k8s import KubeCaller

# "sha256=<hex>" (the workload's format) or "<hex>  <path>" (sha256sum's)
SHA_LINE = re.compile(r"sha256[=: ]+([0-9a-f]{64})|^(?:\S+\s)?([0-9a-f]{64})\s+\S", re.MULTILINE)


class ArtifactLine(BaseModel):
    path: str
    sha256: str
    size_bytes: int | None = None
    manifest: str = ""


class HandOver(BaseModel):
    """One hand-over as the probe checked it: ``row`` is its ``artifacts`` row, the table's own model
    (``table.py`` ``ArtifactRecord``: location, hash, producer and consumer, verified); the rest is how each
    step was checked, which the table leaves out."""

    model_config = ConfigDict(extra="forbid")

    row: ArtifactRecord
    producer_node: str = ""
    produced_at: str = ""
    manifest: str = ""
    consumer_sha256: str = ""
    hash_verified: bool = False
    index_key: str = ""
    index_written: bool = False
    recorded_at: str = ""
    reason: str = ""

    @property
    def reported(self) -> bool:
        """The producer reported an artifact (a path in its log)."""
        return bool(self.row.path)


def parse_artifact_lines(log_text: str) -> list[ArtifactLine]:
    """Every ``artifact: <path> sha256=<hex> ...`` line of a log (timestamps prefixes allowed)."""
    out = []
    for line in log_text.splitlines():
        m = ARTIFACT_LINE.search(line)
        if m:
            out.append(ArtifactLine(path=m["path"], sha256=m["sha"],
                                    size_bytes=int(m["size"]) if m["size"] else None, manifest=m["manifest"] or ""))
    return out


def index_key(pod: str, path: str) -> str:
    """A config-map key (``[-._a-zA-Z0-9]+``) naming one artifact of one producer."""
    return re.sub(r"[^-._a-zA-Z0-9]", "_", f"{pod}.{Path(path).name}")[:253]


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def hand_over(tenant: KubeCaller, namespace: str, producer_pod: str, *, consumer: str = "pipeline",
              consumer_log: str | None = None, local_root: str | Path | None = None,
              write_index: bool = True) -> HandOver:
    """Record the hand-over of ``producer_pod``'s artifact.

    ``consumer``: a consumer pod whose log (``consumer_log``, else read with the tenant's token) prints the
    sha256 it read, or ``"pipeline"``: the pipeline hashes the file itself, where the volume is visible
    (``local_root`` replaces the part of the path before ``/<producer_pod>/``; None reads the path as is).
    """
    rec = HandOver(row=ArtifactRecord(path="", producer=producer_pod, consumer=consumer or None, namespace=namespace,
                                      verified=False), recorded_at=rfc3339(utcnow()))
    pod = tenant.call("GET", f"/api/v1/namespaces/{namespace}/pods/{producer_pod}")
    if pod.ok:
        rec.producer_node = (pod.body.get("spec") or {}).get("nodeName", "") or ""
        for cs in (pod.body.get("status") or {}).get("containerStatuses") or []:
            rec.produced_at = ((cs.get("state") or {}).get("terminated") or {}).get("finishedAt", "") or rec.produced_at
    log = tenant.call("GET", f"/api/v1/namespaces/{namespace}/pods/{producer_pod}/log")
    if not log.ok:
        rec.reason = f"producer log not readable with the tenant's token: HTTP {log.status} {log.message}"
        return rec
    lines = parse_artifact_lines(log.text)
    if not lines:
        rec.reason = "the producer's log has no 'artifact: <path> sha256=<hex>' line: no artifact was reported"
        return rec
    art = lines[-1]
    rec.row.path, rec.row.sha256, rec.row.size_bytes, rec.manifest = art.path, art.sha256, art.size_bytes, art.manifest
    rec.index_key = index_key(producer_pod, art.path)
    reasons = []
    if consumer == "pipeline":
        local = _local_path(art.path, producer_pod, local_root)
        try:
            rec.consumer_sha256 = file_sha256(local)
        except OSError as e:
            reasons.append(f"the pipeline could not read the artifact at {local}: {e.strerror or e}; mount the "
                           "volume where the pipeline runs, or hand it over to a consumer pod")
    else:
        rec.consumer_sha256 = _consumer_sha256(tenant, namespace, consumer, consumer_log, reasons)
    rec.hash_verified = bool(rec.consumer_sha256) and rec.consumer_sha256 == rec.row.sha256
    if rec.consumer_sha256 and not rec.hash_verified:
        reasons.append(f"hash mismatch: producer reported {rec.row.sha256}, consumer read {rec.consumer_sha256}")
    if write_index:
        _write_index(tenant, rec, reasons)
    rec.row.verified = rec.hash_verified and (rec.index_written or not write_index)
    rec.reason = "; ".join(reasons)
    return rec


def _consumer_sha256(tenant: KubeCaller, namespace: str, consumer: str, consumer_log: str | None,
                     reasons: list[str]) -> str:
    """The sha256 the consumer pod printed of what it read (its log: ``consumer_log``, else read with the
    tenant's token), or "" with the reason added to ``reasons``."""
    text = consumer_log
    if text is None:
        r = tenant.call("GET", f"/api/v1/namespaces/{namespace}/pods/{consumer}/log")
        text = r.text if r.ok else ""
        if not r.ok:
            reasons.append(f"consumer {consumer} log not readable: HTTP {r.status} {r.message}")
    m = [a or b for a, b in SHA_LINE.findall(text or "")]
    if m:
        return m[-1]
    if text is not None and not reasons:
        reasons.append(f"consumer {consumer} printed no sha256 of what it read")
    return ""


def _write_index(tenant: KubeCaller, rec: HandOver, reasons: list[str]) -> None:
    """Write the hand-over's entry into the tenant's artifact index and read it back (``rec.index_written``)."""
    row = rec.row
    entry = {"path": row.path, "sha256": row.sha256, "size_bytes": row.size_bytes, "producer_pod": row.producer,
             "producer_node": rec.producer_node, "produced_at": rec.produced_at, "consumer": row.consumer,
             "consumer_sha256": rec.consumer_sha256, "recorded_at": rec.recorded_at}
    cm_path = f"/api/v1/namespaces/{row.namespace}/configmaps/{ARTIFACT_INDEX}"
    r = tenant.call("PATCH", cm_path, body={"data": {rec.index_key: json.dumps(entry, sort_keys=True)}})
    if r.ok:
        back = tenant.call("GET", cm_path)
        stored = ((back.body or {}).get("data") or {}).get(rec.index_key) if back.ok else None
        rec.index_written = bool(stored) and json.loads(stored).get("sha256") == row.sha256
    if not rec.index_written:
        reasons.append(f"could not write {ARTIFACT_INDEX}[{rec.index_key}]: HTTP {r.status} {r.message}")


def _local_path(path: str, pod: str, local_root: str | Path | None) -> Path:
    if local_root is None:
        return Path(path)
    parts = Path(path).parts
    if pod in parts:
        return Path(local_root).joinpath(*parts[parts.index(pod):])
    return Path(local_root) / Path(path).name
