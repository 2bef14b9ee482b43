"""run_report, what the poc_report task calls: every format, the bundle, and sign-offs kept across report runs
on the same evidence."""

import json

import pytest
import yaml

from .conftest import GOOD_SCORES, REVIEWERS, signed
from gpupoc.report.airflow import run_report

AT = "2026-12-01T02:00:00+00:00"


def _plan(root, tmp_path, **report):
    from gpupoc.plan import DEFAULT_PLAN

    data = yaml.safe_load(DEFAULT_PLAN.read_text())
    data["evidence_root"] = str(root)
    data["report"].update(report)
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(data, allow_unicode=True))
    return plan


def test_each_report_run_writes_every_format_and_its_bundle(root_copy, tmp_path):
    out = run_report(_plan(root_copy, tmp_path), "manual__1", {"reviewers": GOOD_SCORES["reviewers"]})
    paths = {k: v for k, v in out["paths"].items()}
    assert {"html", "summary", "markdown", "json", "junit", "bundle"} <= set(paths)
    assert paths["bundle"] == str(root_copy / "report" / "manual__1.bundle.tar.gz")
    assert "pdf" in paths or any("make test-deps" in w for w in out["warnings"])
    assert out["signoff"] == {"security": "open", "platform": "open", "business": "open", "management": "open"}


@pytest.mark.usefixtures("no_chromium")
def test_sign_offs_accumulate_over_report_runs_on_the_same_evidence(root_copy, tmp_path):
    plan = _plan(root_copy, tmp_path, reviewers=REVIEWERS)
    sec = signed({"reviewer": "Zhao Min", "role": "security", "action": "confirm", "at": AT})
    first = run_report(plan, "manual__1", {"reviewers": GOOD_SCORES["reviewers"], "signoffs": [sec]})
    assert first["signoff"]["security"] == "confirmed"
    plat = signed({"reviewer": "Li Lei", "role": "platform", "action": "object", "items": ["scheduling_policy"],
                   "comment": "no fair-share run", "at": AT})
    second = run_report(plan, "manual__2", {"reviewers": GOOD_SCORES["reviewers"], "signoffs": [plat]})
    assert second["signoff"]["security"] == "confirmed", "the first run's confirmation still counts"
    assert second["signoff"]["platform"] == "objected" and second["items"]["scheduling_policy"] == "not_verified"
    assert second["decision"] == "limited-go-live"
    again = run_report(plan, "manual__2", {"reviewers": GOOD_SCORES["reviewers"], "signoffs": [plat]})
    assert again == second, "a rerun of a report run gives the same report"
    ledger = (root_copy / "report" / "signoffs.jsonl").read_text().splitlines()
    assert sorted(json.loads(ln)["run_id"] for ln in ledger) == ["manual__1", "manual__2"]


@pytest.mark.usefixtures("no_chromium")
def test_a_forged_sign_off_is_kept_in_the_ledger_as_given_and_never_counted(root_copy, tmp_path):
    plan = _plan(root_copy, tmp_path, reviewers=REVIEWERS)
    forged = signed({"reviewer": "Zhao Min", "role": "security", "action": "confirm", "at": AT}, user="li")
    first = run_report(plan, "manual__1", {"reviewers": GOOD_SCORES["reviewers"], "signoffs": [forged]})
    assert first["signoff"]["security"] == "open", "Li Lei signed in; Zhao Min's block stays open"
    (line,) = (root_copy / "report" / "signoffs.jsonl").read_text().splitlines()
    assert json.loads(line)["signoff"]["signed_in_as"] == "li", "the ledger keeps who really signed in"
    later = run_report(plan, "manual__2", {"reviewers": GOOD_SCORES["reviewers"]})
    assert later["signoff"]["security"] == "open", "a later report run does not count it either"
    report = json.loads((root_copy / "report" / "manual__2" / "report.json").read_text())
    (sec,) = [b for b in report["signoff"] if b["role"] == "security"]
    assert [u["reason"] for u in sec["unverified"]] == ["signed in as li, not as Zhao Min's Airflow user zhao"]
