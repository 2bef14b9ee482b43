"""The procurement summary: what each candidate was (real, or a simulated mode: never the product), who passes
every must item, where the candidates differ on key items, the reviewers' experience scores per candidate and
the contract items each would need."""

from __future__ import annotations

from gpupoc.common.outcomes import Tier, Verdict
from gpupoc.compare.models import ExperienceScore, MatrixRow, ProcurementSummary
from gpupoc.kube.candidates import CandidateKind
from gpupoc.report.models import FindingTarget, Report


def must_passed(report: Report) -> bool:
    """Every must item passes (not verified, not applicable alone or failed: not passed)."""
    musts = report.view(Tier.MUST)
    return bool(musts) and all(i.verdict is Verdict.PASS for i in musts)


def _experience(reports: dict[str, Report]) -> list[ExperienceScore]:
    out = []
    for label, r in reports.items():
        for it in r.view(Tier.EXPERIENCE):
            scores = [s.score for s in it.scores]
            out.append(ExperienceScore(item=it.id, label=label, scores=len(scores),
                                       mean=round(sum(scores) / len(scores), 2) if scores else None))
    return out


def _what(r: Report) -> str:
    c = r.subject.candidate
    return c.text if c else "not known whether real or simulated (no label recorded)"


def summarise(reports: dict[str, Report], matrix: list[MatrixRow]) -> ProcurementSummary:
    items = [r for r in matrix if r.kind == "item"]
    return ProcurementSummary(
        candidates={label: _what(r) for label, r in reports.items()},
        simulated=[label for label, r in reports.items()
                   if r.subject.candidate is None or r.subject.candidate.kind is not CandidateKind.REAL],
        pass_every_must=[label for label, r in reports.items() if must_passed(r)],
        fail_a_must=[label for label, r in reports.items() if not must_passed(r)],
        key_differences=[r.id for r in items if r.tier is Tier.KEY and r.differs],
        not_comparable=[r.id for r in items if not r.comparable],
        experience=_experience(reports),
        contract_items={label: [f"{f.item}: {f.text}" for f in r.findings if f.target is FindingTarget.CONTRACT]
                        for label, r in reports.items()})
