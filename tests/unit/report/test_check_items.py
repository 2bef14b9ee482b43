"""Item verdicts from check outcomes (no GX run): aggregation, optional checks, tier overrides."""

from gpupoc.report.items import check_items, required_classes
from gpupoc.report.rules import DecisionRules, decide
from gpupoc.report.models import Decision
from gpupoc.validation.models import CheckOutcome, SuiteOutcome, Tier, ValidationSummary, Verdict
from gpupoc.validation.suites import load_suites

SUITES = load_suites()


def _summary(tc, *checks):
    return ValidationSummary(run_dir="/x", dag_id=f"poc_{tc}", run_id="r", test_class=tc, suites=[
        SuiteOutcome(suite=f"{tc}.t", table="t", verified=True, result_path="/x/r.json", checks=list(checks))])


def _check(cid, item, tier, verdict, optional=False):
    return CheckOutcome(check_id=cid, suite="s.t", table="t", expectation_type="e", tier=tier, item=item,
                        signal=f"signal of {cid}", verdict=verdict, optional=optional, reason="why")


def _all_classes_passing():
    return {tc: _summary(tc, _check(f"X{i}-01", "task_records", Tier.MUST, Verdict.PASS))
            for i, tc in enumerate(required_classes(SUITES)["task_records"])}


def test_required_classes_come_from_the_suites():
    req = required_classes(SUITES)
    assert req["permission_isolation"] == ["tenant_isolation"]
    assert req["failure_evidence"] == ["fault_recovery"]
    assert set(req["task_records"]) >= {"queue_congestion", "audit_trail"}


def test_an_optional_check_not_verified_does_not_hold_the_item_back():
    sums = {"queue_congestion": _summary("queue_congestion",
                                         _check("QC-05", "queue_explainability", Tier.MUST, Verdict.PASS),
                                         _check("QC-07", "queue_explainability", Tier.MUST, Verdict.NOT_VERIFIED,
                                                optional=True))}
    item = {i.id: i for i in check_items(sums, SUITES, DecisionRules())}["queue_explainability"]
    assert item.verdict is Verdict.PASS


def test_a_failing_optional_check_still_fails_the_item():
    sums = {"queue_congestion": _summary("queue_congestion",
                                         _check("QC-07", "queue_explainability", Tier.MUST, Verdict.FAIL,
                                                optional=True))}
    item = {i.id: i for i in check_items(sums, SUITES, DecisionRules())}["queue_explainability"]
    assert item.verdict is Verdict.FAIL and "QC-07 (signal of QC-07) why" == item.reason


def test_tier_override_moves_one_check_out_of_its_item():
    sums = _all_classes_passing()
    sums["audit_trail"].suites[0].checks.append(_check("AUD-05", "task_records", Tier.MUST, Verdict.FAIL))
    strict = check_items(sums, SUITES, DecisionRules())
    assert {i.id: i.verdict for i in strict}["task_records"] is Verdict.FAIL
    rules = DecisionRules(tier_overrides={"AUD-05": Tier.KEY})
    relaxed = check_items(sums, SUITES, rules)
    by = {i.id: i for i in relaxed}
    assert by["task_records"].verdict is Verdict.PASS
    assert by["check:AUD-05"].tier is Tier.KEY and by["check:AUD-05"].verdict is Verdict.FAIL
    musts_ok = [i for i in relaxed if i.id in ("task_records", "check:AUD-05")]
    assert decide(musts_ok, rules)[0] is Decision.LIMITED_GO_LIVE


def test_tier_override_of_a_whole_item():
    rules = DecisionRules(tier_overrides={"cost_attribution": Tier.MUST})
    item = {i.id: i for i in check_items({}, SUITES, rules)}["cost_attribution"]
    assert item.tier is Tier.MUST and item.verdict is Verdict.NOT_VERIFIED
