"""Airflow plugin "GPU POC": the go-live reports and the Great Expectations Data Docs in the Airflow UI.

Mounts the read-only pages of ``gpupoc.ui`` on the api-server under ``/gpupoc`` (behind Airflow's own
login), adds a top-level "GPU POC" entry to the UI's navigation that shows them in the UI, and a
"POC evidence" tab on every DAG run (a test-class run's checks and tables; a poc_report run's report).
The pages read the evidence root of the POC plan (``GPUPOC_PLAN``) or ``GPUPOC_EVIDENCE_ROOT``.
"""

from __future__ import annotations

from functools import cache

from airflow.plugins_manager import AirflowPlugin

URL_PREFIX = "/gpupoc"


@cache
def _fastapi_app() -> dict:
    from gpupoc.ui.app import create_app
    from gpupoc.ui.auth import airflow_user

    return {"app": create_app(authenticate=airflow_user), "url_prefix": URL_PREFIX, "name": "GPU POC reports"}


class GpupocUiPlugin(AirflowPlugin):
    """Report index, reports and Data Docs under /gpupoc; "GPU POC" in the navigation."""

    name = "gpupoc_ui"
    external_views = [{
        "name": "GPU POC",
        "href": f"{URL_PREFIX}/",
        "url_route": "gpupoc",
        "destination": "nav",
        "nav_top_level": True,
    }, {
        "name": "POC evidence",
        "href": f"{URL_PREFIX}/runs/{{DAG_ID}}/{{RUN_ID}}",
        "url_route": "gpupoc_run",
        "destination": "dag_run",
    }]

    @property
    def fastapi_apps(self) -> list[dict]:  # type: ignore[override]
        """Built on first use: only the api-server mounts it, task processes never pay for the import."""
        return [_fastapi_app()]
