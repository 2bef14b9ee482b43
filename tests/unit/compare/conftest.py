"""Two candidates' evidence: copies of one validated root of a correctly behaving platform (built once per test
session: ``tests/session_cache.py``)."""

import json
import shutil
from pathlib import Path

import pytest

from tests import session_cache


@pytest.fixture(scope="session")
def good_root(tmp_path_factory):
    return session_cache.good_root(tmp_path_factory)


def copies(good_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(a, b): two copies of one evidence root under ``tmp_path``, as one plan run on two platforms would
    leave them."""
    a, b = tmp_path / "a" / "evidence", tmp_path / "b" / "evidence"
    for dst in (a, b):
        shutil.copytree(good_root, dst, ignore=shutil.ignore_patterns("report"))
    return a, b


@pytest.fixture
def two_roots(good_root, tmp_path):
    """(a, b): two copies of one evidence root, as one plan run on two platforms would leave them."""
    return copies(good_root, tmp_path)


def rerecord(root: Path, change) -> None:
    """Every run's manifest changed by ``change(manifest, run_dir)``, its validation as runs of that plan
    would have it: validated again when the change broke what the stored validation sealed (the manifest's
    plan hash, the suite parameters, the tables). A change to nothing sealed (the platform, the plan's name,
    its comparable hash) leaves verdicts a second validation would only write again, minutes of GX."""
    from gpupoc.evidence.reader import RunEvidence
    from gpupoc.validation import validate_run
    from gpupoc.validation.stored import read_summary, run_problems

    for mp in sorted(root.glob("*/*/manifest.json")):
        manifest = json.loads(mp.read_text())
        change(manifest, mp.parent)
        mp.write_text(json.dumps(manifest))
        ev = RunEvidence.open(mp.parent)
        summary, unreadable = read_summary(ev)
        if summary is None or unreadable or run_problems(ev, summary):
            validate_run(mp.parent)
