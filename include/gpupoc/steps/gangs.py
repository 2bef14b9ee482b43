"""The gangs of a run: the PodGroups Volcano and KAI need before a gang's pods arrive, and their removal.

Kueue groups pods by label and kube-scheduler has no groups, so under those adapters there is nothing to
create. A PodGroup is created as the administrator (a tenant's job controller does it on a real cluster;
tenants may not create PodGroups here), once per run: a 409 means an earlier try made it already.
"""

from __future__ import annotations

from gpupoc.exceptions import GpupocError
from gpupoc.plan.overrides import item_workload
from gpupoc.podspec.gangs import Gang, gang_name, pod_group, pod_groups_path


def run_gangs(ctx) -> list[tuple[Gang, object]]:
    """(gang, its first wave item) of every gang the run's operator submits."""
    seen: dict[str, tuple[Gang, object]] = {}
    for item in ctx.wave_items():
        if item.gang and item.gang not in seen:
            seen[item.gang] = (Gang(item.gang, gang_name(item.gang, ctx.run_id), item.replicas, item.min_available),
                               item)
    return list(seen.values())


def create_pod_groups(ctx) -> dict:
    """Create the PodGroup of every gang of the run (Volcano, KAI); returns what was created."""
    adapter = ctx.plan.platform.adapter
    gangs = run_gangs(ctx)
    created, errors = [], []
    admin = None
    for gang, item in gangs:
        tenant = ctx.plan.tenant(item.tenant)
        body = pod_group(adapter, gang, item_workload(ctx.plan, item), tenant, priority_class=item.priority_class,
                         run_id=ctx.run_id, test_class=ctx.test_class)
        if body is None:
            continue
        admin = admin or ctx.admin("create the PodGroup of a gang")
        r = admin.call("POST", pod_groups_path(adapter, tenant.namespace), body=body)
        if r.ok or r.status == 409:
            created.append(f"{tenant.namespace}/{gang.name}")
        else:
            errors.append(f"{tenant.namespace}/{gang.name}: HTTP {r.status}: {r.message}")
    if errors:
        raise GpupocError(f"{len(errors)} PodGroup(s) could not be created: {errors[:3]}; without them the gangs' "
                          f"pods would never be scheduled. Check that the platform serves the {adapter.value} API "
                          "(platform.adapter) and that the admin context may create podgroups")
    return {"gangs": len(gangs), "pod_groups": created}


def delete_pod_groups(ctx) -> list[str]:
    """Delete the run's PodGroups (404 counts as gone); returns the errors."""
    adapter = ctx.plan.platform.adapter
    errors = []
    admin = None
    for gang, item in run_gangs(ctx):
        path = pod_groups_path(adapter, ctx.plan.tenant(item.tenant).namespace)
        if path is None:
            continue
        admin = admin or ctx.admin("delete the PodGroups of the run's gangs")
        r = admin.call("DELETE", f"{path}/{gang.name}", body={})
        if not r.ok and r.status != 404:
            errors.append(f"{gang.name}: HTTP {r.status}: {r.message}")
    return errors
