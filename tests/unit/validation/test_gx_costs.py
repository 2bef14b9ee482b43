"""What validation spares GX (``gpupoc.validation.gx_costs``) changes nothing it writes: the Data Docs pages keep
the project's custom styles with the compiled templates shared, the project file written once holds every class's
data source for the next validation, and GX's comment-only variables file is gone."""

from __future__ import annotations

import yaml

from gpupoc.validation import synthetic as syn
from gpupoc.validation import validate_run
from gpupoc.validation.gx_costs import saved_once


def _validated(root, *classes):
    for tc in classes:
        run = syn.write_run(root, tc, "scheduled__1", syn.good_tables(tc))
        assert validate_run(run).success, tc
    return root


def test_data_docs_pages_keep_the_projects_custom_styles_and_a_project_file_with_every_data_source(tmp_path):
    root = _validated(tmp_path / "evidence", "audit_trail", "tenant_isolation")
    custom = (root / "gx" / "plugins" / "custom_data_docs" / "styles" / "data_docs_custom_styles.css").read_text()
    index = (root / "data_docs" / "local_site" / "index.html").read_text()
    assert custom.strip() and custom.strip() in index, "the index page includes the project's custom styles"
    config = yaml.safe_load((root / "gx" / "great_expectations.yml").read_text())
    assert {"evidence_audit_trail", "evidence_tenant_isolation"} <= set(config["fluent_datasources"])
    assert not (root / "gx" / "uncommitted" / "config_variables.yml").exists()


def test_a_project_file_deferred_is_written_once_at_the_end_also_after_an_error():
    class Context:
        def __init__(self):
            self.saves = 0

        def _save_project_config(self):
            self.saves += 1

    ctx = Context()
    with saved_once(ctx):
        ctx._save_project_config()
        ctx._save_project_config()
    assert ctx.saves == 1
    try:
        with saved_once(ctx):
            raise RuntimeError("a suite failed to load")
    except RuntimeError:
        pass
    assert ctx.saves == 2, "written at the end although the block raised"
    ctx._save_project_config()
    assert ctx.saves == 3, "the context's own save again after the block"
