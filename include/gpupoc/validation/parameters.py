"""The suites' parameters a run is judged with: stored with its evidence, never rebuilt from a plan.

A class DAG stores them (``steps.finish.suite_parameters``: the class's thresholds and the ``requires`` flags
saying which cases the plan provokes) in the run's manifest as soon as its plan is read, and validates with
them; revalidation and a report of a run with no stored validation read the same ones back
(``RunEvidence.suite_parameters``). A name a stored set lacks takes the suite's default, except a ``requires``
flag: whether the plan provoked that case cannot be told, so its check is NOT_VERIFIED, naming the flag.

A run that stored no parameters at all (evidence written before they were stored) tells none of them: each of
its checks that reads a parameter (a threshold or a ``requires`` flag) is NOT_VERIFIED, naming them, never
judged against a default nor dropped; checks that read none are judged as usual.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpupoc.validation.suites import SuiteFile

PARAMETERS_UNKNOWN = "check.parameters_unknown"  # validation/reasons.json


def _named(kwargs: Any) -> list[str]:
    """Every ``{"$PARAMETER": name}`` under ``kwargs`` (``minus_x`` is ``x``'s)."""
    if isinstance(kwargs, dict):
        if "$PARAMETER" in kwargs:
            return [str(kwargs["$PARAMETER"]).removeprefix("minus_")]
        return [n for v in kwargs.values() for n in _named(v)]
    if isinstance(kwargs, list):
        return [n for v in kwargs for n in _named(v)]
    return []


def needed(exp: dict[str, Any]) -> list[str]:
    """The parameters one expectation reads: its ``requires`` flag and the thresholds of its kwargs."""
    req = (exp.get("meta") or {}).get("requires")
    return list(dict.fromkeys(([str(req)] if req else []) + _named(exp.get("kwargs") or {})))


def unknown(exp: dict[str, Any], known: dict[str, Any] | None) -> list[str]:
    """The parameters ``exp`` reads that ``known`` (the run's stored set; None: nothing stored) cannot tell."""
    if known is None:
        return needed(exp)
    req = (exp.get("meta") or {}).get("requires")
    return [str(req)] if req and req not in known else []


@dataclass(frozen=True)
class SuitePlan:
    """One suite under a run's parameters: the suite to run (checks whose parameters are known) and the
    checks left unjudged with the parameters they lack."""

    suite: SuiteFile
    params: dict[str, Any]
    held: list[tuple[dict[str, Any], list[str]]]

    @property
    def empty(self) -> bool:
        return not self.suite.expectations(self.params) and not self.held


def plan_suite(s: SuiteFile, known: dict[str, Any] | None) -> SuitePlan:
    """``s`` split by what ``known`` tells: its checks to run under ``known`` over the suite's defaults, and
    the checks whose parameters it cannot tell (kept, never dropped)."""
    exps = list(s.data.get("expectations") or [])
    held = [(e, names) for e in exps if (names := unknown(e, known))]
    kept = [e for e in exps if not unknown(e, known)]
    return SuitePlan(SuiteFile(s.path, {**s.data, "expectations": kept}), s.parameters(known), held)


def default_parameters(test_class: str, suites: list[SuiteFile]) -> dict[str, Any]:
    """Every parameter of the class's suites at the suite's default (what a plan provoking none of the
    ``requires`` cases, with the suites' own thresholds, stores)."""
    out: dict[str, Any] = {}
    for s in suites:
        if s.applies_to(test_class):
            out.update({k: v for k, v in s.parameters().items() if not k.startswith("minus_")})
    return out
