"""The report as a reviewer holds it, laid out by real Chromium in print media: every table and chart fits an
A4 page, every link opens a file of the report, the evidence pages show their rows, no path of the machine
that collected the evidence shows, and the summary's sentences are whole."""

from __future__ import annotations

import csv
import html
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.browser import launch

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300), pytest.mark.xdist_group("browser")]

A4_PORTRAIT = 718   # CSS px inside report.print.css's margins (210 mm - 2 x 12 mm at 96 dpi)
A4_LANDSCAPE = 1047  # summary.html's page (297 mm - 2 x 10 mm)
HOST = "/srv/collector/var/sim/volumes"
TAIL = ('Failed | Error | exit code 3; log readable after the failure; main()\n    ^^^^^^\n'
        '  File "/srv/collector/include/gpupoc/workload/modes.py", line 109, in run_fail\n'
        '    raise TrainingDiverged(\ngpupoc.workload.modes.TrainingDiverged: loss became NaN at epoch 3 step 29')


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report with all a long one holds: sentences in wide tables, a traceback, a host path, preemptions,
    a failed item, a class never run."""
    from gpupoc.report import build_report
    from gpupoc.validation import synthetic as syn
    from gpupoc.validation import validate_run

    root = tmp_path_factory.mktemp("layout") / "evidence"
    for tc in ("queue_congestion", "tenant_isolation", "utilization", "fault_recovery", "audit_trail"):
        t = syn.good_tables(tc)
        if tc == "fault_recovery":
            fr = t["failure_records"]
            fr["user_visible"] = TAIL
            fr["trigger"] = fr["trigger"] + " via workload-spec by team-nlp (pod submitted with its own token) at " \
                                            "2026-11-30T08:01:02.123456Z"
            fr["logs_readable"] = fr["logs_readable"].astype(object)
            fr.loc[1, "logs_readable"] = None
        if tc == "audit_trail":
            t["artifacts"]["path"] = f"{HOST}/team-nlp/artifacts/train-0/model.npz"
            t["artifacts"]["producer"] = "team-nlp/train-0"
        if tc == "queue_congestion":
            wr = t["workload_runs"]
            wr.loc[4, ["outcome", "final_attempt"]] = ["preempted", False]
        if tc == "tenant_isolation":
            ap = t["access_probes"]
            ap.loc[ap["action"] == "read_logs", ["allowed", "http_status"]] = [True, 200]
        validate_run(syn.write_run(root, tc, "scheduled__1", t))
    return build_report(root, out_dir=root / "report" / "r1")


def _wider(page, width: int) -> list[str]:
    return page.js(f"""[...document.querySelectorAll('table, svg, figure, p, li, h1, h2, h3, div')]
        .filter(e => e.getBoundingClientRect().right > {width} + 1)
        .map(e => e.tagName + ' ' + Math.round(e.getBoundingClientRect().right) + ' '
                  + (e.innerText || '').slice(0, 60).replace(/\\n/g, ' '))""")


@pytest.mark.parametrize("name,width", [("report.html", A4_PORTRAIT), ("summary.html", A4_LANDSCAPE),
                                        ("evidence/fault_recovery/failure_records.html", A4_PORTRAIT)])
def test_every_table_and_chart_fits_the_printed_page(report, tmp_path, name, width):
    with launch(tmp_path / "profile") as page:
        page.call("Emulation.setDeviceMetricsOverride", width=width, height=1000, deviceScaleFactor=1, mobile=False)
        page.call("Emulation.setEmulatedMedia", media="print")
        page.goto((report.out_dir / name).as_uri())
        wider = _wider(page, width)
        height = page.js("document.documentElement.scrollHeight")
        page.screenshot(tmp_path / f"layout-{Path(name).stem}.png")
    assert not wider, f"{name} at {width} px: wider than an A4 page: {wider[:5]}"
    assert height > 0


def _hrefs(text: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"#][^"]*)"', text)]


def test_every_link_opens_a_file_of_the_report_or_its_evidence(report):
    out = report.out_dir
    for name in ("report.html", "summary.html"):
        hrefs = _hrefs((out / name).read_text())
        assert hrefs, f"{name} links nothing"
        missing = [h for h in hrefs if not (out / h).resolve().is_file()]
        assert not missing, f"{name}: links to nothing: {missing}"
    assert "report.html" in _hrefs((out / "summary.html").read_text())
    page = out / "evidence" / "tenant_isolation" / "access_probes.html"
    assert page.is_file() and all((page.parent / h).resolve().is_file() for h in _hrefs(page.read_text()))


def test_the_evidence_pages_and_csv_hold_every_row_the_parquet_holds(report, tmp_path):
    ev = report.out_dir.parent.parent / "poc_tenant_isolation" / "scheduled__1" / "tables" / "access_probes.parquet"
    rows = len(pd.read_parquet(ev))
    with open(report.out_dir / "evidence" / "tenant_isolation" / "access_probes.csv", newline="") as fh:
        assert sum(1 for _ in csv.DictReader(fh)) == rows
    with launch(tmp_path / "profile") as page:
        page.goto((report.out_dir / "evidence" / "tenant_isolation" / "access_probes.html").as_uri())
        shown = page.js("document.querySelectorAll('table.ev.card').length"
                        " || document.querySelectorAll('table.ev tr').length - 1")
        assert shown == rows, "one card, or one row, per attempt"
        assert page.js("document.querySelector('table.ev th').innerText") == "Actor"


def test_no_path_of_the_collecting_machine_shows_and_tracebacks_are_short(report):
    out = report.out_dir
    root = str(out.parent.parent.resolve())
    pages = [out / n for n in ("report.html", "summary.html", "report.md", "report.json")]
    pages += sorted((out / "evidence").rglob("*.html")) + sorted((out / "evidence").rglob("*.csv"))
    for p in pages:
        text = p.read_text()
        for leak in (root, HOST, "/srv/collector", 'File "'):
            assert leak not in text, f"{p.relative_to(out)} shows {leak!r}"
    text = html.unescape((out / "report.html").read_text())
    assert "[…] gpupoc.workload.modes.TrainingDiverged: loss became NaN" in text
    assert "train-0/model.npz" in text and "at 2026-11-30 08:01:02" in text and ".123456" not in text


def test_the_summary_says_its_sentences_whole(report):
    text = html.unescape(re.sub(r"<[^>]+>", " ", (report.out_dir / "summary.html").read_text()))
    text = " ".join(text.split())
    r = report.report
    assert "…" not in text.replace("[…]", "")
    for s in r.scope:
        if s.reason:
            assert " ".join(s.reason.split()) in text, f"scope reason cut: {s.reason}"
    for f in r.blocking:
        first = f.text.split("; ")[0]
        assert " ".join(first.split()) in text, f"finding cut: {first}"
