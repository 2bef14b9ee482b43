"""Pod admission: validation, defaulting, PriorityClass resolution, ResourceQuota, then the mutating plug-ins
registered in ``state.hooks.admission`` (Kueue's pod webhook registers itself, ``controllers.kueue``) and the
validating ones in ``state.hooks.validating`` (the ``admission-refused`` fault's webhook, ``admission_webhook``)."""

from __future__ import annotations

import logging
import random
import re
import uuid
from decimal import Decimal

from gpupoc.kube.resources import GPU
from gpupoc.sim import clock, quota
from gpupoc.sim.api import shapes
from gpupoc.sim.api.status import StatusError, forbidden, invalid
from gpupoc.sim.cluster import ClusterState

log = logging.getLogger(__name__)

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
BUILTIN_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
DEFAULT_TOLERATION_SECONDS = 300
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def generate_name(prefix: str) -> str:
    return prefix + "".join(random.choice(_NAME_CHARS) for _ in range(5))


def validate_pod(pod: dict) -> None:
    """The checks of the API server's pod validation that clients trip over (422 Invalid)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec")
    name = meta.get("name") or ""
    causes: list[tuple[str, str]] = []
    if not name:
        causes.append(("metadata.name", "Required value: name or generateName is required"))
    elif len(name) > 253 or not DNS_SUBDOMAIN.match(name):
        causes.append(("metadata.name", f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of '
                       "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                       "character (e.g. 'example.com', regex used for validation is "
                       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"))
    if not isinstance(spec, dict) or not spec.get("containers"):
        causes.append(("spec.containers", "Required value"))
    else:
        seen: set[str] = set()
        for field in ("initContainers", "containers"):
            for i, c in enumerate(spec.get(field) or []):
                causes.extend(_container_causes(f"spec.{field}[{i}]", c, seen))
        policy = spec.get("restartPolicy")
        if policy and policy not in ("Always", "OnFailure", "Never"):
            causes.append(("spec.restartPolicy", f'Unsupported value: "{policy}": supported values: '
                           '"Always", "OnFailure", "Never"'))
    if causes:
        raise invalid("Pod", name, causes)


def _quantity_text(value: object) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{int(round(value * 1000))}m"
    if isinstance(value, float):
        return str(int(value))
    return str(value)


def _container_causes(path: str, c: dict, seen: set[str]) -> list[tuple[str, str]]:
    causes = []
    cname = c.get("name") or ""
    if not cname:
        causes.append((f"{path}.name", "Required value"))
    elif not DNS_LABEL.match(cname):
        causes.append((f"{path}.name", f'Invalid value: "{cname}": a lowercase RFC 1123 label '
                       "must consist of lower case alphanumeric characters or '-'"))
    elif cname in seen:
        causes.append((f"{path}.name", f'Duplicate value: "{cname}"'))
    seen.add(cname)
    if not c.get("image"):
        causes.append((f"{path}.image", "Required value"))
    res = c.get("resources") or {}
    for kind in ("requests", "limits"):
        for name, q in (res.get(kind) or {}).items():
            try:
                quota.parse_quantity(q)
            except ValueError as exc:
                causes.append((f"{path}.resources.{kind}[{name}]", f"Invalid value: {exc}"))
    req, lim = (res.get("requests") or {}).get(GPU), (res.get("limits") or {}).get(GPU)
    if req is not None and lim is not None and str(req) != str(lim):
        causes.append((f"{path}.resources.requests[{GPU}]",
                       f'Invalid value: "{req}": must be equal to {GPU} limit of {lim}'))
    return causes


def _pull_policy(image: str) -> str:
    tail = image.rsplit("/", 1)[-1]
    if "@" in tail:
        return "IfNotPresent"
    return "Always" if ":" not in tail or tail.endswith(":latest") else "IfNotPresent"


def qos_class(pod: dict) -> str:
    """Guaranteed / Burstable / BestEffort from cpu and memory requests and limits."""
    containers = (pod.get("spec") or {}).get("containers") or []
    any_set, guaranteed = False, True
    for c in containers:
        res = c.get("resources") or {}
        req = {k: v for k, v in (res.get("requests") or {}).items() if k in ("cpu", "memory")}
        lim = {k: v for k, v in (res.get("limits") or {}).items() if k in ("cpu", "memory")}
        if req or lim:
            any_set = True
        if set(lim) != {"cpu", "memory"} or any(str(req.get(k, lim[k])) != str(lim[k]) for k in lim):
            guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def default_pod(pod: dict, namespace: str) -> dict:
    """Fill the fields the API server defaults (name from generateName, spec defaults, status)."""
    meta = pod.setdefault("metadata", {})
    meta["namespace"] = namespace
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = generate_name(meta["generateName"])
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = clock.rfc3339()
    for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
        meta.pop(k, None)
    pod["apiVersion"], pod["kind"] = "v1", "Pod"
    spec = pod.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec["serviceAccount"] = spec["serviceAccountName"]
    spec.setdefault("enableServiceLinks", True)
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        c.setdefault("imagePullPolicy", _pull_policy(c.get("image", "")))
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        res = c.get("resources") or {}
        c["resources"] = res
        for kind in ("requests", "limits"):
            if res.get(kind):  # the API serializes quantities as strings (kubectl sends YAML numbers)
                res[kind] = {k: _quantity_text(v) for k, v in res[kind].items()}
        limits = res.get("limits") or {}
        if limits:
            requests = res.setdefault("requests", {})
            for k, v in limits.items():
                requests.setdefault(k, v)
    spec["tolerations"] = default_tolerations(spec.get("tolerations") or [])
    status = {"phase": "Pending", "qosClass": qos_class(pod)}
    if spec.get("schedulingGates"):
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                 "lastTransitionTime": clock.rfc3339(), "reason": "SchedulingGated",
                                 "message": GATED_MESSAGE}]
    pod["status"] = status
    return pod


def default_tolerations(tolerations: list[dict]) -> list[dict]:
    """The DefaultTolerationSeconds admission plug-in (kubernetes
    ``plugin/pkg/admission/defaulttolerationseconds/admission.go``): a pod without a toleration for the
    not-ready or unreachable NoExecute taint (same key or an empty key, effect NoExecute or empty) gets one
    with ``tolerationSeconds`` 300 (``--default-not-ready-toleration-seconds`` and
    ``--default-unreachable-toleration-seconds``)."""
    for key in DEFAULT_TOLERATIONS:
        if not any(t.get("key") in (key, None, "") and t.get("effect") in ("NoExecute", None, "")
                   for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    return tolerations


def resolve_priority(state: ClusterState, pod: dict) -> None:
    """Set spec.priority and spec.preemptionPolicy from the pod's PriorityClass or the global default."""
    spec, name = pod["spec"], pod["metadata"]["name"]
    class_name = spec.get("priorityClassName")
    value, policy = 0, "PreemptLowerPriority"
    if class_name:
        if class_name in BUILTIN_CLASSES:
            value = BUILTIN_CLASSES[class_name]
        else:
            pc = state.store.get("priorityclasses", None, class_name)
            if pc is None:
                raise forbidden("pods", name, f"no PriorityClass with name {class_name} was found")
            value, policy = int(pc.get("value", 0)), pc.get("preemptionPolicy") or policy
    else:
        default = next((pc for pc in state.store.list("priorityclasses") if pc.get("globalDefault")), None)
        if default is not None:
            spec["priorityClassName"] = default["metadata"]["name"]
            value, policy = int(default.get("value", 0)), default.get("preemptionPolicy") or policy
    given = spec.get("priority")
    if given is not None and int(given) != value:
        raise forbidden("pods", name, f"the integer value of priority ({given}) must not be provided in pod spec; "
                                      f"priority admission controller computed {value} from the given "
                                      "PriorityClass name")
    spec["priority"] = value
    spec.setdefault("preemptionPolicy", policy)


def check_quota(state: ClusterState, pod: dict) -> None:
    """ResourceQuota admission: refuse the pod with the API server's "exceeded quota" 403."""
    if "ResourceQuota" in state.reactors.disabled_admission:
        return
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    usage = quota.pod_requests(pod)
    for q in state.store.list("resourcequotas", ns):
        hard = (q.get("spec") or {}).get("hard") or {}
        keys = sorted(hard)
        missing = [k for k in keys if k.startswith(("requests.", "limits.")) and k.split(".", 1)[1] in quota.STANDARD
                   and k not in usage]
        if missing:
            raise forbidden("pods", name, f"failed quota: {q['metadata']['name']}: must specify {','.join(missing)}")
        used = quota.namespace_usage(state, ns, keys, exclude=name)
        exceeded = []
        for k in keys:
            req = quota.charge(pod, k)
            if req is None or req == 0:
                continue
            if used[k] + req > quota.parse_quantity(hard[k]):
                exceeded.append((k, req))
        if exceeded:
            fmt = lambda vals: ",".join(f"{k}={v}" for k, v in vals)  # noqa: E731
            raise forbidden("pods", name, (
                f"exceeded quota: {q['metadata']['name']}, "
                f"requested: {fmt((k, quota.format_quantity(r, hard[k])) for k, r in exceeded)}, "
                f"used: {fmt((k, quota.format_quantity(used[k], hard[k])) for k, _ in exceeded)}, "
                f"limited: {fmt((k, hard[k]) for k, _ in exceeded)}"))


def after_pod_created(state: ClusterState, pod: dict) -> None:
    """Tell every admission plug-in that the pod is stored (Kueue creates its Workload)."""
    for plugin in state.hooks.admission:
        plugin.created(pod)


def admit_pod(state: ClusterState, pod: dict, namespace: str, dry_run: bool = False) -> dict:
    """Run the whole admission chain on a posted pod; returns it ready to store, or raises StatusError.

    ``dry_run`` skips the plug-ins (Kueue's would queue a Workload for a pod that is never stored).
    """
    shapes.check("Pod", pod)
    meta = pod.setdefault("metadata", {})
    body_ns = meta.get("namespace")
    if body_ns and body_ns != namespace:
        raise StatusError(400, "the namespace of the provided object does not match the namespace sent on the "
                               "request", "BadRequest")
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = generate_name(meta["generateName"])
    validate_pod(pod)
    if state.store.get("namespaces", None, namespace) is None:
        raise StatusError(404, f'namespaces "{namespace}" not found', "NotFound",
                          {"name": namespace, "kind": "namespaces"})
    default_pod(pod, namespace)
    resolve_priority(state, pod)
    check_quota(state, pod)
    if not dry_run:
        for plugin in state.hooks.admission:
            plugin.mutate(pod)
        for validator in state.hooks.validating:
            validator.validate(pod)
    if pod["spec"].get("schedulingGates") and not any(
            c.get("type") == "PodScheduled" for c in pod["status"].get("conditions") or []):
        pod["status"].setdefault("conditions", []).append({
            "type": "PodScheduled", "status": "False", "lastProbeTime": None,
            "lastTransitionTime": clock.rfc3339(), "reason": "SchedulingGated", "message": GATED_MESSAGE})
    return pod


def quota_headroom(state: ClusterState, namespace: str, resource: str = f"requests.{GPU}") -> Decimal | None:
    """How much of ``resource`` the namespace may still request (None without a quota on it)."""
    best = None
    for q in state.store.list("resourcequotas", namespace):
        hard = (q.get("spec") or {}).get("hard") or {}
        if resource in hard:
            used = quota.namespace_usage(state, namespace, [resource])[resource]
            left = quota.parse_quantity(hard[resource]) - used
            best = left if best is None else min(best, left)
    return best
