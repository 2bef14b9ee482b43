"""Pass signals as Great Expectations suites over the evidence tables of one run."""

from gpupoc.validation.models import (CheckOutcome, FailureClass, SuiteOutcome, Tier, ValidationSummary,
                                      Verdict)
from gpupoc.validation.runner import data_docs_index, validate_run, validate_run_or_raise
from gpupoc.validation.stored import load_summary, run_problems

__all__ = ["CheckOutcome", "FailureClass", "SuiteOutcome", "Tier", "ValidationSummary", "Verdict",
           "data_docs_index", "load_summary", "run_problems", "validate_run", "validate_run_or_raise"]
