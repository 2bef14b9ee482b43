"""The tiered go-live report: items per tier with their evidence, the decision, the scope, never one total.

Names are imported on first use, so a light module (the DAG file's trigger form) does not load the builder.
"""

from importlib import import_module

_NAMES = {
    "BuildResult": "gpupoc.report.build", "build_report": "gpupoc.report.build",
    "Decision": "gpupoc.report.models", "FailureClass": "gpupoc.report.models", "ItemResult": "gpupoc.report.models",
    "Report": "gpupoc.report.models", "Tier": "gpupoc.report.models", "Verdict": "gpupoc.report.models",
    "DecisionRules": "gpupoc.report.rules", "decide": "gpupoc.report.rules",
}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'gpupoc.report' has no attribute {name!r}")
