"""RBAC authorizer over the bootstrapped roles and bindings, and the API server's 403 wording."""

import pytest
from gpupoc.sim import rbac
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState, make_identities
from gpupoc.sim.config import load_cluster_config


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    state = ClusterState(config=load_cluster_config(), data_dir=tmp_path_factory.mktemp("rbac"))
    state.identities = make_identities(state.config)
    bootstrap(state)
    return state.store


SA = "system:serviceaccount:team-vision:runner"
SA_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:team-vision", "system:authenticated")
ADMIN = ("kubernetes-admin", ("kubeadm:cluster-admins", "system:authenticated"))


def attrs(user=SA, groups=SA_GROUPS, **kw):
    return rbac.Attributes(user=user, groups=groups, **kw)


def test_tenant_may_create_and_read_pods_in_own_namespace(store):
    for verb in ("create", "get", "list", "watch", "delete", "patch"):
        assert rbac.authorize(store, attrs(verb=verb, namespace="team-vision", resource="pods")).allowed, verb
    d = rbac.authorize(store, attrs(verb="get", namespace="team-vision", resource="pods", subresource="log"))
    assert d.allowed
    assert d.reason == ('RBAC: allowed by RoleBinding "gpupoc-tenant-runner/team-vision" of Role "gpupoc-tenant" '
                        'to ServiceAccount "runner/team-vision"')


def test_tenant_denied_in_other_namespace(store):
    assert not rbac.authorize(store, attrs(verb="get", namespace="team-nlp", resource="pods", subresource="log",
                                           name="x")).allowed
    assert not rbac.authorize(store, attrs(verb="list", namespace="team-nlp", resource="pods")).allowed


def test_pods_rule_does_not_cover_pods_log():
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
    assert not rbac.rule_allows(rule, attrs(verb="get", namespace="a", resource="pods", subresource="log"))
    assert rbac.rule_allows({**rule, "resources": ["*/log"]},
                            attrs(verb="get", namespace="a", resource="pods", subresource="log"))


def test_resource_names_restrict_the_rule():
    rule = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["a"]}
    assert rbac.rule_allows(rule, attrs(verb="get", resource="configmaps", name="a"))
    assert not rbac.rule_allows(rule, attrs(verb="get", resource="configmaps", name="b"))


def test_tenant_cannot_update_quota_or_nodes(store):
    assert not rbac.authorize(store, attrs(verb="update", namespace="team-vision", resource="resourcequotas")).allowed
    assert not rbac.authorize(store, attrs(verb="patch", resource="nodes", name="n")).allowed


def test_admin_may_do_everything_via_cluster_admin(store):
    user, groups = ADMIN
    d = rbac.authorize(store, attrs(user, groups, verb="delete", namespace="team-nlp", resource="pods"))
    assert d.allowed and "ClusterRoleBinding \"kubeadm:cluster-admins\"" in d.reason
    assert rbac.authorize(store, attrs(user, groups, verb="impersonate", resource="users", name=SA)).allowed


def test_non_resource_urls_for_authenticated_users(store):
    assert rbac.authorize(store, attrs(verb="get", path="/apis/kueue.x-k8s.io", resource_request=False)).allowed
    assert not rbac.authorize(store, attrs(verb="get", path="/metrics", resource_request=False)).allowed


def test_forbidden_status_has_the_exact_api_message():
    st = rbac.forbidden_status(rbac.Attributes(user="system:serviceaccount:team-a:runner", verb="get",
                                               namespace="team-b", resource="pods", subresource="log", name="x"))
    assert st["code"] == 403 and st["reason"] == "Forbidden"
    assert st["message"] == ('pods "x" is forbidden: User "system:serviceaccount:team-a:runner" cannot get resource '
                             '"pods/log" in API group "" in the namespace "team-b"')
    assert st["details"] == {"kind": "pods", "name": "x"}


def test_forbidden_message_cluster_scope_and_group():
    a = rbac.Attributes(user="u", verb="list", api_group="kueue.x-k8s.io", resource="clusterqueues")
    assert rbac.forbidden_status(a)["message"] == ('clusterqueues.kueue.x-k8s.io is forbidden: User "u" cannot list '
                                                   'resource "clusterqueues" in API group "kueue.x-k8s.io" at the '
                                                   'cluster scope')


def test_cross_tenant_logs_fault_allows_foreign_logs_only(store):
    from gpupoc.sim.fault_profiles.cross_tenant_logs import reads_every_log

    authorize = reads_every_log(rbac.authorize)
    a = attrs(verb="get", namespace="team-nlp", resource="pods", subresource="log", name="x")
    assert not rbac.authorize(store, a).allowed and authorize(store, a).allowed
    assert not authorize(store, attrs(verb="get", namespace="team-nlp", resource="pods", name="x")).allowed


@pytest.mark.parametrize("method,path,query,expected", [
    ("GET", "/api/v1/namespaces/team-b/pods/x/log", {}, ("get", "", "team-b", "pods", "x", "log")),
    ("GET", "/api/v1/namespaces/team-b/pods", {}, ("list", "", "team-b", "pods", "", "")),
    ("GET", "/api/v1/namespaces/team-b/pods", {"watch": "True"}, ("watch", "", "team-b", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/team-b/events", {}, ("watch", "", "team-b", "events", "", "")),
    ("DELETE", "/api/v1/namespaces/team-b/pods", {}, ("deletecollection", "", "team-b", "pods", "", "")),
    ("PATCH", "/api/v1/nodes/n1", {}, ("patch", "", "", "nodes", "n1", "")),
    ("GET", "/api/v1/namespaces/team-b", {}, ("get", "", "team-b", "namespaces", "team-b", "")),
    ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {},
     ("create", "authorization.k8s.io", "", "selfsubjectaccessreviews", "", "")),
    ("GET", "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/a/localqueues/q/pendingworkloads", {},
     ("get", "visibility.kueue.x-k8s.io", "a", "localqueues", "q", "pendingworkloads")),
])
def test_request_info_is_parsed_like_the_api_server(method, path, query, expected):
    from gpupoc.sim.api.context import parse_request_info

    info = parse_request_info(method, path, query)
    assert info.resource_request
    assert (info.verb, info.api_group, info.namespace, info.resource, info.name, info.subresource) == expected


def test_non_resource_paths():
    from gpupoc.sim.api.context import parse_request_info

    for path in ("/api", "/apis", "/apis/kueue.x-k8s.io", "/version", "/openapi/v3"):
        info = parse_request_info("GET", path, {})
        assert not info.resource_request and info.verb == "get", path
