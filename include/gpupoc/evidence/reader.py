"""Read a run's evidence back (for the report and for ``gpupoc report RUN_DIR``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gpupoc.evidence.schema import schema
from gpupoc.evidence.writer import MANIFEST, sha256_file
from gpupoc.exceptions import SourceUnavailable


@dataclass
class RunEvidence:
    """One run's manifest and tables. A table marked not verified is present, empty, with its reason."""

    run_dir: Path
    manifest: dict
    tables: dict[str, pa.Table] = field(default_factory=dict)

    @property
    def dag_id(self) -> str:
        return self.manifest.get("dag_id", "")

    @property
    def run_id(self) -> str:
        return self.manifest.get("run_id", "")

    def verified(self, table: str) -> bool:
        return bool(self.manifest.get("tables", {}).get(table, {}).get("verified", False))

    def reason(self, table: str) -> str:
        return self.manifest.get("tables", {}).get(table, {}).get("reason", "")

    def table(self, name: str) -> pa.Table:
        """The table, or an empty one of the right schema when the run has none."""
        return self.tables[name] if name in self.tables else schema(name).empty_table()

    def df(self, name: str):
        """The table as a pandas DataFrame (timestamps tz-aware UTC)."""
        return self.table(name).to_pandas()

    def integrity_errors(self) -> list[str]:
        """Tables whose file no longer matches the sha256 the manifest recorded."""
        errors = []
        for name, rec in self.manifest.get("tables", {}).items():
            if not rec.get("path"):
                continue
            p = self.run_dir / rec["path"]
            if not p.is_file():
                errors.append(f"{name}: {rec['path']} is missing")
            elif sha256_file(p) != rec.get("sha256"):
                errors.append(f"{name}: {rec['path']} changed since the manifest was written (sha256 differs)")
        return errors


def read_run(run_dir: str | Path) -> RunEvidence:
    """Load ``manifest.json`` and every table it lists from a run directory."""
    d = Path(run_dir)
    mpath = d / MANIFEST
    if not mpath.is_file():
        raise SourceUnavailable(str(d), "no manifest.json in the run directory",
                                "pass a run directory <evidence_root>/<dag_id>/<run>; its DAG's last task writes "
                                "the manifest")
    manifest = json.loads(mpath.read_text())
    tables = {}
    for name, rec in manifest.get("tables", {}).items():
        p = d / rec["path"] if rec.get("path") else None
        if p is not None and p.is_file():
            tables[name] = pq.read_table(p)
    return RunEvidence(run_dir=d, manifest=manifest, tables=tables)


def find_runs(root: str | Path, dag_id: str) -> list[Path]:
    """Run directories of ``dag_id`` that have a manifest, oldest collection window first."""
    base = Path(root) / dag_id
    runs = [p for p in base.iterdir() if (p / MANIFEST).is_file()] if base.is_dir() else []

    def key(p: Path) -> tuple[str, str]:
        try:
            m = json.loads((p / MANIFEST).read_text())
        except (OSError, ValueError):
            return ("", p.name)
        return ((m.get("collection_window") or {}).get("end") or "", p.name)

    return sorted(runs, key=key)


def latest_run(root: str | Path, dag_id: str) -> RunEvidence | None:
    """The most recent run of ``dag_id`` (by collection window end), or None."""
    runs = find_runs(root, dag_id)
    return read_run(runs[-1]) if runs else None
