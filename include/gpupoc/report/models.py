"""Typed report model. The JSON output is ``Report.model_dump(mode="json")``; its schema is
``report.schema.json`` next to this module (regenerate with ``python -m gpupoc.report.render``)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field, model_validator

from gpupoc.common.outcomes import Decision, FailureClass, Tier, Verdict  # noqa: F401  (re-exported)
from gpupoc.validation.models import CheckOutcome

SCHEMA_VERSION = "1.1"
DECISION_ITEM = "decision"  # what the management reviewer signs off


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


class ReviewRole(str, Enum):
    """Who signs off which block: security the must items, platform the key items, business the experience
    items, management the decision."""

    SECURITY = "security"
    PLATFORM = "platform"
    BUSINESS = "business"
    MANAGEMENT = "management"


class SignOffAction(str, Enum):
    CONFIRM = "confirm"
    OBJECT = "object"


class SignOffStatus(str, Enum):
    CONFIRMED = "confirmed"
    OBJECTED = "objected"
    OPEN = "open"


class SignOff(BaseModel):
    """One reviewer's confirmation of, or objection to, items of their block (all of it when ``items`` is
    empty). An objection keeps its items open, never a pass."""

    reviewer: str = Field(min_length=1)
    role: ReviewRole
    action: SignOffAction
    items: list[str] = Field(default_factory=list, description="item ids of the role's block ('decision' for "
                             "management); empty: the whole block")
    comment: str = ""
    at: str = Field(min_length=1, description="when it was given (ISO 8601)")
    basis: str = Field(default="", description="fingerprint of the evidence the reviewer judged; empty: this "
                       "report's")
    signed_in_as: str = Field(default="", description="the Airflow user who triggered the report run that took "
                              "this sign-off (set by the run, never by the form); empty: not given through the "
                              "trigger form")

    @model_validator(mode="after")
    def _objection_says_why(self) -> "SignOff":
        if self.action is SignOffAction.OBJECT and not self.comment.strip():
            raise ValueError("an objection needs a comment saying what is wrong")
        return self


class UnverifiedSignOff(BaseModel):
    """A sign-off shown as a claim, never counted: who signed in was not the reviewer it names."""

    signoff: SignOff
    reason: str


class SignOffLine(BaseModel):
    """One item of a block (or the decision) with who confirmed or objected."""

    item: str
    verdict: str = Field(description="the item's verdict, or the decision for the management block")
    status: SignOffStatus
    by: list[SignOff] = Field(default_factory=list)


class SignOffBlock(BaseModel):
    """The confirmation block of one role."""

    role: ReviewRole
    tier: Tier | None = Field(description="the tier it confirms; None: the decision")
    reviewers: list[str] = Field(default_factory=list, description="the plan's reviewers of this role")
    status: SignOffStatus
    lines: list[SignOffLine] = Field(default_factory=list)
    other_evidence: list[SignOff] = Field(default_factory=list, description="given on other evidence; not counted")
    unverified: list[UnverifiedSignOff] = Field(default_factory=list, description="claims not signed in as the "
                                                "reviewer's Airflow user; not counted")


class Coverage(BaseModel):
    """How many checks passed, failed and were not verified; the not verified ones named."""

    passed: int = 0
    failed: int = 0
    not_verified: int = 0
    not_verified_checks: list[str] = Field(default_factory=list)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.not_verified


class KeyFigure(BaseModel):
    """A test class's one key figure for the summary page, with the class's status."""

    test_class: str
    label: str = Field(description="string-table key")
    value: str | None = None
    status: Verdict


class EvidenceTable(BaseModel):
    """A small table shown with an item (at most a few dozen rows)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]

    @classmethod
    def from_frame(cls, title: str, df: Any, limit: int = 20) -> "EvidenceTable":
        """The first ``limit`` rows of a DataFrame, as plain JSON values (floats rounded, NaN as None)."""
        df = df.head(limit)
        rows = [[None if (isinstance(v, float) and v != v) else (round(v, 3) if isinstance(v, float) else
                 (v.isoformat() if hasattr(v, "isoformat") else (v.item() if hasattr(v, "item") else v)))
                 for v in r] for r in df.itertuples(index=False)]
        return cls(title=title, columns=[str(c) for c in df.columns], rows=rows)


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
    signoffs: list[SignOff] = Field(default_factory=list)


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
    run_dir: str = Field(description="relative to the evidence root")
    window: dict[str, Any] = Field(default_factory=dict)
    platform: dict[str, Any] = Field(default_factory=dict)
    plan_hash: str | None = None
    problems: list[str] = Field(default_factory=list, description="why its evidence is not trusted (every check "
                                "it feeds is then not verified)")


class Report(BaseModel):
    """The tiered go-live report. Never one total score."""

    schema_version: str = SCHEMA_VERSION
    title: str
    language: str
    generated_at: str
    evidence_root: str = Field(description="relative to the report directory")
    basis: str = Field(default="", description="fingerprint of the evidence judged (runs, manifests, validations)")
    sources: list[SourceRun]
    decision: Decision
    decision_reasons: list[str]
    items: list[ItemResult]
    scope: list[ScenarioScope]
    findings: list[Finding]
    blocking: list[Finding] = Field(default_factory=list, description="findings whose item alone postpones")
    coverage: Coverage = Field(default_factory=Coverage)
    key_figures: list[KeyFigure] = Field(default_factory=list)
    signoff: list[SignOffBlock] = Field(default_factory=list)
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
