"""One language per report: in a Chinese report every sentence the report itself writes is Chinese (check,
scope, decision, sign-off and integrity reasons included); only evidence quoted as data stays as it was."""

import html
import json
import re

import pytest

from .conftest import plan_file, signed, write_later_run
from gpupoc.report import build_report
from gpupoc.report.wording import Wording, strings
from gpupoc.validation import synthetic as syn
from gpupoc.validation.reasons import REASONS_FILE

PROPER_NAMES = {"Data Docs", "gpupoc report"}  # a product and a command: the same in every language


def english_fragments() -> set[str]:
    """Every run of two or more English words in the English string table and reason templates."""
    templates = list(strings("en").values()) + list(json.loads(REASONS_FILE.read_text())["en"].values())
    out = set()
    for tpl in templates:
        for part in re.split(r"\{[^}]*\}", tpl):
            out |= set(re.findall(r"[A-Za-z][A-Za-z'\-]*(?: [A-Za-z][A-Za-z'\-]*)+", part))
    return out - PROPER_NAMES


def visible_text(path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        text = re.sub(r"<style>.*?</style>", " ", text, flags=re.S)
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return text


@pytest.fixture(scope="module")
def zh_report(good_root, tmp_path_factory):
    """A Chinese report with something of every kind to say: a failed check, tables the collector could not
    verify, a class never validated, evidence changed after validation, an objection, scores missing."""
    import shutil

    root = tmp_path_factory.mktemp("zh") / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report"))
    t = syn.good_tables("tenant_isolation")
    ap = t["access_probes"]
    ap.loc[ap["action"] == "read_logs", ["allowed", "http_status"]] = [True, 200]
    t["quota_samples"] = None
    write_later_run(root, "tenant_isolation", t, not_verified={"quota_samples": "ResourceQuota not readable"})
    t = syn.good_tables("fault_recovery")
    t["failure_records"].loc[[0, 2], "logs_readable"] = False
    t["alerts"] = None
    write_later_run(root, "fault_recovery", t)
    write_later_run(root, "audit_trail", syn.good_tables("audit_trail"), validate=False)
    util = root / "poc_utilization" / "scheduled__1" / "tables" / "utilization.parquet"
    util.write_bytes(util.read_bytes()[:300])
    objection = {"reviewer": "赵敏", "role": "security", "action": "object", "items": ["queue_explainability"],
                 "comment": "样本中没有抢占", "at": "2026-12-01T10:00:00+08:00"}
    forged = {"reviewer": "赵敏", "role": "security", "action": "confirm", "at": "2026-12-01T11:00:00+08:00"}
    card = {"signoffs": [signed(objection), signed(forged, "li")]}  # the second: Li Lei signed in, claims 赵敏
    plan = plan_file(root, tmp_path_factory.mktemp("zh-plan"))
    return build_report(root, out_dir=root / "report" / "zh", language="zh", scorecard=card, plan=plan)


def test_the_fixture_says_everything_a_report_can_say(zh_report):
    r = zh_report.report
    verdicts = {i.verdict.value for i in r.items}
    assert verdicts == {"fail", "not_verified"} or verdicts == {"pass", "fail", "not_verified"}
    codes = {c.reason_code.split(".")[0] for i in r.items for c in i.checks}
    assert {"check", "table", "integrity"} <= codes, codes
    assert any(s.status.value != "go_live" and s.reason for s in r.scope)


@pytest.mark.parametrize("name", ["report.html", "summary.html", "report.md", "report.junit.xml"])
def test_no_english_sentence_fragment_of_the_report_s_own_remains_in_a_chinese_report(zh_report, name):
    text = visible_text(zh_report.out_dir / name)
    left = sorted(f for f in english_fragments() if f in text)
    assert not left, f"{name}: English left in a Chinese report: {left}"


def test_reasons_are_chinese_where_they_were_english(zh_report):
    r = zh_report.report
    failing = next(c for i in r.items for c in i.checks if c.reason_code == "check.not_met_rows_sample")
    assert failing.reason.startswith("未达到：") and "rows unexpected" not in failing.reason
    blocked = next(s for s in r.scope if s.status.value == "blocked")
    assert blocked.reason.startswith("未通过：") and "权限隔离" in blocked.reason
    assert all("→" in reason for reason in r.decision_reasons)
    assert any("在校验后被改动" in p or "无法读取" in p for s in r.sources for p in s.problems)


def test_wording_falls_back_to_the_stored_english_for_a_check_without_a_code():
    from gpupoc.validation.models import CheckOutcome, Tier, Verdict

    c = CheckOutcome(check_id="X-01", suite="s", table="t", expectation_type="e", tier=Tier.MUST, item="i",
                     signal="s", verdict=Verdict.FAIL, reason="stored before reason codes")
    assert Wording("zh").check_reason(c) == "stored before reason codes"
    assert Wording("zh").items(["task_records", "permission_isolation"]) == "任务记录（无任务丢失）、权限隔离"
