"""The "GPU POC" pages in a real Airflow api-server, opened through the Airflow UI in headless Chromium.

Evidence of a correctly behaving platform is validated (building the Data Docs site) and turned into a
report with ``gpupoc report``; the api-server loads the repository's plugins/ folder; the browser logs in
on Airflow's login form, opens the "GPU POC" entry, the report and the Data Docs, and saves screenshots
(also copied to var/screenshots/). Chromium is driven over the DevTools protocol.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = REPO / "var" / "screenshots"
RUN_ID = "manual__ui_test"


class Page:
    """One Chromium tab over the DevTools protocol (websocket, JSON commands with ids)."""

    def __init__(self, ws_url: str):
        import websocket  # websocket-client, a dependency of the kubernetes client

        # no Origin header: Chromium refuses DevTools connections from other origins
        self.ws = websocket.create_connection(ws_url, timeout=10, suppress_origin=True)
        self.ids = itertools.count(1)
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, timeout: float = 30.0, **params) -> dict:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg.get("result", {})
        raise TimeoutError(f"{method}: no answer in {timeout} s")

    def js(self, expression: str):
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise AssertionError(f"{expression[:80]}: {res['exceptionDetails'].get('text')}")
        return res["result"].get("value")

    def wait(self, expression: str, what: str, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            try:  # a DOM node comes back as {}: report it as found
                value = self.js(f"(() => {{ const v = ({expression}); return v && v.nodeType ? true : v; }})()")
            except AssertionError:
                value = None
            if value:
                return value
            time.sleep(0.25)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}; page {self.js('location.href')}:\n"
                             f"{(self.js('document.body && document.body.innerText') or '')[:1500]}")

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && location.href !== 'about:blank'", f"load of {url}")

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", timeout=60)["data"]
        path.write_bytes(base64.b64decode(data))
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, SCREENSHOTS / path.name)
        return path

    def close(self) -> None:
        self.ws.close()


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
        state = up(settings, components=["api-server"], wait_healthy=False, timeout=120)
        yield state.url, admin_password(home)
    finally:
        down(home)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} missing: run `bash scripts/install-browser.sh` (Debian chromium)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,900", f"--user-data-dir={profile}",
         # no internet here: public CDN requests (the Data Docs site's CSS) fail at once instead of hanging
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = int(m.group(1)) if m else None
        assert port, f"chromium did not start (exit {proc.poll()})"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = [t for t in json.load(resp) if t.get("type") == "page"]
        p = Page(targets[0]["webSocketDebuggerUrl"])
        yield p
        p.close()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


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
    verdicts = page.js("[...document.querySelectorAll('#checks tr.check-row')].map(r => r.dataset.verdict)")
    assert verdicts and set(verdicts) == {"pass"}, verdicts
    assert page.js("document.querySelectorAll('#docs a').length") >= 1, "no Data Docs validation links"
    page.screenshot(tmp_path / "ui-run-evidence.png")
