"""The access table (``gpupoc.cluster.access``) against what the classes and the preflight really request.

Every class runs (headless, its steps and probes) on a simulated cluster that started empty and holds only
the rendered RBAC; every request the package's own clients send is recorded on its way out. Then, both ways:
- nothing they need is missing: no request of the runner was refused, and a tenant was refused only across
  tenants (the isolation probes) or by its quota (the over-quota probe);
- nothing rendered goes unused: every verb of every need that applies to the plan was requested by its
  identity at least once (the KubernetesPodOperator's own needs aside: Airflow runs it, not these steps).
"""

from __future__ import annotations

import threading

import pytest
import yaml

from gpupoc.cluster.access import Scope, Who, needs_for, split_resource
from gpupoc.pipeline import k8s
from gpupoc.plan import load_plan

from .class_runner import run_class
from .real_cluster import prepare

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(1500),
]
SENT: list[tuple[str, k8s.RequestInfo, int, str]] = []  # (context, request, status, message)
_LOCK = threading.Lock()


class RecordingCaller(k8s.ApiCaller):
    """The real client; each request it sends is also noted (what, as whom, the answer)."""

    def call(self, method, path, *, query=None, body=None, content_type=None, timeout=None, accept=None):
        r = super().call(method, path, query=query, body=body, content_type=content_type, timeout=timeout,
                         accept=accept)
        with _LOCK:
            SENT.append((self.context, k8s.request_info(method, path, query), r.status, r.message))
        return r


class RecordingFactory(k8s.ClientFactory):
    def caller(self, context: str, component: str = "") -> RecordingCaller:
        return RecordingCaller(context, self.api_client(context, component), self.timeout)


def small_plan(path, base) -> None:
    """Each class with one or two workloads: every request kind, quickly."""
    data = yaml.safe_load(base.read_text())
    tc = data["test_classes"]
    tc["queue_congestion"]["wave"] = [{"workload": "v-train-1g", "tenant": "team-nlp", "count": 1}]
    tc["tenant_isolation"]["wave"] = [{"workload": "v-train-1g", "tenant": "team-vision", "count": 1},
                                      {"workload": "v-infer-1g", "tenant": "team-serving", "count": 1}]
    tc["utilization"]["wave"] = [{"workload": "v-train-1g", "tenant": "team-vision", "count": 1}]
    tc["fault_recovery"]["injections"] = [
        {"kind": "nonzero_exit", "workload": "fail-exit", "tenant": "team-vision"},
        {"kind": "node_failure", "workload": "train-long", "tenant": "team-vision", "pool": "training",
         "at_seconds": 3, "recover_after_seconds": 5}]
    tc["audit_trail"]["wave"] = [{"workload": "v-train-1g", "tenant": "team-nlp", "count": 1}]
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, monkeypatch_module):
    tmp = tmp_path_factory.mktemp("access")
    cluster = prepare(tmp)
    small_plan(cluster.plan, cluster.plan)
    monkeypatch_module.setattr(k8s, "ClientFactory", RecordingFactory)
    from gpupoc.preflight.context import PreflightContext
    from gpupoc.preflight.runner import run_preflight
    from gpupoc.steps import finish
    from gpupoc.steps.context import RunContext
    from gpupoc.classes.registry import definition

    plan = load_plan(cluster.plan)
    try:
        run_preflight(PreflightContext(plan, RecordingFactory(str(cluster.kubeconfig)), use_airflow=False,
                                       stack_dir=tmp / "no-stack"))
        runs = {}
        for tc in ("queue_congestion", "tenant_isolation", "utilization", "fault_recovery", "audit_trail"):
            runs[tc] = run_class(cluster.plan, tc, f"access__{tc}", probes=tuple(t for t, _ in definition(tc).probes))
            finish.cleanup(RunContext(str(cluster.plan), f"poc_{tc}", f"access__{tc}", tc, task="cleanup"))
    finally:
        cluster.stop()
    yield plan, runs, list(SENT)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def _who(plan, context: str) -> tuple[Who, str] | None:
    if context == plan.platform.admin_context:
        return Who.RUNNER, plan.platform.namespace
    t = next((t for t in plan.tenants if t.kube_context == context), None)
    return (Who.TENANT, t.namespace) if t else None


def _resource(info: k8s.RequestInfo) -> str:
    return f"{info.resource}/{info.subresource}" if info.subresource else info.resource


def test_every_class_ran_its_steps(recorded):
    _plan, runs, sent = recorded
    for tc, run in runs.items():
        assert not run.errors, f"{tc}: {run.errors}"
    assert len(sent) > 100, f"only {len(sent)} requests recorded"


def test_nothing_the_classes_request_is_missing_from_the_rendered_rbac(recorded):
    plan, _runs, sent = recorded
    refused = []
    for context, info, status, message in sent:
        who = _who(plan, context)
        if status != 403 or who is None:
            continue
        kind, own = who
        across = kind is Who.TENANT and info.namespace and info.namespace != own
        over_quota = kind is Who.TENANT and info.namespace == own and "exceeded quota" in message
        if not (across or over_quota):
            refused.append(f"{context}: {info.verb} {_resource(info)} in {info.namespace or '(cluster)'}: {message}")
    assert refused == [], "requests the rendered RBAC refused (add them to gpupoc.cluster.access.NEEDS):\n" + \
        "\n".join(sorted(set(refused)))


def _scope_ok(need, info, own: str, plan) -> bool:
    tenant_ns = {t.namespace for t in plan.tenants}
    return {Scope.OWN: info.namespace == own, Scope.TENANTS: info.namespace in tenant_ns,
            Scope.RUNNER: info.namespace == plan.platform.namespace, Scope.CLUSTER: not info.namespace}[need.scope]


def test_nothing_rendered_goes_unused(recorded):
    plan, _runs, sent = recorded
    unused = []
    for need in needs_for(plan):
        if need.kpo or need.fallback:  # Airflow's operators' own; a cleanup's sweep after a failed task
            continue
        base, sub = split_resource(need.resource)
        for verb in need.verbs:
            used = any(
                (w := _who(plan, context)) is not None and w[0] is need.who and info.verb == verb
                and info.api_group == need.group and info.resource == base and info.subresource == sub
                and _scope_ok(need, info, w[1], plan) and status != 403
                for context, info, status, _m in sent)
            if not used:
                unused.append(f"{need.who.value} {verb} {need.resource} ({need.scope.value}): {need.used_by}")
    assert unused == [], "rendered but never requested (remove from gpupoc.cluster.access.NEEDS or find its " \
                         "caller):\n" + "\n".join(unused)
