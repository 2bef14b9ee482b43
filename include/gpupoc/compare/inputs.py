"""What a comparison reads: ``NAME=ROOT_OR_BUNDLE`` labels, each an evidence root or a sealed bundle, with its
integrity and its plan checked before anything is judged.

A bundle is verified (``gpupoc.report.bundle.verify``) and unpacked under the comparison directory; a root's
runs are checked against their manifests (``RunEvidence.problems``). Evidence of other plans is refused with
the plans named and the fields that differ (``files/plan.json`` of each run, written by ``validate_plan``).
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gpupoc.evidence.reader import ProblemKind, RunEvidence
from gpupoc.exceptions import ComparisonRefused, ConfigError
from gpupoc.report.bundle import TOP, verify
from gpupoc.report.inputs import INPUTS, Selection, select

TAMPERED = (ProblemKind.CHANGED, ProblemKind.UNREADABLE, ProblemKind.MISSING, ProblemKind.CHANGED_AFTER_VALIDATION,
            ProblemKind.PLAN_CHANGED)
PLAN_FILE = "files/plan.json"
MAX_FIELDS = 12
# How a node failure is provoked, not what is tested: the real control plane fails a KWOK node with the taint
# injector where the simulated cluster uses its own (``gpupoc.demo.kwok.kwok_injectors``). A plan differing
# only there compares, with a note.
INJECTOR_FIELD = re.compile(r"^test_classes\.fault_recovery\.(injections|service_failures)\[\d+\]\.injector(\.|$)")


@dataclass
class Source:
    """One candidate's evidence, read and checked."""

    label: str
    given: Path
    kind: str                      # root | bundle
    selection: Selection
    plan: Path | None = None       # a bundle's plan file (report settings)
    notes: list[str] = field(default_factory=list)

    @property
    def runs(self) -> dict[str, RunEvidence]:
        return self.selection.runs

    def manifest_values(self, key: str) -> list[str]:
        return sorted({str(ev.manifest.get(key)) for ev in self.runs.values() if ev.manifest.get(key)})

    @property
    def plan_hashes(self) -> list[str]:
        return sorted({str(ev.manifest.get("comparable_plan_hash") or ev.plan_hash) for ev in self.runs.values()})

    def plan_data(self) -> dict | None:
        for ev in self.runs.values():
            p = ev.run_dir / PLAN_FILE
            if p.is_file():
                try:
                    return json.loads(p.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    return None
        return None


def parse_labels(values: list[str]) -> list[tuple[str, Path]]:
    """``NAME=PATH`` pairs; at least two, names unique, paths there."""
    out: list[tuple[str, Path]] = []
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ComparisonRefused(f"--label {v!r}: expected NAME=ROOT_OR_BUNDLE (e.g. kueue=var/evidence/kueue)")
        if name in {n for n, _ in out}:
            raise ComparisonRefused(f"--label {name}: given twice; give each candidate one label")
        p = Path(path).expanduser()
        if not p.exists():
            raise ComparisonRefused(f"--label {name}={path}: no such evidence root or bundle; pass an existing path")
        out.append((name.strip(), p))
    if len(out) < 2:
        raise ComparisonRefused(f"--label: {len(out)} candidate(s) given; a comparison needs two or more")
    return out


def _unpack(label: str, bundle: Path, into: Path) -> Path:
    """The verified bundle's files under ``into`` (members outside the bundle's top directory refused)."""
    v = verify(bundle)
    if not v.ok:
        parts = [f"{what} {names[:5]}" for what, names in (("changed", v.changed), ("added", v.added),
                 ("removed", v.removed), ("inconsistent", v.inconsistent)) if names]
        raise ComparisonRefused(f"--label {label}={bundle}: the sealed bundle does not match its seal ({'; '.join(parts)});"
                                " compare the bundle as it was sealed, or seal the evidence again with gpupoc bundle")
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    with tarfile.open(bundle, "r:gz") as tar:
        for m in tar.getmembers():
            rel = PurePosixPath(m.name)
            if not m.isfile() or rel.parts[:1] != (TOP,) or ".." in rel.parts:
                continue
            dst = into.joinpath(*rel.parts[1:])
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(tar.extractfile(m).read())  # type: ignore[union-attr]
    return into


def read_source(label: str, path: Path, work: Path) -> Source:
    """The candidate ``label``'s evidence: a sealed bundle (verified, unpacked under ``work``) or a root."""
    if path.is_file():
        root = _unpack(label, path, work / "bundles" / label)
        reports = sorted((root / "evidence" / "report").glob(f"*/{INPUTS}"))
        if not reports:
            raise ComparisonRefused(f"--label {label}={path}: the bundle holds no report ({INPUTS}); pass a bundle "
                                    "written by gpupoc report or gpupoc bundle")
        plans = [p for p in sorted((root / "plan").glob("*")) if p.suffix in (".yaml", ".yml")]
        src = Source(label, path, "bundle", select(reports[-1].parent), plans[0] if plans else None)
    else:
        src = Source(label, path, "root", select(path))
    if not src.runs:
        raise ComparisonRefused(f"--label {label}={path}: no run with a manifest under it; pass an evidence root "
                                "(<root>/<dag_id>/<run_id>/manifest.json) or a sealed bundle")
    _refuse_tampered(src)
    return src


def _refuse_tampered(src: Source) -> None:
    bad = [f"{ev.rel_dir}/{p.path} ({p.kind.value})" for ev in src.runs.values() for p in ev.problems()
           if p.kind in TAMPERED]
    if bad:
        raise ComparisonRefused(f"--label {src.label}={src.given}: files changed, damaged or removed since their run "
                                f"sealed them: "
                                f"{', '.join(bad[:8])}; compare evidence as its runs wrote it (run the class again)")


def field_differences(a: object, b: object, path: str = "") -> list[str]:
    """The dotted paths where two plans' data differ (lists by index)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += field_differences(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in field_differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [path or "(root)"]


def _plan_words(src: Source) -> str:
    names = src.manifest_values("plan_name") or ["unnamed"]
    return f"{src.label} (plan {', '.join(repr(n) for n in names)}, hash {', '.join(h[:12] for h in src.plan_hashes)})"


def check_same_plan(sources: list[Source]) -> str:
    """The one comparable plan hash of every candidate; ComparisonRefused naming the plans and the fields that
    differ otherwise."""
    for src in sources:
        if len(src.plan_hashes) > 1:
            raise ComparisonRefused(f"--label {src.label}: its runs come from {len(src.plan_hashes)} plans "
                                    f"({', '.join(h[:12] for h in src.plan_hashes)}); run every class of one plan")
    first = sources[0]
    for src in sources[1:]:
        if src.plan_hashes != first.plan_hashes:
            a, b = first.plan_data(), src.plan_data()
            fields = field_differences(a, b) if a is not None and b is not None else []
            if fields and all(INJECTOR_FIELD.match(f) for f in fields):
                src.notes.append(f"{src.label}: its plan differs from {first.label}'s only in how node failures are "
                                 f"provoked ({', '.join(fields[:MAX_FIELDS])}): the same failures, each provoked as "
                                 "its cluster can (the real control plane's taint, the simulated cluster's own)")
                continue
            which = (f"differing fields: {', '.join(fields[:MAX_FIELDS])}{' …' if len(fields) > MAX_FIELDS else ''}"
                     if fields else "the evidence records only the plans' hashes, not their fields")
            raise ComparisonRefused(f"evidence of different plans: {_plan_words(first)} and {_plan_words(src)}; "
                                    f"{which}; run one plan on every platform (--platform NAME) and compare that")
    return first.plan_hashes[0] if first.plan_hashes else ""


def bundle_plan(src: Source) -> Path | None:
    """A bundle's plan file when it loads as a plan (its paths may point where the bundle was sealed)."""
    if src.plan is None:
        return None
    from gpupoc.plan import load_plan

    try:
        load_plan(src.plan, kubeconfig_later=True)
    except ConfigError as exc:
        src.notes.append(f"{src.label}: the bundle's plan {src.plan.name} does not load here ({exc.errors[:1]}); "
                         "its report is built with the default report settings")
        return None
    return src.plan
