"""``gpupoc cluster manifests|kubeconfig``: what a cluster must hold for a plan, and the identities' kubeconfig."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    """Add the ``cluster`` area to the top-level ``gpupoc`` parser."""
    p = subparsers.add_parser("cluster", help="prepare a cluster for a plan: manifests, kubeconfig")
    sub = p.add_subparsers(dest="cluster_command", required=True)
    m = sub.add_parser("manifests", help="print (or write) what the plan expects the cluster to hold",
                       description="Namespaces, ServiceAccounts, least-privilege RBAC, ResourceQuotas, "
                       "PriorityClasses and the adapter's queues as YAML for `kubectl apply -f -`; with --out, also "
                       "the audit policy and the alert rules (PrometheusRule and plain).")
    m.add_argument("--plan", required=True, help="the POC plan")
    what = m.add_mutually_exclusive_group()
    what.add_argument("--audit-policy", action="store_true", help="print the API server audit policy instead")
    what.add_argument("--monitoring", action="store_true", help="print the alert rules as a PrometheusRule instead")
    what.add_argument("--out", type=Path, help="write manifests.yaml, audit-policy.yaml, prometheus-rule.yaml and "
                      "alert-rules.yml into this directory")
    m.add_argument("--rule-label", action="append", default=[], metavar="KEY=VALUE",
                   help="label of the PrometheusRule (your Prometheus's ruleSelector, e.g. release=kube-prometheus)")
    m.add_argument("--rule-for", action="append", default=[], metavar="ALERT=DURATION",
                   help="override an alert rule's `for` (production values are minutes)")
    m.set_defaults(func=cmd_manifests)

    k = sub.add_parser("kubeconfig", help="mint the identities' tokens (kubectl create token) into a kubeconfig",
                       description="One context per identity of the plan (the runner as platform.admin_context, "
                       "each tenant as tenants[].context), each with a token from `kubectl create token` lasting "
                       "the plan's window (cluster.token_hours).")
    k.add_argument("--plan", required=True, help="the POC plan")
    k.add_argument("--out", type=Path, help="where to write it (default: the plan's platform.kubeconfig)")
    k.add_argument("--admin-kubeconfig", help="the administrator's kubeconfig that may create tokens "
                   "(default: $KUBECONFIG or ~/.kube/config)")
    k.add_argument("--admin-context", help="its context (default: its current context)")
    k.add_argument("--server", help="the API server URL to write instead of the administrator's (e.g. another "
                   "listener of the same API server)")
    k.set_defaults(func=cmd_kubeconfig)


def _labels(items: list[str]) -> dict[str, str]:
    from gpupoc.exceptions import ConfigError

    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError("--rule-label", [f"{item!r}: expected KEY=VALUE, e.g. release=kube-prometheus"])
        out[key] = value
    return out


def cmd_manifests(args: argparse.Namespace) -> int:
    from gpupoc.cluster.alert_rules import render_prometheus_rule, render_rules_file
    from gpupoc.cluster.audit_policy import render_audit_policy
    from gpupoc.cluster.manifests import render_manifests
    from gpupoc.monitoring.config import parse_rule_for
    from gpupoc.plan import load_plan

    plan = load_plan(args.plan, kubeconfig_later=True)  # the manifests come before the identities' kubeconfig
    rule_for, labels = parse_rule_for(args.rule_for), _labels(args.rule_label)
    if args.audit_policy:
        sys.stdout.write(render_audit_policy(plan))
        return 0
    if args.monitoring:
        sys.stdout.write(render_prometheus_rule(plan, labels=labels, rule_for=rule_for))
        return 0
    if args.out is None:
        sys.stdout.write(render_manifests(plan, str(args.plan)))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    files = {"manifests.yaml": render_manifests(plan, str(args.plan)), "audit-policy.yaml": render_audit_policy(plan),
             "prometheus-rule.yaml": render_prometheus_rule(plan, labels=labels, rule_for=rule_for),
             "alert-rules.yml": render_rules_file(rule_for)}
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"wrote {args.out / name}")
    return 0


def cmd_kubeconfig(args: argparse.Namespace) -> int:
    from gpupoc.cluster.kubeconfig import KubectlAdmin, write_plan_kubeconfig
    from gpupoc.plan import load_plan

    plan = load_plan(args.plan, kubeconfig_later=True)
    admin = KubectlAdmin(args.admin_kubeconfig, args.admin_context)
    result = write_plan_kubeconfig(plan, admin, args.out, server=args.server)
    for line in result.lines():
        print(line)
    return 0
