"""Pod-specific handlers: create through admission, graceful delete, update rules, and ``pods/log``."""

from __future__ import annotations

import asyncio
import copy
from datetime import timedelta

from aiohttp import web

from gpupoc.sim import clock
from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.api.context import Ctx, dry_run, int_param, json_response, truthy
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.resources import UPDATE_VALIDATORS, fetch, matching, selector_of
from gpupoc.sim.api.status import StatusError, already_exists, bad_request, invalid, success_obj
from gpupoc.sim.faults import Fault
from gpupoc.sim.store import RESOURCES, Conflict

TERMINAL = ("Succeeded", "Failed")
MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")


async def create_pod(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    body = await ctx.body()
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
    return json_response(pod, 201)


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


def remove_pod(ctx: Ctx, pod: dict) -> None:
    """Take a pod out of the store now (with its logs; its GPUs unless a leak is planted)."""
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    ctx.state.store.delete("pods", ns, name)
    ctx.state.logs.drop_pod(ns, name)
    failed = (pod.get("status") or {}).get("phase") == "Failed"
    if not (failed and ctx.state.has(Fault.GPUS_LEAK)):
        ctx.state.inventory.release((ns, name))


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
    return json_response({"kind": "PodList", "apiVersion": "v1",
                          "metadata": {"resourceVersion": str(ctx.state.store.rv)}, "items": items})


EVICTION_REASON, EVICTION_MESSAGE = "EvictionByEvictionAPI", "Eviction API: evicting"


async def evict_pod(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """``POST pods/{name}/eviction`` (kubectl drain): condition DisruptionTarget reason EvictionByEvictionAPI
    "Eviction API: evicting" on a pod that has not ended (kubernetes ``pkg/registry/core/pod/storage/eviction.go``,
    ``addConditionAndDeletePod``), then a graceful delete; no PodDisruptionBudgets here."""
    pod = fetch(ctx, spec)
    body = await ctx.body()
    options = (body or {}).get("deleteOptions") or {} if isinstance(body, dict) else {}
    grace = options.get("gracePeriodSeconds")
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
    phase = (pod.get("status") or {}).get("phase")
    bound = bool((pod.get("spec") or {}).get("nodeName"))
    if not bound or phase in TERMINAL:
        remove_pod(ctx, pod)
        ctx.state.kick()
        return pod
    if grace is None:
        grace = int((pod.get("spec") or {}).get("terminationGracePeriodSeconds") or 30)
    meta = pod["metadata"]
    current = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp") is None or current is None or grace < current:
        meta["deletionGracePeriodSeconds"] = grace
        meta["deletionTimestamp"] = clock.rfc3339(clock.now() + timedelta(seconds=grace))
        ctx.state.store.update("pods", pod)
    ctx.state.kick()
    return pod


# -- logs -------------------------------------------------------------------------------------
def _pick_container(pod: dict, requested: str | None) -> str:
    name = pod["metadata"]["name"]
    containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
    inits = [c["name"] for c in (pod.get("spec") or {}).get("initContainers") or []]
    if not requested:
        if len(containers) == 1:
            return containers[0]
        raise bad_request(f"a container name must be specified for pod {name}, choose one of: "
                          f"[{' '.join(containers)}]" + (f" or one of the init containers: [{' '.join(inits)}]"
                                                         if inits else ""))
    if requested not in containers + inits:
        raise bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def _container_status(pod: dict, container: str) -> dict | None:
    status = pod.get("status") or {}
    for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        if cs.get("name") == container:
            return cs
    return None


def _terminated(pod: dict, container: str) -> bool:
    cs = _container_status(pod, container)
    return bool(cs and (cs.get("state") or {}).get("terminated")) or \
        (pod.get("status") or {}).get("phase") in TERMINAL


async def pod_log(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """``GET pods/{name}/log``: plain text, optionally followed until the container ends (pitfall 1)."""
    pod = fetch(ctx, spec)
    q = ctx.query
    ns, name = ctx.info.namespace, ctx.info.name
    container = _pick_container(pod, q.get("container"))
    follow, timestamps = truthy(q.get("follow")), truthy(q.get("timestamps"))
    tail = int_param(q, "tailLines")
    since = int_param(q, "sinceSeconds")
    limit = int_param(q, "limitBytes")
    try:
        since_time = clock.parse(q["sinceTime"]) if q.get("sinceTime") else None
    except ValueError:
        raise bad_request(f"sinceTime: invalid value {q['sinceTime']!r}: expected RFC3339 such as "
                          "2024-01-02T15:04:05Z") from None
    if since is not None:
        since_time = clock.now() - timedelta(seconds=since)
    cs = _container_status(pod, container)
    if truthy(q.get("previous")):
        if not (cs and (cs.get("lastState") or {}).get("terminated")):
            raise bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        log = ctx.state.logs.get(ns, name, f"{container}:previous")
        follow = False
    else:
        log = ctx.state.logs.get(ns, name, container)
    if log is None:
        waiting = ((cs or {}).get("state") or {}).get("waiting") if cs else None
        if not _terminated(pod, container):
            if waiting and waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName"):
                raise bad_request(f'container "{container}" in pod "{name}" is waiting to start: trying and failing '
                                  "to pull image")
            reason = (waiting or {}).get("reason") or "ContainerCreating"
            raise bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    resp = web.StreamResponse(headers={"Content-Type": "text/plain", "Cache-Control": "no-cache, private"})
    resp.enable_chunked_encoding()
    ctx.stream = resp
    await resp.prepare(ctx.request)
    budget = [limit if limit is not None and limit > 0 else None]

    async def emit(lines) -> bool:
        chunk = []
        for ts, text in lines:
            if since_time is not None and ts < since_time:
                continue
            chunk.append(f"{clock.rfc3339_nano(ts)} {text}\n" if timestamps else f"{text}\n")
        data = "".join(chunk).encode()
        if budget[0] is not None:
            data = data[: budget[0]]
            budget[0] -= len(data)
        if data:
            await resp.write(data)
        return budget[0] is None or budget[0] > 0

    sent = 0
    if log is not None:
        lines = list(log.lines)
        if tail is not None and tail >= 0:
            lines = lines[-tail:] if tail else []
        sent = len(log.lines)
        more = await emit(lines)
    else:
        more = True
    while follow and more:
        if log is None:
            log = ctx.state.logs.get(ns, name, container)
            if log is None:
                await asyncio.sleep(0.5)
                current = ctx.state.store.get("pods", ns, name)
                gone = current is None or current["metadata"]["uid"] != pod["metadata"]["uid"]
                if gone or _terminated(current, container):
                    break
                continue
            sent = 0
        if len(log.lines) < sent:
            sent = 0  # cleared
        if len(log.lines) > sent:
            new = log.lines[sent:]
            sent += len(new)
            more = await emit(new)
            continue
        if log.closed:
            break
        current = ctx.state.store.get("pods", ns, name)
        if current is None or current["metadata"]["uid"] != pod["metadata"]["uid"]:
            break
        if _terminated(current, container) and len(log.lines) == sent:
            await log.wait_change(0.2)
            if len(log.lines) == sent:
                break
            continue
        await log.wait_change(1.0)
    await resp.write_eof()
    return resp


async def pod_status(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    return json_response(copy.deepcopy(fetch(ctx, spec)))
