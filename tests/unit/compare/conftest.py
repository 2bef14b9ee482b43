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


@pytest.fixture
def two_roots(good_root, tmp_path):
    """(a, b): two copies of one evidence root, as one plan run on two platforms would leave them."""
    a, b = tmp_path / "a" / "evidence", tmp_path / "b" / "evidence"
    for dst in (a, b):
        shutil.copytree(good_root, dst, ignore=shutil.ignore_patterns("report"))
    return a, b


def rerecord(root: Path, change) -> None:
    """Every run's manifest changed by ``change(manifest, run_dir)`` and validated again, as runs of that
    plan would have been (the validation seals the manifest's plan hash)."""
    from gpupoc.validation import validate_run

    for mp in sorted(root.glob("*/*/manifest.json")):
        manifest = json.loads(mp.read_text())
        change(manifest, mp.parent)
        mp.write_text(json.dumps(manifest))
        validate_run(mp.parent)
