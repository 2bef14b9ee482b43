"""The preflight's results: one line per result, ✓ or ✗ with the fix; a report of every result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum


class Status(str, Enum):
    OK = "ok"
    FAILED = "failed"
    NOT_APPLICABLE = "not_applicable"  # the plan does not need it (an adapter without queues, no connections)

    @property
    def mark(self) -> str:
        return {"ok": "✓", "failed": "✗", "not_applicable": "–"}[self.value]


@dataclass(frozen=True)
class CheckResult:
    """What one check found about one subject (an identity, a pool, an image ...)."""

    check: str
    subject: str
    status: Status
    detail: str
    fix: str = ""

    @property
    def failed(self) -> bool:
        return self.status is Status.FAILED

    def line(self) -> str:
        text = f"{self.status.mark} {self.check}: {self.subject}: {self.detail}" if self.subject else \
            f"{self.status.mark} {self.check}: {self.detail}"
        return text + (f" — fix: {self.fix}" if self.failed and self.fix else "")

    def to_dict(self) -> dict:
        return {**asdict(self), "status": self.status.value}


def ok(check: str, subject: str, detail: str) -> CheckResult:
    return CheckResult(check, subject, Status.OK, detail)


def failed(check: str, subject: str, detail: str, fix: str) -> CheckResult:
    return CheckResult(check, subject, Status.FAILED, detail, fix)


def not_applicable(check: str, subject: str, detail: str) -> CheckResult:
    return CheckResult(check, subject, Status.NOT_APPLICABLE, detail)


@dataclass
class PreflightReport:
    """Every result, in the order the checks ran; ``seconds`` per check for the cost of a preflight."""

    plan: str
    results: list[CheckResult] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    test_class: str = ""
    api_unreachable: bool = False

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.failed]

    @property
    def passed(self) -> bool:
        return not self.failures

    def missing_pieces(self) -> list[str]:
        """One line per failed result: what is missing and its fix (what a class's items say)."""
        return [r.line().removeprefix("✗ ") for r in self.failures]

    def to_dict(self) -> dict:
        return {"plan": self.plan, "test_class": self.test_class, "passed": self.passed,
                "api_unreachable": self.api_unreachable,
                "results": [r.to_dict() for r in self.results],
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}

    @classmethod
    def from_dict(cls, data: dict) -> "PreflightReport":
        results = [CheckResult(r["check"], r.get("subject", ""), Status(r["status"]), r.get("detail", ""),
                               r.get("fix", "")) for r in data.get("results") or []]
        return cls(str(data.get("plan", "")), results, dict(data.get("seconds") or {}), str(data.get("test_class", "")),
                   bool(data.get("api_unreachable")))
