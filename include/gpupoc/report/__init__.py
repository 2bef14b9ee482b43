"""The tiered go-live report: items per tier with their evidence, the decision, the scope, never one total."""

from gpupoc.report.build import BuildResult, build_report
from gpupoc.report.models import Decision, FailureClass, ItemResult, Report, Tier, Verdict
from gpupoc.report.rules import DecisionRules, decide

__all__ = ["BuildResult", "Decision", "DecisionRules", "FailureClass", "ItemResult", "Report", "Tier", "Verdict",
           "build_report", "decide"]
