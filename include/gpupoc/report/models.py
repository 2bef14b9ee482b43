"""Typed report model. The JSON output is ``Report.model_dump(mode="json")``; its schema is
``report.schema.json`` next to this module (regenerate with ``python -m gpupoc.report.render``)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from gpupoc.common.outcomes import Decision, FailureClass, Tier, Verdict  # noqa: F401  (re-exported)
from gpupoc.validation.models import CheckOutcome

SCHEMA_VERSION = "1.0"



class ScopeStatus(str, Enum):
    GO_LIVE = "go_live"
    SECOND_VERIFICATION = "second_verification"
    BLOCKED = "blocked"


class FindingTarget(str, Enum):
    CONTRACT = "contract"
    IMPLEMENTATION_PLAN = "implementation_plan"
    SECOND_VERIFICATION = "second_verification"


class Figure(BaseModel):
    """A measured figure behind an item."""

    label: str = Field(description="string-table key or plain label")
    value: Any
    unit: str = ""


class EvidenceRef(BaseModel):
    """A link to a file behind an item: an evidence table, a GX result, the Data Docs site."""

    label: str
    href: str = Field(description="path relative to the report directory")
    kind: str = Field(description="table | validation | data_docs | scorecard")
    sha256: str | None = None


class ReviewerScore(BaseModel):
    reviewer: str = Field(min_length=1)
    role: str = ""
    item: str
    score: int = Field(ge=1, le=5)
    comment: str = ""


class EvidenceTable(BaseModel):
    """A small table shown with an item (at most a few dozen rows)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]


class ItemResult(BaseModel):
    """One report item with its tier, verdict and the evidence behind it."""

    id: str
    tier: Tier
    verdict: Verdict
    failure_class: FailureClass | None = None
    reason: str = ""
    test_classes: list[str] = Field(default_factory=list)
    checks: list[CheckOutcome] = Field(default_factory=list)
    figures: list[Figure] = Field(default_factory=list)
    tables: list[EvidenceTable] = Field(default_factory=list)
    evidence: list[EvidenceRef] = Field(default_factory=list)
    scores: list[ReviewerScore] = Field(default_factory=list)


class ScenarioScope(BaseModel):
    scenario: str
    status: ScopeStatus
    items: list[str]
    reason: str = ""


class Finding(BaseModel):
    item: str
    target: FindingTarget
    failure_class: FailureClass | None = None
    text: str


class RunStat(BaseModel):
    """One evidence run in the POC window."""

    dag_id: str
    run_id: str
    test_class: str
    window_end: str | None = None
    validated: bool
    checks_passed: int = 0
    checks_failed: int = 0
    checks_not_verified: int = 0
    failed_checks: list[str] = Field(default_factory=list)
    workloads: int = 0
    success_rate: float | None = None
    wait_p50_seconds: float | None = None
    wait_p95_seconds: float | None = None


class Stability(BaseModel):
    """Across the window: how results move from run to run."""

    runs: list[RunStat] = Field(default_factory=list)
    persistent: list[str] = Field(default_factory=list, description="checks failing in every run of their class")
    intermittent: list[str] = Field(default_factory=list, description="checks that failed in some runs, not all")
    resolved: list[str] = Field(default_factory=list, description="failed earlier, pass in the latest run")
    new: list[str] = Field(default_factory=list, description="fail only in the latest run")


class SourceRun(BaseModel):
    test_class: str
    dag_id: str
    run_id: str
    run_dir: str
    window: dict[str, Any] = Field(default_factory=dict)
    platform: dict[str, Any] = Field(default_factory=dict)
    plan_hash: str | None = None


class Report(BaseModel):
    """The tiered go-live report. Never one total score."""

    schema_version: str = SCHEMA_VERSION
    title: str
    language: str
    generated_at: str
    evidence_root: str
    sources: list[SourceRun]
    decision: Decision
    decision_reasons: list[str]
    items: list[ItemResult]
    scope: list[ScenarioScope]
    findings: list[Finding]
    failure_records: EvidenceTable | None = None
    stability: Stability
    data_docs: str | None = None
    notes: list[str] = Field(default_factory=list)
    charts: dict[str, str] = Field(default_factory=dict, description="chart name -> inline SVG markup")

    def item(self, item_id: str) -> ItemResult:
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(f"no report item {item_id!r}; known: {[i.id for i in self.items]}")

    def view(self, tier: Tier) -> list[ItemResult]:
        return [i for i in self.items if i.tier is tier]
