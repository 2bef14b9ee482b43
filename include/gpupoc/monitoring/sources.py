"""Where the monitoring evidence lives: explicit arguments, Airflow connections, the POC plan, the local stack.

Precedence per source: explicit argument > Airflow connection (the plan's ``prometheus_conn_id`` /
``alertmanager_conn_id``, else ``gpupoc_prometheus`` / ``gpupoc_alertmanager``; looked up only when Airflow is
importable and the connection exists) > the plan's evidence sources (``prometheus_url``, ``alertmanager_url``,
``audit_log_path``, ``alert_receiver_record``) > the local stack's ``stack.json``. ``origin`` records which one won, for the evidence manifest.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from gpupoc.monitoring.promclient import PrometheusClient

PROMETHEUS_CONN_ID = "gpupoc_prometheus"
ALERTMANAGER_CONN_ID = "gpupoc_alertmanager"
DEFAULT_STACK_DIR = Path("var/monitoring")

# accepted key spellings in a plan's evidence-sources mapping
_PLAN_KEYS = {
    "prometheus": ("prometheus", "prometheus_url"),
    "alertmanager": ("alertmanager", "alertmanager_url"),
    "receiver_record": ("alert_receiver_record", "receiver_record", "alerts_record"),
    "audit_log": ("audit_log", "audit_log_path"),
}


@dataclass
class MonitoringSources:
    """Resolved locations; None when no source named one. ``origin`` maps each to where it came from."""

    prometheus: str | None = None
    alertmanager: str | None = None
    receiver_record: str | None = None
    audit_log: str | None = None
    prometheus_headers: dict[str, str] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)

    def prometheus_client(self, timeout: float = 10.0) -> PrometheusClient:
        from gpupoc.exceptions import SourceUnavailable

        if not self.prometheus:
            raise SourceUnavailable("prometheus", "no Prometheus URL configured",
                                    f"pass one, create the Airflow connection {PROMETHEUS_CONN_ID}, set it in the "
                                    "plan's evidence sources, or run `gpupoc stack up`")
        return PrometheusClient(self.prometheus, timeout=timeout, headers=self.prometheus_headers)


def connection_url(conn: Any) -> tuple[str, dict[str, str]]:
    """URL and auth headers of an Airflow connection: ``host`` may be a full URL or a host name with
    ``schema`` (http/https) and ``port``; ``extra`` may hold ``url``; a password alone is a bearer token."""
    extra = {}
    try:
        extra = conn.extra_dejson or {}
    except Exception:  # noqa: BLE001 - a malformed extra must not hide the host
        extra = {}
    host = (conn.host or "").strip()
    if extra.get("url"):
        url = extra["url"]
    elif "://" in host:
        url = host
    else:
        schemes = ("http", "https")
        scheme = conn.schema if conn.schema in schemes else (conn.conn_type if conn.conn_type in schemes else "http")
        url = f"{scheme}://{host}" + (f":{conn.port}" if conn.port else "")
    headers: dict[str, str] = {}
    if conn.password and conn.login:
        import base64

        token = base64.b64encode(f"{conn.login}:{conn.password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    elif conn.password:
        headers["Authorization"] = f"Bearer {conn.password}"
    return url.rstrip("/"), headers


def airflow_connection(conn_id: str) -> Any | None:
    """The Airflow connection ``conn_id``, or None when Airflow is absent or the connection does not exist."""
    if importlib.util.find_spec("airflow") is None:
        return None
    try:
        from airflow.sdk import BaseHook
    except ImportError:
        return None
    try:
        return BaseHook.get_connection(conn_id)
    except Exception:  # noqa: BLE001 - AirflowNotFoundException and "no metadata DB here" alike mean absent
        return None


def read_stack_file(stack_dir: str | Path = DEFAULT_STACK_DIR) -> dict:
    """The local stack's ``stack.json`` (empty dict when there is none)."""
    p = Path(stack_dir) / "stack.json"
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return {}


def _plan_value(plan_sources: Mapping[str, Any] | Any | None, key: str) -> str | None:
    if not plan_sources:
        return None
    v = plan_sources.get(key) if isinstance(plan_sources, Mapping) else getattr(plan_sources, key, None)
    return str(v) if v else None


def _from_plan(plan_sources: Mapping[str, Any] | Any | None, key: str) -> str | None:
    for k in _PLAN_KEYS[key]:
        v = _plan_value(plan_sources, k)
        if v:
            return v
    return None


def resolve_sources(prometheus: str | None = None, alertmanager: str | None = None,
                    receiver_record: str | None = None, audit_log: str | None = None,
                    plan_sources: Mapping[str, Any] | None = None, stack_dir: str | Path | None = DEFAULT_STACK_DIR,
                    use_airflow: bool = True) -> MonitoringSources:
    """Resolve each location by the precedence in the module docstring."""
    out = MonitoringSources()
    stack = read_stack_file(stack_dir) if stack_dir is not None else {}
    stack_values = {
        "prometheus": (stack.get("prometheus") or {}).get("url"),
        "alertmanager": (stack.get("alertmanager") or {}).get("url"),
        "receiver_record": (stack.get("receiver") or {}).get("record"),
        "audit_log": None,
    }
    explicit = {"prometheus": prometheus, "alertmanager": alertmanager, "receiver_record": receiver_record,
                "audit_log": audit_log}
    conn_ids = {"prometheus": _plan_value(plan_sources, "prometheus_conn_id") or PROMETHEUS_CONN_ID,
                "alertmanager": _plan_value(plan_sources, "alertmanager_conn_id") or ALERTMANAGER_CONN_ID}
    for key in ("prometheus", "alertmanager", "receiver_record", "audit_log"):
        value, origin, headers = explicit[key], "argument", {}
        if not value and use_airflow and key in conn_ids:
            conn = airflow_connection(conn_ids[key])
            if conn is not None:
                value, headers = connection_url(conn)
                origin = f"airflow connection {conn_ids[key]}"
        if not value:
            value, origin = _from_plan(plan_sources, key), "plan"
        if not value and stack_values[key]:
            value, origin = stack_values[key], f"{Path(stack_dir) / 'stack.json'}"
        if value:
            setattr(out, key, value)
            out.origin[key] = origin
            if key == "prometheus":
                out.prometheus_headers = headers
    return out
