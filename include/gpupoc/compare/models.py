"""Typed comparison model. The JSON output is ``Comparison.model_dump(mode="json")``; its schema is
``comparison.schema.json`` next to this module (regenerate with ``python -m gpupoc.compare.render``)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from gpupoc.common.outcomes import Decision, Tier, Verdict
from gpupoc.kube.candidates import CandidateLabel

SCHEMA_VERSION = "1.0"


class CellStatus(str, Enum):
    """A verdict in the matrix, or why the candidates cannot be put side by side on it."""

    PASS = "pass"
    FAIL = "fail"
    NOT_VERIFIED = "not_verified"
    NOT_APPLICABLE = "not_applicable"
    NOT_COMPARABLE = "not_comparable"  # its test class ran on some candidates only: never a win


class PlatformEntry(BaseModel):
    """One candidate: where its evidence came from, what its own report decided, and what blocks it."""

    label: str
    source: str = Field(description="the evidence root or sealed bundle given, relative to the comparison directory")
    source_kind: str = Field(description="root | bundle")
    report_dir: str = Field(description="its own report, relative to the comparison directory")
    adapter: str | None = None
    platform_name: str | None = None
    kubernetes_version: str | None = None
    simulated: bool | None = None
    candidate: CandidateLabel | None = Field(default=None, description="what it was: the real scheduler with its "
                                             "version, or a simulated mode with its behaviours and fidelity")
    plan_name: str | None = None
    plan_hash: str | None = Field(default=None, description="the comparable plan hash (platform choice left out)")
    test_classes: list[str] = Field(default_factory=list, description="the classes whose evidence it judged")
    decision: Decision
    decision_reasons: list[str] = Field(default_factory=list)
    scope: list[dict[str, Any]] = Field(default_factory=list, description="scenario, status, items, reason")
    blocking: list[str] = Field(default_factory=list, description="findings whose item alone postpones")
    must_passed: bool = Field(description="every must item passes")


class MatrixCell(BaseModel):
    label: str
    status: CellStatus
    verdict: Verdict | None = Field(default=None, description="the candidate's own verdict (None: not judged)")
    href: str | None = Field(default=None, description="its evidence, relative to the comparison directory")
    reason: str = ""


class MatrixRow(BaseModel):
    """One item or check across the candidates."""

    kind: str = Field(description="item | check")
    id: str
    item: str = Field(description="the item (itself for an item row)")
    tier: Tier
    test_classes: list[str] = Field(default_factory=list)
    comparable: bool = Field(description="its classes ran on every candidate")
    cells: list[MatrixCell]

    @property
    def differs(self) -> bool:
        return self.comparable and len({c.status for c in self.cells}) > 1


class FigureValue(BaseModel):
    label: str
    value: Any = Field(default=None, description="None: not measured")
    count: int | None = None
    out_of: int | None = None


class FigureRow(BaseModel):
    """One figure across the candidates, in one unit."""

    id: str = Field(description="item:label of a report figure, or the name of a comparison figure")
    name: str = Field(description="what it measures, in words")
    unit: str = ""
    source: str = Field(description="report (the item's own figure) | evidence (<class>/<table>)")
    values: list[FigureValue]


class ExperienceScore(BaseModel):
    item: str
    label: str
    mean: float | None = None
    scores: int = 0


class ProcurementSummary(BaseModel):
    """Which candidates pass every must item, how they differ on key items, the reviewers' experience scores
    and the contract items each would need."""

    candidates: dict[str, str] = Field(default_factory=dict, description="label -> what it was (real X vY, or "
                                       "simulated mode of X vY): a verdict of a simulated mode is not the product's")
    simulated: list[str] = Field(default_factory=list, description="candidates that were simulated modes, or not "
                                 "known to be real")
    pass_every_must: list[str] = Field(default_factory=list)
    fail_a_must: list[str] = Field(default_factory=list)
    key_differences: list[str] = Field(default_factory=list, description="key items whose verdicts differ")
    not_comparable: list[str] = Field(default_factory=list, description="items some candidates did not run")
    experience: list[ExperienceScore] = Field(default_factory=list)
    contract_items: dict[str, list[str]] = Field(default_factory=dict, description="label -> findings for the "
                                                 "contract")


class Comparison(BaseModel):
    """One plan on several candidate platforms, each judged by its own report. Never one total score."""

    schema_version: str = SCHEMA_VERSION
    title: str = "GPU scheduling platforms side by side"
    generated_at: str
    plan_name: str | None = None
    plan_hash: str | None = None
    platforms: list[PlatformEntry]
    matrix: list[MatrixRow]
    figures: list[FigureRow]
    procurement: ProcurementSummary
    charts: dict[str, str] = Field(default_factory=dict, description="chart name -> inline SVG markup")
    notes: list[str] = Field(default_factory=list)
