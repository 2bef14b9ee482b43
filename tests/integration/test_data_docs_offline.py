"""The Data Docs site renders fully styled with no network: from disk, and through the UI's Data Docs pages.

Evidence of a correctly behaving platform is validated (GX builds the site, the pipeline points it at its
local assets). Headless Chromium resolves no host name but loopback and logs every request it sends over
the DevTools protocol; each page must send none off the machine, and Bootstrap's styles, Font Awesome's
font and the pages' scripts must take effect.
"""

from __future__ import annotations

import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.integration.browser import Page, launch
from tests.waiting import first_truthy

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900), pytest.mark.xdist_group("browser")]

SUITE_PAGE = "expectations/tenant_isolation/access_probes.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    from gpupoc.validation import data_docs_index
    from gpupoc.validation.synthetic import write_good_root

    root = write_good_root(tmp_path_factory.mktemp("offline") / "evidence")
    return data_docs_index(root).parent


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    with launch(tmp_path_factory.mktemp("chromium-profile")) as p:
        yield p


@pytest.fixture(scope="module")
def ui_url(site):
    """The UI plugin's application (the one Airflow mounts under /gpupoc) served by uvicorn on loopback."""
    import uvicorn

    from gpupoc.airflow_runtime.settings import free_port
    from gpupoc.ui.app import create_app
    from gpupoc.ui.locations import UiPaths

    paths = UiPaths.for_root(site.parents[1])
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(paths=lambda: paths), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    first_truthy("uvicorn to start the UI application", lambda: server.started, step_seconds=30, poll=0.1)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def _validation_page(site: Path) -> str:
    pages = sorted((site / "validations" / "tenant_isolation" / "access_probes").rglob("*.html"))
    assert pages, "no validation page for tenant_isolation.access_probes"
    return pages[-1].relative_to(site).as_posix()


def _open_offline(page: Page, url: str, allowed: tuple[str, ...]) -> list[str]:
    """Open ``url``; assert every request stayed on the machine; return the requests."""
    page.requests.clear()
    page.goto(url)
    page.js("document.fonts.ready.then(() => true)")
    page.call("Runtime.evaluate", expression="1")  # drain the events the load sent
    off = [r for r in page.requests if not r.startswith(allowed) and not r.startswith("data:")]
    assert not off, f"{url} sent {len(off)} request(s) off the machine: {off[:5]}"
    return list(page.requests)


def _assert_styled(page: Page, url: str) -> None:
    # Bootstrap: .navbar is flex (a <nav> is block by default), the body gets Bootstrap's font stack
    assert page.js("getComputedStyle(document.querySelector('.navbar')).display") == "flex", \
        f"{url}: Bootstrap's CSS did not apply"
    assert "apple-system" in page.js("getComputedStyle(document.body).fontFamily"), \
        f"{url}: body font is the browser default, not Bootstrap's"
    assert page.js("typeof jQuery === 'function' && typeof jQuery.fn.bootstrapTable === 'function' "
                   "&& typeof jQuery.fn.tooltip === 'function' && typeof vegaEmbed === 'function'"), \
        f"{url}: jQuery, bootstrap-table, Bootstrap's JS or vega-embed did not load"


def _assert_font_awesome(page: Page, requests: list[str], url: str) -> None:
    loaded = page.js("[...document.fonts].filter(f => f.family.includes('Font Awesome') && f.status === 'loaded')"
                     ".map(f => f.family)")
    assert loaded, f"{url}: no Font Awesome font loaded"
    assert any(r.endswith(".woff2") and "webfonts/fa-" in r for r in requests), \
        f"{url}: the Font Awesome webfont was not requested from the site"


def test_site_from_disk_loads_nothing_from_the_network_and_is_styled(page, site, tmp_path):
    for rel in ("index.html", SUITE_PAGE, _validation_page(site)):
        url = (site / rel).as_uri()
        requests = _open_offline(page, url, ("file://",))
        _assert_styled(page, url)
        if rel == "index.html":
            _assert_font_awesome(page, requests, url)
        if rel == SUITE_PAGE:
            assert page.js("!!document.querySelector('div.bootstrap-table')"), \
                "bootstrap-table did not turn the suite's table into its widget"
    page.screenshot(tmp_path / "data-docs-offline-suite.png")


def test_ui_data_docs_pages_serve_the_same_assets(page, site, ui_url, tmp_path):
    local = (ui_url,)
    for rel in ("", SUITE_PAGE, _validation_page(site)):
        url = f"{ui_url}/data-docs/{rel}"
        requests = _open_offline(page, url, local)
        _assert_styled(page, url)
        served = {urlparse(r).path for r in requests if "/static/offline/" in r}
        assert served, f"{url}: no asset requested from the site's static/offline/"
        if rel == "":
            _assert_font_awesome(page, requests, url)
    page.screenshot(tmp_path / "data-docs-offline-ui.png")
