"""Airflow's own login guards the pages: the UI's ``_token`` cookie (or a bearer token) must be valid.

Uses the api-server's auth manager, so the pages accept exactly the users the Airflow UI accepts and
require the read-only "website" view permission.
"""

from __future__ import annotations

from fastapi import Request

from gpupoc.ui.app import NotAuthenticated, NotAuthorized


def _login_url(am, request: Request) -> str:
    try:
        return am.get_url_login(next_url=str(request.url))
    except Exception:  # noqa: BLE001 - any auth manager: fall back to Airflow's own login route
        return "/auth/login"


async def airflow_user(request: Request) -> object:
    """The logged-in Airflow user of this request; NotAuthenticated / NotAuthorized otherwise."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.base_auth_manager import COOKIE_NAME_JWT_TOKEN
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView

    am = get_auth_manager()
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else request.cookies.get(COOKIE_NAME_JWT_TOKEN)
    if not token:
        raise NotAuthenticated(_login_url(am, request), "no Airflow session (log in to the Airflow UI first)")
    try:
        user = await am.get_user_from_token(token)
    except Exception as exc:  # noqa: BLE001 - expired, revoked or forged: all mean "log in again"
        raise NotAuthenticated(_login_url(am, request), f"Airflow session not valid ({type(exc).__name__})") from None
    if not am.is_authorized_view(access_view=AccessView.WEBSITE, user=user):
        raise NotAuthorized(f"user {getattr(user, 'get_name', lambda: '?')()!r} may not view the Airflow website")
    return user
