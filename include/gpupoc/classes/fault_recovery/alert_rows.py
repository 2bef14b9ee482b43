"""The run's ``alerts`` table: every alert that fired (and resolved) while a class ran, from the webhook
receiver's record (every notification Alertmanager sent) or else Prometheus' ``ALERTS`` series."""

from __future__ import annotations

from typing import Iterable

import pandas as pd

from gpupoc.classes.fault_recovery.table import AlertRecord
from gpupoc.monitoring.results import CollectorResult, Window


def _value(v) -> str | None:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return None
    return str(v) or None


def _moment(v):
    if v is None or v is pd.NaT or (not isinstance(v, str) and pd.isna(v)):
        return None
    return pd.Timestamp(v).to_pydatetime()


def alert_records(result: CollectorResult, namespaces: Iterable[str], nodes: Iterable[str]) -> list[AlertRecord]:
    """``AlertRecord`` rows of the alerts about the given namespaces or nodes, or cluster-wide ones (neither
    label); a receiver's repeated notifications of one alert keep their last state."""
    frame, ns_set, node_set = result.frame, set(namespaces), set(nodes)
    receiver = "fingerprint" in frame.columns
    rows: dict[tuple, AlertRecord] = {}
    for r in frame.to_dict("records"):
        ns, node = _value(r.get("namespace")), _value(r.get("node")) or _value(r.get("hostname"))
        if ns and ns not in ns_set and not (node and node in node_set):
            continue
        if not ns and node and node not in node_set:
            continue
        row = AlertRecord(alertname=_value(r.get("alertname")) or "?",
                          state=_value(r.get("status") if receiver else r.get("alertstate")),
                          severity=_value(r.get("severity")), namespace=ns, pod=_value(r.get("pod")), node=node,
                          starts_at=_moment(r.get("starts_at") if receiver else r.get("start")),
                          ends_at=_moment(r.get("ends_at") if receiver else r.get("end")),
                          summary=_value(r.get("summary")), source=result.source)
        if receiver and row.ends_at and row.ends_at.year <= 1:  # "0001-01-01": still firing
            row.ends_at = None
        key = (r.get("fingerprint"),) if receiver else (row.alertname, row.state, row.starts_at, ns, node, row.pod)
        rows[key] = row
    return sorted(rows.values(), key=lambda x: (x.starts_at is None, x.starts_at or 0, x.alertname))


def collect_alert_history(receiver_record: str | None, prometheus, window: Window) -> CollectorResult:
    """The receiver's record when it holds notifications for the window, else Prometheus' ALERTS; the
    unverified result names every source tried and why."""
    from gpupoc.monitoring.alerts import alerts_from_prometheus, alerts_from_receiver

    tried = []
    if receiver_record:
        res = alerts_from_receiver(receiver_record, window)
        if res.verified:
            return res
        tried.append(f"{res.source}: {res.reason}")
    if prometheus:
        res = alerts_from_prometheus(prometheus, window)
        if res.verified:
            return res
        tried.append(f"{res.source}: {res.reason}")
    reason = "; ".join(tried) or ("no alert source configured: set evidence_sources.alert_receiver_record or "
                                  "prometheus_url in the plan, or start the local stack (`gpupoc stack up`)")
    return CollectorResult.unverified("alerts", receiver_record or str(prometheus or ""), window, reason)
