"""The repository's alert rules (``monitoring/rules/gpupoc.rules.yml``) for a real cluster's Prometheus: as a
Prometheus Operator ``PrometheusRule`` (``monitoring.coreos.com/v1``) or as the plain rules file, with the
``for`` durations overridable (the shipped ones are seconds, for runs of minutes)."""

from __future__ import annotations

from gpupoc.cluster.yamldoc import Doc, render
from gpupoc.kube.labels import PART_OF
from gpupoc.monitoring.config import monitoring_dir, render_rules

RULES_FILE = "rules/gpupoc.rules.yml"


def rule_groups(rule_for: dict[str, str] | None = None) -> dict:
    """``{"groups": [...]}`` of the shipped rules with any ``for`` overrides (alert -> duration)."""
    return render_rules(monitoring_dir() / RULES_FILE, rule_for)


def render_prometheus_rule(plan, namespace: str | None = None, labels: dict[str, str] | None = None,
                           rule_for: dict[str, str] | None = None) -> str:
    """The PrometheusRule; ``labels`` must match your Prometheus's ``ruleSelector`` (often ``release: <name>``)."""
    meta = {"name": "gpupoc", "namespace": namespace or plan.platform.namespace,
            "labels": {**PART_OF, **(labels or {})}}
    doc = Doc({"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": meta,
               "spec": rule_groups(rule_for)},
              "gpupoc's alert rules for the Prometheus Operator (kube-prometheus-stack): kubectl apply -f this file.\n"
              "Add the labels your Prometheus selects rules by (--rule-label release=<name>). The `for` durations\n"
              "are a POC's seconds; production values are minutes (--rule-for GpuNodeNotReady=5m).")
    return render([doc])


def render_rules_file(rule_for: dict[str, str] | None = None) -> str:
    """The same groups as a plain Prometheus rules file (``rule_files:``)."""
    return render([Doc(rule_groups(rule_for), "gpupoc's alert rules for a plain Prometheus (rule_files:).")])
