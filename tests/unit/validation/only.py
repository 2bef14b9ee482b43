"""Validate a run with only the suites a test judges.

A test that asserts on the checks of one or two suites gains nothing from GX validating every other suite of
the class on tables it did not change (those are judged on the same good tables by ``test_runner.py`` and by
the report tests' validated roots), and a class's full validation costs five or six times one suite's.
Each suite is judged on its own tables whatever else is validated (``validation/runner.py``: one validation
definition per suite; a conditional check reads its case tables from the run), so its checks come out the same.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gpupoc.validation.suites import default_suites_dir


def suites(dest: Path, *names: str) -> Path:
    """A suites directory at ``dest`` holding copies of the project's suites ``names`` (``queue_congestion.
    service_slo``, without ``.json``); pass it as ``validate_run(run, suites_dir=...)``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(default_suites_dir() / f"{name}.json", dest / f"{name}.json")
    return dest
