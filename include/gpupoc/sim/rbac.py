"""RBAC authorizer over the stored Roles, ClusterRoles and bindings, with the API server's 403 wording."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ConfigDict

from gpupoc.common.request_attributes import RequestAttributes
from gpupoc.sim.store import Store

SA_PREFIX = "system:serviceaccount:"


class Attributes(RequestAttributes):
    """Who asks to do what (authorizer.Attributes in the API server): the user and groups, the request's
    attributes, and the path of a non-resource request."""

    model_config = ConfigDict(frozen=True)

    user: str
    groups: tuple[str, ...] = ()
    verb: str = "get"
    api_version: str = "v1"
    path: str = ""
    resource_request: bool = True


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


@dataclass
class _Grant:
    binding: str
    role: str
    subject: str
    rules: list[dict] = field(default_factory=list)


def _matches(values: list[str] | None, value: str) -> bool:
    return bool(values) and ("*" in values or value in values)


def _resource_matches(rule: dict, attrs: Attributes) -> bool:
    resources = rule.get("resources") or []
    if "*" in resources or attrs.full_resource in resources:
        return True
    return bool(attrs.subresource) and f"*/{attrs.subresource}" in resources


def _url_matches(rule: dict, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or []:
        if url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1])):
            return True
    return False


def rule_allows(rule: dict, attrs: Attributes) -> bool:
    """One PolicyRule against the request attributes (rbac/v1 semantics)."""
    if not _matches(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return _url_matches(rule, attrs.path)
    if not rule.get("resources"):
        return False
    if not _matches(rule.get("apiGroups"), attrs.api_group):
        return False
    if not _resource_matches(rule, attrs):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def _subject_matches(subject: dict, binding_ns: str, user: str, groups: tuple[str, ...]) -> str | None:
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User" and name == user:
        return f'User "{name}"'
    if kind == "Group" and name in groups:
        return f'Group "{name}"'
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        if user == f"{SA_PREFIX}{ns}:{name}":
            return f'ServiceAccount "{name}/{ns}"'
    return None


def _role_rules(store: Store, ref: dict, namespace: str) -> list[dict]:
    if ref.get("kind") == "ClusterRole":
        role = store.get("clusterroles", None, ref.get("name", ""))
    else:
        role = store.get("roles", namespace, ref.get("name", ""))
    return list((role or {}).get("rules") or [])


def grants(store: Store, user: str, groups: tuple[str, ...], namespace: str = "") -> list[_Grant]:
    """Every (binding, rules) that applies to the user: cluster-wide, plus role bindings of ``namespace``."""
    out = []
    for b in store.list("clusterrolebindings"):
        for s in b.get("subjects") or []:
            who = _subject_matches(s, "", user, groups)
            if who:
                ref = b.get("roleRef") or {}
                out.append(_Grant(f'ClusterRoleBinding "{b["metadata"]["name"]}"',
                                  f'ClusterRole "{ref.get("name")}"', who, _role_rules(store, ref, "")))
                break
    if namespace:
        for b in store.list("rolebindings", namespace):
            for s in b.get("subjects") or []:
                who = _subject_matches(s, namespace, user, groups)
                if who:
                    ref = b.get("roleRef") or {}
                    out.append(_Grant(f'RoleBinding "{b["metadata"]["name"]}/{namespace}"',
                                      f'{ref.get("kind", "Role")} "{ref.get("name")}"', who,
                                      _role_rules(store, ref, namespace)))
                    break
    return out


def authorize(store: Store, attrs: Attributes) -> Decision:
    """Allow when a bound rule matches (``reactors.authorize``, which a fault profile may wrap)."""
    for g in grants(store, attrs.user, attrs.groups, attrs.namespace if attrs.resource_request else ""):
        for rule in g.rules:
            if rule_allows(rule, attrs):
                return Decision(True, f"RBAC: allowed by {g.binding} of {g.role} to {g.subject}")
    return Decision(False, "")


def forbidden_message(attrs: Attributes) -> str:
    """responsewriters.forbiddenMessage: ``User "u" cannot get resource "pods/log" in API group "" ...``."""
    if not attrs.resource_request:
        return f'User "{attrs.user}" cannot {attrs.verb} path "{attrs.path}"'
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return (f'User "{attrs.user}" cannot {attrs.verb} resource "{attrs.full_resource}" '
            f'in API group "{attrs.api_group}" {where}')


def forbidden_status(attrs: Attributes, reason: str = "") -> dict:
    """The 403 Status the API server answers (apierrors.NewForbidden over the message above)."""
    msg = forbidden_message(attrs) + (f": {reason}" if reason else "")
    if not attrs.resource_request:
        message = f"forbidden: {msg}"
    else:
        qualified = attrs.resource + (f".{attrs.api_group}" if attrs.api_group else "")
        who = f'{qualified} "{attrs.name}"' if attrs.name else qualified
        message = f"{who} is forbidden: {msg}"
    details: dict = {"kind": attrs.resource} if attrs.resource_request else {}
    if attrs.name:
        details["name"] = attrs.name
    if attrs.api_group:
        details["group"] = attrs.api_group
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "Forbidden", "details": details, "code": 403}


def rules_for(store: Store, user: str, groups: tuple[str, ...], namespace: str) -> list[dict]:
    """Flattened rules of a user in a namespace (SelfSubjectRulesReview)."""
    return [r for g in grants(store, user, groups, namespace) for r in g.rules]
