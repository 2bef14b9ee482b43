"""Steps on controllers and the API's machinery: a Deployment rolled out and scaled, a watch resumed."""

from __future__ import annotations

from gpupoc.fidelity import observe
from gpupoc.fidelity.normalise import present, shape
from gpupoc.fidelity.run import Run
from gpupoc.fidelity.setup import TENANT_NS, pod, until

DEPLOY = f"/apis/apps/v1/namespaces/{TENANT_NS}/deployments"
STATUS_FIELDS = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                 "unavailableReplicas", "conditions")


def _status(obj: dict) -> dict:
    st = obj.get("status")
    return st if isinstance(st, dict) else {}  # a Status answer's ``status`` is a string


def _available(run: Run, want: int) -> dict:
    d, _ = until(lambda: run.admin.get(f"{DEPLOY}/fid-web").body,
                 lambda d: _status(d).get("availableReplicas") == want, run.wait)
    return d


def deployment(run: Run) -> None:
    """A Deployment whose pods would not restart is refused; one of one replica is rolled out, then scaled
    to two through its scale subresource."""
    rec = run.rec("deployment")
    template = pod("fid-web", run.target)
    template["metadata"] = {"labels": {"app": "fid-web"}}
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fid-web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "fid-web"}}, "template": template}}
    observe.status(rec, "never_restarts", run.admin.post(DEPLOY, body), run.nodes)
    template["spec"]["restartPolicy"] = "Always"
    observe.status(rec, "create", run.admin.post(DEPLOY, body), run.nodes)
    first = _available(run, 1)
    rec.see("rolled_out.status.fields", present(_status(first), STATUS_FIELDS))
    observe.conditions(rec, "rolled_out", first, ["Available", "Progressing"], run.nodes)
    scale = run.admin.call("PATCH", f"{DEPLOY}/fid-web/scale", {"spec": {"replicas": 2}},
                           content_type="application/merge-patch+json")
    observe.status(rec, "scale", scale, run.nodes)
    rec.see("scale.kind", scale.body.get("kind"))
    rec.see("scale.fields", present(scale.body, ("spec.replicas", "status.replicas", "status.selector")))
    scaled = _available(run, 2)
    rec.see("scaled.status.availableReplicas", _status(scaled).get("availableReplicas"))
    observe.conditions(rec, "scaled", scaled, ["Available", "Progressing"], run.nodes)
    observe.events(rec, "deployment", run.admin, TENANT_NS, "fid-web", ["ScalingReplicaSet"], run.nodes)
    run.mark("deployment", "scale", "patch", "deployments", TENANT_NS, "fid-web", "scale")
    run.admin.call("DELETE", f"{DEPLOY}/fid-web", {"propagationPolicy": "Foreground"})


def watch(run: Run) -> None:
    """The tenant lists pods, a pod is created, and a watch from the list's resourceVersion sees it; a watch
    from resourceVersion 1 shows what the server does with a version it no longer holds."""
    rec = run.rec("watch")
    path = f"/api/v1/namespaces/{TENANT_NS}/pods"
    listed = run.tenant.get(path)
    version = str((listed.body.get("metadata") or {}).get("resourceVersion") or "")
    rec.see("list.code", listed.code)
    created = run.admin.post(path, pod("fid-watched", run.target))
    rec.see("create.code", created.code)
    seen = run.tenant.watch(path, version, seconds=3)
    mine = [e for e in seen if ((e.get("object") or {}).get("metadata") or {}).get("name") == "fid-watched"]
    rec.see("resumed.first", mine[0].get("type") if mine else None)
    old = run.tenant.watch(path, "1", seconds=3)
    errors = [e for e in old if e.get("type") in ("ERROR", "HTTP")]
    rec.see("from_1.error", bool(errors))
    if errors:
        obj = errors[0].get("object") or {}
        rec.see("from_1.error.code", obj.get("code"))
        rec.see("from_1.error.reason", obj.get("reason"))
        rec.see("from_1.error.message", shape(obj.get("message"), run.nodes))
    run.mark("watch", "resumed", "watch", "pods", TENANT_NS, tenant=True)
    run.admin.call("DELETE", f"{path}/fid-watched", {"gracePeriodSeconds": 0})
