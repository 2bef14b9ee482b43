"""Steps on access: a tenant's forbidden reads and writes, the access reviews, TokenRequest and a quota."""

from __future__ import annotations

from gpupoc.fidelity import observe
from gpupoc.fidelity.normalise import present, shape
from gpupoc.fidelity.run import Run
from gpupoc.fidelity.setup import GPU, OTHER_NS, QUOTA_NS, TENANT_NS, ensure, pod, token_request, until


def forbidden(run: Run) -> None:
    """The tenant reads a pod, its log and the secrets of another namespace, and creates a pod there."""
    rec = run.rec("forbidden")
    base = f"/api/v1/namespaces/{OTHER_NS}"
    for label, path, verb, resource, name, sub in (
            ("get_pod", f"{base}/pods/other-pod", "get", "pods", "other-pod", ""),
            ("get_log", f"{base}/pods/other-pod/log", "get", "pods", "other-pod", "log"),
            ("list_secrets", f"{base}/secrets", "list", "secrets", "", "")):
        observe.status(rec, label, run.tenant.get(path), run.nodes)
        run.mark("forbidden", label, verb, resource, OTHER_NS, name, sub, tenant=True)
    created = run.tenant.post(f"{base}/pods", pod("intruder", run.target))
    observe.status(rec, "create_pod", created, run.nodes)
    run.mark("forbidden", "create_pod", "create", "pods", OTHER_NS, "", "", tenant=True)


def access_reviews(run: Run) -> None:
    """SelfSubjectAccessReview (denied and allowed) and SelfSubjectReview, as the tenant."""
    rec = run.rec("access_reviews")
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    for label, ns in (("ssar_denied", OTHER_NS), ("ssar_allowed", TENANT_NS)):
        answer = run.tenant.post(path, {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods",
                                                                        "namespace": ns}}})
        observe.status(rec, label, answer, run.nodes)
        st = answer.body.get("status") or {}
        rec.see(f"{label}.allowed", st.get("allowed"))
        rec.see(f"{label}.fields", present(st, ("allowed", "denied", "reason", "evaluationError")))
        rec.see(f"{label}.reason", shape(st.get("reason"), run.nodes))
        run.mark("access_reviews", label, "create", "selfsubjectaccessreviews", tenant=True)
    answer = run.tenant.post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                             {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    observe.status(rec, "ssr", answer, run.nodes)
    info = (answer.body.get("status") or {}).get("userInfo") or {}
    rec.see("ssr.username", info.get("username"))
    rec.see("ssr.fields", present(info, ("username", "uid", "groups", "extra")))
    rec.see("ssr.groups", info.get("groups"))
    rec.see("ssr.extra", sorted((info.get("extra") or {})))
    run.mark("access_reviews", "ssr", "create", "selfsubjectreviews", tenant=True)


def token_requests(run: Run) -> None:
    """A TokenRequest with an audience and ten minutes, and one asking for less than the minimum."""
    rec = run.rec("token_request")
    short = token_request(run.admin, seconds=60)
    observe.status(rec, "too_short", short, run.nodes)
    answer = token_request(run.admin, audiences=["gpupoc-fidelity"], seconds=600)
    observe.status(rec, "audience", answer, run.nodes)
    spec, st = answer.body.get("spec") or {}, answer.body.get("status") or {}
    rec.see("audience.spec.audiences", spec.get("audiences"))
    rec.see("audience.spec.expirationSeconds", spec.get("expirationSeconds"))
    rec.see("audience.status.fields", present(st, ("token", "expirationTimestamp")))
    rec.see("audience.kind", answer.body.get("kind"))
    run.mark("token_request", "audience", "create", "serviceaccounts", TENANT_NS, "runner", "token")


def quota(run: Run) -> None:
    """A pod over a GPU quota of one is refused at create."""
    rec = run.rec("quota")
    ensure(run.admin, f"/api/v1/namespaces/{QUOTA_NS}/resourcequotas",
           {"metadata": {"name": "fid-q"}, "spec": {"hard": {f"requests.{GPU}": "1"}}})
    until(lambda: run.admin.get(f"/api/v1/namespaces/{QUOTA_NS}/resourcequotas/fid-q").body,
          lambda q: bool((q.get("status") or {}).get("hard")), run.wait)
    answer = run.admin.post(f"/api/v1/namespaces/{QUOTA_NS}/pods", pod("over-quota", run.target, gpus=2))
    observe.status(rec, "create", answer, run.nodes)
    run.mark("quota", "create", "create", "pods", QUOTA_NS)
