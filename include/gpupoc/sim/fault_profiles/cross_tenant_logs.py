"""``cross-tenant-logs``: a tenant's service account may read any namespace's pod logs, as if a
ClusterRoleBinding granted every service account a log reader's ClusterRole. Wraps RBAC (``reactors.authorize``)."""

from __future__ import annotations

from gpupoc.sim import rbac
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.reactors import Authorizer

GRANT = rbac.Decision(True, 'RBAC: allowed by ClusterRoleBinding "gpupoc:log-readers" of ClusterRole '
                             '"gpupoc:log-reader" to Group "system:serviceaccounts"')

def install(state: ClusterState) -> None:
    state.reactors.authorize = reads_every_log(state.reactors.authorize)


def reads_every_log(authorize: Authorizer) -> Authorizer:
    """``authorize``, except that a service account's ``get pods/log`` no rule allows is allowed."""
    def authorize_with_log_readers(store, attrs: rbac.Attributes) -> rbac.Decision:
        decision = authorize(store, attrs)
        if (not decision.allowed and attrs.resource_request and attrs.resource == "pods"
                and attrs.subresource == "log" and attrs.verb == "get" and attrs.user.startswith(rbac.SA_PREFIX)):
            return GRANT
        return decision
    return authorize_with_log_readers
