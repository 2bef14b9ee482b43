"""Least-privilege Roles and bindings derived from the access table (``gpupoc.cluster.access``).

- ``Role gpupoc-tenant`` in each tenant namespace, bound to the tenant's ServiceAccount: its own namespace only;
- ``ClusterRole gpupoc-runner-tenants``, bound in each tenant namespace (a RoleBinding, not cluster-wide) to
  the runner: what it does to the wave's objects;
- ``Role gpupoc-runner`` in ``platform.namespace``: the preflight's audit probe;
- ``ClusterRole gpupoc-runner``, bound cluster-wide: nodes, priority classes, reviews, the adapter's queues.

Every rule carries, as comments, which classes use which verbs and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpupoc.cluster.access import ALL_CLASSES, Need, Scope, Who, needs_for
from gpupoc.cluster.yamldoc import Doc
from gpupoc.kube.labels import PART_OF, TENANT_ROLE

RBAC_API = "rbac.authorization.k8s.io"
RUNNER_ROLE = "gpupoc-runner"
RUNNER_TENANTS_ROLE = "gpupoc-runner-tenants"
VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


@dataclass
class Rule:
    """One PolicyRule with the comments that say who needs it."""

    group: str
    resource: str
    verbs: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"apiGroups": [self.group], "resources": [self.resource], "verbs": list(self.verbs)}


def class_names(classes: tuple[str, ...]) -> str:
    """``every class`` for the five, else their names."""
    rest = [c for c in classes if c not in ALL_CLASSES]
    if set(ALL_CLASSES) <= set(classes):
        return ", ".join(["every class", *rest])
    return ", ".join(classes)


def rules_of(needs: list[Need]) -> list[Rule]:
    """One rule per (group, resource): the union of the needs' verbs, one comment line per need."""
    rules: dict[tuple[str, str], Rule] = {}
    for n in needs:
        rule = rules.setdefault((n.group, n.resource), Rule(n.group, n.resource))
        rule.verbs = sorted(set(rule.verbs) | set(n.verbs), key=VERB_ORDER.index)
        when = "" if n.when == "always" else f" [{n.when}]"
        rule.comments.append(f"{class_names(n.classes)}: {' '.join(n.verbs)}: {n.used_by}{when}")
    return sorted(rules.values(), key=lambda r: (r.group, r.resource))


def role(kind: str, name: str, namespace: str | None, rules: list[Rule], header: str) -> Doc:
    """A Role or ClusterRole whose rules carry their comments."""
    meta: dict = {"name": name, "labels": dict(PART_OF)}
    if namespace:
        meta["namespace"] = namespace
    obj = {"apiVersion": f"{RBAC_API}/v1", "kind": kind, "metadata": meta, "rules": [r.as_dict() for r in rules]}
    return Doc(obj, header, [r.comments for r in rules])


def binding(kind: str, name: str, namespace: str | None, role_kind: str, role_name: str, sa: str,
            sa_ns: str, header: str = "") -> Doc:
    meta: dict = {"name": name, "labels": dict(PART_OF)}
    if namespace:
        meta["namespace"] = namespace
    return Doc({"apiVersion": f"{RBAC_API}/v1", "kind": kind, "metadata": meta,
                "roleRef": {"apiGroup": RBAC_API, "kind": role_kind, "name": role_name},
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sa_ns}]}, header)


def runner_rules(plan) -> dict[Scope, list[Rule]]:
    """The runner's rules per scope (tenant namespaces, its own namespace, cluster)."""
    needs = needs_for(plan, Who.RUNNER)
    return {s: rules_of([n for n in needs if n.scope is s]) for s in (Scope.TENANTS, Scope.RUNNER, Scope.CLUSTER)}


def tenant_rules(plan) -> list[Rule]:
    return rules_of([n for n in needs_for(plan, Who.TENANT) if n.scope is Scope.OWN])


def rbac_documents(plan) -> list[Doc]:
    """Every Role, ClusterRole and binding the plan needs, in apply order (roles before their bindings)."""
    runner_ns, runner_sa = plan.platform.namespace, plan.cluster.runner_service_account
    tenants, runner = tenant_rules(plan), runner_rules(plan)
    out: list[Doc] = []
    for t in plan.tenants:
        out.append(role("Role", TENANT_ROLE, t.namespace, tenants, f"tenant {t.name}: its own namespace only"))
        out.append(binding("RoleBinding", TENANT_ROLE, t.namespace, "Role", TENANT_ROLE, t.service_account,
                           t.namespace, f"tenant {t.name}'s ServiceAccount {t.service_account}"))
    if runner[Scope.TENANTS]:
        out.append(role("ClusterRole", RUNNER_TENANTS_ROLE, None, runner[Scope.TENANTS],
                        "the runner in the tenant namespaces (bound per namespace below, never cluster-wide)"))
        for t in plan.tenants:
            out.append(binding("RoleBinding", RUNNER_ROLE, t.namespace, "ClusterRole", RUNNER_TENANTS_ROLE,
                               runner_sa, runner_ns, f"the runner in {t.namespace}"))
    if runner[Scope.RUNNER]:
        out.append(role("Role", RUNNER_ROLE, runner_ns, runner[Scope.RUNNER], "the runner in its own namespace"))
        out.append(binding("RoleBinding", RUNNER_ROLE, runner_ns, "Role", RUNNER_ROLE, runner_sa, runner_ns))
    if runner[Scope.CLUSTER]:
        out.append(role("ClusterRole", RUNNER_ROLE, None, runner[Scope.CLUSTER],
                        "the runner, cluster-scoped resources"))
        out.append(binding("ClusterRoleBinding", RUNNER_ROLE, None, "ClusterRole", RUNNER_ROLE, runner_sa,
                           runner_ns))
    return out
