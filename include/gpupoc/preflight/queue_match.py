"""How a queue the cluster holds differs from the one ``cluster.queues`` declares: one phrase per difference.

The expected objects are the ones ``gpupoc cluster manifests`` renders (``gpupoc.kube.queue_objects``), so
"matches" means "is what the manifests would have created", field by field where the scheduler decides
with it (quotas, limits, cohort, preemption, weights); an undeclared queue only has to exist.
"""

from __future__ import annotations

from gpupoc.kube.resources import GPU
from gpupoc.kube.queue_objects import cluster_queue, kai_queue, volcano_queue


def _differ(what: str, got: object, want: object) -> list[str]:
    return [] if str(got) == str(want) else [f"{what} is {got if got is not None else 'unset'}, the plan says {want}"]


def _gpu_resources(spec: dict) -> dict[str, dict]:
    """flavor -> the nvidia.com/gpu resource entry of a ClusterQueue spec."""
    out = {}
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                if res.get("name") == GPU:
                    out[flavor.get("name")] = res
    return out


def kueue_differences(cq, actual: dict | None, flavor: dict | None, pool) -> list[str]:
    """A declared ClusterQueue against the cluster's (and its ResourceFlavor against the pool's labels)."""
    if actual is None:
        return ["it does not exist"]
    want, got = cluster_queue(cq)["spec"], actual.get("spec") or {}
    diffs = _differ("cohort", got.get("cohort"), want.get("cohort")) if want.get("cohort") or got.get("cohort") else []
    w, g = _gpu_resources(want).get(cq.flavor, {}), _gpu_resources(got).get(cq.flavor)
    if g is None:
        diffs.append(f"it has no {GPU} quota in flavor {cq.flavor}")
    else:
        for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
            if key in w or key in g:
                diffs += _differ(f"{key} of {cq.flavor}", g.get(key), w.get(key))
    for key in ("withinClusterQueue", "reclaimWithinCohort"):
        diffs += _differ(f"preemption.{key}", (got.get("preemption") or {}).get(key, "Never"), want["preemption"][key])
    if flavor is None:
        diffs.append(f"its ResourceFlavor {cq.flavor!r} does not exist")
    elif pool is not None:
        labels = (flavor.get("spec") or {}).get("nodeLabels") or {}
        missing = {k: v for k, v in pool.node_selector.items() if labels.get(k) != v}
        if missing:
            diffs.append(f"ResourceFlavor {cq.flavor} does not select the pool's nodes ({missing})")
    return diffs


def volcano_differences(q, actual: dict) -> list[str]:
    state = (actual.get("status") or {}).get("state", "Open")
    diffs = [] if state == "Open" else [f"its state is {state} (a closed queue takes no jobs)"]
    if q is None:
        return diffs
    want, got = volcano_queue(q)["spec"], actual.get("spec") or {}
    for key in ("weight", "reclaimable"):
        diffs += _differ(key, got.get(key), want.get(key))
    for key in ("capability", "deserved"):
        if key in want or key in got:
            diffs += _differ(f"{key} {GPU}", (got.get(key) or {}).get(GPU), (want.get(key) or {}).get(GPU))
    if "guarantee" in want or "guarantee" in got:
        diffs += _differ(f"guarantee {GPU}", ((got.get("guarantee") or {}).get("resource") or {}).get(GPU),
                         ((want.get("guarantee") or {}).get("resource") or {}).get(GPU))
    return diffs


def kai_differences(q, actual: dict) -> list[str]:
    got = actual.get("spec") or {}
    if q is None:
        return [] if got.get("parentQueue") else ["it has no parentQueue (KAI schedules pods of leaf queues only)"]
    want = kai_queue(q, [])["spec"]
    diffs = _differ("parentQueue", got.get("parentQueue"), want.get("parentQueue"))
    for key in ("quota", "overQuotaWeight", "limit"):
        diffs += _differ(f"resources.gpu.{key}", ((got.get("resources") or {}).get("gpu") or {}).get(key),
                         want["resources"]["gpu"][key])
    return diffs
