"""The classes' online services end to end (docs/services.md): each class deploys the default plan's service
``svc-infer`` beside its wave, through the pipeline's own steps (``class_runner``, ``service_runner``) against
the simulated cluster, one cluster per test:

- the correct cluster: the SLO holds through the congestion wave (SVC-01..03, no replica preempted: SVC-04 not
  applicable; SVC-01 may read not verified naming the load generator's own lag, never fail), a node failure under the replicas is survived within the plan's bounds (SVC-05..10), no tenant
  scales, patches or proxies another's service (ISO-14), and the service's create, scale and delete are each in
  the audit log under its tenant (AUD-10);
- behaviours of a correct platform (slices that lag their pods, a controller that recreates what the platform
  took away) keep the node failure's verdicts;
- each serving fault profile fails its check: ``serving-preempted`` SVC-04 (a replica preempted for a
  lower-priority pod), ``endpoints-stale`` SVC-05 (the lost node's replica stays a ready endpoint),
  ``readiness-ignored`` SVC-10 (requests reach the replacement while its model still loads).

Waves and traffic are short; the inference pool is over-asked by critical pods, so a platform that may preempt
serving replicas does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .class_runner import run_class
from .plans import plan_on_cluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]
QC, FR, TI, AT = "queue_congestion", "fault_recovery", "tenant_isolation", "audit_trail"
SERVICE_CHECKS = {QC: ("SVC-01", "SVC-02", "SVC-03", "SVC-04"),
                  FR: ("SVC-05", "SVC-06", "SVC-07", "SVC-08", "SVC-09", "SVC-10"), TI: ("ISO-14",), AT: ("AUD-10",)}


def short_plan(tmp: Path, sim) -> Path:
    """The default plan on ``sim``: waves of 8-second virtual pods that over-ask the inference pool's critical
    capacity, 30 s of traffic, one fault scenario beside the node failure under the service."""
    plan = plan_on_cluster("default", tmp, sim.kubeconfig_http, sim.audit_log)
    for w in plan["workloads"]:
        if w["name"].startswith("v-"):
            w["duration_seconds"] = 8
    tc = plan["test_classes"]
    tc[QC]["wave"] = [{"workload": "v-infer-2g", "tenant": "team-serving", "count": 3},
                      {"workload": "v-infer-1g", "tenant": "team-serving", "count": 1, "priority_class": "gpupoc-critical"},
                      {"workload": "v-train-2g", "tenant": "team-nlp", "count": 2}]
    tc[QC]["services"][0]["traffic_seconds"] = 30
    tc[FR]["injections"] = [{"kind": "nonzero_exit", "workload": "fail-exit", "tenant": "team-vision"}]
    tc[FR]["services"][0]["traffic_seconds"] = 65
    tc[FR]["service_failures"][0].update(at_seconds=3, recover_after_seconds=20)
    for cls in (TI, AT):
        tc[cls]["wave"] = [{"workload": "v-train-1g", "tenant": "team-nlp", "count": 1}]
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def run(tmp: Path, test_class: str, faults: str = "", probes: tuple[str, ...] = (), behaviours: str = ""):
    from .conftest import launch

    sim = launch(tmp / f"sim-{test_class}", faults=faults, behaviours=behaviours)
    (tmp / test_class).mkdir()
    try:
        result = run_class(short_plan(tmp / test_class, sim), test_class,
                           f"svc__{test_class}_{faults or behaviours or 'ok'}", probes=probes)
    finally:
        sim.stop()
    assert not result.errors, result.errors
    return result


def service_verdicts(result, test_class: str) -> dict[str, str]:
    return {c: result.verdicts.get(c, "absent") for c in SERVICE_CHECKS[test_class]}


def test_on_the_correct_cluster_the_services_hold_through_congestion_and_a_node_failure(tmp_path):
    qc = run(tmp_path, QC)
    held = "not_verified" if "SVC-01" in qc.unseen else "pass"  # or the load generator's own lag left it open
    assert service_verdicts(qc, QC) == {"SVC-01": held, "SVC-02": "pass", "SVC-03": "pass",
                                        "SVC-04": "not_applicable"}, (qc.verdicts, qc.reasons)
    fr = run(tmp_path, FR, probes=("fail_service_nodes",))
    assert set(service_verdicts(fr, FR).values()) == {"pass"}, fr.verdicts
    recovery = fr.file("service_failures")
    assert recovery and recovery[0]["node"] and recovery[0]["victims"], recovery


def test_no_tenant_reaches_another_s_service_and_the_audit_log_names_who_changed_it(tmp_path):
    ti = run(tmp_path, TI, probes=("isolation_probes",))
    assert ti.verdicts.get("ISO-14") == "pass", ti.verdicts
    attempts = [a for a in ti.file("access_attempts") if a["action"] in ("scale_service", "patch_service",
                                                                          "proxy_service")]
    assert {a["http_status"] for a in attempts} == {403} and len(attempts) == 18, attempts
    at = run(tmp_path, AT, probes=("scale_services",))
    assert at.verdicts.get("AUD-10") == "pass", at.verdicts
    scaled = at.file("service_scale")
    assert [s["reached"] for s in scaled] == [True, True], scaled


@pytest.mark.parametrize(("faults", "test_class", "probes", "fails"), [
    ("serving-preempted", QC, (), "SVC-04"),
    ("endpoints-stale", FR, ("fail_service_nodes",), "SVC-05"),
    ("readiness-ignored", FR, ("fail_service_nodes",), "SVC-10"),
])
def test_each_serving_fault_fails_its_check(tmp_path, faults, test_class, probes, fails):
    result = run(tmp_path, test_class, faults, probes)
    assert result.verdicts.get(fails) == "fail", service_verdicts(result, test_class)


@pytest.mark.parametrize("behaviours", ["endpoints-lagging", "controller-recreates"])
def test_a_correct_platform_s_behaviours_keep_the_services_verdicts(tmp_path, behaviours):
    """Slices that follow their pods a few seconds late, and a controller that recreates what the platform took
    away: the node failure's checks still pass."""
    fr = run(tmp_path, FR, probes=("fail_service_nodes",), behaviours=behaviours)
    assert set(service_verdicts(fr, FR).values()) == {"pass"}, service_verdicts(fr, FR)
