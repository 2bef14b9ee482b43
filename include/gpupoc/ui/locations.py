"""Where the pages come from: the report directory and the Data Docs site under the evidence root.

``GPUPOC_EVIDENCE_ROOT`` (and optionally ``GPUPOC_REPORT_DIR``) win; otherwise the POC plan named by
``GPUPOC_PLAN`` (default ``plans/default.yaml``) gives ``evidence_root`` and ``report.output_dir``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from gpupoc.exceptions import ConfigError, GpupocError

DATA_DOCS_SITE = Path("data_docs") / "local_site"
COMPARISONS = "comparisons"  # gpupoc compare-demo writes one directory per comparison here


@dataclass(frozen=True)
class UiPaths:
    """The only directories the pages read from (everything else on disk stays out of reach)."""

    evidence_root: Path
    report_dir: Path
    data_docs_dir: Path
    source: str
    comparisons_dir: Path | None = None  # default: <evidence_root>/comparisons

    @classmethod
    def for_root(cls, evidence_root: str | Path, report_dir: str | Path | None = None,
                 source: str = "evidence root", comparisons_dir: str | Path | None = None) -> "UiPaths":
        root = Path(evidence_root).resolve()
        reports = Path(report_dir).resolve() if report_dir else root / "report"
        comparisons = Path(comparisons_dir).resolve() if comparisons_dir else root / COMPARISONS
        return cls(evidence_root=root, report_dir=reports, data_docs_dir=root / DATA_DOCS_SITE, source=source,
                   comparisons_dir=comparisons)

    @property
    def comparisons(self) -> Path:
        return self.comparisons_dir or self.evidence_root / COMPARISONS


_cache: dict[tuple[str, float], UiPaths] = {}


def _from_plan(plan_path: Path) -> UiPaths:
    from gpupoc.plan import load_plan

    try:
        mtime = plan_path.stat().st_mtime
    except OSError as exc:
        raise ConfigError("GPUPOC_PLAN", [f"GPUPOC_PLAN: cannot read the POC plan {plan_path} ({exc.strerror}); "
                                          "set GPUPOC_PLAN to the plan file or GPUPOC_EVIDENCE_ROOT to the "
                                          "evidence directory"]) from None
    key = (str(plan_path), mtime)
    if key not in _cache:
        plan = load_plan(plan_path)
        out = plan.resolve_path(plan.report.output_dir) if plan.report.output_dir else None
        # a plan run as one of its platforms keeps its evidence under <root>/<name>: comparisons sit beside
        base = plan.evidence_root_path.parent if plan.platform_choice else plan.evidence_root_path
        _cache.clear()
        _cache[key] = UiPaths.for_root(plan.evidence_root_path, out, source=f"plan {plan_path}",
                                       comparisons_dir=base / COMPARISONS)
    return _cache[key]


def resolve_paths(env: Mapping[str, str] | None = None) -> UiPaths:
    """The directories for this request (the plan is re-read only when its file changes)."""
    env = os.environ if env is None else env
    root = env.get("GPUPOC_EVIDENCE_ROOT", "").strip()
    if root:
        return UiPaths.for_root(root, env.get("GPUPOC_REPORT_DIR", "").strip() or None,
                                source="GPUPOC_EVIDENCE_ROOT")
    from gpupoc.plan.loader import DEFAULT_PLAN

    plan = env.get("GPUPOC_PLAN", "").strip()
    try:
        return _from_plan(Path(plan).resolve() if plan else DEFAULT_PLAN)
    except GpupocError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken plan must show as a page, not kill the server
        raise GpupocError(f"POC plan {plan or DEFAULT_PLAN}: {exc}") from exc
