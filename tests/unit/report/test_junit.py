"""report.junit.xml read back with junitparser (a JUnit consumer CI tools share): one case per check,
failures with reasons, not-verified checks skipped and never passed, counts that add up; --exit-code."""

import pytest
from junitparser import Failure, JUnitXml, Properties, Skipped

from .conftest import GOOD_SCORES, write_later_run
from gpupoc.cli import main
from gpupoc.report import build_report
from gpupoc.report.items import TEST_CLASSES
from gpupoc.report.junit import EXPERIENCE_SUITE, JUNIT_FILE
from gpupoc.report.models import Tier, Verdict
from gpupoc.validation import synthetic as syn
from gpupoc.validation import validate_run


def _read(out_dir):
    xml = JUnitXml.fromfile(str(out_dir / JUNIT_FILE))
    cases = {}
    for suite in xml:
        for case in suite:
            props = {p.name: p.value for p in (case.child(Properties) or [])}
            cases[(suite.name, case.classname, case.name)] = (case, props)
    return xml, cases


def _checks(report):
    return [(c, it) for it in report.items for c in it.checks]


def _case_for(cases, check):
    found = [v for (suite, cls, name), v in cases.items()
             if suite == check.test_class and cls == check.test_class and name.startswith(f"{check.check_id}: ")]
    assert len(found) == 1, f"expected one test case for {check.test_class}/{check.check_id}, got {len(found)}"
    return found[0]


def _cross_tenant_logs_and_no_quota_samples(root):
    t = syn.good_tables("tenant_isolation")
    ap = t["access_probes"]
    ap.loc[ap["action"] == "read_logs", ["allowed", "http_status", "access_review_allowed"]] = [True, 200, False]
    t["quota_samples"] = None
    write_later_run(root, "tenant_isolation", t, not_verified={"quota_samples": "ResourceQuota not readable"})


def test_every_check_is_one_case_in_its_test_class_suite_with_tier_and_item(scored_report):
    r = scored_report.report
    xml, cases = _read(scored_report.out_dir)
    assert [s.name for s in xml] == TEST_CLASSES + [EXPERIENCE_SUITE]
    checks = _checks(r)
    assert len(checks) > 30 and len(cases) == len(checks) + 3, "one case per check plus three experience items"
    for check, item in checks:
        case, props = _case_for(cases, check)
        assert props["tier"] == item.tier.value and props["item"] == item.id
        assert case.is_passed == (check.verdict is Verdict.PASS), check.check_id
        assert case.is_skipped == (check.verdict in (Verdict.NOT_VERIFIED, Verdict.NOT_APPLICABLE)), check.check_id
        if check.optional:
            assert props["optional"] == "true"
    common = {cls for (_, cls, name) in cases if name.startswith("TR-")}
    assert {"queue_congestion", "utilization", "audit_trail"} <= common, \
        "a suite applied to three classes yields a case in each class"


@pytest.mark.usefixtures("no_chromium")
def test_failing_check_is_a_failure_with_its_reason_and_exit_code_gates_on_postpone(root_copy, tmp_path, capsys):
    _cross_tenant_logs_and_no_quota_samples(root_copy)
    out = tmp_path / "out"
    assert main(["report", str(root_copy), "--out", str(out), "--exit-code"]) == 1, "postpone must exit 1"
    assert "decision: postpone" in capsys.readouterr().out
    assert main(["report", str(out)]) == 0, "without --exit-code a postpone still exits 0"
    r = build_report(out).report
    _, cases = _read(out)
    failed = [(c, it) for c, it in _checks(r) if c.verdict is Verdict.FAIL]
    assert failed, "the cross-tenant log read must fail a check"
    for check, item in failed:
        case, props = _case_for(cases, check)
        (result,) = case.result
        assert isinstance(result, Failure) and result.message == check.reason and not case.is_passed
        assert props["tier"] == Tier.MUST.value and props["item"] == "permission_isolation"


def test_not_verified_check_is_skipped_with_its_reason_never_passed(root_copy, tmp_path):
    _cross_tenant_logs_and_no_quota_samples(root_copy)
    r = build_report(root_copy, out_dir=tmp_path, scorecard=GOOD_SCORES).report
    xml, cases = _read(tmp_path)
    unverified = [c for c, _ in _checks(r) if c.verdict is Verdict.NOT_VERIFIED]
    assert unverified, "the unreadable quota samples leave their checks not verified"
    for check in unverified:
        case, _ = _case_for(cases, check)
        (result,) = case.result
        assert isinstance(result, Skipped) and case.is_skipped and not case.is_passed
        assert result.message == f"not verified: {check.reason}"
    quota = [c for c in unverified if c.table == "quota_samples"]
    assert quota and all("ResourceQuota not readable" in c.reason for c in quota)
    suite = next(s for s in xml if s.name == "tenant_isolation")
    inapplicable = [c for c, _ in _checks(r)
                    if c.verdict is Verdict.NOT_APPLICABLE and c.test_class == "tenant_isolation"]
    shared = ["ISO-11", "ISO-12", "ISO-13"]  # no shared GPUs in the synthetic cluster
    assert [c.check_id for c in inapplicable] == shared
    assert suite.skipped == len([c for c in unverified if c.test_class == "tenant_isolation"]) + len(inapplicable)


def test_counts_on_every_suite_and_the_root_add_up(root_copy, tmp_path):
    _cross_tenant_logs_and_no_quota_samples(root_copy)
    build_report(root_copy, out_dir=tmp_path)
    xml, _ = _read(tmp_path)
    for suite in xml:
        cases = list(suite)
        assert suite.tests == len(cases)
        assert suite.failures == sum(isinstance(r, Failure) for c in cases for r in c.result)
        assert suite.skipped == sum(isinstance(r, Skipped) for c in cases for r in c.result)
    assert xml.tests == sum(s.tests for s in xml) and xml.failures == sum(s.failures for s in xml)
    assert xml.skipped == sum(s.skipped for s in xml) and xml.failures > 0 and xml.skipped >= 3


def test_experience_items_are_cases_of_their_own_suite_skipped_without_scores(good_report):
    xml, cases = _read(good_report.out_dir)
    exp = [(case, props) for (suite, _, _), (case, props) in cases.items() if suite == EXPERIENCE_SUITE]
    assert sorted(p["item"] for _, p in exp) == ["documentation", "training_cost", "ui_usability"]
    assert all(case.is_skipped and "no reviewer scored" in case.result[0].message for case, _ in exp)
    assert next(s for s in xml if s.name == EXPERIENCE_SUITE).skipped == 3


def test_a_test_class_without_a_validated_run_is_a_skipped_case_not_a_missing_suite(tmp_path):
    root = tmp_path / "evidence"
    validate_run(syn.write_run(root, "utilization", "scheduled__1", syn.good_tables("utilization")))
    report = build_report(root, out_dir=tmp_path / "out").report
    xml, _ = _read(tmp_path / "out")
    suites = {s.name: s for s in xml}
    assert set(TEST_CLASSES) <= set(suites)
    for tc in set(TEST_CLASSES) - {"utilization"}:
        (case,) = list(suites[tc])
        assert case.is_skipped and f"no validated run of test class {tc}" in case.result[0].message
    optional = {c.check_id for it in report.items for c in it.checks
                if c.optional or c.verdict is Verdict.NOT_APPLICABLE}
    skipped = {c.name.split(":")[0] for c in suites["utilization"] if c.is_skipped}
    assert suites["utilization"].tests > 1 and skipped <= optional, \
        f"only optional or not applicable checks may be skipped in a validated class: {skipped - optional}"


@pytest.mark.parametrize("language", ["zh"])
def test_case_names_carry_the_signal_in_the_reports_language(good_root, tmp_path, language):
    from gpupoc.report.render import check_signals, strings

    r = build_report(good_root, out_dir=tmp_path, language=language).report
    _, cases = _read(tmp_path)
    check, _ = _checks(r)[0]
    signal = check_signals(language).get(check.check_id)
    assert signal, f"no {language} signal for {check.check_id}"
    sep = strings(language)["label_sep"]  # a Chinese name's colon is Chinese: "QC-01：…"
    assert any(name == f"{check.check_id}{sep}{signal}" for (_, _, name) in cases)
