"""Every figure is computed from the same rows as its verdict, and the summary says what the body says: read
from the report's own JSON, on a correct platform and on faulty ones."""

import json
import shutil

import pytest

from .agreement import disagreements
from .conftest import write_later_run
from gpupoc.report import build_report
from gpupoc.validation import synthetic as syn


def _faulty(good_root, tmp_path):
    """Reads allowed across tenants, an attempt with no answer, two logs lost, one container never started,
    an alert record missing, an audit match unknown."""
    root = tmp_path / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report"))
    t = syn.good_tables("tenant_isolation")
    ap = t["access_probes"]
    ap.loc[ap["action"] == "read_logs", ["allowed", "http_status"]] = [True, 200]
    ap["allowed"] = ap["allowed"].astype(object)
    ap.loc[0, "allowed"] = None  # an attempt that got no answer
    write_later_run(root, "tenant_isolation", t)
    t = syn.good_tables("fault_recovery")
    fr = t["failure_records"]
    fr.loc[[0, 2], "logs_readable"] = False
    fr["logs_readable"] = fr["logs_readable"].astype(object)
    fr.loc[1, "logs_readable"] = None  # the missing image: no container, no log to read
    fr.loc[3, "alerts"] = None
    write_later_run(root, "fault_recovery", t)
    t = syn.good_tables("audit_trail")
    t["audit_matches"]["matched"] = t["audit_matches"]["matched"].astype(object)
    t["audit_matches"].loc[1, "matched"] = None
    write_later_run(root, "audit_trail", t)
    return root


@pytest.fixture(scope="module")
def reports(good_root, good_report, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agree")
    good = good_report
    bad = build_report(_faulty(good_root, tmp), out_dir=tmp / "bad")
    return {name: json.loads((res.out_dir / "report.json").read_text()) for name, res in (("good", good),
                                                                                            ("bad", bad))}


@pytest.mark.parametrize("name", ["good", "bad"])
def test_every_counted_figure_counts_its_check_s_rows_and_the_summary_repeats_the_body(reports, name):
    assert disagreements(reports[name]) == []


def test_the_summary_and_the_body_read_the_same_numbers_where_they_used_to_differ(reports):
    bad = reports["bad"]
    key = {k["test_class"]: k for k in bad["key_figures"]}
    body = {f["label"]: f for it in bad["items"] for f in it["figures"]}
    assert key["tenant_isolation"]["value"] == body["forbidden_denied"]["value"] == "12/18"
    assert body["logs_readable"]["value"] == "3/5" and body["logs_readable"]["not_applicable"] == 1
    assert key["fault_recovery"]["value"] == body["chains_complete"]["value"] == "3/5"
    assert body["failures_alerted"]["value"] == "4/5"
    assert key["audit_trail"]["value"] == body["audit_matched"]["value"] == "4/4"


def test_a_chain_whose_only_gap_does_not_apply_is_complete(reports):
    good = {f["label"]: f for it in reports["good"]["items"] for f in it["figures"]}
    assert good["chains_complete"]["value"] == "5/5"


@pytest.mark.parametrize("tamper,said", [
    (lambda r: _figure(r, "forbidden_denied").update(count=17, value="17/18"), "ISO-03"),
    (lambda r: next(k for k in r["key_figures"] if k["check"] == "FR-01").update(count=4, value="4/5"), "summary"),
    (lambda r: _figure(r, "alerts").update(count=2, value=2), "FR-15"),
])
def test_the_reader_catches_a_figure_that_disagrees(reports, tamper, said):
    r = json.loads(json.dumps(reports["good"]))
    tamper(r)
    found = disagreements(r)
    assert found and any(said in f for f in found), found


def _figure(report, label):
    return next(f for it in report["items"] for f in it["figures"] if f["label"] == label)
