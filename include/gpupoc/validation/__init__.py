"""Pass signals as Great Expectations suites over the evidence tables of one run.

Names are imported on first use, so the models load without the runner and its data libraries.
"""

from importlib import import_module

_NAMES = {
    **{n: "gpupoc.validation.models" for n in ("CheckOutcome", "FailureClass", "SuiteOutcome", "Tier",
                                               "ValidationSummary", "Verdict")},
    **{n: "gpupoc.validation.runner" for n in ("data_docs_index", "validate_run", "validate_run_or_raise")},
    **{n: "gpupoc.validation.stored" for n in ("load_summary", "run_problems")},
}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'gpupoc.validation' has no attribute {name!r}")
