"""Airflow plugin "GPU POC": the go-live reports and the Great Expectations Data Docs in the Airflow UI.

Mounts the read-only pages of ``gpupoc.ui`` on the api-server under ``/gpupoc`` (behind Airflow's own
login) and adds a top-level "GPU POC" entry to the UI's navigation that shows them in the UI.
The pages read the evidence root of the POC plan (``GPUPOC_PLAN``) or ``GPUPOC_EVIDENCE_ROOT``.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

URL_PREFIX = "/gpupoc"


def _app():
    from gpupoc.ui.app import create_app
    from gpupoc.ui.auth import airflow_user

    return create_app(authenticate=airflow_user)


class GpupocUiPlugin(AirflowPlugin):
    """Report index, reports and Data Docs under /gpupoc; "GPU POC" in the navigation."""

    name = "gpupoc_ui"
    fastapi_apps = [{"app": _app(), "url_prefix": URL_PREFIX, "name": "GPU POC reports"}]
    external_views = [{
        "name": "GPU POC",
        "href": f"{URL_PREFIX}/",
        "url_route": "gpupoc",
        "destination": "nav",
        "nav_top_level": True,
    }]
