"""Evidence that proves itself: the report checks each run against its manifest and its validation before
using it; a changed, truncated or missing file makes what the run feeds not verified, naming the file; a
moved evidence root keeps its links. Building only reads: validation runs before it."""

import re
import shutil

import pyarrow.parquet as pq

from .conftest import GOOD_SCORES
from gpupoc.cli import main
from gpupoc.report import build_report
from gpupoc.report.models import Decision, Verdict
from gpupoc.validation import synthetic as syn

ISOLATION = "poc_tenant_isolation/scheduled__1"


def _flip_one_probe(root):
    path = root / ISOLATION / "tables" / "access_probes.parquet"
    t = pq.read_table(path).to_pandas()
    t.loc[0, "allowed"] = True
    t.to_parquet(path)


def test_a_row_flipped_after_validation_leaves_permission_isolation_not_verified(root_copy, tmp_path):
    before = build_report(root_copy, out_dir=tmp_path / "before", scorecard=GOOD_SCORES).report
    assert before.item("permission_isolation").verdict is Verdict.PASS
    _flip_one_probe(root_copy)
    r = build_report(root_copy, out_dir=tmp_path / "after", scorecard=GOOD_SCORES).report
    it = r.item("permission_isolation")
    assert it.verdict is Verdict.NOT_VERIFIED, f"tampered evidence must never pass: {it.verdict} {it.reason}"
    assert "tables/access_probes.parquet changed after validation" in it.reason
    assert {c.verdict for c in it.checks if c.test_class == "tenant_isolation"} == {Verdict.NOT_VERIFIED}
    src = next(s for s in r.sources if s.test_class == "tenant_isolation")
    assert src.problems and "access_probes.parquet changed after validation" in src.problems[0]
    assert r.decision is Decision.POSTPONE
    assert {s.test_class for s in r.sources if s.problems} == {"tenant_isolation"}, "other runs stay trusted"
    assert r.item("failure_evidence").verdict is Verdict.PASS


def test_a_truncated_table_gives_a_clear_reason_and_no_traceback(root_copy, tmp_path, capsys):
    path = root_copy / ISOLATION / "tables" / "access_probes.parquet"
    path.write_bytes(path.read_bytes()[:200])
    rc = main(["report", str(root_copy), "--out", str(tmp_path / "out"), "--no-pdf", "--no-bundle"])
    out, err = capsys.readouterr()
    assert rc == 0 and "Traceback" not in out + err
    assert "decision: postpone" in out
    assert re.search(r"not trusted: tenant_isolation scheduled__1: tables/access_probes\.parquet is unreadable", out)
    r = build_report(tmp_path / "out").report
    assert "access_probes.parquet is unreadable" in r.item("permission_isolation").reason


def test_a_moved_evidence_root_keeps_its_links_and_rebuilds(root_copy, tmp_path):
    out = root_copy / "report" / "r1"
    first = build_report(root_copy, out_dir=out, scorecard=GOOD_SCORES).report
    moved = tmp_path / "elsewhere" / "evidence"
    moved.parent.mkdir()
    shutil.move(str(root_copy), str(moved))
    report_dir = moved / "report" / "r1"
    html = (report_dir / "report.html").read_text()
    links = [h for h in re.findall(r'href="([^"#][^"]*)"', html) if not h.startswith(("http:", "https:"))]
    assert links and all((report_dir / h).resolve().is_file() for h in links), \
        [h for h in links if not (report_dir / h).resolve().is_file()]
    assert str(root_copy) not in html and str(root_copy) not in (report_dir / "report-inputs.json").read_text()
    again = build_report(report_dir).report
    assert [i.verdict for i in again.items] == [i.verdict for i in first.items]
    assert again.decision is Decision.GO_LIVE and not any(s.problems for s in again.sources)


def test_building_never_validates_a_run_without_validation_is_not_verified(root_copy, tmp_path):
    run = syn.write_run(root_copy, "audit_trail", "scheduled__2", syn.good_tables("audit_trail"),
                        window_end=syn.T0 + syn.timedelta(hours=2))
    r = build_report(root_copy, out_dir=tmp_path, scorecard=GOOD_SCORES).report
    assert not (run / "validation").exists(), "the report only reads; validation runs before it"
    it = r.item("task_records")
    assert it.verdict is Verdict.NOT_VERIFIED and "never validated" in it.reason
    assert r.coverage.not_verified >= len([c for c in it.checks if c.test_class == "audit_trail"])


def test_the_sources_show_how_many_requests_each_evidence_receiver_refused(root_copy, tmp_path):
    import json

    manifest = root_copy / "poc_audit_trail" / "scheduled__1" / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc["intake"] = {"audit_webhook": {"record": "/var/audit/audit-events.jsonl", "refused": 3, "authenticated": True},
                     "alert_receiver": {"record": "/var/monitoring/alerts.jsonl", "refused": None,
                                        "authenticated": None}}
    manifest.write_text(json.dumps(doc))
    r = build_report(root_copy, out_dir=tmp_path / "out", scorecard=GOOD_SCORES).report
    src = next(s for s in r.sources if s.test_class == "audit_trail")
    assert src.refused_at_intake == {"audit_webhook": 3, "alert_receiver": None}
    assert "audit webhook: 3 request(s) without its token refused" in src.intake
    assert "alert receiver: keeps no count of refused requests" in src.intake
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Refused at intake" in html and "audit webhook: 3 request(s) without its token refused" in html
