"""Every image of the catalogue pulls: one short pod per image, as the tenant that runs it, in its namespace
(so its pull secrets count) on its pool's nodes, asking for no GPU; deleted as soon as its container started.

An image counts as pulled once its container is running or has terminated (whatever the exit code); it fails
on ``ErrImagePull``, ``ImagePullBackOff``, ``InvalidImageName`` or ``ErrImageNeverPull``, or when the container
has not started within ``cluster.preflight.image_pull_timeout_seconds``. The workload of a ``missing_image``
injection is left out: it must not pull. A class DAG pulls only its own images, and not those pulled within
``cluster.preflight.image_recheck_hours`` (recorded in ``<evidence_root>/preflight/images.json``).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from gpupoc.plan.classes import MissingImage, TestClass
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, not_applicable, ok
from gpupoc.preflight.registry import check

PULL_FAILED = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
PROBE_LABEL = "gpupoc.io/probe"
CACHE = "images.json"


@dataclass(frozen=True)
class ImageUse:
    image: str
    tenant: str
    workload: str


def images_to_pull(ctx: PreflightContext) -> list[ImageUse]:
    """One use per image: the class's workloads (or the whole catalogue), by the first tenant that submits it."""
    from gpupoc.plan import class_items

    plan = ctx.plan
    expected_missing = {i.workload for i in plan.test_classes.fault_recovery.injections if isinstance(i, MissingImage)}
    classes = [ctx.test_class] if ctx.test_class else [tc.value for tc in TestClass]
    uses: dict[str, ImageUse] = {}
    for tc in classes:
        if plan.test_class(tc).enabled:
            for item in class_items(plan, tc):
                w = plan.workload(item.workload)
                if w.name not in expected_missing:
                    uses.setdefault(w.image, ImageUse(w.image, item.tenant, w.name))
    if ctx.test_class is None:
        for w in plan.workloads:
            if w.name not in expected_missing:
                uses.setdefault(w.image, ImageUse(w.image, plan.tenants[0].name, w.name))
    return list(uses.values())


SERVICE_ACCOUNT_PENDING = "error looking up service account"  # kube-apiserver's ServiceAccount admission


def pull_pod(ctx: PreflightContext, use: ImageUse) -> dict:
    plan = ctx.plan
    w, t = plan.workload(use.workload), plan.tenant(use.tenant)
    pool = plan.pool(w.pool)
    digest = hashlib.sha256(use.image.encode()).hexdigest()[:10]
    container = {"name": "pull", "image": use.image, "imagePullPolicy": "IfNotPresent",
                 "resources": {"requests": {"cpu": "10m", "memory": w.memory_request},
                               "limits": {"memory": w.memory_limit}}}
    if w.command:
        container["command"] = list(w.command)
    if w.args:
        container["args"] = list(w.args)
    tolerations = [{k: v for k, v in (("key", x.key), ("operator", x.operator), ("value", x.value),
                                      ("effect", x.effect)) if v is not None} for x in pool.tolerations]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"gpupoc-pull-{digest}", "namespace": t.namespace,
                         "labels": {PROBE_LABEL: "image-pull"}},
            "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                     "activeDeadlineSeconds": plan.cluster.preflight.image_pull_timeout_seconds,
                     "nodeSelector": dict(pool.node_selector), "tolerations": tolerations,
                     "containers": [container]}}


def pull_state(pod: dict | None) -> tuple[str, str]:
    """(``pulled`` | ``failed`` | ``waiting``, what the pod says)."""
    if pod is None:
        return "waiting", "not created"
    status = pod.get("status") or {}
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        if "running" in state or "terminated" in state:
            return "pulled", "container started"
        waiting = state.get("waiting") or {}
        if waiting.get("reason") in PULL_FAILED:
            return "failed", f"{waiting['reason']}: {waiting.get('message', '')}".strip(": ")
        if waiting.get("reason"):
            return "waiting", waiting["reason"]
    unsched = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"
                    and c.get("status") == "False"), None)
    if unsched:
        return "waiting", f"not scheduled: {unsched.get('message', unsched.get('reason', ''))}"
    return "waiting", status.get("phase", "Pending")


def _recent(ctx: PreflightContext) -> dict[str, str]:
    path = ctx.state_dir / CACHE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    hours = ctx.plan.cluster.preflight.image_recheck_hours
    since = datetime.now(timezone.utc) - timedelta(hours=hours)
    return {img: at for img, at in data.items() if isinstance(at, str) and datetime.fromisoformat(at) >= since}


def _remember(ctx: PreflightContext, images: list[str]) -> None:
    path = ctx.state_dir / CACHE
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        data = {}
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    data.update({img: now for img in images})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def create_pull_pod(caller, body: dict) -> tuple[str, str] | None:
    """POST the pull pod; None once it exists, else (``waiting`` | ``failed``, why). A namespace created moments
    ago has no ``default`` ServiceAccount until kube-controller-manager's serviceaccount controller makes it, and
    the ServiceAccount admission refuses its pods until then: that is waited for, not failed."""
    r = caller.call("POST", f"/api/v1/namespaces/{body['metadata']['namespace']}/pods", body=body)
    if r.ok or r.status == 409:
        return None
    if r.status == 403 and SERVICE_ACCOUNT_PENDING in (r.message or ""):
        return "waiting", f"its namespace's ServiceAccount does not exist yet (HTTP 403: {r.message})"
    return "failed", f"the pull pod was refused: HTTP {r.status}: {r.message}"


def _pull_all(ctx: PreflightContext, uses: list[ImageUse]) -> dict[str, tuple[str, str]]:
    """Create every pull pod, follow them until each pulled, failed or the deadline, delete them.
    Returns image -> (state, what its pod said last)."""
    pods = {u.image: pull_pod(ctx, u) for u in uses}
    callers = {u.image: ctx.tenant(u.tenant) for u in uses}
    results = {img: ("waiting", "not created") for img in pods}
    done: set[str] = set()
    uncreated = set(pods)
    deadline = time.monotonic() + ctx.plan.cluster.preflight.image_pull_timeout_seconds
    try:
        while len(done) < len(pods) and time.monotonic() < deadline:
            for img in sorted(uncreated):
                refused = create_pull_pod(callers[img], pods[img])
                if refused is None:
                    uncreated.discard(img)
                    continue
                results[img] = refused
                if refused[0] == "failed":
                    uncreated.discard(img)
                    done.add(img)
            for img in [i for i in pods if i not in done and i not in uncreated]:
                m = pods[img]["metadata"]
                r = callers[img].call("GET", f"/api/v1/namespaces/{m['namespace']}/pods/{m['name']}")
                results[img] = pull_state(r.body if r.ok else None)
                if results[img][0] != "waiting":
                    done.add(img)
            if len(done) < len(pods):
                time.sleep(0.5)
    finally:
        for img, body in pods.items():
            m = body["metadata"]
            callers[img].call("DELETE", f"/api/v1/namespaces/{m['namespace']}/pods/{m['name']}",
                              body={"gracePeriodSeconds": 0})
    return results


@check("images", "every image of the catalogue pulls")
def images(ctx: PreflightContext) -> list[CheckResult]:
    uses = images_to_pull(ctx)
    if not ctx.pull_images or not uses:
        return [not_applicable("images", "", "not pulled (--no-images)" if uses else "no images to pull")]
    recent = _recent(ctx) if ctx.test_class else {}
    todo = [u for u in uses if u.image not in recent]
    out = [ok("images", u.image, f"pulled at {recent[u.image]} (within cluster.preflight.image_recheck_hours)")
           for u in uses if u.image in recent]
    found = _pull_all(ctx, todo) if todo else {}
    timeout = ctx.plan.cluster.preflight.image_pull_timeout_seconds
    for u in todo:
        state, text = found[u.image]
        if state == "pulled":
            out.append(ok("images", u.image, f"pulled on pool {ctx.plan.workload(u.workload).pool} as {u.tenant}"))
        elif state == "failed":
            out.append(failed("images", u.image, f"does not pull as {u.tenant} ({text})",
                              "push the image, fix its name in workloads[].image, or give the tenant's "
                              "ServiceAccount an imagePullSecret for its registry"))
        else:
            out.append(failed("images", u.image, f"not started within {timeout} s as {u.tenant} (last: {text})",
                              "check the registry's reachability from the pool's nodes, or raise "
                              "cluster.preflight.image_pull_timeout_seconds for a large image"))
    _remember(ctx, [u.image for u in todo if found[u.image][0] == "pulled"])
    return out
