"""A sealed evidence bundle: one ``.tar.gz`` that carries a report and everything it stands on.

Layout inside the archive (``gpupoc-bundle/``)::

    SHA256SUMS                     sha256 of every other file (``sha256sum -c`` reads it)
    MANIFESTS.json                 the manifest of manifests: each run's manifest hash, tables, plan hash
    plan/<plan file>, plan/plan_hash.txt
    evidence/<dag_id>/<run_id>/    manifest.json, tables/, files/, validation/ of every run a report judged
    evidence/data_docs/local_site/ the Data Docs site (styled offline)
    evidence/report/<run id>/      the report in every format (the evidence root's layout, so links resolve)

The archive is reproducible: sorted members, fixed times and owners, gzip without a time stamp.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from gpupoc.evidence.reader import RunEvidence, find_runs
from gpupoc.evidence.scrub import scrub_text
from gpupoc.exceptions import GpupocError
from gpupoc.report.inputs import INPUTS, select
from gpupoc.validation.runner import data_docs_index

TOP = "gpupoc-bundle"
SUMS = "SHA256SUMS"
MANIFESTS = "MANIFESTS.json"
FORMAT = "gpupoc-bundle/1"
EVIDENCE = "evidence"
MTIME = 946684800  # 2000-01-01: members carry no build time, so the same content gives the same archive


def bundle_path(report_dir: str | Path) -> Path:
    """Where a report's bundle goes by default: beside its directory, ``<report dir>.bundle.tar.gz``."""
    d = Path(report_dir)
    return d.with_name(f"{d.name}.bundle.tar.gz")


@dataclass
class BundleSpec:
    """What goes in: the evidence root, the report directories and the runs they judged, the plan."""

    evidence_root: Path
    reports: list[Path]
    runs: list[RunEvidence]
    plan: dict[str, str] = field(default_factory=dict)


def spec_for_report(report_dir: str | Path) -> BundleSpec:
    """A report directory (it holds ``report-inputs.json``) and the runs it judged."""
    d = Path(report_dir).resolve()
    if not (d / INPUTS).is_file():
        raise GpupocError(f"{d}: no {INPUTS}; pass a report directory written by `gpupoc report` or the "
                          "poc_report DAG, or use --window START/END")
    sel = select(d)
    return BundleSpec(sel.evidence_root.resolve(), [d], sorted(sel.runs.values(), key=lambda e: e.rel_dir), sel.plan)


def _when(value: str) -> datetime:
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise GpupocError(f"--window: {value!r} is not an ISO 8601 time such as 2026-12-01T00:00:00Z") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=datetime.now().astimezone().tzinfo)


def spec_for_window(evidence_root: str | Path, window: str, report_base: str | Path | None = None) -> BundleSpec:
    """Every run whose collection window ends within ``START/END``, and every report that judged only
    such runs (under ``report_base``, default ``<root>/report``)."""
    root = Path(evidence_root).resolve()
    start_s, sep, end_s = window.partition("/")
    if not sep:
        raise GpupocError(f"--window: expected START/END, got {window!r}")
    start, end = _when(start_s), _when(end_s)
    runs = [ev for ev in find_runs(root)
            if ev.window.get("end") and start <= _when(str(ev.window["end"])) <= end]
    if not runs:
        raise GpupocError(f"{root}: no run's collection window ends within {window}; check the window and the root")
    dirs = {ev.rel_dir for ev in runs}
    base = Path(report_base) if report_base else root / "report"
    reports, plan = [], {}
    for inputs in sorted(base.glob(f"*/{INPUTS}")):
        sel = select(inputs.parent)
        if sel.runs and {ev.rel_dir for ev in sel.runs.values()} <= dirs:
            reports.append(inputs.parent.resolve())
            plan = sel.plan or plan
    if not reports:
        raise GpupocError(f"{base}: no report judged only runs of {window}; build one first (gpupoc report)")
    return BundleSpec(root, reports, runs, plan)


def _run_files(ev: RunEvidence) -> list[Path]:
    """A run's manifest, the tables and documents it lists (with the tables' meta files), its validation."""
    paths = [ev.run_dir / "manifest.json"]
    for entry in list((ev.manifest.get("tables") or {}).values()) + list((ev.manifest.get("files") or {}).values()):
        if isinstance(entry, dict) and entry.get("path"):
            p = ev.path_of(str(entry["path"]))
            paths += [p, p.with_suffix(".meta.json")] if p.suffix == ".parquet" else [p]
    vdir = ev.run_dir / "validation"
    paths += sorted(p for p in vdir.rglob("*") if p.is_file() and not p.name.endswith(".tmp")) if vdir.is_dir() else []
    return [p for p in paths if p.is_file()]


def _arc(root: Path, p: Path) -> str:
    rel = os.path.relpath(p, root)
    return f"{EVIDENCE}/{rel}" if not rel.startswith("..") else f"reports/{p.parent.name}/{p.name}"


def collect(spec: BundleSpec) -> dict[str, bytes | Path]:
    """Archive name (under the top directory) -> the file or the generated bytes."""
    root = spec.evidence_root
    files: dict[str, bytes | Path] = {}
    for ev in spec.runs:
        for p in _run_files(ev):
            files[_arc(root, p)] = p
    site = data_docs_index(root).parent
    if site.is_dir():
        files.update({_arc(root, p): p for p in site.rglob("*") if p.is_file()})
    for d in spec.reports:
        rel = os.path.relpath(d, root)
        prefix = f"{EVIDENCE}/{rel}" if not rel.startswith("..") else f"reports/{d.name}"
        files.update({f"{prefix}/{p.relative_to(d).as_posix()}": p for p in d.rglob("*")
                      if p.is_file() and not p.name.startswith(".")})
    plan_file = Path(spec.plan.get("path") or "")
    if spec.plan.get("path") and plan_file.is_file():
        text = plan_file.read_text(encoding="utf-8")
        files[f"plan/{plan_file.name}"] = scrub_text(text).encode()  # a plan holds paths, never tokens; be sure
    if spec.plan.get("plan_hash"):
        files["plan/plan_hash.txt"] = f"{spec.plan['plan_hash']}  (gpupoc plan hash {plan_file.name})\n".encode()
    files[MANIFESTS] = json.dumps(_manifests(spec, files), indent=1, sort_keys=True, ensure_ascii=False).encode()
    return files


def _manifests(spec: BundleSpec, files: dict[str, bytes | Path]) -> dict:
    runs = []
    for ev in spec.runs:
        base = _arc(spec.evidence_root, ev.run_dir / "manifest.json").rsplit("/", 1)[0]
        runs.append({"test_class": ev.test_class, "dag_id": ev.dag_id, "run_id": ev.run_id, "dir": base,
                     "manifest": f"{base}/manifest.json", "manifest_sha256": ev.sha256(ev.run_dir / "manifest.json"),
                     "plan_hash": ev.plan_hash, "window": ev.window,
                     "tables": {n: {"path": f"{base}/{e['path']}", "sha256": e.get("sha256")}
                                for n, e in sorted((ev.manifest.get("tables") or {}).items()) if e.get("path")}})
    reports = []
    for d in spec.reports:
        data = json.loads((d / "report.json").read_text(encoding="utf-8")) if (d / "report.json").is_file() else {}
        rel = os.path.relpath(d, spec.evidence_root)
        reports.append({"dir": f"{EVIDENCE}/{rel}" if not rel.startswith("..") else f"reports/{d.name}",
                        "decision": data.get("decision"), "generated_at": data.get("generated_at"),
                        "basis": data.get("basis"), "formats": sorted(p.name for p in d.iterdir() if p.is_file())})
    plan_arc = next((a for a in files if a.startswith("plan/") and not a.endswith("plan_hash.txt")), None)
    return {"format": FORMAT, "evidence_root": EVIDENCE, "reports": reports, "runs": runs,
            "plan": {"file": plan_arc, "plan_hash": spec.plan.get("plan_hash") or None,
                     "run_plan_hashes": sorted({ev.plan_hash for ev in spec.runs})}}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(f"{TOP}/{name}")
    info.size, info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname = len(data), MTIME, 0o644, 0, 0, "", ""
    tar.addfile(info, io.BytesIO(data))


def create(spec: BundleSpec, out: str | Path) -> Path:
    """Write the bundle to ``out`` (replaced atomically); return its path."""
    files = {name: (src if isinstance(src, bytes) else Path(src).read_bytes()) for name, src in collect(spec).items()}
    sums = "".join(f"{_sha(files[n])}  {n}\n" for n in sorted(files)).encode()
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, SUMS, sums)
        for name in sorted(files):
            _add(tar, name, files[name])
    tmp.replace(path)
    return path


@dataclass
class Verification:
    """What ``verify`` found: files changed, added or removed since the bundle was sealed, and manifests that
    disagree with the files they list."""

    files: int = 0
    changed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    inconsistent: list[str] = field(default_factory=list)
    sums_sha256: str = ""

    @property
    def ok(self) -> bool:
        return not (self.changed or self.added or self.removed or self.inconsistent)


def verify(path: str | Path) -> Verification:
    """Recompute every hash of the bundle at ``path``."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise GpupocError(f"{path}: not a readable .tar.gz ({exc}); pass a bundle written by `gpupoc bundle`") from None
    prefix = f"{TOP}/"
    found = {name[len(prefix):]: data for name, data in members.items() if name.startswith(prefix)}
    found.update({f"../{name}": data for name, data in members.items() if not name.startswith(prefix)})
    if SUMS not in found:
        raise GpupocError(f"{path}: no {TOP}/{SUMS}; not a gpupoc bundle (or its seal was removed)")
    sealed = {}
    for line in found.pop(SUMS).decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("  ")
        if name:
            sealed[name] = sha
    res = Verification(files=len(found), sums_sha256=_sha("".join(f"{s}  {n}\n" for n, s in sealed.items()).encode()))
    res.changed = sorted(n for n in found if n in sealed and _sha(found[n]) != sealed[n])
    res.added = sorted(n for n in found if n not in sealed)
    res.removed = sorted(n for n in sealed if n not in found)
    res.inconsistent = _inconsistent(found)
    return res


def _inconsistent(found: dict[str, bytes]) -> list[str]:
    """Each run's manifest against MANIFESTS.json, and each table against its run's manifest."""
    try:
        mm = json.loads(found[MANIFESTS])
    except (KeyError, ValueError):
        return [f"{MANIFESTS}: missing or not JSON"]
    out = []
    for run in mm.get("runs", []):
        data = found.get(run["manifest"])
        if data is None:
            continue  # reported as removed
        if _sha(data) != run.get("manifest_sha256"):
            out.append(f"{run['manifest']}: differs from the manifest hash in {MANIFESTS}")
        try:
            tables = json.loads(data).get("tables") or {}
        except ValueError:
            out.append(f"{run['manifest']}: not JSON")
            continue
        for name, entry in sorted(tables.items()):
            arc = str(PurePosixPath(run["dir"]) / str(entry.get("path") or ""))
            if entry.get("path") and arc in found and _sha(found[arc]) != entry.get("sha256"):
                out.append(f"{arc}: differs from the sha256 its run's manifest records for {name}")
    return out
