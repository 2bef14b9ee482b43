"""The suites' parameters a run is judged with: a check whose parameter the run's stored set cannot tell is held
back (judged NOT_VERIFIED by the runner, naming it), never dropped nor judged against a default."""

from __future__ import annotations

from pathlib import Path

from gpupoc.validation.parameters import default_parameters, needed, plan_suite, unknown
from gpupoc.validation.suites import SuiteFile, load_suites

SUITE = SuiteFile(Path("queue_congestion.demo.json"), {
    "name": "queue_congestion.demo", "meta": {
        "test_class": "queue_congestion", "table": "gang_placements",
        "parameters": {"gangs_in_wave": False, "deadlock_seconds": 90, "eta_tolerance_seconds": 30,
                       "minus_eta_tolerance_seconds": -30}},
    "expectations": [
        {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 1},
         "meta": {"check_id": "QC-90"}},
        {"type": "expect_column_max_to_be_between",
         "kwargs": {"column": "held_seconds", "max_value": {"$PARAMETER": "deadlock_seconds"}},
         "meta": {"check_id": "GNG-90", "requires": "gangs_in_wave"}},
        {"type": "expect_column_values_to_be_between",
         "kwargs": {"column": "eta_error", "min_value": {"$PARAMETER": "minus_eta_tolerance_seconds"}},
         "meta": {"check_id": "QC-91"}}]})


def _ids(exps) -> list[str]:
    return [e["meta"]["check_id"] for e in exps]


def test_a_check_reads_its_requires_flag_and_its_thresholds_a_negated_one_by_its_own_name():
    exps = SUITE.data["expectations"]
    assert [needed(e) for e in exps] == [[], ["gangs_in_wave", "deadlock_seconds"], ["eta_tolerance_seconds"]]


def test_with_nothing_stored_every_check_that_reads_a_parameter_is_held_and_none_is_dropped():
    sp = plan_suite(SUITE, None)
    assert _ids(sp.suite.expectations(sp.params)) == ["QC-90"]
    assert [(e["meta"]["check_id"], names) for e, names in sp.held] == [
        ("GNG-90", ["gangs_in_wave", "deadlock_seconds"]), ("QC-91", ["eta_tolerance_seconds"])]


def test_a_stored_set_tells_every_check_and_a_case_it_did_not_provoke_drops_its_check():
    sp = plan_suite(SUITE, {"gangs_in_wave": False, "eta_tolerance_seconds": 10})
    assert not sp.held and _ids(sp.suite.expectations(sp.params)) == ["QC-90", "QC-91"]
    assert sp.params["minus_eta_tolerance_seconds"] == -10, "the stored threshold, not the suite's default"
    provoked = plan_suite(SUITE, {"gangs_in_wave": True})
    assert _ids(provoked.suite.expectations(provoked.params)) == ["QC-90", "GNG-90", "QC-91"]
    assert provoked.params["deadlock_seconds"] == 90, "a threshold the run did not store is the suite's default"


def test_a_stored_set_without_a_requires_flag_holds_that_check_naming_the_flag():
    assert unknown(SUITE.data["expectations"][1], {"deadlock_seconds": 60}) == ["gangs_in_wave"]
    sp = plan_suite(SUITE, {"deadlock_seconds": 60})
    assert [(e["meta"]["check_id"], names) for e, names in sp.held] == [("GNG-90", ["gangs_in_wave"])]


def test_the_default_set_names_every_requires_flag_of_the_class_s_suites_at_false():
    params = default_parameters("queue_congestion", load_suites())
    assert params["gangs_in_wave"] is False and params["services_defined"] is False
    assert params["max_wait_seconds"] == 600 and not any(k.startswith("minus_") for k in params)
    flags = {(e.get("meta") or {}).get("requires") for s in load_suites() if s.applies_to("queue_congestion")
             for e in s.data["expectations"]} - {None}
    assert flags <= set(params), "a run stored with the defaults tells every check of its class"
