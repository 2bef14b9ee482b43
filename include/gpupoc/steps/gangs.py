"""The gangs of a run: the PodGroups Volcano and KAI need before a gang's pods arrive (or the Workload API's
Workload and PodGroup under ``platform.options.gangs: workload-api``), and their removal.

Kueue groups pods by label and kube-scheduler has no groups of its own, so under those adapters there is
otherwise nothing to create. A PodGroup is created as the administrator (a tenant's job controller does it on a real cluster;
tenants may not create PodGroups here), once per run: a 409 means an earlier try made it already.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpupoc.exceptions import GpupocError
from gpupoc.plan.overrides import item_workload
from gpupoc.podspec.gangs import Gang, gang_name, gang_objects

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

GANG_GROUPS = "gang_groups"  # files/gang_groups.json: PodGroup uid -> {namespace, gang}


def run_gangs(ctx: RunContext) -> list[tuple[Gang, object]]:
    """(gang, its first wave item) of every gang the run's operator submits."""
    seen: dict[str, tuple[Gang, object]] = {}
    for item in ctx.wave_items():
        if item.gang and item.gang not in seen:
            seen[item.gang] = (Gang(item.gang, gang_name(item.gang, ctx.run_id), item.replicas, item.min_available),
                               item)
    return list(seen.values())


def _objects(ctx: RunContext, gang: Gang, item) -> list[tuple[str, dict]]:
    value = next((pc.value for pc in ctx.plan.priority_classes if pc.name == item.priority_class), None)
    return gang_objects(ctx.plan.platform, gang, item_workload(ctx.plan, item), ctx.plan.tenant(item.tenant),
                        priority_class=item.priority_class, run_id=ctx.run_id, test_class=ctx.test_class,
                        priority=value)


def create_pod_groups(ctx: RunContext) -> dict:
    """Create the group objects of every gang of the run (Volcano's or KAI's PodGroup, the Workload API's
    Workload and PodGroup); returns what was created."""
    gangs = run_gangs(ctx)
    created, errors = [], []
    groups: dict[str, dict] = {}  # PodGroup uid -> its gang: a scheduler may name a preemptor by it
    admin = None
    for gang, item in gangs:
        for path, body in _objects(ctx, gang, item):
            admin = admin or ctx.admin("create the PodGroup of a gang")
            r = admin.call("POST", path, body=body)
            where = f"{body['kind']} {body['metadata']['namespace']}/{gang.name}"
            if r.ok or r.status == 409:
                created.append(where)
                uid = _uid(admin, path, gang.name, r)
                if uid and body["kind"] == "PodGroup":
                    groups[uid] = {"namespace": body["metadata"]["namespace"], "gang": gang.name}
            else:
                errors.append(f"{where}: HTTP {r.status}: {r.message}")
    if errors:
        api = ("the Workload API (scheduling.k8s.io/v1beta1: Kubernetes >= 1.37 with the GenericWorkload gate; "
               "`--cluster kwok` starts it)" if ctx.plan.platform.workload_api_gangs
               else f"the {ctx.plan.platform.adapter.value} API (platform.adapter)")
        raise GpupocError(f"{len(errors)} gang object(s) could not be created: {errors[:3]}; without them the gangs' "
                          f"pods would never be scheduled. Check that the platform serves {api} and that the admin "
                          "context may create them")
    if groups:
        ctx.writer.write_json(GANG_GROUPS, groups)
    return {"gangs": len(gangs), "pod_groups": created}


def _uid(admin, path: str, name: str, answer) -> str | None:
    """The created object's uid (an object an earlier try made: read back)."""
    body = answer.body if answer.ok else (admin.call("GET", f"{path}/{name}").body if answer.status == 409 else None)
    return ((body or {}).get("metadata") or {}).get("uid") if isinstance(body, dict) else None


def delete_pod_groups(ctx: RunContext) -> list[str]:
    """Delete the run's gang objects, the last made first (404 counts as gone); returns the errors."""
    errors = []
    admin = None
    for gang, item in run_gangs(ctx):
        for path, body in reversed(_objects(ctx, gang, item)):
            admin = admin or ctx.admin("delete the PodGroups of the run's gangs")
            r = admin.call("DELETE", f"{path}/{gang.name}", body={})
            if not r.ok and r.status != 404:
                errors.append(f"{body['kind']} {gang.name}: HTTP {r.status}: {r.message}")
    return errors
