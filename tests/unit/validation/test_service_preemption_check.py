"""SVC-04 over the congestion class's ``service_replicas`` rows: a preempted replica whose preemptor no record
resolves is not verified (never a pass), and one resolved to a lower priority fails."""

from __future__ import annotations

from gpupoc.validation import synthetic as syn
from gpupoc.validation import synthetic_services as ss
from gpupoc.validation.models import Verdict
from gpupoc.validation.runner import validate_run
from tests.unit.validation import only


def _svc04(tmp_path, preempted_by: tuple[str, int], **row):
    """SVC-04 of the good congestion evidence with one replica preempted by ``preempted_by``, its row edited."""
    tables = {**syn.good_tables("queue_congestion"), **ss.service_tables("queue_congestion")}
    rep = ss.service_replicas(preempted_by=preempted_by)
    for column, value in {"preemption_judged": "judged", **row}.items():
        rep[column] = rep[column].astype(object) if column in rep else None
        rep.loc[rep["end"] == "preempted", column] = value
    tables["service_replicas"] = rep
    run = syn.write_run(tmp_path / "evidence", "queue_congestion", "r1", tables)
    summary = validate_run(run, suites_dir=only.suites(tmp_path / "suites", "queue_congestion.service_replicas"),
                           parameters=ss.SERVICE_PARAMETERS)
    return next(c for c in summary.checks if c.check_id == "SVC-04")


def test_a_replica_whose_preemptor_no_record_resolves_leaves_svc_04_not_verified(tmp_path):
    check = _svc04(tmp_path, ("uid 039f34ac-5d2e-4b7a-9c1e-2f6a8b9d0e11", 0), preempted_by_higher=None,
                   preemptor_priority=None, preemption_judged="unresolved")
    assert (check.verdict, check.reason_code) == (Verdict.NOT_VERIFIED, "check.unresolved_preemptors"), check
    assert check.reason_args == {"unseen": 1, "n": 1, "good": 0}


def test_a_replica_preempted_by_a_lower_priority_pod_fails_svc_04_and_a_higher_one_passes(tmp_path):
    assert _svc04(tmp_path / "low", ("team-a/qc-low-1", 10)).verdict is Verdict.FAIL
    assert _svc04(tmp_path / "high", ("team-a/qc-high-1", 10_000_000)).verdict is Verdict.PASS
