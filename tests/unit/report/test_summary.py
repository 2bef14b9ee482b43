"""The one-page summary (top of report.html and summary.html): decision and scope, must items, one key
figure per test class, blocking findings, coverage with the not verified named; printed, it is one page."""

import shutil
import unicodedata

import pytest
from pypdf import PdfReader

from .conftest import GOOD_SCORES, write_later_run
from gpupoc.report import build_report
from gpupoc.report.models import Verdict
from gpupoc.report.render import strings
from gpupoc.validation import synthetic as syn


@pytest.fixture(scope="module")
def bad_root(good_root, tmp_path_factory):
    """Much to say: cross-tenant reads allowed, quota unreadable, logs lost, no audit trail run at all."""
    root = tmp_path_factory.mktemp("bad") / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report", "poc_audit_trail"))
    t = syn.good_tables("tenant_isolation")
    ap = t["access_probes"]
    ap.loc[ap["action"] == "read_logs", ["allowed", "http_status"]] = [True, 200]
    t["quota_samples"] = None
    write_later_run(root, "tenant_isolation", t, not_verified={"quota_samples": "ResourceQuota not readable"})
    t = syn.good_tables("fault_recovery")
    t["failure_records"].loc[[0, 2], "logs_readable"] = False
    write_later_run(root, "fault_recovery", t)
    return root


@pytest.fixture(scope="module")
def chromium():
    from gpupoc.common.chromium import chromium_binary
    from gpupoc.exceptions import ToolMissing

    try:
        return chromium_binary()
    except ToolMissing as exc:
        pytest.skip(str(exc))


def _text(pdf):
    reader = PdfReader(str(pdf))
    return reader, ["".join(unicodedata.normalize("NFKC", p.extract_text() or "").split()) for p in reader.pages]


def _squash(text):
    return "".join(unicodedata.normalize("NFKC", text).split())


def test_key_figures_give_one_figure_per_class_from_its_evidence(good_report, bad_root, tmp_path):
    good = {k.test_class: k for k in good_report.report.key_figures}
    assert {tc: k.value for tc, k in good.items()} == {
        "queue_congestion": "10/10", "tenant_isolation": "19/19", "utilization": "16 / 7.08 GPU-h (44%)",
        "fault_recovery": "5/5", "audit_trail": "5/5"}
    assert {k.status for k in good.values()} == {Verdict.PASS}
    bad = {k.test_class: k for k in build_report(bad_root, out_dir=tmp_path / "b").report.key_figures}
    assert bad["tenant_isolation"].value == "13/19" and bad["tenant_isolation"].status is Verdict.FAIL
    assert bad["fault_recovery"].value == "3/5" and bad["fault_recovery"].status is Verdict.FAIL
    assert bad["audit_trail"].value is None and bad["audit_trail"].status is Verdict.NOT_VERIFIED


def test_coverage_counts_every_check_and_names_the_not_verified_including_a_missing_class(bad_root, tmp_path):
    from gpupoc.report.summary import expected_checks
    from gpupoc.validation.suites import load_suites

    r = build_report(bad_root, out_dir=tmp_path).report
    cov = r.coverage
    checks = [c for it in r.items for c in it.checks]
    audit = expected_checks(load_suites(), "audit_trail")
    scored = [i for i in r.items if i.id in ("ui_usability", "documentation", "training_cost")]
    assert cov.data_checks == len(checks) + len(audit), "a class without a run still counts its checks"
    assert cov.total == cov.data_checks + len(scored) and cov.scored_items == 3, "the experience items count too"
    assert cov.failed == sum(c.verdict is Verdict.FAIL for c in checks) > 0
    assert cov.passed == sum(c.verdict is Verdict.PASS for c in checks)
    assert cov.not_applicable == sum(c.verdict is Verdict.NOT_APPLICABLE for c in checks) > 0
    named = {e.check for e in cov.not_verified_checks}
    assert {"AUD-01", "AUD-09", "ISO-06", "ISO-07", "ui_usability"} <= named
    assert sum(max(1, len(e.test_classes)) for e in cov.not_verified_checks) == cov.not_verified
    assert {f.item for f in r.blocking} >= {"permission_isolation", "failure_evidence"}
    assert all(f.item in {i.id for i in r.items if i.tier.value == "must"} for f in r.blocking)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_summary_html_prints_on_one_page_with_the_decision_and_coverage(chromium, bad_root, tmp_path, language):
    from gpupoc.report.pdf import print_pdf

    res = build_report(bad_root, out_dir=tmp_path, scorecard=GOOD_SCORES, language=language)
    r, t = res.report, strings(language)
    assert res.paths["summary"] == tmp_path / "summary.html"
    reader, pages = _text(print_pdf(res.paths["summary"], tmp_path / "summary.pdf"))
    assert len(pages) == 1, f"summary.html printed on {len(pages)} pages, not one"
    page = pages[0]
    box = reader.pages[0].mediabox
    assert float(box.width) > float(box.height), "a landscape page, as projected"
    assert _squash(t[f"decision.{r.decision.value}"]) in page
    cov = r.coverage
    assert _squash(t["summary.coverage_line"].format(
        total=cov.total, data_checks=cov.data_checks, scored_items=cov.scored_items, passed=cov.passed,
        failed=cov.failed, not_applicable=cov.not_applicable, not_verified=cov.not_verified)) in page
    assert "AUD-01" in page and _squash(t["summary.blocking"]) in page
    for k in r.key_figures:
        assert _squash(t[f"class.{k.test_class}"]) in page


def test_the_summary_opens_report_html_and_keeps_the_first_printed_page(chromium, bad_root, tmp_path):
    from gpupoc.report.pdf import print_report_pdf

    res = build_report(bad_root, out_dir=tmp_path)
    html = res.paths["html"].read_text()
    assert html.index('id="summary"') < html.index('id="decision"'), "the summary comes first"
    _, pages = _text(print_report_pdf(tmp_path))
    t = strings("en")
    assert _squash(t["summary.coverage"]) in pages[0] and _squash(t["section.findings"]) not in pages[0]
