"""Two candidates' evidence: copies of one validated root of a correctly behaving platform."""

import json
import shutil
from pathlib import Path

import pytest

from gpupoc.validation import synthetic as syn


@pytest.fixture(scope="session")
def good_root(tmp_path_factory):
    return syn.write_good_root(tmp_path_factory.mktemp("good") / "evidence")


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
