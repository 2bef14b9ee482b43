"""The "GPU POC" pages in a real Airflow api-server, opened through the Airflow UI in headless Chromium.

Evidence of a correctly behaving platform is validated (building the Data Docs site) and turned into a
report with ``gpupoc report``; the api-server loads the repository's plugins/ folder; the browser logs in
on Airflow's login form, opens the "GPU POC" entry, the report and the Data Docs, and saves screenshots
(also copied to var/screenshots/). Chromium is driven over the DevTools protocol (tests/integration/browser.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.integration.browser import REPO, launch

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900), pytest.mark.xdist_group("browser")]

RUN_ID = "manual__ui_test"


@pytest.fixture(scope="module")
def evidence_root(tmp_path_factory) -> Path:
    """Validated synthetic evidence (Data Docs built) and a report made by the ``gpupoc report`` command."""
    from gpupoc.report.items import TEST_CLASSES
    from gpupoc.validation import synthetic as syn
    from gpupoc.validation import validate_run

    root = tmp_path_factory.mktemp("ui") / "evidence"
    for tc in TEST_CLASSES:
        validate_run(syn.write_run(root, tc, "scheduled__1", syn.good_tables(tc)))
    out = root / "report" / RUN_ID
    res = subprocess.run([str(Path(sys.executable).parent / "gpupoc"), "report", str(root), "--out", str(out)],
                         capture_output=True, text=True, timeout=120, cwd=str(REPO))
    assert res.returncode == 0, f"gpupoc report failed:\n{res.stdout}\n{res.stderr}"
    assert (out / "report.html").is_file() and (root / "data_docs" / "local_site" / "index.html").is_file()
    return root


@pytest.fixture(scope="module")
def airflow(evidence_root, tmp_path_factory):
    """A real api-server (SQLite, simple auth manager) with the repository's plugins folder."""
    from gpupoc.airflow_runtime.processes import down, up
    from gpupoc.airflow_runtime.settings import RuntimeSettings, admin_password, free_port

    home = tmp_path_factory.mktemp("airflow-home")
    settings = RuntimeSettings(home=home, port=free_port(), extra_env={"GPUPOC_EVIDENCE_ROOT": str(evidence_root)})
    try:
        state = up(settings, components=["api-server"], wait_healthy=False, timeout=900)
        yield state.url, admin_password(home)
    finally:
        down(home)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    # no internet here: a page asking a public host for anything fails at once instead of hanging
    with launch(tmp_path_factory.mktemp("chromium-profile")) as p:
        yield p


@pytest.fixture(scope="module")
def logged_in(page, airflow):
    """Log in on Airflow's own login form (simple auth manager) like a user does."""
    url, password = airflow
    page.goto(f"{url}/gpupoc/")  # not logged in: the plugin sends the browser to Airflow's login
    page.wait("location.pathname.startsWith('/auth/login') && document.querySelector('input[name=password]')",
              "Airflow's login form")
    for name, value in (("username", "admin"), ("password", password)):
        page.js(f"document.querySelector('input[name={name}]').focus()")
        page.call("Input.insertText", text=value)
    page.wait("!document.querySelector('button[type=submit]').disabled", "the enabled Sign in button")
    page.js("document.querySelector('button[type=submit]').click()")
    page.wait("location.pathname.startsWith('/gpupoc') && document.readyState === 'complete'",
              "the redirect back to the GPU POC pages after login")
    return url


def test_gpu_poc_entry_in_the_airflow_ui_shows_the_report_index(page, logged_in, evidence_root, tmp_path):
    decision = json.loads((evidence_root / "report" / RUN_ID / "report.json").read_text())["decision"]
    page.goto(f"{logged_in}/plugin/gpupoc")
    page.wait("[...document.querySelectorAll('a')].some(a => a.textContent.trim() === 'GPU POC')",
              "the GPU POC entry in Airflow's navigation")
    frame = "document.querySelector('iframe') && document.querySelector('iframe').contentDocument"
    page.wait(f"{frame} && {frame}.querySelector('tr.report-row[data-run-id=\"{RUN_ID}\"]')",
              "the report index inside the Airflow UI")
    badge = page.js(f"{frame}.querySelector('tr.report-row .badge').textContent.trim()")
    assert badge == decision, f"index badge {badge!r}, report.json says {decision!r}"
    suites = page.js(f"[...{frame}.querySelectorAll('tr.suite-row')].map(r => r.dataset.suite)")
    assert "tenant_isolation.access_probes" in suites and len(suites) >= 5, suites
    shot = page.screenshot(tmp_path / "ui-gpu-poc-index.png")
    assert shot.stat().st_size > 20_000, "screenshot looks empty"

    # open the report from the index, still inside the Airflow UI
    page.js(f"{frame}.querySelector('tr.report-row a').click()")
    page.wait(f"{frame} && {frame}.querySelector('#decision') && {frame}.location.pathname.endsWith('/{RUN_ID}/')",
              "the report inside the Airflow UI")
    page.screenshot(tmp_path / "ui-gpu-poc-report-in-airflow.png")


def test_report_renders_decision_items_and_charts(page, logged_in, evidence_root, tmp_path):
    report = json.loads((evidence_root / "report" / RUN_ID / "report.json").read_text())
    page.goto(f"{logged_in}/gpupoc/reports/{RUN_ID}/")
    page.wait("document.querySelector('#decision')", "the report's decision section")
    assert page.js(f"!!document.querySelector('.decision.d-{report['decision']}')"), \
        f"decision {report['decision']} not shown"
    text = page.js("document.body.innerText")
    for item in report["items"]:
        assert item["id"] in text or f"item-{item['id']}" in page.js("document.body.innerHTML"), item["id"]
    assert page.js("document.querySelectorAll('table').length") >= 3, "item tables missing"
    assert page.js("document.querySelectorAll('svg').length") >= 3, "charts missing"
    docs = page.js("[...document.querySelectorAll('a')].map(a => a.href).find(h => h.includes('/gpupoc/data-docs/'))")
    assert docs, "the report's Data Docs link does not point into the served site"
    page.screenshot(tmp_path / "ui-gpu-poc-report.png")
    page.goto(docs)
    page.wait("document.title.includes('Data Docs')", "the Data Docs site from the report's link")


def test_data_docs_site_and_a_suite_page_render(page, logged_in, tmp_path):
    page.goto(f"{logged_in}/gpupoc/data-docs/")
    page.wait("document.title.includes('Data Docs')", "the Data Docs index")
    assert "tenant_isolation-access_probes" in page.js("document.documentElement.outerHTML"), \
        "the Data Docs index does not list the tenant_isolation suites"
    assert page.js("getComputedStyle(document.querySelector('.navbar')).display") == "flex", \
        "the Data Docs index is unstyled: Bootstrap did not load from the site's own copy"
    page.screenshot(tmp_path / "ui-data-docs-index.png")
    page.goto(f"{logged_in}/gpupoc/data-docs/expectations/tenant_isolation/access_probes.html")
    page.wait("document.body.innerText.includes('tenant_isolation.access_probes')", "the suite page")
    assert "Expectation Suite" in page.js("document.body.innerText")
    page.screenshot(tmp_path / "ui-data-docs-suite.png")


def test_pages_refuse_requests_without_a_session(airflow, evidence_root):
    url, _ = airflow
    req = urllib.request.Request(f"{url}/gpupoc/api/reports", headers={"Accept": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 401


def test_run_tab_shows_the_checks_of_a_test_class_run(page, logged_in, tmp_path):
    page.goto(f"{logged_in}/gpupoc/runs/poc_tenant_isolation/scheduled__1")
    page.wait("document.querySelector('#checks tr.check-row')", "the run's check table")
    rows = page.js("[...document.querySelectorAll('#checks tr.check-row')].map(r => [r.dataset.verdict, "
                   "r.textContent])")
    verdicts = [v for v, _ in rows]
    # every check passes but the sharing checks, not applicable where no node shares its GPUs (the synthetic run's
    # cluster): ISO-11 (memory isolation), ISO-12 and ISO-13 (vGPU slices)
    assert verdicts and set(verdicts) == {"pass", "not_applicable"}, verdicts
    shared = [next((c for c in ("ISO-11", "ISO-12", "ISO-13") if c in text), None)
              for v, text in rows if v == "not_applicable"]
    assert sorted(shared, key=str) == ["ISO-11", "ISO-12", "ISO-13"], rows
    assert page.js("document.querySelectorAll('#docs a').length") >= 1, "no Data Docs validation links"
    page.screenshot(tmp_path / "ui-run-evidence.png")
