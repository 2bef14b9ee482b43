"""Read one run's evidence back: ``manifest.json`` and the tables it lists, under a run directory.

The one evidence reader: validation, the report and the bundle all read runs through ``RunEvidence``.
Nothing here raises on a bad table: a missing, changed or unreadable file is a :class:`TableStatus` that is
not verified, with a reason code, and ``problems()`` lists every file that no longer matches the manifest.
Reason codes are worded (English, Chinese) by ``gpupoc.validation.reasons``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpupoc.evidence.writer import MANIFEST, SUITE_PARAMETERS, sha256_file
from gpupoc.exceptions import GpupocError

if TYPE_CHECKING:
    import pandas as pd

TABLES_DIR = "tables"
NOT_COLLECTED_PREFIX = "not collected"
PREREQUISITE_PREFIX = "not run: a prerequisite is missing"  # the class's preflight failed (steps/preflight.py)


class EvidenceUnreadable(GpupocError):
    """A run directory whose manifest is missing or not JSON; names the path and the fix."""


class ProblemKind(str, Enum):
    """What is wrong with one file of a run."""

    MISSING = "missing"                                    # listed, not there
    UNREADABLE = "unreadable"                              # there, but not a complete file of its format
    CHANGED = "changed"                                    # sha256 differs from the manifest's
    CHANGED_AFTER_VALIDATION = "changed_after_validation"  # sha256 differs from the validation summary's
    NO_PLAN_HASH = "no_plan_hash"                          # the manifest names no plan
    PLAN_CHANGED = "plan_changed"                          # the manifest's plan hash is not the one validated
    PARAMETERS_CHANGED = "parameters_changed"              # the manifest's suite parameters are not those validated
    NOT_VALIDATED = "not_validated"                        # a validation summary without hashes


@dataclass(frozen=True)
class Problem:
    """One file of a run that cannot be trusted; ``path`` is relative to the run directory."""

    kind: ProblemKind
    path: str
    detail: str = ""

    @property
    def code(self) -> str:
        return f"integrity.{self.kind.value}"

    @property
    def args(self) -> dict[str, str]:
        return {"path": self.path, "detail": self.detail}


@dataclass(frozen=True)
class TableStatus:
    """What the manifest and the file say of one table. ``code``/``args`` say why it is not verified."""

    name: str
    path: Path
    present: bool
    verified: bool
    rows: int | None = None
    sha256: str | None = None
    source: str | None = None
    code: str = ""
    args: dict[str, Any] = field(default_factory=dict)


def file_error(path: Path) -> str:
    """"" when ``path`` opens as what its suffix says (parquet, JSON), else the reader's complaint (a
    truncated parquet file has no footer)."""
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.ParquetFile(path).metadata  # noqa: B018 - reading the footer is the check
        elif path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a damaged file
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    return ""


def _stamp(path: Path) -> tuple[int, int, int]:
    """What changes when a file is written again: its inode, size and modification time."""
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


@dataclass
class RunEvidence:
    """A run directory ``<evidence_root>/<dag_id>/<run_id>``: its manifest and tables."""

    run_dir: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    _hashes: dict[Path, str] = field(default_factory=dict, repr=False)
    _frames: dict[tuple, tuple] = field(default_factory=dict, repr=False)  # (path, columns) -> (stamp, frame)

    @classmethod
    def open(cls, run_dir: str | Path) -> "RunEvidence":
        """Read the manifest; raise EvidenceUnreadable naming the path and the fix when it is missing or bad."""
        rd = Path(run_dir)
        mp = rd / MANIFEST
        if not mp.is_file():
            raise EvidenceUnreadable(f"{mp}: no evidence manifest; pass a run directory "
                                     "<evidence_root>/<dag_id>/<run_id> written by the evidence collector")
        try:
            manifest = json.loads(mp.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise EvidenceUnreadable(f"{mp}: not readable JSON ({exc}); rerun the evidence collection task") from None
        if not isinstance(manifest, dict):
            raise EvidenceUnreadable(f"{mp}: expected a JSON object, got {type(manifest).__name__}; rerun the "
                                     "evidence collection task")
        return cls(rd, manifest)

    @property
    def dag_id(self) -> str:
        return str(self.manifest.get("dag_id") or self.run_dir.parent.name)

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id") or self.run_dir.name)

    @property
    def test_class(self) -> str:
        return str(self.manifest.get("test_class") or self.dag_id.removeprefix("poc_"))

    @property
    def evidence_root(self) -> Path:
        return self.run_dir.parent.parent

    @property
    def rel_dir(self) -> str:
        """The run directory relative to the evidence root (``poc_x/scheduled__1``)."""
        return f"{self.run_dir.parent.name}/{self.run_dir.name}"

    @property
    def window(self) -> dict[str, Any]:
        return dict(self.manifest.get("collection_window") or self.manifest.get("window") or {})

    @property
    def plan_hash(self) -> str:
        return str(self.manifest.get("plan_hash") or "")

    @property
    def suite_parameters(self) -> dict[str, Any] | None:
        """The suites' parameters the run stored in its manifest (thresholds and ``requires`` flags); None when
        it stored none (evidence written before they were stored) or the value is not a JSON object."""
        params = self.manifest.get(SUITE_PARAMETERS)
        return dict(params) if isinstance(params, dict) else None

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

    def path_of(self, rel: str) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else self.run_dir / p

    def sha256(self, path: Path) -> str:
        """The file's sha256, read once per reader."""
        if path not in self._hashes:
            self._hashes[path] = sha256_file(path)
        return self._hashes[path]

    def status(self, table: str) -> TableStatus:
        """Verified only when the manifest says so, the file is there and its sha256 is the manifest's."""
        entry = self._entries().get(table)
        path = self.run_dir / TABLES_DIR / f"{table}.parquet"
        rel = f"{TABLES_DIR}/{table}.parquet"
        if entry is None:
            return TableStatus(table, path, path.is_file(), False, code="table.not_in_manifest",
                               args={"table": table, "path": rel})
        if entry.get("path"):
            rel = str(entry["path"])
            path = self.path_of(rel)
        present = path.is_file()
        base = dict(name=table, path=path, present=present, rows=entry.get("rows"), sha256=entry.get("sha256"),
                    source=entry.get("source"))
        args = {"table": table, "path": rel}
        reason = str(entry.get("reason") or "")
        if not entry.get("verified", True):
            code = "table.not_collected" if reason.startswith(NOT_COLLECTED_PREFIX) or not entry.get("path") \
                else "table.collector"
            if reason.startswith(PREREQUISITE_PREFIX):
                code, reason = "table.prerequisite", reason.split("(preflight): ", 1)[-1]
            return TableStatus(**base, verified=False, code=code, args={**args, "detail": reason})
        if not present:
            return TableStatus(**base, verified=False, code="table.missing", args=args)
        if entry.get("sha256") and self.sha256(path) != entry["sha256"]:
            err = file_error(path)
            if err:
                return TableStatus(**base, verified=False, code="table.unreadable", args={**args, "detail": err})
            return TableStatus(**base, verified=False, code="table.changed", args=args)
        return TableStatus(**base, verified=True)

    def load(self, table: str, columns: list[str] | None = None) -> pd.DataFrame:
        """The table as a DataFrame, a copy of its own for each caller; empty when absent or unreadable (its
        status says why). The file is read once per reader while it stays the same: a report reads one table
        for many items."""
        import pandas as pd

        st = self.status(table)
        if not st.present:
            return pd.DataFrame(columns=columns or [])
        try:
            key, stamp = (st.path, tuple(columns) if columns is not None else None), _stamp(st.path)
            kept = self._frames.get(key)
            if kept is None or kept[0] != stamp:  # a file written again replaces what was kept of it
                kept = self._frames[key] = (stamp, pd.read_parquet(st.path, columns=columns))
        except Exception:  # noqa: BLE001 - a damaged file is reported by status()/problems(), never a traceback
            return pd.DataFrame(columns=columns or [])
        return kept[1].copy()

    def problems(self) -> list[Problem]:
        """Every table the manifest lists whose file is missing, unreadable or changed, and a missing plan hash.

        Only tables are sealed: the documents under ``files/`` (leases, markers) are rewritten by later tasks."""
        out: list[Problem] = []
        for entry in sorted(self._entries().values(), key=lambda e: str(e.get("path") or "")):
            rel = str(entry.get("path") or "")
            if not rel:
                continue
            path = self.path_of(rel)
            if not path.is_file():
                out.append(Problem(ProblemKind.MISSING, rel))
            elif entry.get("sha256") and self.sha256(path) != entry["sha256"]:
                err = file_error(path)
                out.append(Problem(ProblemKind.UNREADABLE, rel, err) if err else Problem(ProblemKind.CHANGED, rel))
        if not self.plan_hash:
            out.append(Problem(ProblemKind.NO_PLAN_HASH, MANIFEST))
        return out


def find_runs(evidence_root: str | Path, skipped: list[tuple[Path, str]] | None = None) -> list[RunEvidence]:
    """Every run under the evidence root that has a manifest, oldest first (by window end, then path).

    Run directories whose manifest cannot be read are left out and, when ``skipped`` is given, added to it
    with the reason."""
    root = Path(evidence_root)
    runs = []
    for mp in sorted(root.glob(f"*/*/{MANIFEST}")):
        try:
            runs.append(RunEvidence.open(mp.parent))
        except EvidenceUnreadable as exc:
            if skipped is not None:
                skipped.append((mp.parent, str(exc)))
    return sorted(runs, key=lambda r: (str(r.window.get("end") or ""), str(r.run_dir)))
