"""Typed report model. The JSON output is ``Report.model_dump(mode="json")``; its schema is
``report.schema.json`` next to this module (regenerate with ``python -m gpupoc.report.render``)."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field, model_validator

from gpupoc.common.outcomes import Decision, FailureClass, Tier, Verdict  # noqa: F401  (re-exported)
from gpupoc.kube.candidates import CandidateLabel
from gpupoc.validation.models import CheckOutcome

SCHEMA_VERSION = "1.3"
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
    """A measured figure behind an item; a counted one names the check whose rows it counts."""

    label: str = Field(description="string-table key or plain label")
    value: Any
    unit: str = Field(default="", description="string-table key of the unit (unit.seconds, unit.gpu_hours)")
    check: str | None = Field(default=None, description="the check whose rows the figure counts")
    count: int | None = None
    out_of: int | None = Field(default=None, description="the rows counted (count of out_of)")
    not_applicable: int | None = Field(default=None, description="rows the figure counts as complete because "
                                       "the part does not apply to them")

    @classmethod
    def of(cls, label: str, m: Any) -> "Figure":
        """A counted figure (``gpupoc.report.measures.Measure``): "count/total"."""
        return cls(label=label, value=m.share, check=m.check or None, count=m.count, out_of=m.total,
                   not_applicable=m.not_applicable or None)


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


class CoverageEntry(BaseModel):
    """A check (or a reviewer-scored item) that did not pass or fail, with the classes it stands for."""

    check: str = Field(description="check id, or the item id of a reviewer-scored item")
    test_classes: list[str] = Field(default_factory=list, description="empty for a reviewer-scored item")
    reason: str = ""


class Coverage(BaseModel):
    """Every check the suites hold for each test class and every reviewer-scored item: how many passed,
    failed, were not applicable (their case never arose) and were not verified; the last two named."""

    passed: int = 0
    failed: int = 0
    not_applicable: int = 0
    not_verified: int = 0
    data_checks: int = Field(default=0, description="checks of the suites, counted per test class")
    scored_items: int = Field(default=0, description="experience items judged by reviewers' scores")
    not_verified_checks: list[CoverageEntry] = Field(default_factory=list)
    not_applicable_checks: list[CoverageEntry] = Field(default_factory=list)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.not_applicable + self.not_verified


class KeyFigure(BaseModel):
    """A test class's one key figure for the summary page, with the class's status."""

    test_class: str
    label: str = Field(description="string-table key")
    value: str | None = None
    status: Verdict
    check: str | None = Field(default=None, description="the check whose rows the figure counts")
    count: int | None = None
    out_of: int | None = None


class EvidenceTable(BaseModel):
    """A small table shown with an item (at most a few dozen rows) with typed values; the page words them."""

    title: str
    columns: list[str] = Field(description="column names: string-table keys col.<name>")
    rows: list[list[Any]]
    source: str = Field(default="", description="<test class>/<table> the rows come from (its full HTML and CSV)")
    source_rows: int | None = Field(default=None, description="rows of the source table behind the ones shown")
    literal_columns: list[str] = Field(default_factory=list, description="headers that are data (tenant names)")
    column_words: str = Field(default="", description="string-table prefix that words the headers (action)")
    links: list[EvidenceRef] = Field(default_factory=list, description="the whole source table (HTML, CSV, parquet)")

    @property
    def layout(self) -> str:
        """"cards" (one small table per row) when the table is wide and holds sentences, or is very wide, so it
        fits an A4 page; else "table"."""
        long_text = any(isinstance(v, str) and len(v) > 40 for row in self.rows for v in row)
        return "cards" if len(self.columns) > 12 or (len(self.columns) > 7 and long_text) else "table"

    @classmethod
    def from_frame(cls, title: str, df: Any, limit: int = 20, source: str = "") -> "EvidenceTable":
        """The first ``limit`` rows of a DataFrame, as plain JSON values (floats rounded, NaN as None)."""
        total = len(df)
        df = df.head(limit)
        rows = [[None if (isinstance(v, (float, datetime)) and v != v) else (round(v, 3) if isinstance(v, float) else
                 (v.isoformat() if hasattr(v, "isoformat") else (v.item() if hasattr(v, "item") else v)))
                 for v in r] for r in df.itertuples(index=False)]
        return cls(title=title, columns=[str(c) for c in df.columns], rows=rows, source=source, source_rows=total)


class ItemResult(BaseModel):
    """One report item with its tier, verdict and the evidence behind it."""

    id: str
    tier: Tier
    verdict: Verdict
    failure_class: FailureClass | None = None
    reason: str = ""
    decides: Decision | None = Field(default=None, description="what the item decides under the rules (None: a pass)")
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
    checks_not_applicable: int = 0
    failed_checks: list[str] = Field(default_factory=list)
    workloads: int = Field(default=0, description="attempts recorded (a resubmitted wave item has several)")
    success_rate: float | None = Field(default=None, description="share of wave items whose last attempt succeeded")
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
    refused_at_intake: dict[str, int | None] = Field(
        default_factory=dict, description="requests without their token that the evidence receivers (audit_webhook, "
        "alert_receiver) refused during the run; null: the receiver keeps no count or required no token")
    intake: list[str] = Field(default_factory=list, description="the same, worded")


class Subject(BaseModel):
    """What the report judged: the platform, its adapter and Kubernetes version, the plan, the window, and
    whether the cluster was the simulated one (as the cluster's own nodes say)."""

    platform: str | None = Field(default=None, description="the plan's name for the platform")
    adapter: str | None = None
    kubernetes_version: str | None = None
    plan_name: str | None = None
    plan_hash: str | None = Field(default=None, description="the evidence's plan hash (when its runs agree)")
    evidence_plan_hashes: list[str] = Field(default_factory=list, description="every plan hash of the runs")
    report_plan_hash: str | None = Field(default=None, description="the plan the report was built with")
    window_start: str | None = None
    window_end: str | None = None
    timezone: str = Field(default="UTC", description="the plan window's zone; every time on the page is in it")
    simulated: bool | None = Field(default=None, description="None: the runs did not record their nodes")
    simulated_nodes: int | None = None
    kwok_nodes: int | None = Field(default=None, description="KWOK nodes of a real control plane (no GPU ran); "
                                   "None: not recorded")
    candidate: CandidateLabel | None = Field(default=None, description="what the candidate was: the real scheduler "
                                             "with its version, or a simulated mode of it (gpupoc.kube.candidates)")

    @property
    def plan_mismatch(self) -> bool:
        return bool(self.report_plan_hash) and any(h != self.report_plan_hash for h in self.evidence_plan_hashes)


class Report(BaseModel):
    """The tiered go-live report. Never one total score."""

    schema_version: str = SCHEMA_VERSION
    title: str
    language: str
    generated_at: str
    evidence_root: str = Field(description="relative to the report directory")
    subject: Subject = Field(default_factory=Subject)
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
    chart_captions: dict[str, str] = Field(default_factory=dict, description="chart name -> its caption, for a "
                                           "chart whose caption names what it shows (an online service); any "
                                           "other chart's caption is the string table's chart.<name>")

    def item(self, item_id: str) -> ItemResult:
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(f"no report item {item_id!r}; known: {[i.id for i in self.items]}")

    def view(self, tier: Tier) -> list[ItemResult]:
        return [i for i in self.items if i.tier is tier]
