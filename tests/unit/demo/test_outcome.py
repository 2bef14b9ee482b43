import json
from pathlib import Path

import pytest

from gpupoc.demo.outcome import extract_outcome, read_outcome, summary_lines
from gpupoc.exceptions import ConfigError

REPORT = {
    "decision": "postpone",
    "decision_reasons": ["Tenant isolation (must) fail: cross-tenant log read allowed"],
    "items": [
        {"id": "tenant_isolation", "verdict": "fail"},
        {"id": "queue_congestion", "verdict": "pass"},
        {"id": "ui_usability", "verdict": "not_verified"},
    ],
}


def test_outcome_carries_decision_reasons_and_the_items_that_did_not_pass():
    o = extract_outcome(REPORT, Path("/r/x"))
    assert o.decision == "postpone"
    assert o.reasons == ["Tenant isolation (must) fail: cross-tenant log read allowed"]
    assert o.open_items == {"tenant_isolation": "fail", "ui_usability": "not_verified"}
    assert o.html == Path("/r/x/report.html")


@pytest.mark.parametrize("bad", [None, "go", "GO-LIVE"])
def test_a_report_without_a_known_decision_is_refused_naming_the_field(bad):
    with pytest.raises(ConfigError) as exc:
        extract_outcome({**REPORT, "decision": bad})
    assert "decision:" in str(exc.value) and repr(bad) in str(exc.value)


def test_read_outcome_reads_report_json_and_names_a_missing_file(tmp_path):
    (tmp_path / "report.json").write_text(json.dumps({**REPORT, "decision": "go-live", "decision_reasons": []}))
    assert read_outcome(tmp_path).decision == "go-live"
    with pytest.raises(ConfigError) as exc:
        read_outcome(tmp_path / "missing")
    assert "report.json" in str(exc.value) and "poc_report" in str(exc.value)


def test_summary_gives_decision_report_paths_ui_login_and_time():
    o = extract_outcome(REPORT, Path("/r/run1"))
    text = "\n".join(summary_lines(o, "http://127.0.0.1:8080", "/af/passwords.json", "run1", 612.0,
                                   {"poc_tenant_isolation": "failed", "poc_utilization": "success"}))
    assert "Decision: postpone" in text
    assert "  - Tenant isolation (must) fail" in text
    assert "Report: /r/run1/report.html" in text
    assert "Airflow UI: http://127.0.0.1:8080  (login: admin, password in /af/passwords.json)" in text
    assert "http://127.0.0.1:8080/gpupoc/reports/run1/" in text
    assert "Demo time: 10:12" in text
    assert "tenant_isolation failed" in text


def test_summary_of_a_clean_report_says_every_item_passed():
    o = extract_outcome({"decision": "go-live", "decision_reasons": [], "items": []})
    assert "  - every item passed" in summary_lines(o, "u", "p", None, 1.0, {})


def test_summary_lists_every_format_written_and_the_bundle_beside_the_report(tmp_path):
    d = tmp_path / "report" / "run1"
    d.mkdir(parents=True)
    for name in ("report.html", "summary.html", "report.md", "report.json", "report.junit.xml", "report.pdf"):
        (d / name).write_text("x")
    (tmp_path / "report" / "run1.bundle.tar.gz").write_bytes(b"x")
    o = extract_outcome(REPORT, d)
    lines = summary_lines(o, "u", "p", "run1", 1.0, {})
    for name in ("summary.html", "report.md", "report.json", "report.junit.xml", "report.pdf"):
        assert f"        {d / name}" in lines, name
    assert f"        {tmp_path / 'report' / 'run1.bundle.tar.gz'}" in lines
    assert not any("make test-deps" in ln for ln in lines)
    (d / "report.pdf").unlink()
    lines = summary_lines(o, "u", "p", "run1", 1.0, {})
    assert not any(ln.strip() == str(d / "report.pdf") for ln in lines)
    assert any("no report.pdf" in ln and "make test-deps" in ln for ln in lines)


def test_a_demo_that_left_its_report_to_compare_names_its_runs_evidence_and_ui_but_no_decision():
    from gpupoc.demo.outcome import runs_only_lines
    from gpupoc.demo.runner import DemoResult

    lines = runs_only_lines("http://127.0.0.1:8081", "/af/passwords.json", 75.0, {"poc_audit_trail": "success"}, Path("/e/kueue"))
    text = "\n".join(lines)
    assert "audit_trail success" in text and "/e/kueue" in text and "gpupoc compare" in text
    assert "password in /af/passwords.json" in text and "Decision" not in text
    saved = DemoResult(None, {"poc_audit_trail": "success"}, "", "http://x", 75.0, {}).to_dict()
    assert saved["decision"] is None and saved["report_dir"] is None and saved["runs"] == {"poc_audit_trail": "success"}
