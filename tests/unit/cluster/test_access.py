"""The access table: which needs apply to which plan, and the rules derived from them."""

import pytest

from gpupoc.cluster.access import NEEDS, PREFLIGHT, WHEN, Scope, Who, needs_for
from gpupoc.cluster.rbac import rules_of, runner_rules, tenant_rules
from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN

PLANS = DEFAULT_PLAN.parent


def _keys(rules):
    return {(r.group, r.resource): tuple(r.verbs) for r in rules}


def test_tenants_act_in_their_own_namespace_only():
    assert {n.scope for n in NEEDS if n.who is Who.TENANT} == {Scope.OWN}


def test_the_adapters_resources_appear_only_under_their_adapter():
    kube = {(n.group, n.resource) for n in needs_for(load_plan(DEFAULT_PLAN))}
    kueue = {(n.group, n.resource) for n in needs_for(load_plan(PLANS / "kueue.yaml"))}
    volcano = {(n.group, n.resource) for n in needs_for(load_plan(PLANS / "volcano.yaml"))}
    assert ("kueue.x-k8s.io", "workloads") in kueue and ("kueue.x-k8s.io", "workloads") not in kube
    assert ("scheduling.volcano.sh", "podgroups") in volcano and ("scheduling.volcano.sh", "podgroups") not in kueue


def test_a_disabled_class_takes_its_needs_with_it():
    plan = load_plan(DEFAULT_PLAN)
    on = {n.used_by for n in needs_for(plan)}
    iso = plan.test_classes.tenant_isolation.model_copy(update={"enabled": False})
    off_plan = plan.model_copy(update={"test_classes": plan.test_classes.model_copy(update={"tenant_isolation": iso})})
    off = {n.used_by for n in needs_for(off_plan)}
    gone = on - off
    assert any("subjectaccessreview" in u.lower() or "cross-tenant" in u for u in gone), gone
    assert all(n.classes == ("tenant_isolation",) for n in needs_for(plan) if n.used_by in gone)


def test_the_sim_injector_is_granted_only_while_a_node_failure_or_a_service_failure_uses_it():
    plan = load_plan(DEFAULT_PLAN)
    sim_rules = _keys(runner_rules(plan)[Scope.CLUSTER])
    assert ("sim.gpupoc.io", "nodes/fail") in sim_rules
    fr = plan.test_classes.fault_recovery
    no_node = fr.model_copy(update={"injections": [i for i in fr.injections if i.kind != "node_failure"],
                                    "service_failures": []})
    plan2 = plan.model_copy(update={"test_classes": plan.test_classes.model_copy(update={"fault_recovery": no_node})})
    assert ("sim.gpupoc.io", "nodes/fail") not in _keys(runner_rules(plan2)[Scope.CLUSTER])


def _with_injector(plan, method: str):
    """``plan`` with every node_failure injection using the ``method`` injector (its minimal settings)."""
    from gpupoc.plan.classes import NodeFailure

    spec = {"method": method, **({"fail": "true {node}"} if method == "command" else {})}
    fr = plan.test_classes.fault_recovery
    injections = [i.model_validate({**i.model_dump(), "injector": spec}) if isinstance(i, NodeFailure) else i
                  for i in fr.injections]
    tcs = plan.test_classes.model_copy(update={"fault_recovery": fr.model_copy(update={"injections": injections})})
    return plan.model_copy(update={"test_classes": tcs})


@pytest.mark.parametrize("method,granted,not_granted", [
    ("sim", {("sim.gpupoc.io", "nodes/fail", "create")}, {("", "nodes", "patch"), ("", "pods/eviction", "create")}),
    ("command", set(), {("sim.gpupoc.io", "nodes/fail", "create"), ("", "nodes", "patch"),
                        ("", "pods/eviction", "create")}),
    ("taint", {("", "nodes", "patch"), ("", "nodes", "get")},
     {("sim.gpupoc.io", "nodes/fail", "create"), ("", "pods/eviction", "create")}),
    ("drain", {("", "nodes", "patch"), ("", "pods/eviction", "create"), ("apps", "daemonsets", "get")},
     {("sim.gpupoc.io", "nodes/fail", "create")}),
])
def test_the_runners_node_failure_verbs_follow_the_plans_injector(method, granted, not_granted):
    plan = _with_injector(load_plan(DEFAULT_PLAN), method)
    assert {i.injector.method for i in plan.test_classes.fault_recovery.injections if i.kind == "node_failure"} \
        == {method}
    have = {(n.group, n.resource, v) for n in needs_for(plan, Who.RUNNER, "fault_recovery") for v in n.verbs}
    assert granted <= have and not (not_granted & have), (method, have)


def test_every_injector_condition_of_the_table_names_a_method_of_the_plan():
    from gpupoc.plan.injector_spec import METHODS

    named = {w.removeprefix("node failure by the ").removesuffix(" injector") for w in WHEN if "injector" in w}
    assert named <= set(METHODS) and "command" not in named  # a command asks nothing of the API


def test_rules_merge_verbs_per_resource_in_the_api_order_with_one_comment_per_need():
    plan = load_plan(DEFAULT_PLAN)
    pods = next(r for r in tenant_rules(plan) if r.resource == "pods")
    assert pods.verbs == ["get", "list", "create", "patch", "delete"]
    assert len(pods.comments) == 2 and any("KubernetesPodOperator" in c for c in pods.comments)


def test_the_preflight_needs_are_only_the_preflights():
    plan = load_plan(DEFAULT_PLAN)
    for n in needs_for(plan, test_class=PREFLIGHT):
        assert PREFLIGHT in n.classes
    assert not rules_of([])


def test_dra_gpus_grant_the_runner_read_on_claims_and_every_plan_reads_the_slices():
    def granted(plan):
        return {(s, r.resource): r.verbs for s, rules in runner_rules(plan).items() for r in rules
                if r.group == "resource.k8s.io"}

    assert granted(load_plan(f"{DEFAULT_PLAN}#kube-dra")) == {(Scope.CLUSTER, "resourceslices"): ["list"],
                                                              (Scope.TENANTS, "resourceclaims"): ["get", "list"]}
    # every run records whether the cluster's GPUs are DRA devices, whatever its plan says (steps/setup.py)
    assert granted(load_plan(DEFAULT_PLAN)) == {(Scope.CLUSTER, "resourceslices"): ["list"]}
