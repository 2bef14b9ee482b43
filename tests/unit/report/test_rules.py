"""Decision rules, scope and findings on hand-made items."""

from gpupoc.report.models import Decision, FindingTarget, ItemResult, ScopeStatus
from gpupoc.report.rules import DecisionRules, decide, findings, scope
from gpupoc.report.items import ITEMS
from gpupoc.validation.models import FailureClass, Verdict


def items(**verdicts):
    """Every item passing except those given as id=Verdict."""
    out = []
    for item_id, tier in ITEMS.items():
        v = verdicts.get(item_id, Verdict.PASS)
        out.append(ItemResult(id=item_id, tier=tier, verdict=v, reason="" if v is Verdict.PASS else "because",
                              failure_class=FailureClass.CONFIGURATION if v is Verdict.FAIL else None))
    return out


def test_all_items_pass_goes_live():
    decision, reasons = decide(items(), DecisionRules())
    assert decision is Decision.GO_LIVE and reasons == ["all_passed"]


def test_a_failing_must_item_postpones():
    decision, reasons = decide(items(permission_isolation=Verdict.FAIL), DecisionRules())
    assert decision is Decision.POSTPONE
    assert any("permission_isolation" in r and "postpone" in r for r in reasons)


def test_a_must_item_not_verified_postpones_even_when_key_items_fail():
    its = items(task_records=Verdict.NOT_VERIFIED, utilization_reports=Verdict.FAIL)
    assert decide(its, DecisionRules())[0] is Decision.POSTPONE


def test_key_failure_with_musts_passing_is_limited_go_live_by_default():
    assert decide(items(scheduling_policy=Verdict.FAIL), DecisionRules())[0] is Decision.LIMITED_GO_LIVE


def test_rules_from_the_plan_can_send_key_failures_to_later_optimization():
    rules = DecisionRules.from_any({"key_fail": "later-optimization", "tier_overrides": {}})
    assert decide(items(cost_attribution=Verdict.FAIL), rules)[0] is Decision.LATER_OPTIMIZATION


def test_experience_only_gaps_are_later_optimization():
    its = items(documentation=Verdict.FAIL, training_cost=Verdict.NOT_VERIFIED)
    assert decide(its, DecisionRules())[0] is Decision.LATER_OPTIMIZATION


def test_rules_accept_the_plans_decision_rules_model():
    from gpupoc.plan.settings import DecisionRules as PlanRules

    rules = DecisionRules.from_any(PlanRules(key_fail="postpone"))
    assert decide(items(monitoring_integration=Verdict.FAIL), rules)[0] is Decision.POSTPONE


def test_scope_blocks_scenarios_of_a_failing_must_item_and_reverifies_open_ones():
    by = {s.scenario: s for s in scope(items(failure_evidence=Verdict.FAIL, cost_attribution=Verdict.NOT_VERIFIED))}
    assert by["failure_handling"].status is ScopeStatus.BLOCKED
    assert by["cross_team"].status is ScopeStatus.SECOND_VERIFICATION
    assert by["training"].status is ScopeStatus.GO_LIVE


def test_findings_route_product_gaps_to_the_contract_and_configuration_to_the_plan():
    its = items()
    its[0] = its[0].model_copy(update={"verdict": Verdict.FAIL, "failure_class": FailureClass.PRODUCT_GAP})
    its[1] = its[1].model_copy(update={"verdict": Verdict.FAIL, "failure_class": FailureClass.CONFIGURATION})
    its[2] = its[2].model_copy(update={"verdict": Verdict.NOT_VERIFIED})
    targets = {f.item: f.target for f in findings(its)}
    assert targets == {its[0].id: FindingTarget.CONTRACT, its[1].id: FindingTarget.IMPLEMENTATION_PLAN,
                       its[2].id: FindingTarget.SECOND_VERIFICATION}


def sharing(**verdicts) -> list[ItemResult]:
    """Every item passing, permission_isolation holding the sharing checks with the given verdicts (ISO_11=...)."""
    from gpupoc.validation.models import CheckOutcome, Tier

    checks = [CheckOutcome(check_id=cid.replace("_", "-"), suite="s", table="vgpu_slices" if cid != "ISO_11" else
                           "memory_isolation", expectation_type="e", tier=Tier.MUST, item="permission_isolation",
                           signal="", verdict=v) for cid, v in verdicts.items()]
    out = items(permission_isolation=Verdict.FAIL if Verdict.FAIL in verdicts.values() else Verdict.PASS)
    return [i.model_copy(update={"checks": checks}) if i.id == "permission_isolation" else i for i in out]


def test_shared_gpus_is_a_scope_line_of_its_own_from_the_sharing_checks():
    def line(**verdicts):
        return next((s for s in scope(sharing(**verdicts)) if s.scenario == "shared_gpus"), None)

    ok = line(ISO_11=Verdict.PASS, ISO_12=Verdict.PASS, ISO_13=Verdict.PASS)
    assert ok.status is ScopeStatus.GO_LIVE and ok.items == ["ISO-11", "ISO-12", "ISO-13"]
    leak = line(ISO_11=Verdict.PASS, ISO_12=Verdict.PASS, ISO_13=Verdict.FAIL)
    assert leak.status is ScopeStatus.BLOCKED and leak.reason == "ISO-13"
    mig = line(ISO_11=Verdict.NOT_VERIFIED, ISO_12=Verdict.NOT_APPLICABLE, ISO_13=Verdict.NOT_APPLICABLE)
    assert mig.status is ScopeStatus.SECOND_VERIFICATION and mig.reason == "ISO-11"
    assert line(ISO_11=Verdict.NOT_APPLICABLE, ISO_12=Verdict.NOT_APPLICABLE) is None  # no shared GPUs: no line
    assert line() is None and [s.scenario for s in scope(items())][-1] == "cross_team"
