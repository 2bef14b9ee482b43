"""The pages: index newest first with decisions, reports with working links, Data Docs, nothing else."""

import html
import os

import pytest
from fastapi.testclient import TestClient

from gpupoc.ui.app import create_app
from gpupoc.ui.locations import UiPaths

from tests.unit.ui.conftest import write_report


def test_index_lists_reports_newest_first_with_decision_badges(client):
    res = client.get("/")
    assert res.status_code == 200, res.text
    body = res.text
    newer, older = body.index('data-run-id="manual__2026-11-30"'), body.index('data-run-id="scheduled__2026-11-29"')
    assert newer < older, "the newest report must come first"
    assert '<span class="badge decision-go-live">go-live</span>' in body
    assert '<span class="badge decision-postpone">postpone</span>' in body
    assert "permission_isolation" in body, "a failing must item is named as blocking"
    assert 'href="data-docs/"' in body


def test_index_lists_the_expectation_suites_with_their_latest_validation(client):
    body = client.get("/").text
    assert 'data-suite="tenant_isolation.access_probes"' in body
    assert 'href="data-docs/expectations/tenant_isolation/access_probes.html"' in body
    latest = ("data-docs/validations/tenant_isolation/access_probes/poc_tenant_isolation__scheduled__1/"
              "20261130T080000.000000Z/evidence_tenant_isolation-access_probes.html")
    assert f'href="{latest}"' in body
    assert "result 20261130T080000" in client.get("/" + latest).text


def test_api_lists_the_same_reports_as_json(client):
    data = client.get("/api/reports").json()
    assert [r["run_id"] for r in data["reports"]] == ["manual__2026-11-30", "scheduled__2026-11-29"]
    assert data["reports"][1]["blocking"] == ["permission_isolation"]
    assert data["reports"][0]["verdicts"] == {"pass": 2, "not_verified": 1}
    assert data["data_docs"] is True


def test_index_without_reports_says_how_to_make_one(tmp_path):
    paths = UiPaths.for_root(tmp_path / "empty")
    res = TestClient(create_app(paths=lambda: paths)).get("/")
    assert res.status_code == 200
    assert "No report yet" in res.text and "poc_report" in res.text
    assert "No Data Docs site yet" in res.text


def test_report_page_serves_the_report_with_links_into_the_served_routes(client):
    res = client.get("/reports/manual__2026-11-30/")
    assert res.status_code == 200
    body = res.text
    assert "Decision: go-live" in body and 'id="items"' in body
    assert 'href="../../data-docs/index.html"' in body
    assert 'href="../../evidence/poc_tenant_isolation/scheduled__1/tables/access_probes.parquet"' in body
    assert 'src="charts/queue_timeline.svg"' in body, "links inside the report directory stay as they are"
    assert 'href="../../gx/uncommitted/config_variables.yml"' in body, "links to unserved files are not rewritten"
    assert 'id="gpupoc-nav"' in body and 'href="../../"' in body


def test_report_links_resolve_through_the_app(client):
    base = "/reports/manual__2026-11-30/"
    assert client.get(base + "charts/queue_timeline.svg").headers["content-type"].startswith("image/svg+xml")
    assert client.get("/data-docs/index.html").status_code == 200
    ev = client.get("/evidence/poc_tenant_isolation/scheduled__1/tables/access_probes.parquet")
    assert ev.status_code == 200 and ev.content == b"PAR1"
    assert "attachment" in ev.headers["content-disposition"]
    assert client.get("/evidence/poc_tenant_isolation/scheduled__1/validation/"
                      "tenant_isolation.access_probes.json").json() == {"success": True}


def test_report_markdown_and_json_are_served(client):
    assert client.get("/reports/manual__2026-11-30/report.md").text.startswith("# Decision: go-live")
    assert client.get("/reports/manual__2026-11-30/report.json").json()["decision"] == "go-live"


def test_latest_redirects_to_the_newest_report(client):
    res = client.get("/reports/latest/", follow_redirects=False)
    assert res.status_code == 307 and res.headers["location"] == "../manual__2026-11-30/"


def test_missing_report_is_a_404_naming_the_known_reports(client):
    res = client.get("/reports/manual__1999-01-01/")
    assert res.status_code == 404
    text = html.unescape(res.text)
    assert "report 'manual__1999-01-01' not found under" in text
    assert "known reports (newest first): manual__2026-11-30, scheduled__2026-11-29" in text


def test_missing_file_of_a_report_is_a_404(client):
    res = client.get("/reports/manual__2026-11-30/charts/nope.svg")
    assert res.status_code == 404 and "has no file 'charts/nope.svg'" in html.unescape(res.text)


def test_data_docs_index_and_pages(client):
    res = client.get("/data-docs/")
    assert res.status_code == 200 and "tenant_isolation-access_probes" in res.text
    assert "suite access_probes" in client.get("/data-docs/expectations/tenant_isolation/access_probes.html").text
    assert client.get("/data-docs", follow_redirects=False).status_code == 307


def test_missing_data_docs_site_is_a_clear_404(tmp_path):
    root = tmp_path / "evidence"
    write_report(root / "report", "r1", "go-live", "2026-11-30T08:00:00+00:00")
    paths = UiPaths.for_root(root)
    res = TestClient(create_app(paths=lambda: paths)).get("/data-docs/")
    assert res.status_code == 404 and "no Data Docs site at" in res.text


@pytest.mark.parametrize("url", [
    "/data-docs/%2e%2e/%2e%2e/gx/uncommitted/config_variables.yml",
    "/data-docs/..%2f..%2fgx/uncommitted/config_variables.yml",
    "/data-docs/%2fetc%2fpasswd",
    "/data-docs/.hidden",
    "/reports/manual__2026-11-30/..%2f..%2fgx/uncommitted/config_variables.yml",
    "/reports/..%2fgx/report.json",
    "/reports/%2e%2e/gx",
    "/evidence/gx/uncommitted/config_variables.yml",
    "/evidence/poc_tenant_isolation/scheduled__1/%2e%2e/%2e%2e/gx/uncommitted/config_variables.yml",
    "/evidence/poc_tenant_isolation/scheduled__1/tables/..%2f..%2f..%2f..%2fkubeconfig",
])
def test_path_traversal_is_refused(client, url):
    res = client.get(url)
    assert res.status_code == 403, f"{url}: expected 403 refused, got {res.status_code}"
    assert "refused" in res.text and "s3cr3t" not in res.text


def test_symlink_out_of_the_site_is_refused(client, root):
    os.symlink(root / "gx" / "uncommitted" / "config_variables.yml", root / "data_docs" / "local_site" / "leak.yml")
    res = client.get("/data-docs/leak.yml")
    assert res.status_code == 403 and "leaves the served directory" in res.text
    assert "s3cr3t" not in res.text


def test_only_get_is_allowed(client):
    assert client.post("/reports/manual__2026-11-30/report.json").status_code == 405
    assert client.delete("/data-docs/index.html").status_code == 405


def test_unreadable_report_json_shows_as_unknown_not_a_crash(client, root):
    (root / "report" / "manual__2026-11-30" / "report.json").write_text("{broken")
    res = client.get("/")
    assert res.status_code == 200
    assert "report.json unreadable" in res.text and "decision-unknown" in res.text


def test_unknown_location_is_a_503_with_the_fix(tmp_path):
    from gpupoc.exceptions import GpupocError

    def broken():
        raise GpupocError("POC plan /nowhere.yaml: not found")

    res = TestClient(create_app(paths=broken)).get("/")
    assert res.status_code == 503 and "GPUPOC_EVIDENCE_ROOT" in res.text and "/nowhere.yaml" in res.text


def test_report_dir_outside_the_evidence_root_still_links_into_the_served_routes(root, tmp_path):
    out = tmp_path / "elsewhere" / "reports"
    run = out / "r1"
    run.mkdir(parents=True)
    rel_docs = os.path.relpath(root / "data_docs" / "local_site" / "index.html", run)
    rel_table = os.path.relpath(root / "poc_tenant_isolation/scheduled__1/tables/access_probes.parquet", run)
    (run / "report.html").write_text(f'<html><body><a href="{rel_docs}">d</a><a href="{rel_table}#x">t</a>'
                                     "</body></html>")
    paths = UiPaths.for_root(root, out)
    body = TestClient(create_app(paths=lambda: paths)).get("/reports/r1/").text
    assert 'href="../../data-docs/index.html"' in body
    assert 'href="../../evidence/poc_tenant_isolation/scheduled__1/tables/access_probes.parquet#x"' in body


def test_evidence_can_be_switched_off(root):
    paths = UiPaths.for_root(root)
    client = TestClient(create_app(paths=lambda: paths, serve_evidence=False))
    assert client.get("/evidence/poc_tenant_isolation/scheduled__1/manifest.json").status_code == 403
    body = client.get("/reports/manual__2026-11-30/").text
    assert "../../evidence/" not in body


def test_run_tab_of_a_test_class_run_shows_its_checks_tables_and_data_docs(client):
    res = client.get("/runs/poc_tenant_isolation/scheduled__1")
    assert res.status_code == 200, res.text
    body = html.unescape(res.text)
    assert 'data-verdict="fail"' in body and "ISO-02" in body and "2 of 19 rows unexpected" in body
    assert "Not verified:" in body and "quota_samples" in body and "ResourceQuota not readable" in body
    assert 'href="../../evidence/poc_tenant_isolation/scheduled__1/tables/access_probes.parquet"' in body
    assert ('href="../../data-docs/validations/tenant_isolation/access_probes/poc_tenant_isolation__scheduled__1/'
            '20261130T080000.000000Z/evidence_tenant_isolation-access_probes.html"') in body


def test_run_tab_of_a_run_without_evidence_is_a_clear_404(client):
    res = client.get("/runs/poc_queue_congestion/manual__2026-11-30T08:00:00+00:00")
    assert res.status_code == 404
    assert "run 'manual__2026-11-30T08:00:00+00:00' of poc_queue_congestion has no evidence" in html.unescape(res.text)


def test_run_tab_of_a_report_run_opens_its_report(client, root):
    from gpupoc.evidence.writer import safe_segment

    run_id = "manual__2026-12-01T08:00:00+00:00"
    write_report(root / "report", safe_segment(run_id), "postpone", "2026-12-01T08:00:00+00:00", "fail")
    res = client.get(f"/runs/poc_report/{run_id}", follow_redirects=False)
    assert res.status_code == 307 and res.headers["location"] == f"../../reports/{safe_segment(run_id)}/"
    assert "Decision: postpone" in client.get(f"/runs/poc_report/{run_id}").text
    missing = client.get("/runs/poc_report/manual__1999")
    assert missing.status_code == 404 and "wrote no report" in missing.text


def test_index_shows_each_reports_sign_off_and_links_every_format(root, client):
    import json

    d = root / "report" / "manual__2026-11-30"
    data = json.loads((d / "report.json").read_text())
    data["signoff"] = [{"role": "security", "status": "confirmed"}, {"role": "platform", "status": "objected"}]
    (d / "report.json").write_text(json.dumps(data))
    for name in ("summary.html", "report.junit.xml", "report.pdf"):
        (d / name).write_text("x")
    body = client.get("/").text
    row = body[body.index('data-run-id="manual__2026-11-30"'):body.index('data-run-id="scheduled__2026-11-29"')]
    assert '<span class="signoff-confirmed">security: confirmed</span>' in row
    assert '<span class="signoff-objected">platform: objected</span>' in row
    for name in ("summary.html", "report.junit.xml", "report.pdf"):
        assert f'href="reports/manual__2026-11-30/{name}">{name}</a>' in row
    page = client.get("/reports/manual__2026-11-30/").text
    assert '<a href="summary.html">Summary</a>' in page and '<a href="report.pdf">PDF</a>' in page
    assert client.get("/reports/manual__2026-11-30/summary.html").status_code == 200
    assert client.get("/api/reports").json()["reports"][0]["signoff"] == {"security": "confirmed",
                                                                         "platform": "objected"}
