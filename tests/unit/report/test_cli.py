"""``gpupoc report RUN_DIR`` rebuilds the report outside Airflow."""

import json

import pytest

from .conftest import GOOD_SCORES, classes_copy
from gpupoc.cli import main


@pytest.mark.usefixtures("no_chromium")  # the print is checked in test_pdf.py
def test_report_command_builds_from_an_evidence_root(good_root, tmp_path, capsys):
    card = tmp_path / "scores.json"
    card.write_text(json.dumps(GOOD_SCORES))
    assert main(["report", str(good_root), "--out", str(tmp_path / "out"), "--scorecard", str(card)]) == 0
    out = capsys.readouterr().out
    assert "decision: go-live" in out
    assert (tmp_path / "out" / "report.html").is_file() and (tmp_path / "out" / "scorecard.json").is_file()


@pytest.mark.usefixtures("no_chromium")
def test_report_directory_rebuilds_the_same_selection_and_scores(good_root, tmp_path, capsys):
    card = tmp_path / "scores.json"
    card.write_text(json.dumps(GOOD_SCORES))
    main(["report", str(good_root), "--out", str(tmp_path / "out"), "--scorecard", str(card)])
    first = json.loads((tmp_path / "out" / "report.json").read_text())
    assert main(["report", str(tmp_path / "out")]) == 0
    again = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [i["verdict"] for i in again["items"]] == [i["verdict"] for i in first["items"]]
    assert again["decision"] == "go-live"


@pytest.mark.usefixtures("no_chromium")
def test_single_run_dir_and_bad_path(good_root, tmp_path, capsys):
    run = good_root / "poc_utilization" / "scheduled__1"
    assert main(["report", str(run), "--out", str(tmp_path / "o")]) == 0
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err


@pytest.mark.usefixtures("no_chromium")
def test_default_plan_supplies_language_rules_and_thresholds(good_root, tmp_path, capsys):
    from gpupoc.plan import DEFAULT_PLAN

    # the classes of the items judged below only: revalidation validates every run of the root
    root_copy = classes_copy(good_root, tmp_path / "evidence", "tenant_isolation", "fault_recovery")
    assert main(["report", str(root_copy), "--out", str(tmp_path / "p"), "--plan", str(DEFAULT_PLAN),
                 "--revalidate"]) == 0
    data = json.loads((tmp_path / "p" / "report.json").read_text())
    assert data["language"] in ("en", "zh")
    fr = json.loads((root_copy / "poc_fault_recovery" / "scheduled__1" / "validation" / "summary.json").read_text())
    assert fr["suites"], "revalidation with the plan's thresholds stored new results"
    verdicts = {i["id"]: i["verdict"] for i in data["items"]}
    assert verdicts["permission_isolation"] == "pass" and verdicts["failure_evidence"] == "pass", verdicts


def _plan_over(root, tmp_path, **report):
    """The default plan reading ``root``, with ``report`` settings replaced, written to tmp_path."""
    import yaml

    from gpupoc.plan import DEFAULT_PLAN

    data = yaml.safe_load(DEFAULT_PLAN.read_text())
    data["evidence_root"] = str(root)
    data["report"].update(report)
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(data, allow_unicode=True))
    return plan


@pytest.mark.usefixtures("no_chromium")
def test_airflow_task_function_writes_under_the_plans_report_dir(root_copy, tmp_path):
    from gpupoc.report.airflow import run_report

    plan = _plan_over(root_copy, tmp_path, language="zh")
    out = run_report(plan, "manual__2026-11-30T08:00:00+00:00", {"reviewers": GOOD_SCORES["reviewers"]})
    html = out["paths"]["html"]
    assert html.startswith(str(root_copy / "report" / "manual__2026-11-30T08_00_00_00_00"))
    assert out["items"]["ui_usability"] == "pass"
    assert '<html lang="zh">' in open(html, encoding="utf-8").read()


@pytest.mark.usefixtures("no_chromium")
def test_the_plans_scorecard_file_scores_the_experience_items_unless_the_form_gives_scores(root_copy, tmp_path):
    import yaml

    from gpupoc.exceptions import ConfigError
    from gpupoc.report.airflow import run_report

    plan = _plan_over(root_copy, tmp_path, scorecard="scores.yaml")
    with pytest.raises(ConfigError) as exc:
        run_report(plan, "manual__1", {})
    assert "report.scorecard" in str(exc.value) and "scores.yaml" in str(exc.value)
    (tmp_path / "scores.yaml").write_text(yaml.safe_dump({"reviewers": [
        {"name": "Zhao Min", "role": "business", "scores": {"ui_usability": 2, "documentation": 4, "training_cost": 4}}]}))
    from_file = run_report(plan, "manual__1", {})
    assert from_file["items"]["ui_usability"] == "fail" and from_file["items"]["documentation"] == "pass"
    from_form = run_report(plan, "manual__2", {"reviewers": GOOD_SCORES["reviewers"]})
    assert from_form["items"]["ui_usability"] == "pass", "the trigger form's scores take precedence"


def test_report_command_prints_in_the_report_s_language(good_root, tmp_path, capsys):
    card = tmp_path / "scores.json"
    card.write_text(json.dumps(GOOD_SCORES))
    assert main(["report", str(good_root), "--out", str(tmp_path / "zh"), "--scorecard", str(card),
                 "--language", "zh", "--no-pdf", "--no-bundle"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("结论：上线\n"), out[:80]
    assert "  必须项  权限隔离：通过" in out and "完整报告（HTML）：" in out
    assert "decision" not in out and "pass" not in out.replace(str(tmp_path), "")
