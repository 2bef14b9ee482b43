"""The report's counted figures, each from the rows its verdict judges, in one place.

The summary's key figures and the items' figures both come from here, so they cannot disagree, and each
names the check whose rows it counts: "forbidden attempts denied 55/55" counts the rows ISO-03 judges (the
attempts the plan forbids), "chains complete" the rows FR-01 counts with what FR-07..FR-12 ask of each. A
part that does not apply counts as complete: a workload whose container never started has no logs to read,
which FR-07 (``logs_readable`` true where it is known) accepts, so its chain is complete without them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

OVER_QUOTA = "over_quota"  # prefix of the over-quota probe's actions (ISO-10)


@dataclass(frozen=True)
class Measure:
    """``count`` of ``total`` rows; ``check`` is the check whose rows ``total`` are; ``not_applicable`` rows
    count as complete (they are in ``count``)."""

    count: int
    total: int
    check: str = ""
    not_applicable: int = 0

    @property
    def share(self) -> str | None:
        return f"{self.count}/{self.total}" if self.total else None


def truthy(s: pd.Series) -> pd.Series:
    """True where the value is True (a null is neither true nor false)."""
    return s.map(lambda v: v is True or v == True)  # noqa: E712


def falsy(s: pd.Series) -> pd.Series:
    return s.map(lambda v: v is False or v == False)  # noqa: E712


def forbidden_denied(ap: pd.DataFrame) -> Measure | None:
    """Attempts the plan forbids (ISO-03's rows: ``expected_allowed`` false) that were denied."""
    if ap.empty or "allowed" not in ap or "expected_allowed" not in ap:
        return None
    forbidden = ap[falsy(ap["expected_allowed"]) & ap["allowed"].notna()]  # an attempt with no answer is no row
    return Measure(int(falsy(forbidden["allowed"]).sum()), len(forbidden), "ISO-03")


def expected_answers(ap: pd.DataFrame) -> Measure | None:
    """Attempts answered as the plan expects (ISO-02's rows: all but those with neither answer known); an
    attempt with no answer is not the expected one."""
    if ap.empty or "allowed" not in ap or "expected_allowed" not in ap:
        return None
    rows = ap[ap["allowed"].notna() | ap["expected_allowed"].notna()]
    same = [a is not None and a == a and e is not None and e == e and bool(a) == bool(e)
            for a, e in zip(rows["allowed"], rows["expected_allowed"])]
    return Measure(sum(same), len(rows), "ISO-02")


def unexpected_answers(ap: pd.DataFrame) -> pd.DataFrame:
    """The attempts ``expected_answers`` does not count."""
    if ap.empty or "allowed" not in ap or "expected_allowed" not in ap:
        return ap.iloc[0:0]
    same = [a is not None and a == a and e is not None and e == e and bool(a) == bool(e)
            for a, e in zip(ap["allowed"], ap["expected_allowed"])]
    return ap[[not x for x in same]]


def cross_tenant(ap: pd.DataFrame) -> pd.DataFrame:
    """The cross-tenant attempts: every probe but the over-quota submission into the tenant's own namespace."""
    if ap.empty or "action" not in ap:
        return ap
    return ap[~ap["action"].astype(str).str.startswith(OVER_QUOTA)]


def waits_explained(ex: pd.DataFrame) -> Measure | None:
    """Waits that needed an explanation (QC-05's non-null rows) and were explained by the platform."""
    if ex.empty or "explained" not in ex:
        return None
    need = ex[ex["explained"].notna()]
    return Measure(int(truthy(need["explained"]).sum()), len(need), "QC-05")


def waits_unobserved(ex: pd.DataFrame) -> int:
    """Waits that needed an explanation and that no snapshot or event saw (not judged by QC-05)."""
    if ex.empty or "observed" not in ex:
        return 0
    return int(falsy(ex["observed"]).sum())


def logs_readable(fr: pd.DataFrame) -> Measure | None:
    """Failures whose logs could be read (FR-07), a failure with no logs to read (null: no container
    started) counted as complete and as not applicable."""
    if fr.empty or "logs_readable" not in fr:
        return None
    na = int(fr["logs_readable"].isna().sum())
    return Measure(int(truthy(fr["logs_readable"]).sum()) + na, len(fr), "FR-07", na)


def chain_complete(fr: pd.DataFrame) -> pd.Series:
    """Per failure record, whether its evidence chain is what FR-07..FR-12 ask: logs readable where there
    are logs, events collected and not empty, the GPU release observed, the record verified."""
    logs = fr["logs_readable"].isna() | truthy(fr["logs_readable"])
    events = fr["events"].notna() & fr["events"].astype(str).str.contains("[A-Za-z]", regex=True)
    return logs & events & fr["gpu_release_seconds"].notna() & truthy(fr["verified"])


def chains_complete(fr: pd.DataFrame) -> Measure | None:
    """Failure records (FR-01's rows) whose evidence chain is complete."""
    if fr.empty or not {"logs_readable", "events", "gpu_release_seconds", "verified"} <= set(fr.columns):
        return None
    return Measure(int(chain_complete(fr).sum()), len(fr), "FR-01", logs_readable(fr).not_applicable)


def failures_alerted(fr: pd.DataFrame) -> Measure | None:
    """Failures whose record holds the alert that reached operators (FR-13's rows)."""
    if fr.empty or "alerts" not in fr:
        return None
    return Measure(int(fr["alerts"].notna().sum()), len(fr), "FR-13")


def true_of_known(rows: pd.DataFrame, column: str, check: str) -> Measure | None:
    """Rows whose ``column`` is true, of those where it is known (None without the column or rows)."""
    if rows.empty or column not in rows:
        return None
    known = rows[rows[column].notna()]
    return Measure(int(truthy(known[column]).sum()), len(known), check)


def audit_matched(am: pd.DataFrame) -> Measure | None:
    """Ledger actions (AUD-02's rows) found in the platform's audit log."""
    return true_of_known(am, "matched", "AUD-02")


def final_attempts(wr: pd.DataFrame) -> pd.DataFrame:
    """The last attempt of every wave item (a preempted attempt resubmitted is not the item's outcome)."""
    if wr.empty:
        return wr
    if "final_attempt" in wr:
        return wr[truthy(wr["final_attempt"])]
    return wr


def items_succeeded(wr: pd.DataFrame) -> Measure | None:
    """Wave items whose last attempt succeeded."""
    last = final_attempts(wr)
    if last.empty or "outcome" not in last:
        return None
    return Measure(int((last["outcome"] == "succeeded").sum()), len(last))


def slo_held(slo: pd.DataFrame) -> Measure | None:
    """Online services whose SLO was judged (SVC-01's rows: ``held`` known; not when unmeasured or the load
    generator's own lag left it not verified) and held."""
    return true_of_known(slo, "held", "SVC-01")


def slo_harness_lag(slo: pd.DataFrame) -> Measure | None:
    """Online services whose SLO the load generator's own lag left not verified (SVC-01's ``harness_lag``), of
    those measured."""
    if slo.empty or "harness_lag" not in slo:
        return None
    measured = slo[slo["harness_lag"].notna()]
    return Measure(int(truthy(measured["harness_lag"]).sum()), len(measured), "SVC-01")


def traffic_measured(slo: pd.DataFrame) -> Measure | None:
    """Online services whose load pod wrote its rows (SVC-02: a second of traffic or more) of every service with
    traffic."""
    if slo.empty or "seconds" not in slo:
        return None
    return Measure(int((pd.to_numeric(slo["seconds"], errors="coerce").fillna(0) >= 1).sum()), len(slo), "SVC-02")


def serving_preemptions(rep: pd.DataFrame) -> pd.DataFrame:
    """The serving replicas that were preempted (the rows SVC-04 judges)."""
    if rep.empty or "end" not in rep:
        return rep.iloc[0:0]
    return rep[rep["end"] == "preempted"]


def preempted_by_higher(rep: pd.DataFrame) -> Measure | None:
    """Preempted serving replicas (SVC-04's rows) whose preemptor the platform named with a higher priority."""
    return true_of_known(serving_preemptions(rep), "preempted_by_higher", "SVC-04")


def endpoints_removed(rec: pd.DataFrame) -> Measure | None:
    """Node failures under a serving replica (SVC-05's rows) whose dead endpoint left the Service."""
    return true_of_known(rec, "endpoint_removed", "SVC-05")


def replacements_ready(rec: pd.DataFrame) -> Measure | None:
    """Node failures under a serving replica (SVC-07's rows) after which a replacement replica became ready."""
    return true_of_known(rec, "replacement_ready", "SVC-07")
