"""publish_report: validation first (only where none is stored, or all with revalidate; with the parameters each run
stored, whatever the report's plan), then every format;
a missing Chromium leaves out report.pdf with a warning naming `make test-deps`, never a failure."""

import re
from datetime import timedelta
from pathlib import Path

from .conftest import GOOD_SCORES, classes_copy, good_service_root, write_later_run
from gpupoc.cli import main
from gpupoc.report.models import Verdict
from gpupoc.report.publish import publish_report
from gpupoc.validation import synthetic as syn

FORMATS = ("report.html", "summary.html", "report.md", "report.json", "report.junit.xml")


def test_a_run_without_validation_is_validated_before_the_report_reads_it(root_copy, tmp_path):
    run = syn.write_run(root_copy, "audit_trail", "scheduled__2", syn.good_tables("audit_trail"),
                        window_end=syn.T0 + timedelta(hours=2))
    stored = {p: p.stat().st_mtime_ns for p in root_copy.glob("*/scheduled__1/validation/summary.json")}
    pub = publish_report(root_copy, out_dir=tmp_path / "out", scorecard=GOOD_SCORES, pdf=False, bundle=False)
    assert (run / "validation" / "summary.json").is_file()
    assert pub.build.report.item("task_records").verdict is Verdict.PASS
    assert {p: p.stat().st_mtime_ns for p in stored} == stored, "runs already validated are not validated again"
    publish_report(root_copy, out_dir=tmp_path / "out", revalidate=True, pdf=False, bundle=False)
    assert any(p.stat().st_mtime_ns != t for p, t in stored.items()), "revalidate validates every selected run"


def _checks(report) -> dict:
    return {(c.test_class, c.check_id): c.verdict for it in report.items for c in it.checks}


PLAN = Path(__file__).resolve().parents[3] / "plans" / "default.yaml"


def test_revalidated_with_a_plan_every_run_is_judged_with_the_parameters_it_stored(tmp_path_factory, tmp_path):
    # service runs validated as their DAGs validate them: the service checks judged
    root_copy = good_service_root(tmp_path_factory, tmp_path / "evidence")
    stored = publish_report(root_copy, out_dir=tmp_path / "stored", pdf=False, bundle=False).build.report
    again = publish_report(root_copy, out_dir=tmp_path / "again", plan=PLAN, revalidate=True, pdf=False,
                           bundle=False).build.report
    assert {cid for _, cid in _checks(stored)} >= {"SVC-01", "SVC-05", "SVC-10", "UTL-10"}
    assert _checks(again) == _checks(stored), "the same checks, the same verdicts"


def test_a_failed_service_slo_stays_failed_when_revalidated(good_root, tmp_path):
    from gpupoc.validation import synthetic_services as ss

    root_copy = classes_copy(good_root, tmp_path / "evidence", "queue_congestion")
    write_later_run(root_copy, "queue_congestion", {**syn.good_tables("queue_congestion"),
                                                    **ss.service_tables("queue_congestion", {"breach"})},
                    parameters=ss.SERVICE_PARAMETERS)  # as write_service_runs writes its queue_congestion run
    stored = publish_report(root_copy, out_dir=tmp_path / "stored", pdf=False, bundle=False).build.report
    again = publish_report(root_copy, out_dir=tmp_path / "again", plan=PLAN, revalidate=True, pdf=False,
                           bundle=False).build.report
    assert _checks(stored)[("queue_congestion", "SVC-01")] is Verdict.FAIL
    assert _checks(again)[("queue_congestion", "SVC-01")] is Verdict.FAIL


def test_a_run_never_validated_is_validated_with_what_it_stored_not_with_the_plan(root_copy, tmp_path):
    from gpupoc.validation import synthetic_services as ss

    t = {**syn.good_tables("queue_congestion"), **ss.service_tables("queue_congestion", {"breach"})}
    syn.write_run(root_copy, "queue_congestion", "scheduled__2", t, window_end=syn.T0 + timedelta(hours=2),
                  parameters=ss.SERVICE_PARAMETERS)  # its validate task never ran
    report = publish_report(root_copy, out_dir=tmp_path / "out", plan=PLAN, pdf=False, bundle=False).build.report
    assert _checks(report)[("queue_congestion", "SVC-01")] is Verdict.FAIL


def test_without_chromium_everything_but_the_pdf_is_written_with_a_warning(good_root, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.pdf").write_bytes(b"%PDF- an older print")
    monkeypatch.setenv("GPUPOC_CHROMIUM", str(tmp_path / "no-chromium"))
    pub = publish_report(good_root, out_dir=out, scorecard=GOOD_SCORES)
    assert all((out / name).is_file() for name in FORMATS)
    assert "pdf" not in pub.paths and not (out / "report.pdf").exists(), "no PDF that no longer matches the HTML"
    assert len(pub.warnings) == 1 and "make test-deps" in pub.warnings[0]
    assert pub.paths["bundle"].is_file()


def test_the_report_command_names_every_output_and_warns_on_stderr(good_root, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GPUPOC_CHROMIUM", str(tmp_path / "no-chromium"))
    assert main(["report", str(good_root), "--out", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    for kind in ("html", "summary", "markdown", "json", "junit", "bundle"):
        assert re.search(rf"^{kind}: \S+", out, re.M), kind
    assert "warning: report.pdf not written" in err and "make test-deps" in err



