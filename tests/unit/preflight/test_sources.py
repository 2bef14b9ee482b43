"""The preflight's sources: images to pull and their pods' states, Alertmanager, connections (the audit source
is the classes' own, gpupoc.monitoring.audit_source: tests/unit/monitoring/test_audit_source.py)."""

import json
import sys

from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.preflight.airflow_checks import named_connections
from gpupoc.preflight.context import PreflightContext
from types import SimpleNamespace

from gpupoc.preflight.image_checks import create_pull_pod, images_to_pull, pull_pod, pull_state
from gpupoc.preflight.monitoring_checks import webhook_urls


def test_every_catalogue_image_is_pulled_once_except_the_one_meant_to_be_missing():
    plan = load_plan(DEFAULT_PLAN)
    uses = images_to_pull(PreflightContext(plan))
    assert sorted(u.image for u in uses) == ["gpupoc/virtual:1.0", "gpupoc/workload:1.0"]
    audit = images_to_pull(PreflightContext(plan, test_class="audit_trail"))
    assert {u.tenant for u in audit} <= {t.name for t in plan.tenants}


def test_a_pull_pod_asks_for_no_gpu_on_its_pool_as_its_tenant():
    plan = load_plan(DEFAULT_PLAN)
    use = images_to_pull(PreflightContext(plan))[0]
    pod = pull_pod(PreflightContext(plan), use)
    c = pod["spec"]["containers"][0]
    assert "nvidia.com/gpu" not in json.dumps(c["resources"])
    assert pod["metadata"]["namespace"] == plan.tenant(use.tenant).namespace
    assert pod["spec"]["nodeSelector"] == plan.pool(plan.workload(use.workload).pool).node_selector


def test_a_started_container_counts_as_pulled_and_a_pull_error_as_failed():
    started = {"status": {"containerStatuses": [{"state": {"terminated": {"exitCode": 1}}}]}}
    assert pull_state(started)[0] == "pulled"
    err = {"status": {"containerStatuses": [{"state": {"waiting": {"reason": "ErrImagePull", "message": "not found"}}}]}}
    assert pull_state(err) == ("failed", "ErrImagePull: not found")
    pending = {"status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                              "message": "0/5 nodes are available"}]}}
    assert pull_state(pending) == ("waiting", "not scheduled: 0/5 nodes are available")


class _Answers:
    """A tenant's caller answering each POST with the next answer."""

    def __init__(self, *answers):
        self.answers = list(answers)

    def call(self, method, path, **kw):
        return self.answers.pop(0)


def _answer(status, message=""):
    return SimpleNamespace(ok=200 <= status < 300, status=status, message=message, body=None)


def test_a_pull_pod_refused_for_its_namespaces_missing_service_account_is_waited_for_not_failed():
    body = {"metadata": {"name": "gpupoc-pull-x", "namespace": "team-vision"}}
    pending = _answer(403, 'pods "gpupoc-pull-x" is forbidden: error looking up service account '
                           'team-vision/default: serviceaccount "default" not found')
    state, why = create_pull_pod(_Answers(pending), body)
    assert state == "waiting" and "ServiceAccount does not exist yet" in why
    assert create_pull_pod(_Answers(_answer(201)), body) is None
    assert create_pull_pod(_Answers(_answer(409)), body) is None, "created by an earlier attempt"
    state, why = create_pull_pod(_Answers(_answer(403, 'pods is forbidden: exceeded quota: q')), body)
    assert state == "failed" and "exceeded quota" in why


def test_the_routes_receiver_webhooks_are_found_in_alertmanagers_config():
    cfg = "route: {receiver: hook}\nreceivers:\n- name: other\n  webhook_configs: [{url: http://x/}]\n" \
          "- name: hook\n  webhook_configs: [{url: 'http://127.0.0.1:9095/alerts'}]\n"
    assert webhook_urls(cfg) == ["http://127.0.0.1:9095/alerts"]
    assert webhook_urls("route: {receiver: none}\n") == []


def test_only_the_connections_the_plan_names_are_checked():
    plan = load_plan(DEFAULT_PLAN)
    assert named_connections(plan) == []
    es = plan.evidence_sources.model_copy(update={"prometheus_conn_id": "prom"})
    assert named_connections(plan.model_copy(update={"evidence_sources": es})) == \
        [("evidence_sources.prometheus_conn_id", "prom")]
