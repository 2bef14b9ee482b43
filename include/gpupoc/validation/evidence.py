"""Read one run's evidence: ``manifest.json`` and ``tables/<table>.parquet`` under a run directory."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from gpupoc.exceptions import GpupocError

TABLES_DIR = "tables"
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class TableStatus:
    """What the manifest says of one table."""

    name: str
    path: Path
    present: bool
    verified: bool
    rows: int | None = None
    sha256: str | None = None
    source: str | None = None
    reason: str = ""


@dataclass
class RunEvidence:
    """A run directory ``<evidence_root>/<dag_id>/<run_id>``: its manifest and tables."""

    run_dir: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    _hashes: dict[Path, str] = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, run_dir: str | Path) -> "RunEvidence":
        """Read the manifest; raise naming the path and the fix when it is missing or not JSON."""
        rd = Path(run_dir)
        mp = rd / MANIFEST
        if not mp.is_file():
            raise GpupocError(f"{mp}: no evidence manifest; pass a run directory <evidence_root>/<dag_id>/<run_id> "
                              "written by the evidence collector")
        try:
            manifest = json.loads(mp.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise GpupocError(f"{mp}: not valid JSON ({exc}); rerun the evidence collection task") from None
        return cls(rd, manifest)

    @property
    def dag_id(self) -> str:
        return str(self.manifest.get("dag_id") or self.run_dir.parent.name)

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id") or self.run_dir.name)

    @property
    def test_class(self) -> str:
        tc = self.manifest.get("test_class")
        if tc:
            return str(tc)
        return self.dag_id.removeprefix("poc_")

    @property
    def evidence_root(self) -> Path:
        return self.run_dir.parent.parent

    @property
    def window(self) -> dict[str, Any]:
        return dict(self.manifest.get("collection_window") or self.manifest.get("window") or {})

    def _entries(self) -> dict[str, dict[str, Any]]:
        tables = self.manifest.get("tables") or {}
        if isinstance(tables, list):
            return {str(t.get("name")): t for t in tables if isinstance(t, dict)}
        return {str(k): (v if isinstance(v, dict) else {}) for k, v in tables.items()}

    def table_names(self) -> list[str]:
        names = set(self._entries())
        tdir = self.run_dir / TABLES_DIR
        if tdir.is_dir():
            names |= {p.stem for p in tdir.glob("*.parquet")}
        return sorted(names)

    def status(self, table: str) -> TableStatus:
        """Present and verified only when the manifest says so and the parquet file exists."""
        entry = self._entries().get(table)
        path = self.run_dir / TABLES_DIR / f"{table}.parquet"
        if entry is None:
            return TableStatus(table, path, path.is_file(), False,
                               reason=f"table {table} is not in the manifest {self.run_dir / MANIFEST}")
        if entry.get("path"):
            p = Path(entry["path"])
            path = p if p.is_absolute() else self.run_dir / p
        verified = bool(entry.get("verified", True)) and path.is_file()
        reason = str(entry.get("reason") or "")
        if not path.is_file() and not reason:
            reason = f"{path} is missing"
        elif verified and entry.get("sha256") and self._hash(path) != entry["sha256"]:
            verified = False
            reason = (f"{path.name} changed since the manifest was written (sha256 differs); "
                      "rerun the evidence collection task")
        return TableStatus(table, path, path.is_file(), verified, entry.get("rows"), entry.get("sha256"),
                           entry.get("source"), reason)

    def _hash(self, path: Path) -> str:
        if path not in self._hashes:
            self._hashes[path] = _sha256(path)
        return self._hashes[path]

    def load(self, table: str, columns: list[str] | None = None) -> pd.DataFrame:
        """The table as a DataFrame (empty when absent)."""
        st = self.status(table)
        if not st.present:
            return pd.DataFrame(columns=columns or [])
        return pd.read_parquet(st.path, columns=columns)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def find_runs(evidence_root: str | Path) -> list[RunEvidence]:
    """Every run under the evidence root that has a manifest, oldest first (by window end, then path)."""
    root = Path(evidence_root)
    runs = []
    for mp in sorted(root.glob(f"*/*/{MANIFEST}")):
        try:
            runs.append(RunEvidence.open(mp.parent))
        except GpupocError:
            continue
    return sorted(runs, key=lambda r: (str(r.window.get("end") or ""), str(r.run_dir)))
