"""Sign-off: each role confirms or objects to its block; an objection keeps the item open with its comment;
a sign-off on other evidence is shown, not counted; the ledger keeps a report run's sign-offs."""

import pytest

from .conftest import GOOD_SCORES, plan_file, signed, write_later_run
from gpupoc.exceptions import ConfigError
from gpupoc.plan.settings import Reviewer
from gpupoc.report import build_report
from gpupoc.report.models import Decision, SignOff, SignOffStatus, Verdict
from gpupoc.report.signoff import LEDGER, parse_signoffs, read_ledger, record
from gpupoc.validation import synthetic as syn

AT = "2026-12-01T10:00:00+08:00"


def _card(*signoffs):
    """The scorecard of a report run whose sign-offs were each given by the reviewer's own Airflow user."""
    return {**GOOD_SCORES, "signoffs": [signed(s) for s in signoffs]}


def _block(report, role):
    return next(b for b in report.signoff if b.role.value == role)


def test_confirmations_show_who_confirmed_what_and_change_no_verdict(good_root, tmp_path):
    r = build_report(good_root, out_dir=tmp_path, plan=plan_file(good_root, tmp_path), scorecard=_card(
        {"reviewer": "Zhao Min", "role": "security", "action": "confirm", "comment": "checked the probes", "at": AT},
        {"reviewer": "Li Lei", "role": "platform", "action": "confirm", "items": ["utilization_reports"], "at": AT},
    )).report
    sec, plat = _block(r, "security"), _block(r, "platform")
    assert sec.status is SignOffStatus.CONFIRMED and [ln.item for ln in sec.lines] == [
        "permission_isolation", "task_records", "queue_explainability", "failure_evidence"]
    assert all(ln.by[0].reviewer == "Zhao Min" and ln.by[0].at == AT for ln in sec.lines)
    assert plat.status is SignOffStatus.OPEN, "only one key item confirmed: the block stays open"
    assert {ln.item: ln.status for ln in plat.lines}["utilization_reports"] is SignOffStatus.CONFIRMED
    assert _block(r, "management").lines[0].item == "decision" and _block(r, "management").status is SignOffStatus.OPEN
    assert r.decision is Decision.GO_LIVE and {i.verdict for i in r.items} == {Verdict.PASS}
    html = (tmp_path / "report.html").read_text()
    assert "Zhao Min" in html and "checked the probes" in html and "Security: the must items" in html


def test_an_objection_keeps_a_passing_item_open_with_its_comment(good_root, tmp_path):
    r = build_report(good_root, out_dir=tmp_path, plan=plan_file(good_root, tmp_path), scorecard=_card(
        {"reviewer": "Zhao Min", "role": "security", "action": "object", "items": ["queue_explainability"],
         "comment": "the sample holds no preemption", "at": AT})).report
    it = r.item("queue_explainability")
    assert it.verdict is Verdict.NOT_VERIFIED, "an objection is never a pass"
    assert "objection by Zhao Min (Security, 2026-12-01T10:00:00+08:00): the sample holds no preemption" in it.reason
    assert r.decision is Decision.POSTPONE, "an open must item postpones"
    assert _block(r, "security").status is SignOffStatus.OBJECTED
    assert any(f.item == "queue_explainability" for f in r.blocking)


def test_an_objection_to_a_failing_item_keeps_it_failing_with_both_reasons(root_copy, tmp_path):
    t = syn.good_tables("fault_recovery")
    t["failure_records"].loc[[0, 2], "logs_readable"] = False
    write_later_run(root_copy, "fault_recovery", t)
    r = build_report(root_copy, out_dir=tmp_path, plan=plan_file(root_copy, tmp_path), scorecard=_card(
        {"reviewer": "Zhao Min", "role": "security", "action": "object", "items": ["failure_evidence"],
         "comment": "also the OOM case", "at": AT})).report
    it = r.item("failure_evidence")
    assert it.verdict is Verdict.FAIL and "FR-07" in it.reason and "also the OOM case" in it.reason


def test_management_signs_off_the_decision(good_root, tmp_path):
    r = build_report(good_root, out_dir=tmp_path, plan=plan_file(good_root, tmp_path), scorecard=_card(
        {"reviewer": "Sun Hua", "role": "management", "action": "confirm", "at": AT})).report
    (line,) = _block(r, "management").lines
    assert line.item == "decision" and line.verdict == "go-live" and line.status is SignOffStatus.CONFIRMED


def test_a_sign_off_outside_the_roles_block_or_by_an_unlisted_reviewer_is_refused(good_root, tmp_path):
    with pytest.raises(ConfigError, match=r"signoffs\[0\]\.items\[0\]: 'utilization_reports' is not in the security block"):
        build_report(good_root, out_dir=tmp_path, plan=plan_file(good_root, tmp_path), scorecard=_card(
            {"reviewer": "Zhao Min", "role": "security", "action": "confirm", "items": ["utilization_reports"],
             "at": AT}))
    from gpupoc.report.signoff import check_signoffs

    s = parse_signoffs([{"reviewer": "Mallory", "role": "security", "action": "confirm", "at": AT}])
    with pytest.raises(ConfigError, match=r"'Mallory' is not a security reviewer of the plan.*Zhao Min"):
        check_signoffs(s, [], [Reviewer(name="Zhao Min", role="security")])


def test_a_bad_sign_off_names_the_field_and_an_objection_needs_a_comment():
    with pytest.raises(ConfigError) as exc:
        parse_signoffs([{"reviewer": "Z", "role": "auditor", "action": "confirm", "at": AT},
                        {"reviewer": "Z", "role": "security", "action": "object", "at": AT}])
    text = str(exc.value)
    assert "signoffs[0].role" in text and "auditor" in text
    assert "signoffs[1]" in text and "an objection needs a comment" in text


def test_a_sign_off_given_on_other_evidence_is_shown_but_not_counted(good_root, tmp_path):
    other = SignOff(reviewer="Zhao Min", role="security", action="object", comment="old run", at=AT, basis="0" * 64,
                    signed_in_as="zhao")
    plan = plan_file(good_root, tmp_path)
    r = build_report(good_root, out_dir=tmp_path, plan=plan, scorecard=GOOD_SCORES, earlier_signoffs=[other]).report
    assert r.item("permission_isolation").verdict is Verdict.PASS
    assert _block(r, "security").other_evidence == [other] and _block(r, "security").status is SignOffStatus.OPEN
    same = other.model_copy(update={"basis": r.basis})
    again = build_report(good_root, out_dir=tmp_path, plan=plan, scorecard=GOOD_SCORES, earlier_signoffs=[same]).report
    assert again.item("permission_isolation").verdict is Verdict.NOT_VERIFIED


def test_the_basis_changes_when_the_evidence_changes(root_copy, tmp_path):
    first = build_report(root_copy, out_dir=tmp_path / "a").report.basis
    assert build_report(root_copy, out_dir=tmp_path / "b").report.basis == first
    write_later_run(root_copy, "utilization", syn.good_tables("utilization"))
    assert build_report(root_copy, out_dir=tmp_path / "c").report.basis != first


def test_the_ledger_keeps_each_runs_sign_offs_and_a_rerun_replaces_its_own(tmp_path):
    path = tmp_path / LEDGER
    a = SignOff(reviewer="Zhao", role="security", action="confirm", at=AT, basis="b1")
    b = SignOff(reviewer="Li", role="platform", action="object", comment="no GPU memory view", at=AT, basis="b1")
    record(path, "run1", [a])
    record(path, "run2", [b])
    record(path, "run1", [a])  # a rerun of run1
    assert read_ledger(path) == [b, a]
    assert read_ledger(path, except_run="run2") == [a]
    path.write_text(path.read_text() + "not json\n")
    with pytest.raises(ConfigError, match="line 3: not a sign-off record"):
        read_ledger(path)


def test_a_sign_off_counts_only_when_signed_in_as_the_reviewers_airflow_user(good_root, tmp_path):
    confirm = {"reviewer": "Zhao Min", "role": "security", "action": "confirm", "at": AT}
    forged = {"reviewer": "Li Lei", "role": "platform", "action": "object", "comment": "forged", "at": AT,
              "items": ["scheduling_policy"]}
    card = {**GOOD_SCORES, "signoffs": [signed(confirm, "li"), signed(forged, "zhao"), confirm]}
    r = build_report(good_root, out_dir=tmp_path, plan=plan_file(good_root, tmp_path), scorecard=card).report
    sec, plat = _block(r, "security"), _block(r, "platform")
    assert sec.status is SignOffStatus.OPEN and plat.status is SignOffStatus.OPEN, "no claim is counted"
    assert r.item("scheduling_policy").verdict is Verdict.PASS, "a forged objection changes no verdict"
    assert r.decision is Decision.GO_LIVE
    assert [u.reason for u in sec.unverified] == [
        "signed in as li, not as Zhao Min's Airflow user zhao",
        "not given through the poc_report trigger form, so nobody signed in as Zhao Min"]
    assert [u.reason for u in plat.unverified] == ["signed in as zhao, not as Li Lei's Airflow user li"]
    html = (tmp_path / "report.html").read_text()
    md = (tmp_path / "report.md").read_text()
    for text in (html, md):
        assert "Unverified claims (not counted)" in text and "signed in as li, not as Zhao Min" in text


def test_a_reviewer_with_no_airflow_user_or_not_in_the_plan_cannot_sign(good_root, tmp_path):
    from gpupoc.report.signin import verify_signoffs
    from gpupoc.report.wording import Wording

    reviewers = [Reviewer(name="Zhao Min", role="security"), Reviewer(name="Li Lei", role="platform",
                                                                       airflow_user="li")]
    given = parse_signoffs([signed({"reviewer": "Zhao Min", "role": "security", "action": "confirm", "at": AT}),
                            signed({"reviewer": "Li Lei", "role": "security", "action": "confirm", "at": AT}),
                            signed({"reviewer": "Li Lei", "role": "platform", "action": "confirm", "at": AT})])
    counted, claims = verify_signoffs(given, reviewers, Wording("en"))
    assert counted == [given[2]]
    assert [c.reason for c in claims] == [
        "the plan binds no Airflow user to Zhao Min (report.reviewers[].airflow_user)",
        "the plan lists no Security reviewer named Li Lei"]
    zh = verify_signoffs(given[:1], reviewers, Wording("zh"))[1][0].reason
    assert zh == "计划没有为 Zhao Min 绑定 Airflow 用户（report.reviewers[].airflow_user）"


def test_a_report_rebuilt_from_its_directory_counts_the_same_sign_offs(good_root, tmp_path):
    card = _card({"reviewer": "Zhao Min", "role": "security", "action": "confirm", "at": AT})
    first = build_report(good_root, out_dir=tmp_path / "r", plan=plan_file(good_root, tmp_path), scorecard=card)
    again = build_report(tmp_path / "r", plan=plan_file(good_root, tmp_path)).report
    assert first.report.signoff == again.signoff and _block(again, "security").status is SignOffStatus.CONFIRMED
