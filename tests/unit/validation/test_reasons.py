"""Reason codes worded in English and Chinese from one table."""

import json
import re

from gpupoc.validation.reasons import REASONS_FILE, word


def test_every_reason_has_both_languages_with_the_same_placeholders():
    data = json.loads(REASONS_FILE.read_text(encoding="utf-8"))
    assert set(data["en"]) == set(data["zh"])
    for code, en in data["en"].items():
        assert set(re.findall(r"{(\w+)}", en)) == set(re.findall(r"{(\w+)}", data["zh"][code])), code


def test_a_nested_reason_is_worded_in_the_same_language():
    args = {"table": "workload_runs", "why": {"code": "table.missing", "args": {"path": "tables/workload_runs.parquet"}}}
    assert word("check.source_not_verified", args) == \
        "source table workload_runs not verified: tables/workload_runs.parquet is missing"
    assert word("check.source_not_verified", args, "zh") == "源表 workload_runs 未校验：tables/workload_runs.parquet 缺失"


def test_an_unknown_code_gives_the_fallback_and_a_missing_value_keeps_its_placeholder():
    assert word("nope", {}, "zh", "stored text") == "stored text"
    assert word("table.missing", {}, "en") == "{path} is missing"
