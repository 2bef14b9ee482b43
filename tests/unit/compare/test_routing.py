"""make compare's routing: with CLUSTER=kwok kube-scheduler and Kueue run on the real control plane and are
labelled real with the version built; Volcano, KAI and HAMi run as the simulated cluster's modes and say so;
without it every candidate is a simulated mode. Faults are refused on a real candidate."""

from pathlib import Path

import pytest

from gpupoc.compare.routing import check_planted, describe, plan_platforms, route
from gpupoc.exceptions import ComparisonRefused, ConfigError

COMPARE_PLAN = Path(__file__).resolve().parents[3] / "plans" / "compare.yaml"
FIVE = [("kube", "kube-scheduler"), ("kueue", "kueue"), ("volcano", "volcano"), ("kai", "kai"), ("hami", "hami")]


def test_with_cluster_kwok_only_kube_scheduler_and_kueue_run_for_real():
    routes = {r.name: r for r in route(FIVE, "kwok", kubernetes_version="v1.37.2")}
    assert {n: r.cluster for n, r in routes.items()} == {"kube": "kwok", "kueue": "kwok", "volcano": "sim",
                                                         "kai": "sim", "hami": "sim"}
    assert routes["kube"].label.text == "real kube-scheduler v1.37.2 on Kubernetes v1.37.2 (KWOK nodes)"
    assert routes["kueue"].label.text == "real Kueue v0.17.0 on Kubernetes v1.37.2 (KWOK nodes)"
    for name in ("volcano", "kai", "hami"):
        assert routes[name].label.kind.value == "simulated", name
        assert routes[name].label.text.startswith("simulated mode of "), name


def test_on_the_simulated_cluster_every_column_is_a_simulated_mode():
    assert {r.cluster for r in route(FIVE)} == {"sim"}
    assert all(r.label.kind.value == "simulated" for r in route(FIVE))


def test_the_compare_plan_s_platforms_are_read_with_their_adapters():
    assert plan_platforms(COMPARE_PLAN, ("kube", "kueue", "volcano", "kai")) == FIVE[:4]
    with pytest.raises(ConfigError, match="no platform 'yunikorn'"):
        plan_platforms(COMPARE_PLAN, ("kube", "yunikorn"))


def test_a_fault_planted_in_a_real_candidate_is_refused_and_in_a_simulated_one_kept():
    routes = route(FIVE[:3], "kwok")
    check_planted(routes, {"volcano": "gang-partial"})
    with pytest.raises(ComparisonRefused, match="kueue runs on the real control plane"):
        check_planted(routes, {"kueue": "gang-partial"})


def test_an_unknown_cluster_is_refused_naming_the_choices():
    with pytest.raises(ComparisonRefused, match="sim, kwok"):
        route(FIVE, "kind")


def test_the_console_says_where_each_candidate_runs_and_what_it_will_be():
    lines = describe(route(FIVE[:3], "kwok", kubernetes_version="v1.37.2"))
    assert lines[0] == "kube: kube-scheduler on the real control plane (KWOK nodes): real kube-scheduler v1.37.2"
    assert lines[2].startswith("volcano: volcano on the simulated cluster: simulated mode of Volcano")
