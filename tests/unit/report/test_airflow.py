"""run_report, what the poc_report task calls: every format, the bundle, and sign-offs kept across report runs
on the same evidence."""

import json

import yaml

from .conftest import GOOD_SCORES
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


def test_sign_offs_accumulate_over_report_runs_on_the_same_evidence(root_copy, tmp_path):
    plan = _plan(root_copy, tmp_path, reviewers=[{"name": "Zhao Min", "role": "security"},
                                                 {"name": "Li Lei", "role": "platform"}])
    sec = {"reviewer": "Zhao Min", "role": "security", "action": "confirm", "at": AT}
    first = run_report(plan, "manual__1", {"reviewers": GOOD_SCORES["reviewers"], "signoffs": [sec]})
    assert first["signoff"]["security"] == "confirmed"
    plat = {"reviewer": "Li Lei", "role": "platform", "action": "object", "items": ["scheduling_policy"],
            "comment": "no fair-share run", "at": AT}
    second = run_report(plan, "manual__2", {"reviewers": GOOD_SCORES["reviewers"], "signoffs": [plat]})
    assert second["signoff"]["security"] == "confirmed", "the first run's confirmation still counts"
    assert second["signoff"]["platform"] == "objected" and second["items"]["scheduling_policy"] == "not_verified"
    assert second["decision"] == "limited-go-live"
    again = run_report(plan, "manual__2", {"reviewers": GOOD_SCORES["reviewers"], "signoffs": [plat]})
    assert again == second, "a rerun of a report run gives the same report"
    ledger = (root_copy / "report" / "signoffs.jsonl").read_text().splitlines()
    assert sorted(json.loads(ln)["run_id"] for ln in ledger) == ["manual__1", "manual__2"]
