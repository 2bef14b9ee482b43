"""Alert history: Prometheus's ``ALERTS`` series, the webhook receiver's record, Alertmanager's current list.

Alertmanager forgets resolved alerts, so history comes from ``ALERTS`` (pending and firing episodes) and from
the receiver's JSON lines (every firing and resolved notification as Alertmanager sent it).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd

from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring.labels import pick
from gpupoc.monitoring.promclient import PrometheusClient, as_client
from gpupoc.monitoring.results import CollectorResult, Window

EPISODE_COLUMNS = ["alertname", "alertstate", "severity", "namespace", "pod", "node", "hostname", "start", "end",
                   "samples", "labels"]
NOTIFICATION_COLUMNS = ["received_at", "receiver", "group_status", "status", "alertname", "severity", "namespace",
                        "pod", "node", "hostname", "starts_at", "ends_at", "fingerprint", "summary", "description",
                        "labels"]
_RESERVED = {"__name__", "alertname", "alertstate"}


def _tags(labels: dict) -> dict:
    return {"severity": labels.get("severity", ""), "namespace": pick(labels, "namespace"),
            "pod": pick(labels, "pod"), "node": pick(labels, "node"), "hostname": pick(labels, "hostname")}


def alerts_from_prometheus(prom: PrometheusClient | str, window: Window) -> CollectorResult:
    """Pending/firing episodes from ``ALERTS``: one row per alert label set and contiguous run of samples."""
    name, query = "alerts_prometheus", "ALERTS"
    try:
        client = as_client(prom)
        series = client.query_range(query, window.start, window.end, window.step)
    except SourceUnavailable as exc:
        return CollectorResult.unverified(name, exc.endpoint, window, f"{exc.reason} (fix: {exc.fix})", query,
                                          EPISODE_COLUMNS)
    rows = []
    for s in series:
        m = s["metric"]
        times = sorted(float(t) for t, _ in s["values"])
        run_start = prev = times[0]
        for t in times[1:] + [None]:
            if t is not None and t - prev <= 2.5 * window.step:
                prev = t
                continue
            rows.append({"alertname": m.get("alertname", ""), "alertstate": m.get("alertstate", ""), **_tags(m),
                         "start": run_start, "end": prev, "samples": 0,
                         "labels": json.dumps({k: v for k, v in sorted(m.items()) if k not in _RESERVED})})
            rows[-1]["samples"] = sum(1 for x in times if run_start <= x <= prev)
            if t is not None:
                run_start = prev = t
    df = pd.DataFrame(rows, columns=EPISODE_COLUMNS)
    if df.empty:
        return CollectorResult.unverified(
            name, client.url, window, f"no ALERTS series in {window}: no alert was pending or firing, or the rules "
            "are not loaded (check /api/v1/rules)", query, EPISODE_COLUMNS)
    for col in ("start", "end"):
        df[col] = pd.to_datetime(df[col], unit="s", utc=True)
    return CollectorResult(name, client.url, window, df.sort_values(["start", "alertname"]).reset_index(drop=True),
                           True, "", query)


def alerts_from_receiver(record: str | Path, window: Window | None = None) -> CollectorResult:
    """Every alert of every notification the webhook receiver kept (firing and resolved)."""
    name, path = "alerts_receiver", Path(record)
    if not path.is_file():
        return CollectorResult.unverified(name, str(path), window, "receiver record not found: is the stack "
                                          "running (`gpupoc stack status`) and Alertmanager routed to it?",
                                          columns=NOTIFICATION_COLUMNS)
    rows = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            note = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash; the rest of the record still counts
        for a in note.get("alerts") or []:
            labels, ann = a.get("labels") or {}, a.get("annotations") or {}
            rows.append({"received_at": note.get("receivedAt"), "receiver": note.get("receiver", ""),
                         "group_status": note.get("status", ""), "status": a.get("status", ""),
                         "alertname": labels.get("alertname", ""), **_tags(labels),
                         "starts_at": a.get("startsAt"), "ends_at": a.get("endsAt"),
                         "fingerprint": a.get("fingerprint", ""), "summary": ann.get("summary", ""),
                         "description": ann.get("description", ""), "labels": json.dumps(labels, sort_keys=True)})
    df = pd.DataFrame(rows, columns=NOTIFICATION_COLUMNS)
    for col in ("received_at", "starts_at", "ends_at"):
        df[col] = pd.to_datetime(df[col], utc=True, errors="coerce", format="ISO8601")
    if window is not None and not df.empty:
        df = df[(df["received_at"] >= window.start) & (df["received_at"] <= window.end)]
    if df.empty:
        return CollectorResult.unverified(name, str(path), window, f"no notifications in the receiver record "
                                          f"for {window or 'any time'}", columns=NOTIFICATION_COLUMNS)
    return CollectorResult(name, str(path), window, df.reset_index(drop=True), True, "")


def alerts_from_alertmanager(url: str, timeout: float = 10.0) -> CollectorResult:
    """Alertmanager's current alerts (``/api/v2/alerts``): active, suppressed or unprocessed only."""
    name, endpoint = "alerts_alertmanager", f"{url.rstrip('/')}/api/v2/alerts"
    try:
        with urllib.request.urlopen(endpoint, timeout=timeout) as resp:
            alerts = json.loads(resp.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return CollectorResult.unverified(name, endpoint, None, f"unreachable: {getattr(exc, 'reason', exc)}; start "
                                          "it with `gpupoc stack up` or set the connection gpupoc_alertmanager")
    rows = [{"alertname": a["labels"].get("alertname", ""), **_tags(a["labels"]),
             "state": (a.get("status") or {}).get("state", ""), "starts_at": a.get("startsAt"),
             "ends_at": a.get("endsAt"), "fingerprint": a.get("fingerprint", ""),
             "summary": (a.get("annotations") or {}).get("summary", "")} for a in alerts]
    df = pd.DataFrame(rows)
    if df.empty:
        return CollectorResult.unverified(name, endpoint, None, "Alertmanager holds no alerts now (resolved "
                                          "alerts are forgotten: use the receiver record or ALERTS for history)")
    return CollectorResult(name, endpoint, None, df, True, "")
