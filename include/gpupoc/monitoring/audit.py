"""The Kubernetes audit log (audit.k8s.io/v1 Event, one JSON object a line) as a DataFrame."""

from __future__ import annotations

import json
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


def read_audit_log(path: str | Path, window: Window | None = None, final_only: bool = True) -> CollectorResult:
    """Audit events in ``window``; with ``final_only`` one row per request (its ResponseComplete/Panic stage)
    when the log records those stages. Unreadable or empty for the window -> not verified, with the reason."""
    name, p = "audit_log", Path(path)
    if not p.is_file():
        return CollectorResult.unverified(name, str(p), window, "audit log not found: check the API server's "
                                          "--audit-log-path (or the plan's evidence source audit_log)",
                                          columns=AUDIT_COLUMNS)
    rows, bad = [], 0
    with p.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if ev.get("kind", "Event") == "Event":
                rows.append(_row(ev))
    df = pd.DataFrame(rows, columns=AUDIT_COLUMNS)
    df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True, errors="coerce", format="ISO8601")
    df["code"] = pd.to_numeric(df["code"], errors="coerce").astype("Int64")
    if final_only and df["stage"].isin(FINAL_STAGES).any():
        df = df[df["stage"].isin(FINAL_STAGES) | (df["stage"] == "")]
    if window is not None:
        df = df[(df["timestamp"] >= window.start) & (df["timestamp"] <= window.end)]
    df = df.sort_values("timestamp", kind="stable").reset_index(drop=True)
    note = f" ({bad} unparseable line(s) skipped)" if bad else ""
    if df.empty:
        return CollectorResult.unverified(name, str(p), window, f"no audit events for {window or 'any time'}{note}",
                                          columns=AUDIT_COLUMNS)
    return CollectorResult(name, str(p), window, df, True, note.strip())
