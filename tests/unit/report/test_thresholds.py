"""A report's plan whose thresholds differ from those a run stored is a finding naming each value, and is never
applied: every check keeps the verdict the run's own parameters gave it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import build_report
from gpupoc.report.thresholds import threshold_findings
from gpupoc.report.wording import Wording

PLAN = Path(__file__).resolve().parents[3] / "plans" / "default.yaml"


def _run(tmp_path: Path, stored) -> RunEvidence:
    manifest = {"dag_id": "poc_queue_congestion", "run_id": "scheduled__1", "test_class": "queue_congestion"}
    if stored is not None:
        manifest["suite_parameters"] = stored
    return RunEvidence(tmp_path / "poc_queue_congestion" / "scheduled__1", manifest)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_threshold_the_plan_sets_otherwise_is_named_with_both_values(tmp_path, language):
    run = _run(tmp_path, {"max_wait_seconds": 600, "min_samples": 3, "gangs_in_wave": False})
    found = threshold_findings([run], {"queue_congestion": {"max_wait_seconds": 180.0, "min_samples": 3}},
                               Wording(language).t)
    assert len(found) == 1 and found[0].item == "thresholds"
    assert "max_wait_seconds" in found[0].text and "180.0" in found[0].text and "600" in found[0].text
    assert "min_samples" not in found[0].text and "poc_queue_congestion/scheduled__1" in found[0].text


def test_the_same_thresholds_a_run_with_none_stored_or_no_plan_are_no_finding(tmp_path):
    say = Wording("en").t
    same = {"queue_congestion": {"max_wait_seconds": 600}}
    assert threshold_findings([_run(tmp_path, {"max_wait_seconds": 600.0})], same, say) == []
    assert threshold_findings([_run(tmp_path, None)], same, say) == [], "its checks say what they lack"
    assert threshold_findings([_run(tmp_path, {"max_wait_seconds": 1})], {}, say) == []


def test_a_plan_with_other_thresholds_is_a_finding_and_changes_no_verdict(good_root, good_report, tmp_path):
    plain = good_report.report
    other = build_report(good_root, out_dir=tmp_path / "plan", plan=PLAN).report
    verdicts = lambda r: {(c.test_class, c.check_id): c.verdict for it in r.items for c in it.checks}  # noqa: E731
    assert verdicts(other) == verdicts(plain)
    differ = [f.text for f in other.findings if "max_wait_seconds" in f.text]
    assert len(differ) == 1 and "180.0 in the plan, 600 in the run" in differ[0], other.findings
    assert not any("max_wait_seconds" in f.text for f in plain.findings)
