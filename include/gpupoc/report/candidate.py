"""The candidate's label in the report's language: *real*, with the version built, or *simulated mode of X vY*,
with the behaviours it imitates and the fidelity measured for it (``gpupoc.kube.candidates``)."""

from __future__ import annotations

from gpupoc.kube.candidates import CandidateKind, CandidateLabel
from gpupoc.report.wording import Wording


def _version(c: CandidateLabel, w: Wording) -> str:
    if c.version and c.kind is CandidateKind.SIMULATED and c.wording_matches:
        oldest, _, newest = c.wording_matches.partition(" to ")
        span = w.t("candidate.span", oldest=oldest, newest=newest) if newest else oldest
        key = "candidate.wording_matches" if c.version_recorded else "candidate.matched_by_wording"
        return w.t(key, version=c.version, span=span)
    if c.version:
        return c.version
    return w.t("candidate.upstream_not_recorded" if c.kind is CandidateKind.SIMULATED else "candidate.version_not_recorded")


def short(c: CandidateLabel | None, w: Wording) -> str:
    """One line: real X vY on Kubernetes vZ (KWOK nodes) / simulated mode of X vY / not known."""
    if c is None:
        return w.t("subject.unknown")
    project = c.project or c.adapter or w.t("candidate.the_scheduler")
    if c.kind is CandidateKind.REAL:
        return w.t("candidate.real", project=project, version=_version(c, w),
                   kubernetes=c.kubernetes_version or w.t("candidate.version_not_recorded"),
                   kwok=w.t("candidate.kwok") if c.kwok else "")
    if c.kind is CandidateKind.SIMULATED:
        return w.t("candidate.simulated", project=project, version=_version(c, w))
    return w.t("candidate.not_served" if c.kwok else "candidate.not_known", project=project)


def fidelity(c: CandidateLabel, w: Wording) -> str:
    """How far the simulated mode was measured against the real scheduler."""
    status = (c.fidelity.value if c.fidelity else "not measured").replace(" ", "_")
    against = (c.zh_fidelity_against if w.language == "zh" else None) or c.fidelity_against or ""
    return w.t(f"candidate.fidelity.{status}", against=against, project=c.project or "")


def banner(c: CandidateLabel | None, w: Wording) -> str:
    """The banner: the label, and for a simulated mode how far it was measured against the real scheduler."""
    text = w.t("banner.candidate", text=short(c, w))
    if c is None or c.kind is not CandidateKind.SIMULATED:
        return text
    return w.t("candidate.with_fidelity", text=text, fidelity=fidelity(c, w))


def imitates(c: CandidateLabel | None, w: Wording) -> str:
    """What a simulated mode imitates (empty for any other candidate)."""
    if c is None or c.kind is not CandidateKind.SIMULATED:
        return ""
    behaviours = c.zh_behaviours if w.language == "zh" and c.zh_behaviours else c.behaviours
    return w.t("candidate.imitates", project=c.project or "", behaviours=w.t("reason_sep").join(behaviours))
