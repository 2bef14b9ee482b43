"""Typed outcomes of validating one run's evidence: per check, per suite, per run."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator


from gpupoc.common.outcomes import FailureClass, Tier, Verdict  # noqa: F401  (re-exported)


class CheckOutcome(BaseModel):
    """One expectation's outcome with the meta that ties it to a report item."""

    check_id: str
    suite: str
    table: str
    expectation_type: str
    tier: Tier
    item: str
    signal: str
    verdict: Verdict
    optional: bool = False
    failure_class: FailureClass | None = None
    reason: str = Field(default="", description="in English; reason_code and reason_args word it in any language")
    reason_code: str = ""
    reason_args: dict[str, Any] = Field(default_factory=dict)
    observed: dict[str, Any] = Field(default_factory=dict)
    test_class: str = Field(default="", description="the test class whose run this check validated")


class SuiteOutcome(BaseModel):
    """One suite run over one table of one run; ``result_path`` (relative to the evidence root) holds the full
    GX result."""

    suite: str
    table: str
    verified: bool
    reason: str = ""
    result_path: str
    checks: list[CheckOutcome] = Field(default_factory=list)

    @property
    def failed(self) -> list[str]:
        return [c.check_id for c in self.checks if c.verdict is Verdict.FAIL]


class ValidationSummary(BaseModel):
    """Everything the report needs from a validated run. Paths are relative to the evidence root, so a moved
    or bundled root keeps them; ``inputs`` and ``results`` seal what was validated (run-relative path -> sha256)."""

    run_dir: str
    dag_id: str
    run_id: str
    test_class: str
    data_docs_index: str | None = None
    suites: list[SuiteOutcome] = Field(default_factory=list)
    gx_seconds: float = 0.0
    plan_hash: str = Field(default="", description="the manifest's plan hash when the run was validated")
    inputs: dict[str, str] = Field(default_factory=dict, description="every table file validated -> its sha256")
    results: dict[str, str] = Field(default_factory=dict, description="every result file written -> its sha256")
    parameters: dict[str, Any] | None = Field(
        default=None, description="the suite parameters stored with the run that it was validated with; None "
        "when the run stored none")

    @model_validator(mode="after")
    def _checks_know_their_test_class(self) -> "ValidationSummary":
        """Summaries stored before checks carried their test class get the run's."""
        for c in self.checks:
            c.test_class = c.test_class or self.test_class
        return self

    @property
    def checks(self) -> list[CheckOutcome]:
        return [c for s in self.suites for c in s.checks]

    @property
    def failed_checks(self) -> list[str]:
        return [c.check_id for c in self.checks if c.verdict is Verdict.FAIL]

    @property
    def not_verified_checks(self) -> list[str]:
        return [c.check_id for c in self.checks if c.verdict is Verdict.NOT_VERIFIED]

    @property
    def success(self) -> bool:
        return not self.failed_checks

    def summary_path(self) -> str:
        """Relative to the evidence root."""
        return f"{self.run_dir}/validation/summary.json"
