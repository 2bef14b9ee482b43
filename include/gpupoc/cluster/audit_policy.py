"""The API server audit policy the POC needs (``--audit-policy-file``), as a commented ``audit.k8s.io/v1`` Policy.

The audit class matches every request the pipeline's identities make (its ledger) against the audit log;
the isolation class proves each cross-tenant denial by its audit event; the congestion and fault classes
learn who deleted a pod (a preemption by the scheduler, an eviction by the node lifecycle controller) from
it; the preflight's audit probe (a ConfigMap in ``platform.namespace``) must show in it within
``max_audit_delay_seconds``. The rules come first in the policy (the first matching rule decides); a
cluster's own rules may follow them. Request bodies are kept only for pods and quotas (the ledger's writes);
secrets and config maps are never logged above Metadata.
"""

from __future__ import annotations

from gpupoc.cluster.yamldoc import Doc, render

MUTATING = ["create", "update", "patch", "delete", "deletecollection"]


def policy_rules(plan) -> list[dict]:
    tenant_ns = sorted({t.namespace for t in plan.tenants})
    runner = f"system:serviceaccount:{plan.platform.namespace}:{plan.cluster.runner_service_account}"
    tenants = sorted({f"system:serviceaccount:{t.namespace}:{t.service_account}" for t in plan.tenants})
    return [
        {"level": "Metadata", "resources": [{"group": "", "resources": ["secrets", "configmaps"]}],
         "namespaces": tenant_ns + [plan.platform.namespace]},
        {"level": "RequestResponse", "verbs": MUTATING,
         "resources": [{"group": "", "resources": ["pods", "resourcequotas"]}], "namespaces": tenant_ns},
        {"level": "Metadata", "verbs": MUTATING, "namespaces": tenant_ns},
        {"level": "Metadata", "resources": [{"group": "", "resources": ["pods/log", "pods/exec", "pods/attach"]}],
         "namespaces": tenant_ns},
        {"level": "Metadata", "users": [runner, *tenants]},
        {"level": "Metadata", "verbs": MUTATING, "resources": [{"group": "", "resources": ["nodes"]}]},
    ]


COMMENTS = [
    ["secrets and config maps in the POC's namespaces: who read or changed them, never their content "
     "(the isolation probes' attempts; the artifact index; the preflight's audit probe)"],
    ["writes to pods and quotas in the tenant namespaces, with their bodies: submissions, the gate's "
     "release, preemptions (pods/status by the scheduler), deletions, the administrator's quota change"],
    ["every other write in the tenant namespaces (evictions, the schedulers' bindings that name a preemptor, "
     "PodGroups, Kueue Workloads)"],
    ["log reads in the tenant namespaces: a user reading its workload's log, a cross-tenant attempt"],
    ["every request of the runner and the tenants, reads and denied attempts included (the ledger and the "
     "cross-tenant probes are matched against these)"],
    ["node changes: a taint or cordon that injects a node failure, the node lifecycle controller's taints"],
]


def render_audit_policy(plan) -> str:
    """The policy file, with a comment per rule saying which class needs it."""
    doc = Doc({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
               "rules": policy_rules(plan)},
              "Audit policy rules for the gpupoc POC; pass it as kube-apiserver --audit-policy-file (self-managed\n"
              "clusters) or merge its rules at the top of your policy. Managed clusters (EKS, GKE, AKS) use their\n"
              "provider's fixed policy: see docs/real-cluster.md for what they log.",
              COMMENTS)
    return render([doc], f"plan {plan.name!r}")
