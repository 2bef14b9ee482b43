"""What a report is built from: the runs it judges, the plan's report settings, and ``report-inputs.json``.

A report directory keeps ``report-inputs.json`` (paths relative to the report directory and the evidence
root), so ``gpupoc report REPORT_DIR`` rebuilds the same report, and a moved or bundled root still works.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpupoc.evidence.reader import RunEvidence, find_runs
from gpupoc.evidence.writer import MANIFEST
from gpupoc.exceptions import GpupocError
from gpupoc.plan.classes import TestClass
from gpupoc.plan.settings import DecisionRules, Reviewer

INPUTS = "report-inputs.json"
TEST_CLASSES = [tc.value for tc in TestClass]


@dataclass
class Selection:
    """The runs a report judges: the latest of each test class, or those a report directory names."""

    evidence_root: Path
    runs: dict[str, RunEvidence]
    default_out: Path
    scorecard: Any = None
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    plan: dict[str, str] = field(default_factory=dict)


def _under(base: Path, p: str) -> Path:
    """``p`` against ``base`` (an absolute ``p`` from an older report stays as it is)."""
    return Path(p) if Path(p).is_absolute() else base / p


def select(path: Path) -> Selection:
    """A report dir with inputs, a run dir (its run replaces the latest of its class), or an evidence root."""
    if (path / INPUTS).is_file():
        try:
            data = json.loads((path / INPUTS).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise GpupocError(f"{path / INPUTS}: unreadable ({exc}); rebuild from the evidence root") from None
        root = _under(path, data["evidence_root"]).resolve()
        runs = {}
        for rd in data.get("runs", []):
            ev = RunEvidence.open(_under(root, rd))
            runs[ev.test_class] = ev
        return Selection(root, runs, path, data.get("scorecard"), plan=dict(data.get("plan") or {}))
    if (path / MANIFEST).is_file():
        ev = RunEvidence.open(path)
        sel = _select_root(ev.evidence_root, path / "report")
        sel.runs[ev.test_class] = ev
        return sel
    if path.is_dir():
        return _select_root(path, path / "report")
    raise GpupocError(f"{path}: not a directory; pass an evidence root, a run directory or a report directory")


def _select_root(root: Path, out: Path) -> Selection:
    latest, skipped = {}, []
    for ev in find_runs(root, skipped):  # oldest first: the last one of each class wins
        if ev.test_class in TEST_CLASSES:
            latest[ev.test_class] = ev
    return Selection(root, latest, out, skipped=skipped)


def ordered(runs: dict[str, RunEvidence]) -> list[tuple[str, RunEvidence]]:
    """The runs in the report's class order."""
    return sorted(runs.items(), key=lambda kv: TEST_CLASSES.index(kv[0]))


@dataclass
class PlanSettings:
    """What the report takes from the plan."""

    language: str = "en"
    rules: DecisionRules = field(default_factory=DecisionRules)
    thresholds: dict[str, dict[str, Any]] = field(default_factory=dict)
    reviewers: list[Reviewer] = field(default_factory=list)
    plan: dict[str, str] = field(default_factory=dict)  # path and plan hash, for the bundle
    named: dict[str, str] = field(default_factory=dict)  # the plan's name, its platform's, adapter, window zone


def plan_settings(plan: Any) -> PlanSettings:
    """From a plan path, a Plan object or None (the defaults)."""
    if plan is None:
        return PlanSettings()
    from gpupoc.plan import load_plan, plan_hash

    path = ""
    if isinstance(plan, (str, os.PathLike)):
        path = str(Path(plan).resolve())
        plan = load_plan(plan)
    thresholds = {}
    for tc in TEST_CLASSES:
        th = getattr(getattr(plan.test_classes, tc, None), "thresholds", None)
        if th is not None:
            thresholds[tc] = th.model_dump(mode="json")
    named = {"plan": plan.name, "platform": plan.platform.name, "adapter": plan.platform.adapter.value,
             "timezone": plan.window.timezone}
    return PlanSettings(plan.report.language, DecisionRules.from_any(plan.report.decision_rules), thresholds,
                        list(plan.report.reviewers), {"path": path, "plan_hash": plan_hash(plan)}, named)


def write_inputs(out: Path, sel: Selection, scorecard: dict[str, Any], language: str, plan: dict[str, str]) -> Path:
    """``report-inputs.json``: the evidence root (relative to ``out``), the runs (relative to the root), the
    scores and sign-offs, the language and the plan."""
    path = out / INPUTS
    path.write_text(json.dumps({
        "evidence_root": os.path.relpath(sel.evidence_root, out),
        "runs": [ev.rel_dir for _, ev in ordered(sel.runs)],
        "scorecard": scorecard, "language": language, "plan": plan}, indent=1, ensure_ascii=False),
        encoding="utf-8")
    return path
