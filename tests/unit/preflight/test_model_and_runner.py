"""Preflight results and the runner: lines with their fix, the order of checks, an unreachable API."""

import pytest
import yaml

from gpupoc.pipeline.k8s import ClientFactory
from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import PreflightReport, failed, not_applicable, ok
from gpupoc.preflight.registry import CHECKS, check
from gpupoc.preflight.runner import CHECK_MODULES, registered, run_preflight


def test_a_failed_line_carries_its_fix_and_a_passed_one_does_not():
    assert failed("quotas", "team-a", "no quota", "apply the manifests").line() == \
        "✗ quotas: team-a: no quota — fix: apply the manifests"
    assert ok("api", "", "answers").line() == "✓ api: answers"
    assert not_applicable("images", "", "none").line() == "– images: none"


def test_a_report_survives_its_json_and_lists_what_is_missing():
    rep = PreflightReport("p", [ok("api", "", "answers"), failed("namespaces", "team-a", "does not exist", "apply")])
    back = PreflightReport.from_dict(rep.to_dict())
    assert not back.passed and back.missing_pieces() == ["namespaces: team-a: does not exist — fix: apply"]


def test_the_api_check_runs_first_and_every_module_registers_its_checks():
    ids = [c.id for c in registered()]
    assert ids[0] == "api"
    assert {"identities.verbs", "namespaces", "pools", "images", "audit", "prometheus.series", "alerting",
            "airflow.connections"} <= set(ids)
    assert len(CHECK_MODULES) == len({c.run.__module__ for c in registered()})


def test_a_check_id_is_registered_once():
    registered()
    with pytest.raises(ValueError, match="registered twice"):
        check("api", "again")(lambda ctx: [])


def test_a_class_runs_only_its_prerequisites():
    by_id = {c.id: c for c in registered()}
    assert by_id["audit"].prerequisite_of("audit_trail") and not by_id["audit"].prerequisite_of("utilization")
    assert not by_id["identities.isolation"].classes, "a cross-tenant read is the isolation class's finding"
    assert by_id["prometheus.series"].prerequisite_of("utilization")


def test_an_unreachable_api_stops_the_preflight_at_one_failed_line(tmp_path):
    kc = tmp_path / "kubeconfig"
    kc.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "admin",
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],
        "users": [{"name": "admin", "user": {"token": "t"}}],
        "contexts": [{"name": "admin", "context": {"cluster": "c", "user": "admin"}}]}))
    plan = load_plan(DEFAULT_PLAN)
    report = run_preflight(PreflightContext(plan, ClientFactory(str(kc), timeout=5), use_airflow=False))
    assert report.api_unreachable and len(report.results) == 1
    assert report.results[0].check == "api" and report.results[0].detail == "Connection refused"
    assert "cluster is running" in report.results[0].fix
    assert CHECKS  # the registry stays as the modules built it


class Answers:
    """A caller answering a fixed sequence of statuses (what a throttled API server does)."""

    context = "team-a"

    def __init__(self, *statuses):
        self.statuses, self.calls = list(statuses), 0

    def call(self, method, path, **kw):
        from gpupoc.pipeline.k8s import Response

        self.calls += 1
        return Response(self.statuses.pop(0), {"status": {"allowed": True}})


def test_a_busy_servers_refusals_are_asked_again_and_a_denial_is_not(monkeypatch):
    from gpupoc.preflight import context

    slept: list[float] = []
    busy = Answers(503, 429, 201)
    assert context.SteadyCaller(busy, sleep=slept.append).call("POST", "/x").status == 201 and busy.calls == 3
    assert len(slept) == 2 and 0 < slept[0] < slept[1], f"backing off between the refusals: {slept}"
    denied = Answers(403)
    assert context.SteadyCaller(denied, sleep=slept.append).call("POST", "/x").status == 403 and denied.calls == 1
    down = Answers(500, 500, 500, 500)
    steady = context.SteadyCaller(down, sleep=slept.append)
    assert steady.call("GET", "/x").status == 500 and down.calls == context.STEADY_POLICY.attempts
