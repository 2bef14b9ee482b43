"""validate_run over synthetic evidence written with the evidence writer."""

import hashlib
import json

import pytest

from gpupoc.exceptions import ValidationFailed
from gpupoc.validation import Verdict, data_docs_index, validate_run, validate_run_or_raise
from gpupoc.validation import synthetic as syn
from tests.unit.validation import only


def _verdicts(summary):
    return {c.check_id: c for c in summary.checks}


@pytest.fixture(scope="module")
def good_fault_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("evidence")
    run = syn.write_run(root, "fault_recovery", "scheduled__1", syn.good_tables("fault_recovery"))
    return root, run, validate_run(run)


def test_good_run_passes_and_stores_results_with_the_evidence(good_fault_run):
    root, run, summary = good_fault_run
    assert summary.success, f"unexpected failures: {summary.failed_checks}"
    assert not summary.not_verified_checks
    for s in summary.suites:
        stored = json.loads((run / "validation" / f"{s.suite}.json").read_text())
        assert stored["suite_name"] == s.suite and stored["success"] is True
    assert (run / "validation" / "summary.json").is_file()
    assert data_docs_index(root).is_file() and (root / summary.data_docs_index) == data_docs_index(root)


def test_the_summary_keeps_paths_relative_to_the_evidence_root_and_seals_what_it_validated(good_fault_run):
    root, run, summary = good_fault_run
    assert summary.run_dir == f"poc_fault_recovery/{run.name}" and (root / summary.run_dir) == run
    assert all((root / s.result_path).is_file() for s in summary.suites), "result paths resolve under the root"
    assert not any(str(root) in json.dumps(s.model_dump()) for s in summary.suites), "no absolute path is stored"
    table = run / "tables" / "failure_records.parquet"
    assert summary.inputs["tables/failure_records.parquet"] == hashlib.sha256(table.read_bytes()).hexdigest()
    assert set(summary.results) == {f"validation/{s.suite}.json" for s in summary.suites}
    manifest = json.loads((run / "manifest.json").read_text())
    assert summary.plan_hash == manifest["plan_hash"]


def test_rerun_overwrites_the_same_data_docs_page(good_fault_run):
    root, run, _ = good_fault_run
    pages = lambda: sorted(p.name for p in (root / "data_docs").rglob("*.html"))  # noqa: E731
    before = pages()
    validate_run(run)
    assert pages() == before, "a rerun of the same run must not add Data Docs pages"


def test_table_marked_not_verified_never_passes(tmp_path):
    tables = syn.good_tables("fault_recovery")
    tables["failure_records"] = None
    run = syn.write_run(tmp_path, "fault_recovery", "r1", tables,
                        not_verified={"failure_records": "API server unreachable; fix the kubeconfig"})
    summary = validate_run(run)
    checks = [c for c in summary.checks if c.table == "failure_records"]
    assert checks and all(c.verdict is Verdict.NOT_VERIFIED for c in checks)
    assert "API server unreachable" in checks[0].reason
    assert checks[0].reason_code == "table.collector" and checks[0].reason_args["table"] == "failure_records"
    stored = json.loads((run / "validation" / "fault_recovery.failure_records.json").read_text())
    assert stored["verified"] is False


def test_failed_check_raises_naming_ids_and_result_path_and_keeps_evidence(tmp_path):
    tables = syn.good_tables("fault_recovery")
    tables["failure_records"].loc[1, "logs_readable"] = False
    tables["failure_records"].loc[3, "gpu_release_seconds"] = None
    run = syn.write_run(tmp_path, "fault_recovery", "r1", tables)
    before = hashlib.sha256((run / "tables" / "failure_records.parquet").read_bytes()).hexdigest()
    with pytest.raises(ValidationFailed) as exc:
        validate_run_or_raise(run)
    assert {"FR-07", "FR-10"} <= set(exc.value.failed_checks)
    assert exc.value.result_path.endswith("validation/summary.json")
    assert "FR-07" in str(exc.value)
    after = hashlib.sha256((run / "tables" / "failure_records.parquet").read_bytes()).hexdigest()
    assert before == after


def test_plan_thresholds_override_suite_defaults(tmp_path):
    run = syn.write_run(tmp_path, "fault_recovery", "r1", syn.good_tables("fault_recovery"))
    summary = validate_run(run, parameters={"max_gpu_release_seconds": 3, "require_alerts": False})
    v = _verdicts(summary)
    assert v["FR-09"].verdict is Verdict.FAIL, "release times 2..6 s against a 3 s limit must fail"
    assert "FR-13" not in v and "FR-15" not in v, "require_alerts false drops the alert checks"


def test_empty_table_fails_its_row_count_and_leaves_other_checks_not_verified(tmp_path):
    tables = syn.good_tables("audit_trail")
    tables["audit_matches"] = tables["audit_matches"].iloc[0:0]
    run = syn.write_run(tmp_path, "audit_trail", "r1", tables)
    v = _verdicts(validate_run(run))
    assert v["AUD-01"].verdict is Verdict.FAIL
    assert v["AUD-02"].verdict is Verdict.NOT_VERIFIED and v["AUD-03"].verdict is Verdict.NOT_VERIFIED


def test_row_condition_selects_the_rows_it_names(tmp_path):
    tables = syn.good_tables("tenant_isolation")
    ap = tables["access_probes"]
    ap.loc[0, ["allowed", "http_status"]] = [True, 200]  # a forbidden read that succeeded
    run = syn.write_run(tmp_path, "tenant_isolation", "r1", tables)
    v = _verdicts(validate_run(run, only.suites(tmp_path / "suites", "tenant_isolation.access_probes")))
    assert v["ISO-02"].verdict is Verdict.FAIL and v["ISO-03"].verdict is Verdict.FAIL
    assert v["ISO-03"].observed["unexpected_count"] == 1


def test_signed_eta_errors_are_judged_within_plus_minus_tolerance(tmp_path):
    tables = syn.good_tables("queue_congestion")
    tables["explanations"]["eta_error_seconds"] = [None] * 9 + [-10.0, 5.0, 40.0]
    run = syn.write_run(tmp_path, "queue_congestion", "r1", tables)
    suites = only.suites(tmp_path / "suites", "queue_congestion.explanations")
    ok = _verdicts(validate_run(run, suites, parameters={"eta_tolerance_seconds": 30, "min_eta_accuracy": 0.6}))
    assert ok["QC-07"].verdict is Verdict.PASS, ok["QC-07"].reason  # -10 and 5 are within 30 s: 2 of 3
    strict = _verdicts(validate_run(run, suites, parameters={"eta_tolerance_seconds": 8, "min_eta_accuracy": 0.6}))
    assert strict["QC-07"].verdict is Verdict.FAIL  # only 5 is within 8 s


def test_table_changed_after_the_manifest_is_not_verified(tmp_path):
    run = syn.write_run(tmp_path, "audit_trail", "r1", syn.good_tables("audit_trail"))
    syn.artifacts().assign(sha256=None).to_parquet(run / "tables" / "artifacts.parquet")
    v = _verdicts(validate_run(run))
    assert v["AUD-07"].verdict is Verdict.NOT_VERIFIED and "sha256 differs" in v["AUD-07"].reason
    assert v["AUD-07"].reason_code == "table.changed"


def test_a_failed_check_keeps_a_reason_code_that_words_it_in_chinese(tmp_path):
    from gpupoc.validation.reasons import word

    tables = syn.good_tables("fault_recovery")
    tables["failure_records"].loc[[0, 2], "logs_readable"] = False
    v = _verdicts(validate_run(syn.write_run(tmp_path, "fault_recovery", "r1", tables)))
    fr7 = v["FR-07"]
    assert fr7.reason.startswith("not met: 2 of 5 rows unexpected") and fr7.reason_code == "check.not_met_rows_sample"
    zh = word(fr7.reason_code, fr7.reason_args, "zh")
    assert zh.startswith("未达到：5 行中 2 行不符合要求") and "not met" not in zh


def _service_run(root, faults=frozenset(), **kw):
    """A congestion run whose plan deploys an online service and sends it traffic (``synthetic_services``)."""
    from gpupoc.validation import synthetic_services as ss

    tables = {**syn.good_tables("queue_congestion"), **ss.service_tables("queue_congestion", faults)}
    return syn.write_run(root, "queue_congestion", "r1", tables, **kw)


def _judged(summary) -> dict[str, str]:
    return {c.check_id: c.verdict.value for c in summary.checks}


def test_the_parameters_it_validated_with_are_stored_and_revalidation_judges_the_same_checks(tmp_path):
    from gpupoc.evidence.reader import RunEvidence
    from gpupoc.validation import synthetic_services as ss

    run = _service_run(tmp_path)
    first = validate_run(run, parameters={**ss.SERVICE_PARAMETERS, "max_wait_seconds": 500})
    stored = RunEvidence.open(run).suite_parameters
    assert stored["services_defined"] is True and stored["max_wait_seconds"] == 500
    assert first.parameters == stored, "the summary names the parameters it judged with"
    assert {"SVC-01", "SVC-02", "SVC-03"} <= set(_judged(first)), _judged(first)
    assert _judged(validate_run(run)) == _judged(first), "revalidated: the same checks, the same verdicts"


def test_a_failed_service_slo_stays_failed_when_revalidated(tmp_path):
    from gpupoc.validation import synthetic_services as ss

    run = _service_run(tmp_path, faults={"breach"}, parameters=ss.SERVICE_PARAMETERS)  # stored as the DAG does
    suites = only.suites(tmp_path / "suites", "queue_congestion.service_slo")
    assert _judged(validate_run(run, suites))["SVC-01"] == "fail"
    assert _judged(validate_run(run, suites))["SVC-01"] == "fail", "never a pass by a check gone missing"


def test_a_run_that_stored_no_parameters_judges_no_check_that_reads_one(tmp_path):
    from gpupoc.validation.suites import load_suites

    run = _service_run(tmp_path, store_parameters=False)
    summary = validate_run(run)
    every = {(e.get("meta") or {}).get("check_id") for s in load_suites() if s.applies_to("queue_congestion")
             for e in s.data["expectations"]}
    checks = _verdicts(summary)
    assert set(checks) == every, "no check of the class is dropped"
    assert summary.parameters is None
    svc = checks["SVC-01"]
    assert svc.verdict is Verdict.NOT_VERIFIED and svc.reason_code == "check.parameters_unknown"
    assert "service_traffic_defined" in svc.reason, svc.reason
    assert checks["GNG-01"].verdict is Verdict.NOT_VERIFIED and "gangs_in_wave" in checks["GNG-01"].reason
    assert checks["QC-03"].verdict is Verdict.NOT_VERIFIED and "max_wait_seconds" in checks["QC-03"].reason, \
        "a threshold the run did not store is not taken from the suite's defaults"
    assert checks["QC-02"].verdict is Verdict.PASS, "a check that reads no parameter is judged as usual"
