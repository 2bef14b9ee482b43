"""ResourceQuota accounting: what a pod charges, current usage per namespace, and ``status.used`` upkeep."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from gpupoc.sim.cluster import ClusterState

_SUFFIX = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}
TERMINAL = ("Succeeded", "Failed")
STANDARD = ("cpu", "memory", "ephemeral-storage")


def parse_quantity(value: object) -> Decimal:
    """``"2"``, ``"500m"``, ``"16Gi"``, ``1.5`` -> Decimal; raise ValueError naming the value otherwise."""
    text = str(value).strip()
    for suffix in sorted(_SUFFIX, key=len, reverse=True):
        if suffix and text.endswith(suffix):
            number, mult = text[: -len(suffix)], _SUFFIX[suffix]
            break
    else:
        number, mult = text, 1
    try:
        return Decimal(number) * Decimal(mult)
    except InvalidOperation:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {value!r}") from None


def format_quantity(value: Decimal, like: str = "") -> str:
    """Render usage in the unit of the hard limit when it has a binary suffix, else plainly."""
    for suffix in ("Ki", "Mi", "Gi", "Ti"):
        if like.endswith(suffix):
            return f"{_trim(value / _SUFFIX[suffix])}{suffix}"
    if value != value.to_integral_value():
        return f"{_trim(value * 1000)}m"
    return _trim(value)


def _trim(d: Decimal) -> str:
    if d == d.to_integral_value():
        return str(int(d))
    return format(d.normalize(), "f")


def pod_requests(pod: dict) -> dict[str, Decimal]:
    """Effective requests and limits of a pod: max(sum of containers, largest init container)."""
    spec = pod.get("spec") or {}

    def sums(containers: list[dict], kind: str) -> dict[str, Decimal]:
        out: dict[str, Decimal] = {}
        for c in containers:
            for res, q in ((c.get("resources") or {}).get(kind) or {}).items():
                out[res] = out.get(res, Decimal(0)) + parse_quantity(q)
        return out

    usage: dict[str, Decimal] = {}
    for kind in ("requests", "limits"):
        total = sums(spec.get("containers") or [], kind)
        for init in spec.get("initContainers") or []:
            for res, q in sums([init], kind).items():
                total[res] = max(total.get(res, Decimal(0)), q)
        for res, q in total.items():
            usage[f"{kind}.{res}"] = q
    usage["pods"] = Decimal(1)
    usage["count/pods"] = Decimal(1)
    return usage


def charge(pod: dict, resource_name: str) -> Decimal | None:
    """What the pod charges against one quota key (``requests.nvidia.com/gpu``, ``cpu``, ``pods``)."""
    usage = pod_requests(pod)
    if resource_name in STANDARD:
        resource_name = f"requests.{resource_name}"
    return usage.get(resource_name)


def is_counted(pod: dict) -> bool:
    """Quota counts pods until they are terminal (Succeeded/Failed)."""
    return (pod.get("status") or {}).get("phase") not in TERMINAL


class UsageTracker:
    """Per-namespace usage of non-terminal pods, kept current by a store listener (O(1) per change)."""

    def __init__(self, state: ClusterState):
        self._by_pod: dict[tuple[str, str], dict[str, Decimal]] = {}
        self._requests: dict[str, dict[str, Decimal]] = {}  # pod uid -> requests (pod specs are immutable)
        self.by_ns: dict[str, dict[str, Decimal]] = {}
        for pod in state.store.list("pods"):
            self._apply("ADDED", pod)
        state.store.add_listener(self._on_change)

    def _on_change(self, change) -> None:
        if change.resource == "pods":
            self._apply(change.type, change.obj)

    def _apply(self, type_: str, pod: dict) -> None:
        meta = pod.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        old = self._by_pod.pop(key, None)
        totals = self.by_ns.setdefault(key[0], {})
        if old:
            for k, v in old.items():
                totals[k] = totals.get(k, Decimal(0)) - v
        if type_ == "DELETED" or not is_counted(pod):
            if type_ == "DELETED":
                self._requests.pop(meta.get("uid", ""), None)
            return
        uid = meta.get("uid", "")
        usage = self._requests.get(uid)
        if usage is None:
            try:
                usage = pod_requests(pod)
            except ValueError:
                usage = {"pods": Decimal(1), "count/pods": Decimal(1)}
            self._requests[uid] = usage
        self._by_pod[key] = usage
        for k, v in usage.items():
            totals[k] = totals.get(k, Decimal(0)) + v

    def used(self, namespace: str, resource_name: str) -> Decimal:
        if resource_name in STANDARD:
            resource_name = f"requests.{resource_name}"
        return self.by_ns.get(namespace, {}).get(resource_name, Decimal(0))


def tracker(state: ClusterState) -> UsageTracker:
    """The state's usage tracker, created (with a full scan) on first use."""
    if state.quota_usage is None:
        state.quota_usage = UsageTracker(state)
    return state.quota_usage


def namespace_usage(state: ClusterState, namespace: str, keys: list[str],
                    exclude: str | None = None) -> dict[str, Decimal]:
    """Current usage of ``keys`` from the namespace's non-terminal pods (``exclude``: a stored pod name)."""
    t = tracker(state)
    used = {k: t.used(namespace, k) for k in keys}
    if exclude:
        mine = t._by_pod.get((namespace, exclude))
        if mine:
            for k in keys:
                used[k] -= mine.get(f"requests.{k}" if k in STANDARD else k, Decimal(0))
    return used


def refresh(state: ClusterState) -> int:
    """Recompute ``status.hard``/``status.used`` of every ResourceQuota; returns how many changed.

    Cheap: usage is tracked incrementally, and nothing is done when the store has not moved.
    """
    store = state.store
    t = tracker(state)
    if state.quota_rv == store.rv:
        return 0
    changed = 0
    for q in store.list("resourcequotas"):
        ns = q["metadata"]["namespace"]
        hard = dict((q.get("spec") or {}).get("hard") or {})
        used = {res: format_quantity(t.used(ns, res), str(limit)) for res, limit in hard.items()}
        status = q.setdefault("status", {})
        if status.get("hard") != hard or status.get("used") != used:
            status["hard"], status["used"] = hard, used
            store.update("resourcequotas", q)
            changed += 1
    state.quota_rv = store.rv
    return changed
