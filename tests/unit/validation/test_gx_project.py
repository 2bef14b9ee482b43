"""``gpupoc.validation.gx_project``: an evidence root's GX project is opened once per process while its project
file stays as this process left it, opened again when another process changed it, and its settings are
written only when one changed."""

from __future__ import annotations

import great_expectations as gx
import pytest

from gpupoc.validation import synthetic as syn
from gpupoc.validation import validate_run
from gpupoc.validation.gx_project import forget_all


@pytest.fixture
def opened(monkeypatch):
    """Each opening of a GX project, by its directory."""
    forget_all()
    calls: list[str] = []
    real = gx.get_context
    monkeypatch.setattr(gx, "get_context", lambda **k: calls.append(k["project_root_dir"]) or real(**k))
    yield calls
    forget_all()


def _validate(root, tc, run_id):
    summary = validate_run(syn.write_run(root, tc, run_id, syn.good_tables(tc)))
    assert summary.success, [c.check_id for c in summary.checks if not c.success]
    return summary


def test_a_second_validation_of_a_root_reuses_the_project_this_process_opened(tmp_path, opened):
    root = tmp_path / "evidence"
    _validate(root, "audit_trail", "r1")
    _validate(root, "tenant_isolation", "r1")
    _validate(root, "audit_trail", "r2")
    assert opened == [str(root)]
    index = (root / "data_docs" / "local_site" / "index.html").read_text()
    assert "poc_tenant_isolation__r1" in index and "poc_audit_trail__r2" in index, "every run's results listed"


def test_a_project_file_another_process_changed_is_opened_again_and_keeps_its_data_sources(tmp_path, opened):
    root = tmp_path / "evidence"
    _validate(root, "audit_trail", "r1")
    project = root / "gx" / "great_expectations.yml"
    project.write_text(project.read_text() + "\n# changed by another validation\n")
    _validate(root, "tenant_isolation", "r1")
    assert opened == [str(root), str(root)]
    assert "evidence_audit_trail" in project.read_text() and "evidence_tenant_isolation" in project.read_text()


def test_the_projects_settings_are_written_only_when_one_changed(tmp_path, opened, monkeypatch):
    from great_expectations.data_context.data_context_variables import DataContextVariables

    saves = []
    real = DataContextVariables.save
    monkeypatch.setattr(DataContextVariables, "save", lambda self: saves.append(1) or real(self))
    root = tmp_path / "evidence"
    _validate(root, "audit_trail", "r1")
    assert len(saves) == 1, "a new project gets its settings once"
    forget_all()
    _validate(root, "audit_trail", "r2")
    assert len(saves) == 1, "an opened project whose settings are already right is not written again"
    moved = tmp_path / "moved"
    root.rename(moved)
    _validate(moved, "audit_trail", "r3")
    assert len(saves) == 2, "a moved root's site is pointed at its new place"
    assert (moved / "data_docs" / "local_site" / "index.html").is_file()
