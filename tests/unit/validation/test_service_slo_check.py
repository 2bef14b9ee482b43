"""SVC-01 and SVC-02 over the congestion class's ``service_slo`` rows: an SLO the load generator's own lag left
unjudged is not verified naming that lag (never a pass, never a failure), a miss fails whatever the lag, and the
traffic counts as measured either way."""

from __future__ import annotations

import pandas as pd

from gpupoc.validation import synthetic as syn
from gpupoc.validation import synthetic_services as ss
from gpupoc.validation.models import Verdict
from gpupoc.validation.runner import validate_run
from tests.unit.validation import only

LAGGED = {"held": None, "harness_lag": True, "late_sent": 95, "late_read": 20, "harness_lag_pct": 63.3,
          "max_harness_lag_pct": 50.0,
          "reason": "not verified: the load generator sent 63.3% of requests late and read 13.3% of answers late "
                    "(63.3% of the window, more than 50%): harness lag, not the platform"}


def _verdicts(tmp_path, *rows: dict) -> dict:
    """SVC-01..03 of the good congestion evidence whose one service row is each of ``rows`` (a row per service)."""
    tables = {**syn.good_tables("queue_congestion"), **ss.service_tables("queue_congestion")}
    one = tables["service_slo"].iloc[0].to_dict()
    tables["service_slo"] = pd.DataFrame(
        [{**one, "service": f"svc-{i}", "harness_lag": False, **row} for i, row in enumerate(rows)])
    run = syn.write_run(tmp_path / "evidence", "queue_congestion", "r1", tables)
    summary = validate_run(run, suites_dir=only.suites(tmp_path / "suites", "queue_congestion.service_slo"),
                           parameters=ss.SERVICE_PARAMETERS)
    return {c.check_id: c for c in summary.checks if c.check_id in ("SVC-01", "SVC-02", "SVC-03")}


def test_an_slo_the_harness_lag_left_unjudged_is_not_verified_naming_the_lag(tmp_path):
    checks = _verdicts(tmp_path, LAGGED)
    assert checks["SVC-01"].verdict is Verdict.NOT_VERIFIED and checks["SVC-01"].reason_code == "check.harness_lag"
    assert "harness lag, not the platform" in checks["SVC-01"].reason and checks["SVC-01"].failure_class is None
    assert checks["SVC-02"].verdict is Verdict.PASS, "the traffic was measured: only its judgment is left open"


def test_a_lagged_service_beside_a_held_one_leaves_the_check_not_verified(tmp_path):
    checks = _verdicts(tmp_path, {}, LAGGED)
    assert checks["SVC-01"].verdict is Verdict.NOT_VERIFIED
    assert checks["SVC-01"].reason_args == {"unseen": 1, "n": 2, "good": 1}


def test_a_missed_slo_fails_whatever_another_service_s_lag(tmp_path):
    missed = {"held": False, "reason": "availability 60% < 99%"}
    assert _verdicts(tmp_path, missed, LAGGED)["SVC-01"].verdict is Verdict.FAIL


def test_the_held_slo_passes_and_unmeasured_traffic_fails_svc_02(tmp_path):
    assert _verdicts(tmp_path, {})["SVC-01"].verdict is Verdict.PASS
    unmeasured = {"held": None, "harness_lag": None, "seconds": 0, "sent": 0, "reason": "no traffic rows: the load "
                  "pod wrote none"}
    assert _verdicts(tmp_path / "b", {}, unmeasured)["SVC-02"].verdict is Verdict.FAIL
