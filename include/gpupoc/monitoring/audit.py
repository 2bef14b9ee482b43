"""The platform's audit events (audit.k8s.io/v1 Event, from any audit source) as a DataFrame."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpupoc.monitoring.results import CollectorResult, Window

AUDIT_COLUMNS = ["timestamp", "audit_id", "stage", "user", "groups", "impersonated_user", "verb", "resource",
                 "subresource", "api_group", "namespace", "name", "code", "decision", "reason", "request_uri",
                 "user_agent", "source_ip"]
FINAL_STAGES = ("ResponseComplete", "Panic")


def _row(ev: dict) -> dict:
    ref = ev.get("objectRef") or {}
    user = ev.get("user") or {}
    ann = ev.get("annotations") or {}
    return {
        "timestamp": ev.get("stageTimestamp") or ev.get("requestReceivedTimestamp"),
        "audit_id": ev.get("auditID", ""), "stage": ev.get("stage", ""),
        "user": user.get("username", ""), "groups": ",".join(user.get("groups") or []),
        "impersonated_user": (ev.get("impersonatedUser") or {}).get("username", ""),
        "verb": ev.get("verb", ""), "resource": ref.get("resource", ""), "subresource": ref.get("subresource", ""),
        "api_group": ref.get("apiGroup", ""), "namespace": ref.get("namespace", ""), "name": ref.get("name", ""),
        "code": (ev.get("responseStatus") or {}).get("code"),
        "decision": ann.get("authorization.k8s.io/decision", ""),
        "reason": ann.get("authorization.k8s.io/reason", ""),
        "request_uri": ev.get("requestURI", ""), "user_agent": ev.get("userAgent", ""),
        "source_ip": ",".join(ev.get("sourceIPs") or []),
    }


def read_audit_log(source, window: Window | None = None, final_only: bool = True) -> CollectorResult:
    """Audit events in ``window`` from an audit source (``gpupoc.monitoring.audit_source``) or a JSON-lines
    path; with ``final_only`` one row per request (its ResponseComplete/Panic stage) when the source records
    those stages. Unreadable or empty for the window -> not verified, with the reason."""
    from gpupoc.exceptions import SourceUnavailable
    from gpupoc.monitoring.audit_source import LinesSource

    name = "audit_log"
    if isinstance(source, (str, Path)):
        source = LinesSource(Path(source), str(source), "check the API server's --audit-log-path (or the plan's "
                             "evidence source audit)", what="audit log")
    try:
        events = source.events(window.start if window else None, window.end if window else None)
    except SourceUnavailable as exc:
        return CollectorResult.unverified(name, source.origin, window, f"{exc.reason} ({exc.fix})",
                                          columns=AUDIT_COLUMNS)
    df = pd.DataFrame([_row(ev) for ev in events], columns=AUDIT_COLUMNS)
    df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True, errors="coerce", format="ISO8601")
    df["code"] = pd.to_numeric(df["code"], errors="coerce").astype("Int64")
    if final_only and df["stage"].isin(FINAL_STAGES).any():
        df = df[df["stage"].isin(FINAL_STAGES) | (df["stage"] == "")]
    df = df.sort_values("timestamp", kind="stable").reset_index(drop=True)
    skipped = getattr(source, "skipped", 0)
    note = f" ({skipped} unparseable line(s) skipped)" if skipped else ""
    if df.empty:
        return CollectorResult.unverified(name, source.origin, window,
                                          f"no audit events for {window or 'any time'}{note}", columns=AUDIT_COLUMNS)
    return CollectorResult(name, source.origin, window, df, True, note.strip())
