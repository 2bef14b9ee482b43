"""Where the pages read from: GPUPOC_EVIDENCE_ROOT first, else the POC plan's evidence root and report dir."""

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.ui.locations import resolve_paths


def test_evidence_root_from_the_environment_wins(tmp_path):
    p = resolve_paths({"GPUPOC_EVIDENCE_ROOT": str(tmp_path), "GPUPOC_PLAN": "/nowhere.yaml"})
    assert p.evidence_root == tmp_path.resolve()
    assert p.report_dir == tmp_path.resolve() / "report"
    assert p.data_docs_dir == tmp_path.resolve() / "data_docs" / "local_site"


def test_report_dir_can_be_set_apart(tmp_path):
    p = resolve_paths({"GPUPOC_EVIDENCE_ROOT": str(tmp_path / "ev"), "GPUPOC_REPORT_DIR": str(tmp_path / "out")})
    assert p.report_dir == (tmp_path / "out").resolve()


def test_default_plan_gives_its_evidence_root():
    p = resolve_paths({})
    assert p.evidence_root == (DEFAULT_PLAN.parent / "../var/evidence").resolve()
    assert p.report_dir == p.evidence_root / "report"
    assert str(DEFAULT_PLAN) in p.source


def test_plan_report_output_dir_is_used(tmp_path):
    text = DEFAULT_PLAN.read_text(encoding="utf-8").replace("evidence_root: ../var/evidence",
                                                           f"evidence_root: {tmp_path / 'ev'}")
    assert f"evidence_root: {tmp_path / 'ev'}" in text
    text = text.replace("  language: en", f"  language: en\n  output_dir: {tmp_path / 'reports'}", 1)
    plan = tmp_path / "plan.yaml"
    plan.write_text(text, encoding="utf-8")
    p = resolve_paths({"GPUPOC_PLAN": str(plan)})
    assert p.evidence_root == (tmp_path / "ev").resolve()
    assert p.report_dir == (tmp_path / "reports").resolve()


def test_missing_plan_names_the_variables_to_set(tmp_path):
    with pytest.raises(ConfigError) as err:
        resolve_paths({"GPUPOC_PLAN": str(tmp_path / "missing.yaml")})
    assert "GPUPOC_EVIDENCE_ROOT" in str(err.value) and "missing.yaml" in str(err.value)
