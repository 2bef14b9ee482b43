"""The Airflow plugin loads from plugins/ with Airflow's own loader and guards the pages with Airflow's login."""

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

PLUGINS = Path(__file__).resolve().parents[3] / "plugins"


@pytest.fixture(scope="module")
def plugin():
    from airflow._shared.plugins_manager.plugins_manager import _load_plugins_from_plugin_directory

    plugins, errors = _load_plugins_from_plugin_directory(str(PLUGINS))
    assert errors == {}, f"plugin import errors: {errors}"
    found = [p for p in plugins if p.name == "gpupoc_ui"]
    assert len(found) == 1, f"expected one gpupoc_ui plugin in {PLUGINS}, got {[p.name for p in plugins]}"
    return found[0]


def test_plugin_mounts_the_pages_under_a_free_prefix(plugin):
    from airflow.api_fastapi.app import RESERVED_URL_PREFIXES

    (app,) = plugin.fastapi_apps
    assert app["url_prefix"] == "/gpupoc"
    assert not any(app["url_prefix"].startswith(p) for p in RESERVED_URL_PREFIXES)
    assert isinstance(app["app"], FastAPI)


def test_plugin_adds_a_gpu_poc_navigation_entry_and_a_dag_run_tab(plugin):
    from airflow.api_fastapi.core_api.datamodels.plugins import ExternalViewResponse

    nav, run_tab = (ExternalViewResponse.model_validate(v) for v in plugin.external_views)
    assert nav.name == "GPU POC" and nav.destination == "nav" and nav.nav_top_level is True
    assert nav.href == "/gpupoc/" and nav.url_route == "gpupoc"
    assert run_tab.destination == "dag_run" and run_tab.href == "/gpupoc/runs/{DAG_ID}/{RUN_ID}"
    assert run_tab.url_route and run_tab.url_route != nav.url_route


class _User:
    def get_name(self):
        return "viewer"


class _AuthManager:
    def __init__(self, allowed=True):
        self.allowed = allowed
        self.tokens = []

    def get_url_login(self, **kw):
        return "/auth/login?next=" + kw.get("next_url", "")

    async def get_user_from_token(self, token):
        self.tokens.append(token)
        if token != "good":
            raise ValueError("Invalid JWT token")
        return _User()

    def is_authorized_view(self, *, access_view, user):
        return self.allowed


@pytest.fixture
def guarded(monkeypatch, tmp_path):
    import airflow.api_fastapi.app as af_app

    from gpupoc.ui.app import create_app
    from gpupoc.ui.auth import airflow_user
    from gpupoc.ui.locations import UiPaths

    am = _AuthManager()
    monkeypatch.setattr(af_app, "get_auth_manager", lambda: am)
    paths = UiPaths.for_root(tmp_path)
    return am, TestClient(create_app(paths=lambda: paths, authenticate=airflow_user))


def test_browser_without_a_session_is_sent_to_the_airflow_login(guarded):
    _, client = guarded
    res = client.get("/", headers={"accept": "text/html"}, follow_redirects=False)
    assert res.status_code == 302 and res.headers["location"].startswith("/auth/login?next=")


def test_api_client_without_a_token_gets_401(guarded):
    _, client = guarded
    res = client.get("/api/reports", headers={"accept": "application/json"})
    assert res.status_code == 401 and "not authenticated" in res.json()["detail"]


def test_ui_cookie_or_bearer_token_is_checked_by_the_auth_manager(guarded):
    am, client = guarded
    client.cookies.set("_token", "good")
    assert client.get("/api/reports").status_code == 200
    client.cookies.clear()
    assert client.get("/api/reports", headers={"Authorization": "Bearer good"}).status_code == 200
    client.cookies.set("_token", "forged")
    assert client.get("/api/reports").status_code == 401
    assert am.tokens == ["good", "good", "forged"]


def test_user_without_the_website_view_is_refused(guarded):
    am, client = guarded
    am.allowed = False
    client.cookies.set("_token", "good")
    res = client.get("/")
    assert res.status_code == 403 and "viewer" in res.text


def test_loading_the_plugin_does_not_import_the_web_app():
    """Task processes load plugins for macros: they must not pay for FastAPI and the templates."""
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, %r)\n"
            "from airflow._shared.plugins_manager.plugins_manager import _load_plugins_from_plugin_directory\n"
            "plugins, errors = _load_plugins_from_plugin_directory(%r)\n"
            "assert not errors, errors\n"
            "print(sorted(m for m in sys.modules if m.startswith('gpupoc.ui')))") % (str(PLUGINS), str(PLUGINS))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]", f"plugin import pulled in {res.stdout.strip()}"
