"""The fault-recovery probes' detailed records as rows of the class's ``failure_records`` table (``table.py``).

A record keeps more than the table holds (findings, each part of the chain); ``failure_records`` joins them
into the table's columns with the separators the report's phrases split at (``report/phrases.py``).
"""

from __future__ import annotations

import json
from typing import Iterable

from gpupoc.classes.fault_recovery import table as t
from gpupoc.classes.fault_recovery.faults import FaultRecord


def failure_records(rows: Iterable[FaultRecord]) -> list[t.FailureRecord]:
    out = []
    for r in rows:
        container = f"container {r.container_state} {r.container_reason}".strip()
        if r.exit_code is not None:
            container += f" exit {r.exit_code}"
        platform = _join(f"phase {r.phase or '?'}", f"reason {r.status_reason}" if r.status_reason else "", container,
                         r.container_message, f"disruption {r.disruption}" if r.disruption else "",
                         f"node {r.node}" if r.node else "", sep="; ")
        log = ("log readable after the failure" if r.user_log_readable_after else
               "log NOT readable after the failure" if r.user_log_readable_after is False else
               r.user_log_note or "log not checked")
        user = _join(r.user_status_message, log, r.user_log_tail[-400:], sep="; ")
        # what operators saw: Warning events and alerts; nothing at all leaves the column empty (FR-05 fails)
        operator = _join(f"{r.warning_events} Warning event(s) ({r.warning_reasons})" if r.warning_events else "",
                         f"alerts: {r.alerts}" if r.alerts else "", sep="; ")
        if operator and not r.warning_events:
            operator = _join("0 Warning event(s)", operator, sep="; ")
        elif operator and not r.alerts:
            operator = _join(operator, "alerts: none", sep="; ")
        released = ("GPUs released after %.1fs" % r.release_s if r.gpus_released else
                    "GPUs NOT released" if r.gpus_released is False else "GPU release not observed")
        retries = f"Airflow retries {r.airflow_retries}" if r.airflow_retries is not None else ""
        recovery = _join(r.recovery_action or "no pipeline action (the pod ended on its own)",
                         f"platform restarts {r.platform_restarts}", released,
                         f"({r.release_source})" if r.release_source else "", retries, sep="; ")
        trigger = _join(r.trigger, f"via {r.trigger_method} by {r.triggered_by} at {r.triggered_at}", sep=" ")
        out.append(t.FailureRecord(
            scenario=r.scenario, trigger=trigger, pod=r.pod, namespace=r.namespace, platform_behaviour=platform,
            user_visible=user, operator_visible=operator or None, recovery=recovery,
            # the failure itself missing from the events (events-dropped) leaves the column empty: FR-08 fails
            logs_readable=r.user_log_readable_after, events=None if r.failure_event_missing else r.events,
            airflow_retries=r.airflow_retries,
            platform_restarts=r.platform_restarts, alerts=r.alerts or None, gpu_release_seconds=r.release_s,
            verified=r.verified, reason=_join(r.reason, r.user_log_note if r.user_log_readable_after is None else "",
                                              f"findings: {r.findings}" if r.findings else "") or None))
    return out


def _join(*parts: str, sep: str = " | ") -> str:
    return sep.join(p for p in parts if p)


def detailed(rows: Iterable) -> list[dict]:
    """The detailed rows as JSON-able dicts (for ``EvidenceWriter.write_json``)."""
    return [json.loads(r.model_dump_json()) for r in rows]
