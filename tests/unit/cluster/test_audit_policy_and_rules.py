"""The audit policy the POC needs and the alert rules as a PrometheusRule."""

import yaml

from gpupoc.cluster.alert_rules import render_prometheus_rule, render_rules_file, rule_groups
from gpupoc.cluster.audit_policy import policy_rules, render_audit_policy
from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN


def _level(rules, user, verb, resource, namespace, sub=""):
    """The first matching rule's level (the API server's policy semantics, enough for these rules)."""
    res = f"{resource}/{sub}" if sub else resource
    for r in rules:
        if "users" in r and user not in r["users"]:
            continue
        if "verbs" in r and verb not in r["verbs"]:
            continue
        if "namespaces" in r and namespace not in r["namespaces"]:
            continue
        if "resources" in r and not any(res in g["resources"] for g in r["resources"]):
            continue
        return r["level"]
    return "None"


def test_the_policy_logs_what_the_audit_and_isolation_classes_match():
    plan = load_plan(DEFAULT_PLAN)
    rules = policy_rules(plan)
    runner = "system:serviceaccount:gpupoc-system:gpupoc-runner"
    nlp = "system:serviceaccount:team-nlp:runner"
    assert _level(rules, runner, "patch", "resourcequotas", "team-serving") == "RequestResponse"
    assert _level(rules, nlp, "create", "pods", "team-nlp") == "RequestResponse"
    assert _level(rules, "system:kube-scheduler", "delete", "pods", "team-nlp") == "RequestResponse"
    assert _level(rules, nlp, "get", "secrets", "team-vision") == "Metadata", "a cross-tenant attempt, no content"
    assert _level(rules, nlp, "get", "pods", "team-vision", "log") == "Metadata"
    assert _level(rules, runner, "create", "configmaps", "gpupoc-system") == "Metadata", "the preflight's probe"
    assert _level(rules, "system:node:x", "get", "pods", "kube-system") == "None", "the rest is the cluster's own"


def test_secrets_are_never_logged_with_their_content():
    for r in policy_rules(load_plan(DEFAULT_PLAN)):
        if r["level"] in ("Request", "RequestResponse"):
            assert all("secrets" not in g["resources"] for g in r.get("resources", [])), r


def test_the_policy_file_is_an_audit_policy_with_a_comment_per_rule():
    text = render_audit_policy(load_plan(DEFAULT_PLAN))
    doc = next(d for d in yaml.safe_load_all(text) if d)
    assert doc["apiVersion"] == "audit.k8s.io/v1" and doc["kind"] == "Policy"
    assert text.count("  # ") == len(doc["rules"])


def test_the_prometheus_rule_carries_the_shipped_rules_and_the_chosen_labels():
    plan = load_plan(DEFAULT_PLAN)
    doc = next(d for d in yaml.safe_load_all(render_prometheus_rule(plan, labels={"release": "kps"})) if d)
    assert doc["apiVersion"] == "monitoring.coreos.com/v1" and doc["kind"] == "PrometheusRule"
    assert doc["metadata"]["labels"]["release"] == "kps"
    assert doc["spec"] == rule_groups()
    plain = next(d for d in yaml.safe_load_all(render_rules_file({"GpuNodeNotReady": "5m"})) if d)
    rule = next(r for g in plain["groups"] for r in g["rules"] if r["alert"] == "GpuNodeNotReady")
    assert rule["for"] == "5m"
