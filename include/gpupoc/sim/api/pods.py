"""Pod-specific handlers: create through admission, graceful delete, update rules (``pods/log`` is in
``pod_logs``)."""

from __future__ import annotations

import copy
from datetime import timedelta

from aiohttp import web

from gpupoc.sim import clock
from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.api.context import Ctx, dry_run, int_param, json_response
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.resources import UPDATE_VALIDATORS, answer_list, answer_object, fetch, matching, selector_of
from gpupoc.sim.api.status import StatusError, already_exists, invalid, success_obj
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import disruption_budgets
from gpupoc.sim.store import RESOURCES, Conflict

TERMINAL = ("Succeeded", "Failed")
MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")


async def create_pod(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    body = await ctx.body()
    meta = body.get("metadata") if isinstance(body, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get("name"), str):
        ctx.audit.name = meta["name"]  # the object is decoded before admission: a refusal's event names it too
    pod = admit_pod(ctx.state, body, ctx.info.namespace, dry_run=dry_run(ctx.query))
    ctx.audit.name = pod["metadata"]["name"]
    if dry_run(ctx.query):
        if ctx.state.store.get("pods", ctx.info.namespace, pod["metadata"]["name"]) is not None:
            raise already_exists("pods", pod["metadata"]["name"])
        return json_response(pod, 201)
    try:
        ctx.state.store.create("pods", pod)
    except Conflict:
        raise already_exists("pods", pod["metadata"]["name"]) from None
    after_pod_created(ctx.state, pod)
    ctx.state.kick()
    return answer_object(ctx, spec, pod, 201)


def validate_pod_update(old: dict, new: dict) -> None:
    """Pods are mostly immutable: images, tolerations (additions), deadlines and gate removal may change."""
    name = old["metadata"]["name"]
    o, n = old.get("spec") or {}, new.get("spec") or {}

    def strip(spec: dict) -> dict:
        s = {k: v for k, v in spec.items() if k not in MUTABLE_SPEC}
        s["containers"] = [{k: v for k, v in c.items() if k != "image"} for c in spec.get("containers") or []]
        s["initContainers"] = [{k: v for k, v in c.items() if k != "image"} for c in spec.get("initContainers") or []]
        return s

    if strip(o) != strip(n):
        raise invalid("Pod", name, [("spec", "Forbidden: pod updates may not change fields other than "
                                             "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                                             "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                                             "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it "
                                             "to be set to 1 if it was previously negative)")])
    old_gates = {g.get("name") for g in o.get("schedulingGates") or []}
    for i, g in enumerate(n.get("schedulingGates") or []):
        if g.get("name") not in old_gates:
            raise invalid("Pod", name, [(f"spec.schedulingGates[{i}]",
                                         f"Forbidden: only deletion is allowed, but found new scheduling gate "
                                         f"'{g.get('name')}'")])
    if old_gates and not n.get("schedulingGates"):
        n.pop("schedulingGates", None)


UPDATE_VALIDATORS["pods"] = validate_pod_update


async def _delete_options(ctx: Ctx) -> int | None:
    grace = int_param(ctx.query, "gracePeriodSeconds")
    try:
        body = await ctx.body()
    except StatusError:
        body = None
    if isinstance(body, dict) and body.get("gracePeriodSeconds") is not None:
        grace = int(body["gracePeriodSeconds"])
    return grace


def remove_pod(state: ClusterState, pod: dict) -> None:
    """Take a pod out of the store now (with its logs; its GPUs unless ``reactors.keeps_gpus`` keeps them)."""
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    state.store.delete("pods", ns, name)
    state.logs.drop_pod(ns, name)
    if not state.reactors.keeps_gpus((pod.get("status") or {}).get("phase"), False):
        state.inventory.release((ns, name))


async def delete_pod(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """Unbound or finished pods go at once; running ones get a deletionTimestamp for the kubelet."""
    pod = fetch(ctx, spec)
    grace = await _delete_options(ctx)
    if dry_run(ctx.query):
        return json_response(pod)
    return json_response(delete_one(ctx, pod, grace))


async def delete_pods(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """``DELETE .../pods?labelSelector=...``: each matching pod deleted like a single delete."""
    grace = await _delete_options(ctx)
    doomed = [] if dry_run(ctx.query) else list(matching(ctx, spec, selector_of(ctx, "pods")))
    items = [delete_one(ctx, p, grace) for p in doomed]
    return answer_list(ctx, spec, items, {"resourceVersion": str(ctx.state.store.rv)})


EVICTION_REASON, EVICTION_MESSAGE = "EvictionByEvictionAPI", "Eviction API: evicting"


async def evict_pod(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """``POST pods/{name}/eviction`` (kubectl drain): condition DisruptionTarget reason EvictionByEvictionAPI
    "Eviction API: evicting" on a pod that has not ended (kubernetes ``pkg/registry/core/pod/storage/eviction.go``,
    ``addConditionAndDeletePod``), then a graceful delete; refused while the pod's PodDisruptionBudget allows no
    disruption (``controllers/disruption_budgets.py`` ``admit_eviction``)."""
    pod = fetch(ctx, spec)
    body = await ctx.body()
    options = (body or {}).get("deleteOptions") or {} if isinstance(body, dict) else {}
    grace = options.get("gracePeriodSeconds")
    if not pod["metadata"].get("deletionTimestamp"):
        disruption_budgets.admit_eviction(ctx.state, pod, dry_run(ctx.query))
    if not dry_run(ctx.query):
        if (pod.get("status") or {}).get("phase") not in TERMINAL and not pod["metadata"].get("deletionTimestamp"):
            _disruption_target(pod, EVICTION_REASON, EVICTION_MESSAGE)
            ctx.state.store.update("pods", pod)
        delete_one(ctx, pod, int(grace) if grace is not None else None)
    return json_response(success_obj(), 201)


def _disruption_target(pod: dict, reason: str, message: str) -> None:
    conds = [c for c in pod.setdefault("status", {}).get("conditions") or [] if c.get("type") != "DisruptionTarget"]
    conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                  "lastTransitionTime": clock.rfc3339(), "reason": reason, "message": message})
    pod["status"]["conditions"] = conds


async def delete_namespace(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """Deleting a namespace deletes what is in it: pods through the kubelet (grace 0), the rest at once."""
    ns_obj = fetch(ctx, spec)
    name = ns_obj["metadata"]["name"]
    if dry_run(ctx.query):
        return json_response(ns_obj)
    store = ctx.state.store
    for resource, (_, _, namespaced) in RESOURCES.items():
        if not namespaced:
            continue
        for obj in list(store.list(resource, name)):
            if resource == "pods":
                delete_one(ctx, obj, 0)
            else:
                store.delete(resource, name, obj["metadata"]["name"])
    store.delete("namespaces", None, name)
    ns_obj["metadata"]["deletionTimestamp"] = clock.rfc3339()
    ns_obj["status"] = {"phase": "Terminating"}
    ctx.state.kick()
    return json_response(ns_obj)


def delete_one(ctx: Ctx, pod: dict, grace: int | None) -> dict:
    return graceful_delete(ctx.state, pod, grace)


def graceful_delete(state: ClusterState, pod: dict, grace: int | None = None) -> dict:
    """Delete a pod as the API server does: unbound or finished at once, else a deletionTimestamp for the
    kubelet (``grace`` seconds, the pod's ``terminationGracePeriodSeconds`` when None)."""
    phase = (pod.get("status") or {}).get("phase")
    bound = bool((pod.get("spec") or {}).get("nodeName"))
    if not bound or phase in TERMINAL:
        remove_pod(state, pod)
        state.kick()
        return pod
    if grace is None:
        grace = int((pod.get("spec") or {}).get("terminationGracePeriodSeconds") or 30)
    meta = pod["metadata"]
    current = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp") is None or current is None or grace < current:
        meta["deletionGracePeriodSeconds"] = grace
        meta["deletionTimestamp"] = clock.rfc3339(clock.now() + timedelta(seconds=grace))
        state.store.update("pods", pod)
    state.kick()
    return pod


# -- logs -------------------------------------------------------------------------------------
async def pod_status(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    return json_response(copy.deepcopy(fetch(ctx, spec)))
