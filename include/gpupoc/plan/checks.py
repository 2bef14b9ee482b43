"""Cross-field checks of a structurally valid plan: references resolve, GPUs fit, adapters are complete.

Each problem is one ``path: message`` line, in the same style as the structural errors.
"""

from __future__ import annotations

from gpupoc.common.fair_share import Owed, fair_allocation
from gpupoc.plan.classes import NodeFailure, TestClass, WaveEntry
from gpupoc.plan.cluster_setup import check_cluster_setup
from gpupoc.plan.document import Plan
from gpupoc.plan.injector_checks import check_injectors
from gpupoc.plan.model import DRA_ADAPTERS, QUEUELESS, Adapter, WorkloadKind
from gpupoc.plan.replay import check_replays
from gpupoc.plan.service_checks import check_services, service_gpus
from gpupoc.plan.settings import reviewer_problems
from gpupoc.plan.waves import MAX_ITEM_NAME, class_items

MAX_WORKLOAD_NAME = MAX_ITEM_NAME - len("qc--000")


def check_plan(plan: Plan) -> list[str]:
    """Every cross-field problem of ``plan`` (empty when it is consistent)."""
    errors: list[str] = []
    _check_names(plan, errors)
    _check_platform(plan, errors)
    _check_tenants(plan, errors)
    _check_workloads(plan, errors)
    _check_classes(plan, errors)
    errors += check_injectors(plan)
    errors += check_services(plan)
    errors += check_cluster_setup(plan)
    if not errors:  # needs every reference resolved
        _check_quota_fit(plan, errors)
        errors += check_replays(plan)
    return list(dict.fromkeys(errors))  # each problem once, in the order found


def _unique(errors: list[str], path: str, values: list[str], field: str = "name", note: str = "") -> None:
    """One error per repeated value, at ``path[i].field`` of the repeat."""
    seen: set[str] = set()
    for i, v in enumerate(values):
        if v in seen:
            errors.append(f"{path}[{i}].{field}: duplicate {field} {v!r}; {field}s must be unique{note}")
        seen.add(v)


def _check_names(plan: Plan, errors: list[str]) -> None:
    _unique(errors, "tenants", [t.name for t in plan.tenants])
    _unique(errors, "tenants", [t.namespace for t in plan.tenants], "namespace")
    _unique(errors, "pools", [p.name for p in plan.pools])
    _unique(errors, "workloads", [w.name for w in plan.workloads])
    _unique(errors, "priority_classes", [p.name for p in plan.priority_classes])
    errors += reviewer_problems(plan.report.reviewers)


def _check_platform(plan: Plan, errors: list[str]) -> None:
    p = plan.platform
    if p.options.kueue_priority_label and p.adapter is not Adapter.KUEUE:
        errors.append(f"platform.options.kueue_priority_label: only applies to the kueue adapter, "
                      f"got adapter {p.adapter.value!r}; remove it or set platform.adapter: kueue")
    if p.options.dra and p.adapter not in DRA_ADAPTERS:
        errors.append(f"platform.options.gpus: dra needs kube-scheduler's DRA allocator (adapter kube-scheduler or "
                      f"kueue), got adapter {p.adapter.value!r}; set gpus: device-plugin or change the adapter")
    if not p.in_cluster and not p.admin_context:
        errors.append("platform.admin_context: required unless in_cluster (quota changes, injections and "
                      "evidence reads run as the administrator); set the admin kubeconfig context")


def _check_tenants(plan: Plan, errors: list[str]) -> None:
    pcs = {pc.name for pc in plan.priority_classes}
    adapter = plan.platform.adapter
    for i, t in enumerate(plan.tenants):
        for j, pc in enumerate(t.priority_classes):
            if pc not in pcs:
                errors.append(f"tenants[{i}].priority_classes[{j}]: unknown priority class {pc!r}; "
                              f"one of {sorted(pcs)}")
        if adapter not in QUEUELESS and not t.queues.get(adapter.value):
            what = {"kueue": "LocalQueue", "volcano": "Queue", "kai": "queue"}[adapter.value]
            errors.append(f"tenants[{i}].queues.{adapter.value}: the {adapter.value} adapter needs a {what} for "
                          f"tenant {t.name!r}; add tenants[{i}].queues.{adapter.value}: <queue name>")


def _check_workloads(plan: Plan, errors: list[str]) -> None:
    pcs = {pc.name for pc in plan.priority_classes}
    pools = {p.name: p for p in plan.pools}
    for i, p in enumerate(plan.pools):
        if len(p.node_names) > p.nodes:
            errors.append(f"pools[{i}].node_names: {len(p.node_names)} names for {p.nodes} nodes; "
                          "list at most `nodes` names")
    for i, w in enumerate(plan.workloads):
        if len(w.name) > MAX_WORKLOAD_NAME:
            errors.append(f"workloads[{i}].name: {w.name!r} is {len(w.name)} characters; at most "
                          f"{MAX_WORKLOAD_NAME} so pod names stay within 63")
        if w.priority_class not in pcs:
            errors.append(f"workloads[{i}].priority_class: unknown priority class {w.priority_class!r}; "
                          f"one of {sorted(pcs)}")
        pool = pools.get(w.pool)
        if pool is None:
            errors.append(f"workloads[{i}].pool: unknown pool {w.pool!r}; one of {sorted(pools)}")
        elif w.gpus > pool.gpus_per_node:
            errors.append(f"workloads[{i}].gpus: {w.gpus} GPUs do not fit a node of pool {pool.name!r} "
                          f"({pool.gpus_per_node} GPUs per node); lower gpus or choose another pool")
        elif w.gang_size * w.gpus > pool.capacity_gpus:
            errors.append(f"workloads[{i}].replicas: a gang of {w.gang_size} pods of {w.gpus} GPUs needs "
                          f"{w.gang_size * w.gpus} GPUs at once, above pool {pool.name!r}'s {pool.capacity_gpus}; "
                          "it could never be placed: lower replicas, min_available or gpus")
        if w.vgpu is not None and plan.platform.options.dra:
            errors += dra_share_problems(i, w)
        elif w.vgpu is not None and (plan.platform.adapter is not Adapter.HAMI or not w.gpus):
            errors.append(f"workloads[{i}].vgpu: a slice of each GPU is HAMi's (platform.adapter: hami) or a DRA "
                          f"shared card's (platform.options.gpus: dra) and needs gpus of at least 1, got adapter "
                          f"{plan.platform.adapter.value!r} and gpus {w.gpus}; remove vgpu, or set the adapter to "
                          "hami (or gpus: dra) and gpus")
        if w.is_gang and w.min_available not in (None, w.replicas) and plan.platform.adapter is Adapter.KUEUE:
            errors.append(f"workloads[{i}].min_available: Kueue admits a pod group only with all its pods "
                          f"(pod-group-total-count), got {w.min_available} of {w.replicas}; remove min_available "
                          "or use another adapter")


def dra_share_problems(i: int, w) -> list[str]:
    """A vGPU share under DRA GPUs is a shared card's memory (``gpupoc.podspec.dra_share``): memory in MiB only."""
    out = []
    if not w.gpus:
        out.append(f"workloads[{i}].vgpu: a share of each GPU needs gpus of at least 1, got 0; set gpus or remove vgpu")
    if w.vgpu.memory_mib is None:
        out.append(f"workloads[{i}].vgpu.memory_mib: under platform.options.gpus: dra a share is a shared card's "
                   "memory in MiB; set memory_mib (memory_percentage is HAMi's)")
    if w.vgpu.memory_percentage is not None or w.vgpu.cores is not None:
        field = "memory_percentage" if w.vgpu.memory_percentage is not None else "cores"
        out.append(f"workloads[{i}].vgpu.{field}: a DRA shared card is shared by memory only; remove {field} "
                   "(or use the hami adapter)")
    return out


def _check_entry(plan: Plan, errors: list[str], path: str, e: WaveEntry, over_quota_ok: bool = False) -> None:
    tenants = {t.name: t for t in plan.tenants}
    workloads = {w.name: w for w in plan.workloads}
    tenant, workload = tenants.get(e.tenant), workloads.get(e.workload)
    if workload is None:
        errors.append(f"{path}.workload: unknown workload {e.workload!r}; one of {sorted(workloads)}")
    if tenant is None:
        errors.append(f"{path}.tenant: unknown tenant {e.tenant!r}; one of {sorted(tenants)}")
    if tenant is None or workload is None:
        return
    if workload.kind == WorkloadKind.SERVICE:
        errors.append(f"{path}.workload: {workload.name!r} is kind service: it runs as a Deployment behind a "
                      "Service (docs/services.md), not as a wave pod; list it under the class's services, and "
                      "choose a workload of another kind here")
        return
    pc = e.priority_class or workload.priority_class
    if pc not in tenant.priority_classes:
        field = "priority_class" if e.priority_class else "workload"
        errors.append(f"{path}.{field}: priority class {pc!r} is not allowed for tenant {tenant.name!r} "
                      f"(allowed: {tenant.priority_classes}); choose an allowed class")
    if not over_quota_ok and workload.gpus > tenant.quota.gpus:
        errors.append(f"{path}.workload: {workload.name!r} needs {workload.gpus} GPUs, above tenant "
                      f"{tenant.name!r}'s quota of {tenant.quota.gpus}; it could never run")


def _check_classes(plan: Plan, errors: list[str]) -> None:
    tc = plan.test_classes
    for cls, spec in tc.items():
        base = f"test_classes.{cls.value}"
        for k, entry in enumerate(spec.wave):
            _check_entry(plan, errors, f"{base}.wave[{k}]", entry)
        needs_wave = cls in (TestClass.QUEUE_CONGESTION, TestClass.UTILIZATION, TestClass.TENANT_ISOLATION)
        if spec.enabled and needs_wave and not spec.wave and getattr(spec, "replay", None) is None:
            errors.append(f"{base}.wave: empty; list at least one {{workload, tenant, count}}")
    names = {t.name for t in plan.tenants}
    iso = tc.tenant_isolation
    if iso.enabled and len(plan.tenants) < 2:
        errors.append("tenants: tenant isolation needs at least two tenants; add one or disable the class")
    if iso.probes.pairs != "all":
        for k, pair in enumerate(iso.probes.pairs):
            for side in ("actor", "target"):
                if getattr(pair, side) not in names:
                    errors.append(f"test_classes.tenant_isolation.probes.pairs[{k}].{side}: unknown tenant "
                                  f"{getattr(pair, side)!r}; one of {sorted(names)}")
            if pair.actor == pair.target:
                errors.append(f"test_classes.tenant_isolation.probes.pairs[{k}]: actor and target are both "
                              f"{pair.actor!r}; a probe crosses tenants")
    for k, oq in enumerate(iso.over_quota):
        _check_entry(plan, errors, f"test_classes.tenant_isolation.over_quota[{k}]",
                     WaveEntry(workload=oq.workload, tenant=oq.tenant), over_quota_ok=True)
    pools = {p.name: p for p in plan.pools}
    known_nodes = {n for p in plan.pools for n in p.node_names}
    for k, inj in enumerate(tc.fault_recovery.injections):
        path = f"test_classes.fault_recovery.injections[{k}]"
        _check_entry(plan, errors, path, WaveEntry(workload=inj.workload, tenant=inj.tenant))
        if isinstance(inj, NodeFailure):
            if inj.pool is not None and inj.pool not in pools:
                errors.append(f"{path}.pool: unknown pool {inj.pool!r}; one of {sorted(pools)}")
            if inj.node is not None and known_nodes and inj.node not in known_nodes:
                errors.append(f"{path}.node: unknown node {inj.node!r}; one of {sorted(known_nodes)}")
    scen = [inj.scenario for inj in tc.fault_recovery.injections]
    _unique(errors, "test_classes.fault_recovery.injections", scen,
            note=" (an injection without a name is named after its kind)")
    _check_fair_share(plan, errors)
    at = tc.audit_trail
    if at.quota_change is not None and at.quota_change.tenant not in names:
        errors.append(f"test_classes.audit_trail.quota_change.tenant: unknown tenant "
                      f"{at.quota_change.tenant!r}; one of {sorted(names)}")
    if at.artifact is not None:
        _check_entry(plan, errors, "test_classes.audit_trail.artifact.producer", at.artifact.producer)
        _check_entry(plan, errors, "test_classes.audit_trail.artifact.consumer", at.artifact.consumer)


def _check_fair_share(plan: Plan, errors: list[str]) -> None:
    """The isolation class's fair share names a pool and distinct tenants; its reclaim probe needs it."""
    iso = plan.test_classes.tenant_isolation
    base = "test_classes.tenant_isolation"
    pools = {p.name: p for p in plan.pools}
    fs = iso.fair_share
    if fs is not None:
        if fs.pool not in pools:
            errors.append(f"{base}.fair_share.pool: unknown pool {fs.pool!r}; one of {sorted(pools)}")
        names = {t.name for t in plan.tenants}
        for k, t in enumerate(fs.tenants):
            if t.tenant not in names:
                errors.append(f"{base}.fair_share.tenants[{k}].tenant: unknown tenant {t.tenant!r}; one of "
                              f"{sorted(names)}")
        _unique(errors, f"{base}.fair_share.tenants", [t.tenant for t in fs.tenants], "tenant")
        pool = pools.get(fs.pool)
        guaranteed = sum(t.guaranteed_gpus for t in fs.tenants)
        if pool is not None and guaranteed > pool.capacity_gpus:
            errors.append(f"{base}.fair_share.tenants: {guaranteed} GPUs guaranteed, above pool {pool.name!r}'s "
                          f"{pool.capacity_gpus}; lower the guarantees")
    rc = iso.reclaim
    if rc is None:
        return
    if fs is None:
        errors.append(f"{base}.reclaim: needs {base}.fair_share (the pool and each tenant's guaranteed GPUs); "
                      "add fair_share or remove reclaim")
        return
    shares = {t.tenant: t for t in fs.tenants}
    for side in ("borrower", "lender"):
        sub = getattr(rc, side)
        path = f"{base}.reclaim.{side}"
        _check_entry(plan, errors, path, WaveEntry(workload=sub.workload, tenant=sub.tenant), over_quota_ok=True)
        if sub.tenant not in shares:
            errors.append(f"{path}.tenant: {sub.tenant!r} is not in {base}.fair_share.tenants; list it there with "
                          "its guaranteed GPUs")
        elif sub.workload in {w.name for w in plan.workloads} and plan.workload(sub.workload).pool != fs.pool:
            errors.append(f"{path}.workload: {sub.workload!r} runs in pool {plan.workload(sub.workload).pool!r}, "
                          f"not the fair-share pool {fs.pool!r}; choose a workload of that pool")
    if rc.borrower.tenant == rc.lender.tenant:
        errors.append(f"{base}.reclaim: borrower and lender are both {rc.lender.tenant!r}; the lender is another "
                      "tenant")
    lender, borrower = shares.get(rc.lender.tenant), shares.get(rc.borrower.tenant)
    known = {w.name for w in plan.workloads}
    if lender is None or borrower is None or fs.pool not in pools or not {rc.lender.workload,
                                                                           rc.borrower.workload} <= known:
        return

    asked = rc.lender.count * plan.workload(rc.lender.workload).gpus
    wanted = rc.borrower.count * plan.workload(rc.borrower.workload).gpus
    owed = fair_allocation(pools[fs.pool].capacity_gpus, {lender.tenant: asked, borrower.tenant: wanted},
                           [Owed(t.tenant, t.weight, t.guaranteed_gpus) for t in (lender, borrower)])
    if asked > owed[lender.tenant] + 1e-6:
        errors.append(f"{base}.reclaim.lender.count: the lender asks {asked} GPUs, above the {owed[lender.tenant]:g} "
                      f"it is owed against the borrower's {wanted} (its guarantee, then its weighted part); a "
                      "reclaim is owed only within its fair share: lower the count")
    if wanted > plan.tenant(borrower.tenant).quota.gpus:
        errors.append(f"{base}.reclaim.borrower.count: the borrower asks {wanted} GPUs, above tenant "
                      f"{borrower.tenant!r}'s quota of {plan.tenant(borrower.tenant).quota.gpus} (the platform would "
                      "refuse the excess at creation); lower the count")


def _check_quota_fit(plan: Plan, errors: list[str]) -> None:
    """A class's pods all exist at once (held by the gate), and quota counts pending pods: they must fit."""
    for cls, spec in plan.test_classes.items():
        if not spec.enabled or getattr(spec, "replay", None) is not None:  # a replay: check_replays
            continue
        serving = service_gpus(plan, cls)  # serving replicas count against quota too
        gpus: dict[str, int] = dict(serving)
        pods: dict[str, int] = {}
        for item in class_items(plan, cls):
            if item.role == "over_quota":
                continue
            gpus[item.tenant] = gpus.get(item.tenant, 0) + plan.workload(item.workload).gpus
            pods[item.tenant] = pods.get(item.tenant, 0) + 1
        for name in sorted(gpus):
            pods.setdefault(name, 0)
            quota = plan.tenant(name).quota
            if gpus[name] > quota.gpus:
                with_services = " (its services' replicas included)" if serving.get(name) else ""
                errors.append(f"test_classes.{cls.value}.wave: tenant {name!r} would hold {gpus[name]} GPUs of "
                              f"pods{with_services} at once, above its quota of {quota.gpus} (quota counts pending pods, so the "
                              "platform refuses the excess at creation); lower the counts or raise the quota")
            if pods[name] > quota.pods:
                errors.append(f"test_classes.{cls.value}.wave: tenant {name!r} would hold {pods[name]} pods at "
                              f"once, above its quota of {quota.pods} pods; lower the counts or raise the quota")
