"""Every expectation suite file loads with GX and carries the meta the report needs."""

import json
from pathlib import Path

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.report.items import ITEMS, TEST_CLASSES
from gpupoc.validation.models import Tier
from gpupoc.validation.suites import default_suites_dir, lint_suite, load_suites

SUITE_FILES = sorted(default_suites_dir().glob("*.json"))


def test_suites_directory_holds_suite_files():
    assert len(SUITE_FILES) >= 5, f"expected suites under {default_suites_dir()}, found {SUITE_FILES}"


@pytest.mark.parametrize("path", SUITE_FILES, ids=lambda p: p.name)
def test_suite_file_loads_with_gx_and_has_meta(path: Path):
    import great_expectations as gx

    data = json.loads(path.read_text())
    assert lint_suite(path, data, set(ITEMS)) == []
    suite_file = next(s for s in load_suites() if s.path == path)
    required = {(e.get("meta") or {}).get("requires") for e in data["expectations"]} - {None}
    params = suite_file.parameters({r: True for r in required})  # every check applies
    suite = gx.ExpectationSuite(**suite_file.gx_suite_dict(params))
    assert suite.name == data["name"]
    assert len(suite.expectations) == len(data["expectations"]), "GX dropped or rejected an expectation"
    for exp in suite.expectations:
        meta = exp.meta
        assert meta["check_id"] and meta["signal"] and meta["item"] in ITEMS
        assert Tier(meta["tier"]) is ITEMS[meta["item"]], (
            f"{meta['check_id']}: tier {meta['tier']} differs from item {meta['item']}'s tier")


def test_every_test_class_has_a_suite():
    covered = set()
    for s in load_suites():
        covered |= set(TEST_CLASSES) if "*" in s.test_classes else set(s.test_classes)
    assert set(TEST_CLASSES) <= covered, f"classes without a suite: {set(TEST_CLASSES) - covered}"


def test_every_check_item_is_covered_by_some_check():
    items = {(e.get("meta") or {}).get("item") for s in load_suites() for e in s.data["expectations"]}
    missing = {i for i, t in ITEMS.items() if t is not Tier.EXPERIENCE} - items
    assert not missing, f"items no check covers: {missing}"


def test_lint_names_missing_meta_and_bad_tier(tmp_path):
    data = {"name": "x.y", "meta": {"test_class": "utilization", "table": "utilization"},
            "expectations": [{"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 1},
                              "meta": {"check_id": "UTL-99", "tier": "nice", "item": "utilization_reports"}}]}
    errors = lint_suite(tmp_path / "x.json", data, set(ITEMS))
    assert any("meta.signal: missing" in e for e in errors), errors
    assert any("meta.tier: expected one of" in e and "'nice'" in e for e in errors), errors


def test_load_suites_rejects_duplicate_check_ids(tmp_path):
    exp = {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 1},
           "meta": {"check_id": "UTL-01", "tier": "key", "item": "utilization_reports", "signal": "rows"}}
    for n in ("a", "b"):
        (tmp_path / f"{n}.json").write_text(json.dumps(
            {"name": n, "meta": {"test_class": "utilization", "table": "utilization"}, "expectations": [exp]}))
    with pytest.raises(ConfigError, match="check_id UTL-01 already used"):
        load_suites(tmp_path)


def test_parameter_without_default_is_reported(tmp_path):
    data = {"name": "x", "meta": {"test_class": "utilization", "table": "utilization", "parameters": {}},
            "expectations": [{"type": "expect_table_row_count_to_be_between",
                              "kwargs": {"min_value": {"$PARAMETER": "min_rows"}},
                              "meta": {"check_id": "UTL-98", "tier": "key", "item": "utilization_reports",
                                       "signal": "rows"}}]}
    assert any("'min_rows' has no default" in e for e in lint_suite(tmp_path / "x.json", data))
