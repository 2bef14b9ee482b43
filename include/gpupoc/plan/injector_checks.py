"""Cross-field checks of the node-failure injections: the injector fits the platform, and the victim is evicted
within the injection's ``fail_timeout_seconds`` given its pool's tolerations.

A failed node's pods go when the taint-eviction controller's clock runs out: the smallest ``tolerationSeconds``
of the tolerations matching the node's NoExecute taints (``node.kubernetes.io/unreachable`` for a lost node,
300 s from DefaultTolerationSeconds unless the pool tolerates it otherwise; the ``taint`` injector's own key,
not tolerated unless the pool says so).
"""

from __future__ import annotations

from gpupoc.plan.classes import NodeFailure
from gpupoc.plan.document import Plan
from gpupoc.plan.model import Pool, Toleration
from gpupoc.plan.platform_kind import is_simulated

UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300  # DefaultTolerationSeconds admission (--default-unreachable-toleration-seconds)
_NEVER = -1.0


def check_injectors(plan: Plan) -> list[str]:
    """One ``path: message`` line per problem of the node-failure injections."""
    errors: list[str] = []
    pools = {p.name: p for p in plan.pools}
    workloads = {w.name: w for w in plan.workloads}
    for k, inj in enumerate(plan.test_classes.fault_recovery.injections):
        if not isinstance(inj, NodeFailure):
            continue
        path = f"test_classes.fault_recovery.injections[{k}]"
        check_injector_platform(plan, inj, path, errors)
        workload = workloads.get(inj.workload)
        pool = pools.get(inj.pool or (workload.pool if workload else ""))
        if pool is not None:
            _check_timeout(inj, pool, path, errors)
    return errors


def check_injector_platform(plan: Plan, inj, path: str, errors: list[str]) -> None:
    """The injector of ``inj`` (a node failure or a service failure) fits the platform."""
    method = inj.injector.method
    if method == "sim" and not is_simulated(plan):
        where = (f"kubeconfig {plan.platform.kubeconfig!r} is not in a simulated cluster's data directory"
                 if plan.platform.kubeconfig else "it is not reached through a kubeconfig")
        errors.append(f"{path}.injector.method: 'sim' fails nodes through the simulated cluster's own endpoint, and "
                      f"platform {plan.platform.name!r} is not the simulated cluster ({where}); choose command "
                      "(your own fail and recover commands; on gpupoc's real control plane `gpupoc controlplane "
                      "node-stop {node}` and `node-start {node}`), taint or drain, or set platform.simulated: "
                      "true")
    if method == "drain" and plan.platform.kubernetes_conn_id:
        errors.append(f"{path}.injector.method: 'drain' runs kubectl, which needs platform.kubeconfig or "
                      "platform.in_cluster, not an Airflow connection; set one of those or choose another injector")


def _check_timeout(inj: NodeFailure, pool: Pool, path: str, errors: list[str]) -> None:
    method = inj.injector.method
    if method == "drain":
        return
    key = getattr(inj.injector, "key", UNREACHABLE)
    seconds = _toleration_seconds(pool.tolerations, key, UNREACHABLE if key == UNREACHABLE else None)
    if seconds == _NEVER:
        errors.append(f"{path}.injector: pool {pool.name!r} tolerates the {key} NoExecute taint forever (a "
                      "toleration without toleration_seconds), so its pods are never evicted and the failure "
                      "never shows; give that toleration toleration_seconds or choose another pool")
    elif seconds >= inj.fail_timeout_seconds:
        origin = (f"DefaultTolerationSeconds gives every pod {DEFAULT_TOLERATION_SECONDS} s"
                  if seconds == DEFAULT_TOLERATION_SECONDS and not _matching(pool.tolerations, key)
                  else f"pool {pool.name!r} tolerates it {seconds:g} s")
        errors.append(f"{path}.fail_timeout_seconds: {inj.fail_timeout_seconds} s is not enough: the victim is "
                      f"evicted only once its {key} toleration runs out ({origin}); raise fail_timeout_seconds "
                      f"above {seconds:g} (plus the node monitor grace period when a command stops the kubelet) "
                      f"or add to pool {pool.name!r} a toleration {{key: {key}, operator: Exists, effect: "
                      "NoExecute, toleration_seconds: N} with a smaller N")


def _matching(tolerations: list[Toleration], key: str) -> list[Toleration]:
    """The tolerations of a valueless ``key:NoExecute`` taint, in order (``Toleration.ToleratesTaint``)."""
    return [t for t in tolerations if t.effect in ("NoExecute", None) and (
        (not t.key and t.operator == "Exists") or (t.key == key and (t.operator == "Exists" or not t.value)))]


def _toleration_seconds(tolerations: list[Toleration], key: str, default_key: str | None) -> float:
    """Seconds the pool's pods tolerate ``key``'s NoExecute taint (the first matching toleration counts, as in
    ``GetMatchingTolerations``): 0 when none tolerates it (the admission's 300 s when ``default_key`` is that
    key), ``_NEVER`` when it tolerates forever."""
    matching = _matching(tolerations, key)
    if not matching:
        return float(DEFAULT_TOLERATION_SECONDS) if default_key == key else 0.0
    first = matching[0].toleration_seconds
    return _NEVER if first is None else float(max(first, 0))
