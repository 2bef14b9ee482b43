"""Every file under ``expectations/`` loads, exactly as written, with GX's own ``ExpectationSuite`` class.

``gpupoc.validation.suites`` hands GX a rebuilt dict; this test hands GX the file itself, as anyone opening
the suite with Great Expectations would, so a key GX does not know (a top-level ``description``) fails here.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from great_expectations.core import ExpectationSuite

from gpupoc.validation.suites import default_suites_dir

SUITES_DIR = default_suites_dir()
SUITE_FILES = sorted(SUITES_DIR.glob("*.json"))
GX_KEYS = [k for k in inspect.signature(ExpectationSuite.__init__).parameters if k != "self"]


def load_in_gx(path: Path) -> ExpectationSuite:
    """``ExpectationSuite(**file)``; a failure names the file and GX's error."""
    data = json.loads(path.read_text(encoding="utf-8"))
    try:
        return ExpectationSuite(**data)
    except Exception as exc:  # noqa: BLE001 - whatever GX raises is the finding
        pytest.fail(f"{path}: GX's ExpectationSuite refuses the file: {type(exc).__name__}: {exc}; keep only "
                    f"GX's keys {GX_KEYS} at the top level and put anything else in meta")


def test_every_file_in_the_suites_directory_is_a_suite_file():
    others = sorted(p.name for p in SUITES_DIR.iterdir() if p.suffix != ".json" and p.name != "README.md")
    assert SUITE_FILES and not others, f"expected only *.json suites and README.md in {SUITES_DIR}, got {others}"


@pytest.mark.parametrize("path", SUITE_FILES, ids=lambda p: p.name)
def test_suite_file_loads_in_gx_keeping_its_meta(path: Path):
    data = json.loads(path.read_text(encoding="utf-8"))
    suite = load_in_gx(path)
    assert suite.name == data["name"]
    assert {k: suite.meta.get(k) for k in data["meta"]} == data["meta"], f"{path.name}: GX changed the suite meta"
    assert [e.meta for e in suite.expectations] == [e["meta"] for e in data["expectations"]], (
        f"{path.name}: GX dropped an expectation or changed an expectation's meta")


def test_a_key_gx_does_not_know_fails_naming_the_file_and_the_error(tmp_path):
    bad = tmp_path / "tenant_isolation.access_probes.json"
    good = json.loads(SUITE_FILES[0].read_text(encoding="utf-8"))
    bad.write_text(json.dumps(good | {"description": "at the top level"}))
    with pytest.raises(pytest.fail.Exception) as info:
        load_in_gx(bad)
    assert str(bad) in str(info.value) and "unexpected keyword argument 'description'" in str(info.value)
