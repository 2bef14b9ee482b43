"""Side by side: one plan's evidence on several platforms, each judged by its own report, in one comparison
(``gpupoc compare``; docs/comparison.md)."""

from gpupoc.compare.build import CompareResult, compare

__all__ = ["CompareResult", "compare"]
